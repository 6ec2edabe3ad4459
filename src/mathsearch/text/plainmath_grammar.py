"""The grammar of plain-words maths (:mod:`mathsearch.text.plainmath`): a recursive-descent parser
of ASCII maths that writes LaTeX as it reads, backtracking where a reading fails."""

from __future__ import annotations

from .plainmath_operators import BigOperators
from .plainmath_vocab import (
    ADDITIVE,
    BINOMIAL_NAMES,
    ENGLISH_LETTERS,
    FUNC_LATEX,
    GREEK_NAMES,
    GREEK_UNICODE,
    INTEGRALS,
    MULTIPLY,
    NOT_NAMES,
    ORDINAL_ENDS,
    RELATIONS,
    ROOT_WORDS,
    SETS,
    SQRT,
    SUBSCRIPTS,
    SUMS,
    SUPERSCRIPTS,
    VULGAR,
    WORD_ACCENTS,
    WORD_ADDITIVE,
    WORD_MULTIPLY,
    WORD_POSTFIX,
    WORD_RELATIONS,
    NoMaths,
    Piece,
    Token,
    binomial_shorthand,
    glued_function,
    glued_letters,
    group_latex,
    is_differential,
    join_latex,
    letter_is_variable,
    ordinal_letter,
    scripted_base,
    set_like,
    with_script,
    word_class,
)

GREEK_LATEX = frozenset(GREEK_NAMES.values())
MAX_DEPTH = 60  # nested factors and atoms a span may hold; deeper input stays words

class Parser(BigOperators):
    """ASCII maths from ``toks[pos]`` on; each method returns a node or raises :class:`NoMaths`."""

    def __init__(self, toks: list[Token]):
        super().__init__(toks)
        self.in_abs = 0
        self.in_integral = 0
        self.depth = 0
        self.memos: dict[tuple, tuple[Piece | None, int]] = {}

    # grammar
    def choose(self) -> Piece:
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
        return Piece(rf"\binom{{{group_latex(top)}}}{{{group_latex(bottom)}}}", True)

    def relation(self, commas: bool = False) -> Piece:
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
            if right is None or (rel[0] in (r"\in", r"\mid", r"\subset") and rel[2] and not set_like(right)):
                self.pos = saved
                break
            if rel[0] == r"\pmod":
                parts.append(rf"\pmod{{{group_latex(right)}}}")
            else:
                parts += [rel[0], right.latex]
            strong = True
        return Piece(join_latex(*parts), strong, letter=left.letter if len(parts) == 1 else None)

    def relation_symbol(self) -> tuple[str, int, bool] | None:
        """``(LaTeX, tokens, is a word)`` of the relation at the position, if any."""
        t = self.peek()
        if t is None:
            return None
        if t.text == "|" and self.in_abs:
            return None
        if t.text in RELATIONS:
            return RELATIONS[t.text], 1, False
        low = t.text.lower()
        if t.kind == "word":
            if low in WORD_RELATIONS:
                return WORD_RELATIONS[low], 1, True
            if low == "is" and self.text(1).lower() in ("congruent", "equivalent"):
                return (r"\equiv", 4, True) if self.words_ahead("is", self.text(1).lower(), "to") else None
        return None

    def additive(self) -> Piece:
        if self.text() in ADDITIVE:  # a leading sign
            sign = ADDITIVE[self.take().text]
            first = self.term()
            node = Piece(join_latex(sign, first.latex), True)
        else:
            node = self.term()
        parts, strong = [node.latex], node.strong
        while self.text() in ADDITIVE or self.text().lower() in WORD_ADDITIVE:
            saved = self.pos
            sign = self.take().text
            op = ADDITIVE.get(sign) or WORD_ADDITIVE[sign.lower()]
            right = self.attempt(self.term)
            if right is None:
                self.pos = saved
                break
            parts += [op, right.latex]
            strong = True
        if len(parts) == 1:
            return node
        return Piece(join_latex(*parts), strong)

    def tight(self) -> Piece:
        """A factor and the factors written against it without a space: "2x", "n(n+1)"."""
        node = self.factor()
        while (t := self.peek()) is not None and not t.space_before and t.kind in ("num", "word") \
                and self.starts_atom(juxtaposed=True) or self.text() == "(" and not self.peek().space_before:
            if t.text == "(" and self.text(-1) == ")":
                break  # "(a)(1)/(2)": the group before a fraction is a factor of its own
            right = self.attempt(self.factor)
            if right is None:
                break
            node = Piece(join_latex(node.latex, right.latex), True)
        return node

    def fraction(self) -> Piece:
        """Products written tight over others: "(d Phi)/(d u) * (d Phi)/(d v)" is a product of two
        fractions, "n(n+1)/2" one fraction."""
        node = self.tight()
        while self.text() in ("/", "÷") or self.words_ahead("divided", "by") or self.text().lower() == "over":
            saved = self.pos
            said_over = self.text().lower() == "over"  # "1 over n squared"; "over a field" is English
            self.pos += 1 if self.text() in ("/", "÷") or said_over else 2
            den = None if said_over and (self.english_letter() or not self.starts_atom()) else self.attempt(self.tight)
            if den is not None and said_over and node.letter and den.letter:
                den = None  # "L over K", "V over F": a field extension, a vector space, not a fraction
            if den is None:
                self.pos = saved
                break
            node = Piece(rf"\frac{{{group_latex(node)}}}{{{group_latex(den)}}}", True)
        return node

    def term(self) -> Piece:
        node = self.fraction()
        while True:
            t = self.peek()
            if t is None:
                break
            saved = self.pos
            if t.text in MULTIPLY or (t.kind == "word" and t.text in WORD_MULTIPLY):
                self.pos += 1
                op = MULTIPLY.get(t.text) or WORD_MULTIPLY[t.text]
                right = self.attempt(self.factor if t.text == "**" else self.fraction)
                if right is None:
                    self.pos = saved
                    break
                if op == "^":
                    node = Piece(join_latex(node.latex, "^{" + group_latex(right) + "}"), True)
                else:
                    node = Piece(join_latex(node.latex, op, right.latex), True)
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
            node = Piece(join_latex(node.latex, right.latex), strong or not t.space_before)
        return node

    def starts_atom(self, juxtaposed: bool = False) -> bool:
        t = self.peek()
        if t is None:
            return False
        if t.kind == "num":
            return True
        if t.kind == "word":
            if self.in_integral and is_differential(t.text, self.text(1)):
                return False
            if t.text.lower() in ROOT_WORDS and self.text(1).lower() == "root" or glued_function(t.text) or \
                    self.words_ahead("absolute", "value", "of"):
                return True
            if t.text in ENGLISH_LETTERS and juxtaposed and t.space_before:
                return letter_is_variable(t, self.peek(1))
            return word_class(t.text) is not None or glued_letters(t, self.peek(-1) if self.pos else None, self.peek(1)) is not None
        if t.text in ("(", "[", "{"):
            return True
        if t.text == "|":
            return not self.in_abs and not (juxtaposed and t.space_before)
        return t.text in GREEK_UNICODE or t.text in SETS or t.text in SQRT or t.text in INTEGRALS \
            or t.text in SUMS or t.text == "∞" or t.text == "..." or t.text == "∂" or t.text in VULGAR

    def memo(self, name: str, fn) -> Piece:  # noqa: ANN001 - a parse method
        """``fn()`` parsed once per position and state (packrat): backtracking over nested brackets
        ("(x(x(x...") would otherwise try the same sub-parse twice a level, 2^n in all."""
        key = (name, self.pos, self.in_abs, self.in_integral)
        known = self.memos.get(key)
        if known is not None:
            if known[0] is None:
                raise NoMaths
            self.pos = known[1]
            return known[0]
        start = self.pos
        try:
            node = fn()
        except NoMaths:
            self.memos[key] = (None, start)
            raise
        self.memos[key] = (node, self.pos)
        return node

    def factor(self) -> Piece:
        return self.memo("factor", self._factor)

    def _factor(self) -> Piece:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:  # "((((...", "- - - ...": deeper than any typed formula
                raise NoMaths
            if self.text() in ("-", "−", "+-", "±"):
                sign = ADDITIVE[self.take().text]
                inner = self.factor()
                return Piece(join_latex(sign, inner.latex), True)
            return self.power()
        finally:
            self.depth -= 1

    def power(self) -> Piece:
        node = self.atom()
        while True:
            t = self.peek()
            if t is None:
                break
            if t.text in SUPERSCRIPTS or t.text in SUBSCRIPTS:  # "x²", "a₁₂", "x⁻¹": a run of them, one script
                mark, table = ("^", SUPERSCRIPTS) if t.text in SUPERSCRIPTS else ("_", SUBSCRIPTS)
                node = Piece(with_script(node.latex, mark, self.unicode_script(table)), True)
                continue
            if t.text in ("^", "_"):
                saved = self.pos
                self.pos += 1
                script = self.attempt(self.script, t.text)
                if script is None:
                    self.pos = saved
                    break
                node = Piece(with_script(node.latex, t.text, script), True)
            elif t.text == "!" and not t.space_before:
                self.pos += 1
                node = Piece(node.latex + "!", True)
            elif t.text == "'" and not t.space_before:
                self.pos += 1
                node = Piece(node.latex + "'", True)
            elif t.kind == "word" and t.text.lower() in WORD_POSTFIX and node.letter not in ("a", "I"):
                # "x squared", "A inverse", "n factorial"; "over a factorial", "I squared it" are English
                self.pos += 1
                postfix = WORD_POSTFIX[t.text.lower()]  # "x^2 squared", "A^T inverse": {x^{2}}^{2}
                node = Piece(scripted_base(node.latex, postfix[0]) + postfix, True)
            elif t.kind == "word" and t.text.lower() in WORD_ACCENTS and (
                    node.letter not in (None, "a", "I") or node.latex in GREEK_LATEX):
                # "x bar", "theta hat": an accent said after its one letter; "a bar", "a hat" are English
                self.pos += 1
                node = Piece(rf"{WORD_ACCENTS[t.text.lower()]}{{{node.latex}}}", True)
            elif self.words_ahead("to", "the") or self.words_ahead("raised", "to", "the", "power"):
                exponent = self.attempt(self.said_to_the)
                if exponent is None:
                    break  # "to the right": English
                node = Piece(with_script(node.latex, "^", exponent), True)
            else:
                break
        return node

    def script(self, tower: str = "") -> str:
        """A super- or subscript's body.  With ``tower`` (its mark), a run of the same mark nests to
        the right, as mathematics reads it: "e^-x^2" is e^{-x^{2}}, "a_n_k" a_{n_{k}}; LaTeX refuses
        "e^{-x}^{2}" ("double exponent")."""
        if self.text() in ("(", "{", "["):
            return group_latex(self.atom())  # "e^(-x)^2": the bracket closes the script
        sign = ADDITIVE[self.take().text] if self.text() in ("-", "−", "+") else ""
        body = self.atom().latex
        if tower and self.text() == tower:
            saved = self.pos
            self.pos += 1
            inner = self.attempt(self.script, tower)
            if inner is None:
                self.pos = saved
            else:
                body = f"{body}{tower}{{{inner}}}"
        return join_latex(sign, body) if sign else body

    def tight_run(self) -> Piece | None:
        """The maths typed without a space from the position on, read whole where it says more than
        one factor: after "square root of" and "absolute value of", "x^2+1" and "2x" are the argument
        as their spacing groups them.  None where the run is one factor, or is not maths."""
        end = self.pos + 1
        while end < len(self.toks) and not self.toks[end].space_before:
            end += 1
        while end > self.pos + 1 and self.toks[end - 1].text in (".", ",", ";", ":", "?"):
            end -= 1  # "... of 1-x^2." ends the sentence, not the formula
        if end - self.pos < 2:
            return None
        run = Parser(self.toks[self.pos:end])
        node = run.attempt(run.additive)
        if node is None or run.pos < 2:
            return None
        self.pos += run.pos  # "x^2+1=0": the sum is the argument, "=0" follows it
        return node

    def said_pair(self) -> tuple[str, str]:
        """Two sums said with "and" between them: "12 and 18", "a and b"."""
        first = self.additive()
        if self.text().lower() != "and":
            raise NoMaths
        self.pos += 1
        return first.latex, self.additive().latex

    def said_to_the(self) -> str:
        """The exponent of "e to the x", "x to the nth power", "2 to the 3rd": after "to the", an
        ordinal (then "power" if said) or maths that starts at once; "to the right" is English.  Also
        "(raised) to the power (of) n"."""
        self.pos += 3 if self.text().lower() == "raised" else 2
        if self.text().lower() == "power":
            self.pos += 2 if self.text(1).lower() == "of" else 1
            return self.said_exponent()
        t, after = self.peek(), self.peek(1)
        if t is None:
            raise NoMaths
        exponent = None
        if t.kind == "num" and after is not None and not after.space_before and after.text.lower() in ORDINAL_ENDS:
            exponent, self.pos = t.text, self.pos + 2  # "3rd", "10th"
        elif t.kind == "word" and (letter := ordinal_letter(t.text)) is not None:
            exponent, self.pos = letter, self.pos + 1  # "nth", "kth"
        if exponent is not None:
            if self.text().lower() == "power":
                self.pos += 1
            return exponent
        signed = t.text in ("-", "−") or t.text.lower() in ("minus", "negative")  # "e to the minus x"
        if not signed and (not self.starts_atom() or t.text in ("a", "A", "I")  # "to the i": the unit, never English
                           or word_class(t.text) in ("integral", "sum", "limit", "root")):
            raise NoMaths
        return self.said_exponent()

    def said_exponent(self) -> str:
        """The exponent after "to the power of": the powers said against each other up to the next
        operator, so "e to the power of i pi" is e^{i\\pi} and "e to the power of -x squared"
        e^{-x^{2}}; "2 to the power of n minus 1" stops at "minus"."""
        if self.text() in ("(", "{", "["):
            return group_latex(self.atom())
        sign = ""
        if self.text() in ("-", "−", "+") or self.text().lower() in ("minus", "negative"):
            said = self.take().text
            sign = ADDITIVE.get(said, "-")  # "minus", "negative": said as a word
        return join_latex(sign, *self.juxtaposed())

    def juxtaposed(self) -> list[str]:
        """Powers written against each other up to the next operator, function or big operator: the
        argument of "sin 2x", the exponent of "e to the power of i pi"."""
        pieces = [self.power().latex]
        while self.starts_atom(juxtaposed=True) and word_class(self.text()) not in ("function", "integral", "sum",
                                                                                      "limit", "root"):
            piece = self.attempt(self.power)
            if piece is None:
                break
            pieces.append(piece.latex)
        return pieces

    def atom(self) -> Piece:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise NoMaths
            return self._atom()
        finally:
            self.depth -= 1

    def _atom(self) -> Piece:
        t = self.peek()
        if t is None:
            raise NoMaths
        shorthand = binomial_shorthand(self.toks, self.pos) if t.kind in ("num", "word") else None
        if shorthand is not None:  # "nCk", "10C3": the calculator's binomial coefficient
            self.pos += shorthand[2]
            return Piece(rf"\binom{{{shorthand[0]}}}{{{shorthand[1]}}}", True)
        if t.kind == "num":
            self.pos += 1
            return Piece(t.text, False)
        if t.text in ("(", "[", "{"):
            return self.bracketed()
        if t.text == "|" and (bar := self.peek(1)) is not None and bar.text == "|" and not bar.space_before:  # "||x||"
            inner = self.between_bars(2)
            if (bar := self.peek()) is None or bar.space_before:
                raise NoMaths  # "||x| |": not the norm's closing pair
            self.expect("|")
            return Piece(rf"\|{inner.latex}\|", True)  # a norm
        if t.text == "|" and not self.in_abs:
            inner = self.between_bars(1)
            return Piece(f"|{inner.latex}|", True)
        if t.text in GREEK_UNICODE:
            self.pos += 1
            return Piece(GREEK_UNICODE[t.text], True)
        if t.text in SETS:
            self.pos += 1
            return Piece(SETS[t.text], True)
        if t.text == "∂":
            self.pos += 1
            return Piece(r"\partial", True)
        if t.text == "...":
            self.pos += 1
            return Piece(r"\ldots", True)
        if t.text in SQRT:
            return self.root()
        if t.text in INTEGRALS or t.text in SUMS:
            return self.big_operator()
        if t.text == "∞":
            self.pos += 1
            return Piece(r"\infty", True)
        if t.text in VULGAR:
            self.pos += 1
            return Piece(VULGAR[t.text], True)
        if t.kind != "word":
            raise NoMaths
        if t.text.lower() in ROOT_WORDS and self.text(1).lower() == "root":
            return self.root()
        if self.words_ahead("absolute", "value", "of") and not self.in_abs:  # "absolute value of x-1"
            self.pos += 3
            if self.english_letter():
                raise NoMaths
            inner = self.bracketed() if self.text() == "(" else self.tight_run() or self.power()
            return Piece(f"|{group_latex(inner)}|", True)
        if self.words_ahead("derivative", "of") or self.words_ahead("partial", "derivative", "of"):
            return self.derivative()
        if t.text.lower() == "partial" and (v := self.peek(1)) is not None and v.kind == "word" and len(v.text) == 1:
            self.pos += 2  # "partial f / partial x"
            return Piece(r"\partial " + v.text, True)
        glued = glued_function(t.text)
        if glued is not None:
            self.pos += 1
            return Piece(join_latex(FUNC_LATEX.get(glued[0], "\\" + glued[0]), glued[1]), True)
        kind = word_class(t.text)
        if kind == "greek":
            self.pos += 1
            return Piece(GREEK_NAMES[t.text if t.text in GREEK_NAMES else t.text.lower()], True)
        if kind == "infinity":
            self.pos += 1
            return Piece(r"\infty", True)
        if kind == "function":
            return self.function()
        if kind == "root":
            return self.root()
        if kind in ("integral", "sum", "limit"):
            return self.big_operator()
        if kind == "letter":
            self.pos += 1
            return Piece(t.text, False, letter=t.text)
        letters = glued_letters(t, self.peek(-1) if self.pos else None, self.peek(1))
        if letters is not None:
            self.pos += 1
            return Piece(letters, False)
        applied = (after := self.peek(1)) is not None and after.text == "(" and not after.space_before
        if applied and t.text.lower() in BINOMIAL_NAMES:
            binomial = self.attempt(self.binomial)
            if binomial is not None:
                return binomial
        if applied and len(t.text) <= 6 and t.text.lower() not in NOT_NAMES:
            self.pos += 1  # "Var(X)", "tr(A)": an operator name applied to brackets
            arg = self.bracketed()
            return Piece(rf"\operatorname{{{t.text}}}{arg.latex}", True)
        raise NoMaths

    def between_bars(self, opening: int) -> Piece:
        """The sum after ``opening`` bars, up to and past the first closing bar (a bar inside it would
        close, not open: "|x|+|y|")."""
        self.pos += opening
        self.in_abs += 1
        try:
            inner = self.additive()
        finally:
            self.in_abs -= 1
        self.expect("|")
        return inner

    def binomial(self) -> Piece:
        """``binomial(n, k)``, ``choose(n+1, 2)``: the binomial coefficient as a function of two sums."""
        self.pos += 2
        top = self.additive()
        self.expect(",")
        bottom = self.additive()
        self.expect(")")
        return Piece(rf"\binom{{{group_latex(top)}}}{{{group_latex(bottom)}}}", True)

    def bracketed(self) -> Piece:
        return self.memo("bracketed", self._bracketed)

    def _bracketed(self) -> Piece:
        if self.text() == "(" and self.text(1).lower() == "mod":  # "a equiv b (mod n)"
            self.pos += 2
            modulus = self.additive()
            self.expect(")")
            return Piece(rf"\pmod{{{modulus.latex}}}", True)
        opener = self.take().text
        closers = {"(": (")", "]"), "[": ("]", ")"), "{": ("}",)}[opener]
        saved_abs, self.in_abs = self.in_abs, 0
        try:
            inner = self.relation(commas=True)
        finally:
            self.in_abs = saved_abs
        closer = self.expect(*closers)
        if inner.latex.startswith(r"\binom") and inner.latex.count(r"\binom") == 1 and inner.latex.endswith("}"):
            return Piece(inner.latex, True)  # "(n choose k)": the brackets are the binomial's own
        if opener == "{":
            return Piece(rf"\{{{inner.latex}\}}", True, inner=inner.latex)
        strong = inner.strong or "," in inner.latex  # an interval or a pair: "[a, b]", "(x, y)"
        return Piece(f"{opener}{inner.latex}{closer}", strong, inner=inner.latex, letter=inner.letter)

    def function(self) -> Piece:
        name = self.take().text
        latex = FUNC_LATEX.get(name, "\\" + name)
        scripts = ""
        while self.text() in ("^", "_") and self.text() not in scripts:  # one of each: "sin^2_x^3" stops
            mark = self.take().text
            scripts += f"{mark}{{{self.script(mark)}}}"
        if self.text().lower() in ("squared", "cubed") and not scripts:  # "sin squared x": sin^2 x
            scripts = WORD_POSTFIX[self.take().text.lower()]
        if name == "log" and self.text().lower() == "base" and not scripts:  # "log base 2 of 8"
            self.pos += 1
            scripts = f"_{{{self.script()}}}"
        if self.text().lower() == "of":  # "log of 8", "sin of x"
            self.pos += 1
            if name in ("gcd", "lcm", "max", "min") and not scripts:  # "gcd of 12 and 18": gcd(12, 18)
                pair = self.attempt(self.said_pair)
                if pair is not None:
                    return Piece(rf"{latex}({pair[0]}, {pair[1]})", True)
            if self.english_letter():
                raise NoMaths
        if self.text() == "(":
            arg = self.bracketed()
            return Piece(join_latex(latex + scripts, arg.latex), True)
        # "sin x", "sin 2x", "log n!": the juxtaposed factors up to the next operator or function
        return Piece(join_latex(latex + scripts, *self.juxtaposed()), True)

    def root(self) -> Piece:
        name = self.take().text
        if name.lower() in ROOT_WORDS:  # "square root", "cube root": the word "root" follows
            self.pos += 1
            index = ROOT_WORDS[name.lower()]
        else:
            index = "3" if name in ("cbrt", "∛") else ""
        said_of = self.text().lower() == "of"
        if said_of:
            self.pos += 1
        if self.english_letter():
            raise NoMaths  # "square root of a matrix"
        if self.text() == "(":
            arg = self.bracketed()
        else:  # "sqrt of 1-x^2" is the root of 1-x^2; "sqrt x+1", as a calculator reads it, is not
            arg = (self.tight_run() if said_of else None) or self.power()
        body = group_latex(arg)
        return Piece(rf"\sqrt[{index}]{{{body}}}" if index else rf"\sqrt{{{body}}}", True)
