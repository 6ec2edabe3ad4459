"""Plain-words math in typed queries: ``sqrt 2``, ``x sin x``, ``1/n^2``, ``integral from 0 to 1 of
x^2 dx``, ``lim x->0 sin(x)/x``, Greek letters by name, found in text and written as LaTeX.

People who search maths rarely write LaTeX between dollars.  :func:`annotate` finds the spans of a
typed text that are maths written as on a calculator or in an e-mail, and returns the text with each
such span replaced by ``$LaTeX$`` so that the rest of query analysis treats it exactly as a formula
the user had typed in LaTeX.  Text already between ``$...$`` (or ``\\(...\\)``) is left as it is.

How a span is found: a recursive-descent parser of ASCII math (precedence: relations, sums,
products and fractions, signs, powers and subscripts, atoms) is tried at every token; it stops at
the first token that cannot continue the maths (an English word, a comma outside brackets, a full
stop).  What it read becomes a formula only when it holds real evidence of maths (an operator, a
function or Greek name, a script, a big operator); a lone letter is a variable except ``a``, ``A``,
``I`` and ``i`` ("a", "I" are English); a lone number stays a word.  Anything that does not parse
(an unbalanced bracket, an unknown word) stays words: this module never raises on its input.

Only queries are rewritten (:class:`~mathsearch.systems.base.SearchQuery`), never documents: the
collection's formulae are LaTeX already and its prose is the user's evidence as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..formula.symbols import GREEK
from .dollar_math import find_math


@dataclass(frozen=True, slots=True)
class PlainSpan:
    """One span of typed text understood as maths: where it is, what was typed, its LaTeX."""

    start: int
    end: int
    typed: str
    latex: str


MAX_DEPTH = 60  # nested factors and atoms a span may hold; deeper input stays words

# -- vocabulary ----------------------------------------------------------------------------
FUNCTIONS = frozenset(
    """sin cos tan cot sec csc arcsin arccos arctan arccot arcsec arccsc sinh cosh tanh coth sech csch
    arsinh arcosh artanh log ln lg exp det gcd lcm max min sup deg dim ker arg Pr""".split()
)
_FUNC_LATEX = {"lcm": r"\operatorname{lcm}"}  # not a LaTeX command of its own
_GREEK_NAMES = {name: "\\" + name for name in GREEK if not name.startswith(("var", "digamma", "omicron"))}
_GREEK_NAMES.update({"varepsilon": r"\varepsilon", "varphi": r"\varphi", "vartheta": r"\vartheta"})
_GREEK_UNICODE = {ch: "\\" + name for name, ch in GREEK.items() if not name.startswith(("var", "digamma"))}
_GREEK_UNICODE.update({"ε": r"\varepsilon", "φ": r"\varphi", "ϵ": r"\epsilon", "ϕ": r"\phi"})
_INTEGRALS = {"integral": r"\int", "int": r"\int", "∫": r"\int", "integrate": r"\int"}
_SUMS = {"sum": r"\sum", "Sum": r"\sum", "∑": r"\sum", "product": r"\prod", "prod": r"\prod", "∏": r"\prod"}
_LIMITS = {"lim": r"\lim", "limit": r"\lim"}
_INFINITY = frozenset({"infinity", "infty", "inf", "oo", "∞"})
_SQRT = frozenset({"sqrt", "√", "cbrt", "∛"})
_SETS = {"ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}", "ℤ": r"\mathbb{Z}", "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}",
         "∀": r"\forall", "∃": r"\exists", "∅": r"\emptyset", "¬": r"\neg"}  # symbols that stand as atoms
# Letters that are English words alone ("a", "I"); a variable only beside an operator.
_ENGLISH_LETTERS = frozenset("aAIi")

_RELATIONS = {
    "=": "=", "==": "=", "<": "<", ">": ">", "<=": r"\leq", ">=": r"\geq", "=<": r"\leq", "!=": r"\neq",
    "/=": r"\neq", "->": r"\to", "-->": r"\to", "=>": r"\Rightarrow", "==>": r"\Rightarrow",
    "<=>": r"\Leftrightarrow", "<==>": r"\Leftrightarrow", "|->": r"\mapsto", "~": r"\sim", "~=": r"\approx",
    "≈": r"\approx", "≤": r"\leq", "≥": r"\geq", "≠": r"\neq", "→": r"\to", "⇒": r"\Rightarrow",
    "⟹": r"\Rightarrow", "⇔": r"\Leftrightarrow", "⟺": r"\Leftrightarrow", "∈": r"\in", "∉": r"\notin",
    "⊂": r"\subset", "⊆": r"\subseteq", "⊃": r"\supset", "⊇": r"\supseteq", "≡": r"\equiv", "↦": r"\mapsto",
    "∼": r"\sim", "≅": r"\cong", ":=": ":=", ":": ":", "|": r"\mid",
}
# Relations written as words: only between two pieces of maths ("x in R", "a divides b").
_WORD_RELATIONS = {"in": r"\in", "subset": r"\subset", "equiv": r"\equiv", "divides": r"\mid",
                   "mod": r"\pmod"}
_ADDITIVE = {"+": "+", "-": "-", "+-": r"\pm", "±": r"\pm", "∓": r"\mp", "−": "-"}
_MULTIPLY = {"*": r"\cdot", "·": r"\cdot", "×": r"\times", "⋅": r"\cdot", "**": "^", "∘": r"\circ",
             "∩": r"\cap", "∪": r"\cup", "\\": r"\setminus"}
_WORD_MULTIPLY = {"times": r"\times", "cap": r"\cap", "cup": r"\cup", "union": r"\cup", "intersect": r"\cap"}
_OPERATORS = frozenset([*_RELATIONS, *_ADDITIVE, *_MULTIPLY, "/", "^", "_"]) - {":", "|", "~"}
_SUPERSCRIPTS = {"²": "2", "³": "3", "¹": "1", "⁴": "4", "ⁿ": "n", "⁻¹": "-1"}

_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<abbr>\b(?:e\.g|i\.e|etc|cf|vs|resp|w\.r\.t)\.)"
    r"|(?P<num>\d+(?:\.\d+)?)"
    r"|(?P<word>[A-Za-z]+(?:'[a-z]{1,2}\b)?)"
    r"|(?P<op><==>|<=>|==>|-->|\|->|\.\.\.|\+/-|<=|>=|=<|!=|/=|->|=>|==|:=|~=|\*\*|\+-|⁻¹)"
    r"|(?P<other>\S)"
)


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # num, word, op, other
    text: str
    start: int
    end: int
    space_before: bool


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    space = True
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "space":
            space = True
            if "\n" in m.group():  # a line break ends any formula (a paragraph, a list item)
                out.append(_Tok("break", "\n", m.start(), m.start(), True))
            continue
        if kind == "abbr":
            kind = "word"
        out.append(_Tok(kind, m.group(), m.start(), m.end(), space))
        space = False
    return out


# -- the parsed pieces ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Node:
    latex: str
    strong: bool  # holds evidence of maths (an operator, a function, a script...), not only a letter
    inner: str | None = None  # the LaTeX inside, when the node is a bracketed group "( ... )"
    letter: str | None = None  # the node is this one letter


class _Fail(Exception):
    pass


def _join(*parts: str) -> str:
    """LaTeX pieces with a space where a command would otherwise run into a letter."""
    out = ""
    for p in parts:
        if not p:
            continue
        if out and (out[-1].isalpha() or out[-1] == "}") and (p[0].isalnum() or p[0] == "\\"):
            out += " "
        elif out and out[-1].isalnum() and p[0].isalnum():
            out += " "
        out += p
    return out


def _group(node: _Node) -> str:
    """A node as the argument of a script, a fraction or a root: its brackets dropped."""
    return node.inner if node.inner is not None else node.latex


class _Parser:
    """ASCII maths from ``toks[pos]`` on; each method returns a node or raises :class:`_Fail`."""

    def __init__(self, toks: list[_Tok]):
        self.toks = toks
        self.pos = 0
        self.in_abs = 0
        self.in_integral = 0
        self.depth = 0
        self.memos: dict[tuple, tuple[_Node | None, int]] = {}

    # token helpers
    def peek(self, k: int = 0) -> _Tok | None:
        i = self.pos + k
        return self.toks[i] if i < len(self.toks) else None

    def text(self, k: int = 0) -> str:
        t = self.peek(k)
        return t.text if t is not None else ""

    def take(self) -> _Tok:
        t = self.peek()
        if t is None:
            raise _Fail
        self.pos += 1
        return t

    def expect(self, *texts: str) -> str:
        t = self.peek()
        if t is None or t.text not in texts:
            raise _Fail
        self.pos += 1
        return t.text

    def attempt(self, fn, *args):  # noqa: ANN001, ANN202 - a parse method and its arguments
        """``fn(*args)``, or None with the position restored when it fails."""
        saved = self.pos
        try:
            return fn(*args)
        except _Fail:
            self.pos = saved
            return None

    def words_ahead(self, *words: str) -> bool:
        return all(self.text(i).lower() == w for i, w in enumerate(words))

    # grammar
    def choose(self) -> _Node:
        """``n+1 choose k``: a binomial coefficient of two sums."""
        top = self.additive()
        if self.text().lower() != "choose":
            return top
        saved = self.pos
        self.pos += 1
        bottom = self.attempt(self.additive)
        if bottom is None:
            self.pos = saved
            return top
        return _Node(rf"\binom{{{_group(top)}}}{{{_group(bottom)}}}", True)

    def relation(self, commas: bool = False) -> _Node:
        left = self.choose()
        parts, strong = [left.latex], left.strong
        while True:
            rel = self.relation_symbol()
            if rel is None:
                if commas and self.text() == ",":
                    saved = self.pos
                    self.pos += 1
                    right = self.attempt(self.choose)
                    if right is None:
                        self.pos = saved
                        break
                    parts += [",", right.latex]
                    strong = strong or right.strong
                    continue
                break
            saved = self.pos
            self.pos += rel[1]
            right = self.attempt(self.choose)
            if right is None or (rel[0] in (r"\in", r"\mid", r"\subset") and rel[2] and not _set_like(right)):
                self.pos = saved
                break
            if rel[0] == r"\pmod":
                parts.append(rf"\pmod{{{_group(right)}}}")
            else:
                parts += [rel[0], right.latex]
            strong = True
        return _Node(_join(*parts), strong, letter=left.letter if len(parts) == 1 else None)

    def relation_symbol(self) -> tuple[str, int, bool] | None:
        """``(LaTeX, tokens, is a word)`` of the relation at the position, if any."""
        t = self.peek()
        if t is None:
            return None
        if t.text == "|" and self.in_abs:
            return None
        if t.text in _RELATIONS:
            return _RELATIONS[t.text], 1, False
        low = t.text.lower()
        if t.kind == "word":
            if low in _WORD_RELATIONS:
                return _WORD_RELATIONS[low], 1, True
            if low == "is" and self.text(1).lower() in ("congruent", "equivalent"):
                return (r"\equiv", 4, True) if self.words_ahead("is", self.text(1).lower(), "to") else None
        return None

    def additive(self) -> _Node:
        if self.text() in _ADDITIVE:  # a leading sign
            sign = _ADDITIVE[self.take().text]
            first = self.term()
            node = _Node(_join(sign, first.latex), True)
        else:
            node = self.term()
        parts, strong = [node.latex], node.strong
        while self.text() in _ADDITIVE:
            saved = self.pos
            op = _ADDITIVE[self.take().text]
            right = self.attempt(self.term)
            if right is None:
                self.pos = saved
                break
            parts += [op, right.latex]
            strong = True
        if len(parts) == 1:
            return node
        return _Node(_join(*parts), strong)

    def tight(self) -> _Node:
        """A factor and the factors written against it without a space: "2x", "n(n+1)"."""
        node = self.factor()
        while (t := self.peek()) is not None and not t.space_before and t.kind in ("num", "word") \
                and self.starts_atom(juxtaposed=True) or self.text() == "(" and not self.peek().space_before:
            if t.text == "(" and self.text(-1) == ")":
                break  # "(a)(1)/(2)": the group before a fraction is a factor of its own
            right = self.attempt(self.factor)
            if right is None:
                break
            node = _Node(_join(node.latex, right.latex), True)
        return node

    def fraction(self) -> _Node:
        """Products written tight over others: "(d Phi)/(d u) * (d Phi)/(d v)" is a product of two
        fractions, "n(n+1)/2" one fraction."""
        node = self.tight()
        while self.text() in ("/", "÷"):
            saved = self.pos
            self.pos += 1
            den = self.attempt(self.tight)
            if den is None:
                self.pos = saved
                break
            node = _Node(rf"\frac{{{_group(node)}}}{{{_group(den)}}}", True)
        return node

    def term(self) -> _Node:
        node = self.fraction()
        while True:
            t = self.peek()
            if t is None:
                break
            saved = self.pos
            if t.text in _MULTIPLY or (t.kind == "word" and t.text in _WORD_MULTIPLY):
                self.pos += 1
                op = _MULTIPLY.get(t.text) or _WORD_MULTIPLY[t.text]
                right = self.attempt(self.factor if t.text == "**" else self.fraction)
                if right is None:
                    self.pos = saved
                    break
                if op == "^":
                    node = _Node(_join(node.latex, "^{" + _group(right) + "}"), True)
                else:
                    node = _Node(_join(node.latex, op, right.latex), True)
                continue
            if not self.starts_atom(juxtaposed=True):
                break
            right = self.attempt(self.fraction)
            if right is None:
                self.pos = saved
                break
            # "2x", "x sin x", "n (n+1)": a product written by juxtaposition
            strong = node.strong or right.strong or (node.letter is None or right.letter is None) and not (
                node.letter and right.letter)
            node = _Node(_join(node.latex, right.latex), strong or not t.space_before)
        return node

    def starts_atom(self, juxtaposed: bool = False) -> bool:
        t = self.peek()
        if t is None:
            return False
        if t.kind == "num":
            return True
        if t.kind == "word":
            if self.in_integral and _is_differential(t.text, self.text(1)):
                return False
            if t.text in _ENGLISH_LETTERS and juxtaposed and t.space_before:
                return _letter_is_variable(t, self.peek(1))
            return _word_class(t.text) is not None or _letters(t, self.peek(-1) if self.pos else None, self.peek(1)) is not None
        if t.text in ("(", "[", "{"):
            return True
        if t.text == "|":
            return not self.in_abs and not (juxtaposed and t.space_before)
        return t.text in _GREEK_UNICODE or t.text in _SETS or t.text in _SQRT or t.text in _INTEGRALS \
            or t.text in _SUMS or t.text == "∞" or t.text == "..." or t.text == "∂"

    def memo(self, name: str, fn) -> _Node:  # noqa: ANN001 - a parse method
        """``fn()`` parsed once per position and state (packrat): backtracking over nested brackets
        ("(x(x(x...") would otherwise try the same sub-parse twice a level, 2^n in all."""
        key = (name, self.pos, self.in_abs, self.in_integral)
        known = self.memos.get(key)
        if known is not None:
            if known[0] is None:
                raise _Fail
            self.pos = known[1]
            return known[0]
        start = self.pos
        try:
            node = fn()
        except _Fail:
            self.memos[key] = (None, start)
            raise
        self.memos[key] = (node, self.pos)
        return node

    def factor(self) -> _Node:
        return self.memo("factor", self._factor)

    def _factor(self) -> _Node:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:  # "((((...", "- - - ...": deeper than any typed formula
                raise _Fail
            if self.text() in ("-", "−", "+-", "±"):
                sign = _ADDITIVE[self.take().text]
                inner = self.factor()
                return _Node(_join(sign, inner.latex), True)
            return self.power()
        finally:
            self.depth -= 1

    def power(self) -> _Node:
        node = self.atom()
        while True:
            t = self.peek()
            if t is None:
                break
            if t.text in ("^", "_") or t.text in _SUPERSCRIPTS:
                saved = self.pos
                self.pos += 1
                if t.text in _SUPERSCRIPTS:
                    node = _Node(node.latex + "^{" + _SUPERSCRIPTS[t.text] + "}", True)
                    continue
                script = self.attempt(self.script)
                if script is None:
                    self.pos = saved
                    break
                base = node.latex if node.inner is None or t.text == "^" else node.latex
                node = _Node(f"{base}{t.text}{{{script}}}", True)
            elif t.text == "!" and not t.space_before:
                self.pos += 1
                node = _Node(node.latex + "!", True)
            elif t.text == "'" and not t.space_before:
                self.pos += 1
                node = _Node(node.latex + "'", True)
            else:
                break
        return node

    def script(self) -> str:
        if self.text() in ("(", "{", "["):
            return _group(self.atom())
        if self.text() in ("-", "−", "+"):
            sign = _ADDITIVE[self.take().text]
            return _join(sign, self.atom().latex)
        return self.atom().latex

    def atom(self) -> _Node:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _Fail
            return self._atom()
        finally:
            self.depth -= 1

    def _atom(self) -> _Node:
        t = self.peek()
        if t is None:
            raise _Fail
        if t.kind == "num":
            self.pos += 1
            return _Node(t.text, False)
        if t.text in ("(", "[", "{"):
            return self.bracketed()
        if t.text == "|" and not self.in_abs:
            self.pos += 1
            self.in_abs += 1
            try:
                inner = self.additive()
            finally:
                self.in_abs -= 1
            self.expect("|")
            return _Node(f"|{inner.latex}|", True)
        if t.text in _GREEK_UNICODE:
            self.pos += 1
            return _Node(_GREEK_UNICODE[t.text], True)
        if t.text in _SETS:
            self.pos += 1
            return _Node(_SETS[t.text], True)
        if t.text == "∂":
            self.pos += 1
            return _Node(r"\partial", True)
        if t.text == "...":
            self.pos += 1
            return _Node(r"\ldots", True)
        if t.text in _SQRT:
            return self.root()
        if t.text in _INTEGRALS or t.text in _SUMS:
            return self.big_operator()
        if t.text == "∞":
            self.pos += 1
            return _Node(r"\infty", True)
        if t.kind != "word":
            raise _Fail
        kind = _word_class(t.text)
        if kind == "greek":
            self.pos += 1
            return _Node(_GREEK_NAMES[t.text if t.text in _GREEK_NAMES else t.text.lower()], True)
        if kind == "infinity":
            self.pos += 1
            return _Node(r"\infty", True)
        if kind == "function":
            return self.function()
        if kind == "root":
            return self.root()
        if kind in ("integral", "sum", "limit"):
            return self.big_operator()
        if kind == "letter":
            self.pos += 1
            return _Node(t.text, False, letter=t.text)
        letters = _letters(t, self.peek(-1) if self.pos else None, self.peek(1))
        if letters is not None:
            self.pos += 1
            return _Node(letters, False)
        if self.text(1) == "(" and not self.peek(1).space_before and len(t.text) <= 6 and t.text.lower() not in _NOT_NAMES:
            self.pos += 1  # "Var(X)", "tr(A)": an operator name applied to brackets
            arg = self.bracketed()
            return _Node(rf"\operatorname{{{t.text}}}{arg.latex}", True)
        raise _Fail

    def bracketed(self) -> _Node:
        return self.memo("bracketed", self._bracketed)

    def _bracketed(self) -> _Node:
        if self.text() == "(" and self.text(1).lower() == "mod":  # "a equiv b (mod n)"
            self.pos += 2
            modulus = self.additive()
            self.expect(")")
            return _Node(rf"\pmod{{{modulus.latex}}}", True)
        opener = self.take().text
        closers = {"(": (")", "]"), "[": ("]", ")"), "{": ("}",)}[opener]
        saved_abs, self.in_abs = self.in_abs, 0
        try:
            inner = self.relation(commas=True)
        finally:
            self.in_abs = saved_abs
        closer = self.expect(*closers)
        if inner.latex.startswith(r"\binom") and inner.latex.count(r"\binom") == 1 and inner.latex.endswith("}"):
            return _Node(inner.latex, True)  # "(n choose k)": the brackets are the binomial's own
        if opener == "{":
            return _Node(rf"\{{{inner.latex}\}}", True, inner=inner.latex)
        strong = inner.strong or "," in inner.latex  # an interval or a pair: "[a, b]", "(x, y)"
        return _Node(f"{opener}{inner.latex}{closer}", strong, inner=inner.latex, letter=inner.letter)

    def function(self) -> _Node:
        name = self.take().text
        latex = _FUNC_LATEX.get(name, "\\" + name)
        scripts = ""
        while self.text() in ("^", "_"):
            mark = self.take().text
            scripts += f"{mark}{{{self.script()}}}"
        if self.text() == "(":
            arg = self.bracketed()
            return _Node(_join(latex + scripts, arg.latex), True)
        # "sin x", "sin 2x", "log n!": the juxtaposed factors up to the next operator or function
        pieces = [self.power().latex]
        while self.starts_atom(juxtaposed=True) and _word_class(self.text()) not in ("function", "integral", "sum",
                                                                                      "limit", "root"):
            piece = self.attempt(self.power)
            if piece is None:
                break
            pieces.append(piece.latex)
        return _Node(_join(latex + scripts, *pieces), True)

    def root(self) -> _Node:
        name = self.take().text
        index = "3" if name in ("cbrt", "∛") else ""
        if self.text().lower() == "of":
            self.pos += 1
        arg = self.power() if self.text() != "(" else self.bracketed()
        body = _group(arg)
        return _Node(rf"\sqrt[{index}]{{{body}}}" if index else rf"\sqrt{{{body}}}", True)

    def bounds(self, low: str | None, high: str | None, limit: bool) -> tuple[str | None, str | None]:
        """Scripts ``_a^b``, or "from a to b" (sums and integrals), or "as x -> a" (limits)."""
        while self.text() in ("_", "^"):
            mark = self.take().text
            value = self.script() if mark == "^" else _group(self.subscript())
            if mark == "_":
                low = value
            else:
                high = value
        word = self.text().lower()
        if not limit and word == "over" and low is None:  # "sum over k", "integral over V"
            saved = self.pos
            self.pos += 1
            a = self.attempt(self.power)
            if a is not None:
                return a.latex, high
            self.pos = saved
        if not limit and word in ("from", "for") and low is None:
            saved = self.pos
            self.pos += 1
            a = self.attempt(self.relation)
            if a is not None and self.text().lower() == "to":
                self.pos += 1
                b = self.attempt(self.end_point)
                if b is not None:
                    return a.latex, b
            self.pos = saved
        if limit and low is None:
            saved = self.pos
            if word == "as":
                self.pos += 1
            approach = self.attempt(self.approach)
            if approach is not None:
                return approach, high
            self.pos = saved
        return low, high

    def subscript(self) -> _Node:
        if self.text() in ("(", "{", "["):
            return self.bracketed()
        return self.atom()

    def approach(self) -> str:
        """``x -> 0``, ``x to infinity``, ``x approaches 0``, ``n goes to infinity``."""
        var = self.atom()
        if var.letter is None and var.latex not in _GREEK_NAMES.values():
            raise _Fail
        word = self.text().lower()
        if self.text() in ("->", "→", "-->"):
            self.pos += 1
        elif word in ("approaches", "to"):
            self.pos += 1
        elif word in ("goes", "tends") and self.text(1).lower() == "to":
            self.pos += 2
        else:
            raise _Fail
        value = self.end_point()
        side = ""
        if self.text() in ("+", "-") and (self.peek(1) is None or not self.starts_atom_at(1)):
            side = "^{" + self.take().text + "}"  # one-sided: x -> 0+
        return _join(var.latex, r"\to", value) + side

    def end_point(self) -> str:
        """A bound or a limit point: one factor ("x -> 0 sin(x)/x", "from 0 to infinity (sin x)/x"),
        or a factor over a number ("pi/2")."""
        value = self.factor()
        while value.letter is not None and self.text() == "(" and not self.peek().space_before:  # "to f(b)"
            value = _Node(value.latex + self.bracketed().latex, True)
        if self.text() == "/" and self.peek(1) is not None and self.peek(1).kind == "num":
            self.pos += 1
            return rf"\frac{{{_group(value)}}}{{{self.take().text}}}"
        return value.latex

    def starts_atom_at(self, k: int) -> bool:
        saved = self.pos
        self.pos += k
        try:
            return self.starts_atom()
        finally:
            self.pos = saved

    def big_operator(self) -> _Node:
        t = self.take()
        low: str | None = None
        high: str | None = None
        word = t.text if t.text in _INTEGRALS or t.text in _SUMS else t.text.lower()
        if word in _INTEGRALS:
            cmd, kind = _INTEGRALS[word], "integral"
        elif word in _SUMS:
            cmd, kind = _SUMS[word], "sum"
        else:
            cmd, kind = _LIMITS[word], "limit"
        low, high = self.bounds(low, high, kind == "limit")
        bounded = low is not None or high is not None
        if not bounded and kind == "sum" and word.isalpha() and self.pos >= 2 and \
                self.toks[self.pos - 2].text.lower() in _NOUN_BEFORE:
            raise _Fail  # "the sum of", "cross product": the English word
        if self.text().lower() == "of":
            self.pos += 1
        if kind == "integral":
            self.in_integral += 1
            try:
                body = self.attempt(self.additive)
            finally:
                self.in_integral -= 1
            dx = self.differential()
        else:
            body = self.attempt(self.term)
            dx = ""
        if body is None and not dx:
            raise _Fail
        if not bounded and body is not None and (not body.strong or body.latex.startswith((r"\int", r"\sum", r"\prod"))) \
                and not dx:
            raise _Fail  # "integral integral from ...", "the sum S_n": no operator of its own
        if low is None and high is None:  # bounds written after the body: "sum 1/n^2 from n=1 to oo"
            low, high = self.bounds(low, high, kind == "limit")
        if kind == "limit" and low is None and body is None:
            raise _Fail
        scripts = ("_{" + low + "}" if low is not None else "") + ("^{" + high + "}" if high is not None else "")
        return _Node(_join(cmd + scripts, body.latex if body is not None else "", dx), True)

    def differential(self) -> str:
        t = self.peek()
        if t is None or t.kind != "word":
            return ""
        if _is_differential(t.text, self.text(1)):
            self.pos += 1
            if t.text == "d":
                var = self.take().text
                return "d" + (_GREEK_NAMES.get(var, var))
            rest = t.text[1:]
            return "d" + _GREEK_NAMES.get(rest, rest)
        return ""


# Words before "sum" or "product" that make it the English noun ("the sum of", "cross product").
_NOUN_BEFORE = frozenset("""the a an this that its their our my your partial cross dot inner outer direct
    tensor semidirect free wedge scalar vector cartesian infinite finite riemann whose of what""".split())

_NOT_NAMES = frozenset("""if of for and or the is in on at to see as so by be we it an are was not but
    with from this that than then where which also only such all any each""".split())


def _is_differential(word: str, following: str) -> bool:
    """``dx``, ``dt``, ``dtheta``, or ``d`` followed by a one-letter variable."""
    if word == "d":
        return len(following) == 1 and following.isalpha() or following in _GREEK_NAMES
    return len(word) >= 2 and word[0] == "d" and (len(word) == 2 and word[1].isalpha() or word[1:] in _GREEK_NAMES)


@lru_cache(maxsize=4096)
def _word_class(word: str) -> str | None:
    low = word.lower()
    if word in _GREEK_NAMES or (low in _GREEK_NAMES and low not in ("eta", "nu", "mu", "xi", "chi")):
        return "greek"
    if low in _INFINITY:
        return "infinity"
    if word in FUNCTIONS:
        return "function"
    if low in ("sqrt", "cbrt"):
        return "root"
    if low in ("integral", "int"):
        return "integral"
    if low in ("sum", "product", "prod"):
        return "sum"
    if low in _LIMITS:
        return "limit"
    if len(word) == 1:
        return "letter"
    return None


def _letters(tok: _Tok, before: _Tok | None, after: _Tok | None) -> str | None:
    """A short run of letters glued to an operator or a number ("xy=1", "2xy", "dy/dx") as the
    product of its letters; else None (a word)."""
    word = tok.text
    if not 2 <= len(word) <= 3 or not word.isascii() or word.lower() in _NOT_NAMES or "'" in word:
        return None
    glued = (before is not None and before.kind in ("num", "op", "other") and before.text not in ",.;:?!\"'()[]"
             and (not tok.space_before or before.text in _OPERATORS)) or \
            (after is not None and after.kind in ("op", "other") and after.text not in ",.;:?!\"'[]"
             and (not after.space_before or after.text in _OPERATORS))
    return word if glued else None


def _set_like(node: _Node) -> bool:
    """The right side of a word relation ("x in R", "n in {1, 2}", "x in [0, 1]") looks like a set."""
    lat = node.latex
    return lat[:1].isupper() or lat.startswith(("\\{", "[", "(", r"\mathbb"))


def _letter_is_variable(tok: _Tok, after: _Tok | None) -> bool:
    """"a", "A", "I", "i" alone: the article or the pronoun before a word ("a group", "I am"),
    else a variable ("matrix A", "A^T A"); "a" alone is never taken for a variable."""
    if tok.text == "a":
        return after is not None and after.kind in ("op", "other") and not after.space_before and after.text not in ",.;:?"
    return after is None or after.kind != "word"


def _is_math(node: _Node, tokens: list[_Tok], after: _Tok | None) -> bool:
    if node.strong:
        return True
    if len(tokens) == 1:
        t = tokens[0]
        if t.kind != "word" or len(t.text) != 1:
            return False
        return t.text not in _ENGLISH_LETTERS or _letter_is_variable(t, after)
    return False


def find_plain_math(text: str) -> list[PlainSpan]:
    """The spans of ``text`` (no ``$`` formulae in it) that are maths typed without LaTeX."""
    toks = _tokens(text)
    spans: list[PlainSpan] = []
    parser = _Parser(toks)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "op" or t.kind == "other" and t.text not in ("(", "[", "{", "|", "-", "√", "∫", "∑", "∏", "∞", "∂") \
                and t.text not in _GREEK_UNICODE and t.text not in _SETS:
            i += 1
            continue
        parser.pos = i
        node = parser.attempt(parser.relation)
        if node is None or parser.pos == i:
            i += 1
            continue
        used = toks[i:parser.pos]
        if _is_math(node, used, toks[parser.pos] if parser.pos < len(toks) else None):
            spans.append(PlainSpan(used[0].start, used[-1].end, text[used[0].start:used[-1].end], node.latex))
            i = parser.pos
        else:
            i += 1
    return spans


def annotate(text: str) -> tuple[str, list[PlainSpan]]:
    """``text`` with each plain-words math span written as ``$LaTeX$``, and those spans.

    Formulae already between ``$...$``, ``\\(...\\)`` or ``\\[...\\]`` are kept as they are; a text
    with a backslash command outside them is LaTeX typed without dollars and is left alone.

    Examples:
        >>> annotate("prove sqrt 2 is irrational")[0]
        'prove $\\\\sqrt{2}$ is irrational'
        >>> annotate("integral of x sin x dx")[0]
        '$\\\\int x \\\\sin x dx$'
        >>> annotate("is a group")[0]
        'is a group'
    """
    if not text:
        return text, []
    out: list[str] = []
    spans: list[PlainSpan] = []
    pos = 0
    for start, end, _ in [*find_math(text, is_html=False), (len(text), len(text), "")]:
        segment = text[pos:start]
        out.append(_annotate_segment(segment, pos, spans))
        out.append(text[start:end])
        pos = end
    return "".join(out), spans


def _annotate_segment(segment: str, offset: int, spans: list[PlainSpan]) -> str:
    if not segment.strip() or re.search(r"\\[A-Za-z]", segment):
        return segment
    found = find_plain_math(segment)
    if not found:
        return segment
    out, pos = [], 0
    for s in found:
        out += [segment[pos:s.start], "$", s.latex, "$"]
        pos = s.end
        spans.append(PlainSpan(s.start + offset, s.end + offset, s.typed, s.latex))
    out.append(segment[pos:])
    return "".join(out)


def to_latex(text: str) -> str | None:
    """The whole of ``text`` as one formula (a Task 2 query typed without ``$``), or None when it is
    not maths from end to end."""
    toks = _tokens(text)
    if not toks:
        return None
    parser = _Parser(toks)
    node = parser.attempt(parser.relation, True)
    if node is None or parser.pos != len(toks):
        return None
    return node.latex
