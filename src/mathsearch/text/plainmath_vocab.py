"""The words and symbols of plain-words maths (:mod:`mathsearch.text.plainmath`): the names
read as functions, Greek letters and big operators, the operators and relations, the tokeniser,
and the tests that tell a word of English from a variable; the pieces the grammar builds and the
cursor it moves over the tokens."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..formula.symbols import GREEK

# -- vocabulary ----------------------------------------------------------------------------
FUNCTIONS = frozenset(
    """sin cos tan cot sec csc arcsin arccos arctan arccot arcsec arccsc sinh cosh tanh coth sech csch
    arsinh arcosh artanh log ln lg exp det gcd lcm max min sup deg dim ker arg Pr""".split()
)
FUNC_LATEX = {"lcm": r"\operatorname{lcm}"}  # not a LaTeX command of its own
GREEK_NAMES = {name: "\\" + name for name in GREEK if not name.startswith(("var", "digamma", "omicron"))}
GREEK_NAMES.update({"varepsilon": r"\varepsilon", "varphi": r"\varphi", "vartheta": r"\vartheta",
                    "nabla": r"\nabla"})  # not Greek, but a symbol said by name and never English
GREEK_UNICODE = {ch: "\\" + name for name, ch in GREEK.items() if not name.startswith(("var", "digamma"))}
GREEK_UNICODE.update({"ε": r"\varepsilon", "φ": r"\varphi", "ϵ": r"\epsilon", "ϕ": r"\phi"})
INTEGRALS = {"integral": r"\int", "int": r"\int", "∫": r"\int", "integrate": r"\int"}
SUMS = {"sum": r"\sum", "Sum": r"\sum", "∑": r"\sum", "product": r"\prod", "prod": r"\prod", "∏": r"\prod"}
LIMITS = {"lim": r"\lim", "limit": r"\lim"}
_INFINITY = frozenset({"infinity", "infty", "inf", "oo", "∞"})
SQRT = frozenset({"sqrt", "√", "cbrt", "∛"})
SETS = {"ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}", "ℤ": r"\mathbb{Z}", "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}",
         "∀": r"\forall", "∃": r"\exists", "∅": r"\emptyset", "¬": r"\neg"}  # symbols that stand as atoms
# Letters that are English words alone ("a", "I"); a variable only beside an operator.
ENGLISH_LETTERS = frozenset("aAIi")

RELATIONS = {
    "=": "=", "==": "=", "<": "<", ">": ">", "<=": r"\leq", ">=": r"\geq", "=<": r"\leq", "!=": r"\neq",
    "/=": r"\neq", "->": r"\to", "-->": r"\to", "=>": r"\Rightarrow", "==>": r"\Rightarrow",
    "<=>": r"\Leftrightarrow", "<==>": r"\Leftrightarrow", "|->": r"\mapsto", "~": r"\sim", "~=": r"\approx",
    "≈": r"\approx", "≤": r"\leq", "≥": r"\geq", "≠": r"\neq", "→": r"\to", "⇒": r"\Rightarrow",
    "⟹": r"\Rightarrow", "⇔": r"\Leftrightarrow", "⟺": r"\Leftrightarrow", "∈": r"\in", "∉": r"\notin",
    "⊂": r"\subset", "⊆": r"\subseteq", "⊃": r"\supset", "⊇": r"\supseteq", "≡": r"\equiv", "↦": r"\mapsto",
    "∼": r"\sim", "≅": r"\cong", ":=": ":=", ":": ":", "|": r"\mid",
}
# Relations written as words: only between two pieces of maths ("x in R", "a divides b").
WORD_RELATIONS = {"in": r"\in", "subset": r"\subset", "equiv": r"\equiv", "divides": r"\mid",
                   "mod": r"\pmod", "equals": "="}
ADDITIVE = {"+": "+", "-": "-", "+-": r"\pm", "±": r"\pm", "∓": r"\mp", "−": "-"}
# Operations said in words ("x squared plus y squared", "log base 2 of 8"): only between two pieces
# of maths, as the word relations are, so "plus" or "squared" alone stays English.
WORD_ADDITIVE = {"plus": "+", "minus": "-"}
# Said after what they apply to: "x squared", "A inverse", "n factorial".
WORD_POSTFIX = {"squared": "^{2}", "cubed": "^{3}", "inverse": "^{-1}", "transpose": "^{T}", "factorial": "!"}
# Said after one letter, as statistics and physics say them: "x bar", "theta hat".
WORD_ACCENTS = {"bar": r"\bar", "hat": r"\hat", "tilde": r"\tilde"}
# Names of the binomial coefficient written as a function: "binomial(n,k)", "choose(n, k)".
BINOMIAL_NAMES = frozenset({"binomial", "binom", "choose"})
# "square root of 2", "cube root of x", "fourth root of 16", "nth root of x"
ROOT_WORDS = {"square": "", "cube": "3", "fourth": "4", "fifth": "5", "sixth": "6",
              **{f"{c}th": c for c in "kmnpqr"}}
ORDINAL_ENDS = frozenset({"st", "nd", "rd", "th"})  # "x to the 3rd power"


def ordinal_letter(word: str) -> str | None:
    """The letter of an ordinal said of one ("nth", "kth"), else None: "x to the nth power"."""
    return word[0] if len(word) == 3 and word[1:] == "th" and word[0] in "kmnpqr" else None
MULTIPLY = {"*": r"\cdot", "·": r"\cdot", "×": r"\times", "⋅": r"\cdot", "**": "^", "∘": r"\circ",
             "∩": r"\cap", "∪": r"\cup", "\\": r"\setminus"}
WORD_MULTIPLY = {"times": r"\times", "cap": r"\cap", "cup": r"\cup", "union": r"\cup", "intersect": r"\cap"}
_OPERATORS = frozenset([*RELATIONS, *ADDITIVE, *MULTIPLY, "/", "^", "_"]) - {":", "|", "~"}
SUPERSCRIPTS = {"²": "2", "³": "3", "¹": "1", "⁴": "4", "ⁿ": "n", "⁻¹": "-1", "⁰": "0", "⁵": "5", "⁶": "6",
                "⁷": "7", "⁸": "8", "⁹": "9", "ⁱ": "i", "⁺": "+", "⁻": "-"}
SUBSCRIPTS = {"₀": "0", "₁": "1", "₂": "2", "₃": "3", "₄": "4", "₅": "5", "₆": "6", "₇": "7", "₈": "8", "₉": "9",
              "ₙ": "n", "ᵢ": "i", "ⱼ": "j", "ₖ": "k", "ₘ": "m", "ₓ": "x", "₊": "+", "₋": "-"}
VULGAR = {"½": r"\frac{1}{2}", "⅓": r"\frac{1}{3}", "⅔": r"\frac{2}{3}", "¼": r"\frac{1}{4}", "¾": r"\frac{3}{4}",
          "⅕": r"\frac{1}{5}", "⅙": r"\frac{1}{6}", "⅛": r"\frac{1}{8}"}

_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<abbr>\b(?:e\.g|i\.e|etc|cf|vs|resp|w\.r\.t)\.)"
    r"|(?P<num>\d+(?:\.\d+)?)"
    r"|(?P<word>[A-Za-z]+(?:'[a-z]{1,2}\b)?)"
    r"|(?P<op><==>|<=>|==>|-->|\|->|\.\.\.|\+/-|<=|>=|=<|!=|/=|->|=>|==|:=|~=|\*\*|\+-|⁻¹)"
    r"|(?P<other>\S)"
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # num, word, op, other
    text: str
    start: int
    end: int
    space_before: bool


def tokenize(text: str) -> list[Token]:
    out: list[Token] = []
    space = True
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "other"
        if kind == "space":
            space = True
            if "\n" in m.group():  # a line break ends any formula (a paragraph, a list item)
                out.append(Token("break", "\n", m.start(), m.start(), True))
            continue
        if kind == "abbr":
            kind = "word"
        out.append(Token(kind, m.group(), m.start(), m.end(), space))
        space = False
    return out


# Words before "sum" or "product" that make it the English noun ("the sum of", "cross product").
NOUN_BEFORE = frozenset("""the a an this that its their our my your partial cross dot inner outer direct
    tensor semidirect free wedge scalar vector cartesian infinite finite riemann whose of what""".split())

NOT_NAMES = frozenset("""if of for and or the is in on at to see as so by be we it an are was not but
    with from this that than then where which also only such all any each""".split())


def is_differential(word: str, following: str) -> bool:
    """``dx``, ``dt``, ``dtheta``, or ``d`` followed by a one-letter variable."""
    if word == "d":
        return len(following) == 1 and following.isalpha() or following in GREEK_NAMES
    return len(word) >= 2 and word[0] == "d" and (len(word) == 2 and word[1].isalpha() or word[1:] in GREEK_NAMES)


@lru_cache(maxsize=4096)
def word_class(word: str) -> str | None:
    low = word.lower()
    if word in GREEK_NAMES or (low in GREEK_NAMES and low not in ("eta", "nu", "mu", "xi", "chi")):
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
    if low in LIMITS:
        return "limit"
    if len(word) == 1:
        return "letter"
    return None


# A function name typed against its variable ("sinx", "lnx", "cosx + sinx"): the usual variables
# only, and never an English word so spelt.
_GLUED_VARIABLES = frozenset("xyztn")
_GLUED_ENGLISH = frozenset({"cost", "cosy", "sect", "mint", "maxt", "tant", "lnt"})


@lru_cache(maxsize=4096)
def glued_function(word: str) -> tuple[str, str] | None:
    """``("sin", "x")`` for "sinx": a function name and one variable written as one word."""
    name, var = word[:-1], word[-1]
    if var not in _GLUED_VARIABLES or name not in FUNCTIONS or len(name) < 2 or word.lower() in _GLUED_ENGLISH:
        return None
    return name, var


def glued_letters(tok: Token, before: Token | None, after: Token | None) -> str | None:
    """A short run of letters glued to an operator or a number ("xy=1", "2xy", "dy/dx") as the
    product of its letters; else None (a word)."""
    word = tok.text
    if not 2 <= len(word) <= 3 or not word.isascii() or word.lower() in NOT_NAMES or "'" in word:
        return None
    glued = (before is not None and before.kind in ("num", "op", "other") and before.text not in ",.;:?!\"'()[]"
             and (not tok.space_before or before.text in _OPERATORS)) or \
            (after is not None and after.kind in ("op", "other") and after.text not in ",.;:?!\"'[]"
             and (not after.space_before or after.text in _OPERATORS))
    return word if glued else None


_BINOMIAL_SHORTHAND = re.compile(r"(\d+|[a-z])C(\d+|[a-z])")


def binomial_shorthand(toks: list[Token], pos: int) -> tuple[str, str, int] | None:
    """``(n, k, tokens)`` for the calculator's binomial typed as one word: "nCk", "nCr", "10C3",
    "5Cr" (the tokeniser splits digits from letters, so one word may be up to three tokens); None
    for anything else, "10C3x" included."""
    end = pos
    while end < len(toks) and end - pos < 4 and toks[end].kind in ("num", "word") \
            and (end == pos or not toks[end].space_before):
        end += 1
    m = _BINOMIAL_SHORTHAND.fullmatch("".join(t.text for t in toks[pos:end]))
    return (m.group(1), m.group(2), end - pos) if m else None


def letter_is_variable(tok: Token, after: Token | None) -> bool:
    """"a", "A", "I", "i" alone: the article or the pronoun before a word ("a group", "I am"),
    else a variable ("matrix A", "A^T A"); "a" alone is never taken for a variable."""
    if tok.text == "a":
        return after is not None and after.kind in ("op", "other") and not after.space_before and after.text not in ",.;:?"
    return after is None or after.kind != "word"


# -- the parsed pieces ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Piece:
    latex: str
    strong: bool  # holds evidence of maths (an operator, a function, a script...), not only a letter
    inner: str | None = None  # the LaTeX inside, when the node is a bracketed group "( ... )"
    letter: str | None = None  # the node is this one letter


class NoMaths(Exception):
    pass


def join_latex(*parts: str) -> str:
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


def scripted_base(latex: str, mark: str) -> str:
    """``latex`` ready to take a ``mark`` script: braced when it already ends in one ("x^{2}" before
    "^{2}" is "{x^{2}}"), since LaTeX refuses a double exponent or subscript."""
    if not latex.endswith("}") or latex.endswith("\\}"):
        return latex
    depth = 0
    for i in range(len(latex) - 1, -1, -1):
        if latex[i] in "{}" and (i == 0 or latex[i - 1] != "\\"):
            depth += 1 if latex[i] == "}" else -1
            if depth == 0:
                return f"{{{latex}}}" if i > 0 and latex[i - 1] == mark else latex
    return latex


def with_script(latex: str, mark: str, body: str) -> str:
    """``latex`` with a ``mark`` (``^`` or ``_``) script of ``body``: every script the power loop adds
    goes through here, so none makes a double one."""
    return f"{scripted_base(latex, mark)}{mark}{{{body}}}"


def group_latex(node: Piece) -> str:
    """A node as the argument of a script, a fraction or a root: its brackets dropped."""
    return node.inner if node.inner is not None else node.latex


class Cursor:
    """A position in a list of tokens, and the moves a backtracking parser makes over it."""

    def __init__(self, toks: list[Token]):
        self.toks = toks
        self.pos = 0

    def peek(self, k: int = 0) -> Token | None:
        i = self.pos + k
        return self.toks[i] if i < len(self.toks) else None

    def text(self, k: int = 0) -> str:
        t = self.peek(k)
        return t.text if t is not None else ""

    def take(self) -> Token:
        t = self.peek()
        if t is None:
            raise NoMaths
        self.pos += 1
        return t

    def expect(self, *texts: str) -> str:
        t = self.peek()
        if t is None or t.text not in texts:
            raise NoMaths
        self.pos += 1
        return t.text

    def attempt(self, fn, *args):  # noqa: ANN001, ANN202 - a parse method and its arguments
        """``fn(*args)``, or None with the position restored when it fails."""
        saved = self.pos
        try:
            return fn(*args)
        except NoMaths:
            self.pos = saved
            return None

    def words_ahead(self, *words: str) -> bool:
        return all(self.text(i).lower() == w for i, w in enumerate(words))

    def english_letter(self) -> bool:
        """The token at the position is "a", "A", "I" or "i" used as English ("root of a matrix")."""
        t = self.peek()
        return t is not None and t.kind == "word" and t.text in ENGLISH_LETTERS and \
            not letter_is_variable(t, self.peek(1))

    def unicode_script(self, table: dict[str, str]) -> str:
        """The run of Unicode super- or subscript characters at the position, as plain characters."""
        out = self.take().text
        text = table[out]
        while (t := self.peek()) is not None and t.text in table and not t.space_before:
            text += table[self.take().text]
        return text


def set_like(node: Piece) -> bool:
    """The right side of a word relation ("x in R", "n in {1, 2}", "x in [0, 1]") looks like a set."""
    lat = node.latex
    return lat[:1].isupper() or lat.startswith(("\\{", "[", "(", r"\mathbb"))
