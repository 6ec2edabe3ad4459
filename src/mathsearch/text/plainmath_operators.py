"""The big operators of plain-words maths (:mod:`mathsearch.text.plainmath_grammar`): sums,
products, integrals and limits, their bounds ("from 0 to 1", ``_{k=1}^n``, ``₀¹``, "as x -> 0") and
an integral's differential, read with the grammar's own productions."""

from __future__ import annotations

from collections.abc import Callable

from .plainmath_vocab import (
    GREEK_NAMES,
    INTEGRALS,
    LIMITS,
    NOUN_BEFORE,
    SUBSCRIPTS,
    SUMS,
    SUPERSCRIPTS,
    Cursor,
    NoMaths,
    Piece,
    group_latex,
    is_differential,
    join_latex,
)


def is_variable(piece: Piece) -> bool:
    """One letter or one Greek letter: what a limit approaches in, or a derivative is taken of and by."""
    return piece.letter is not None or piece.latex in GREEK_NAMES.values()


class BigOperators(Cursor):
    """The grammar's big operators; the productions they read bounds and bodies with are
    :class:`~mathsearch.text.plainmath_grammar.Parser`'s."""

    # the grammar's own state and productions, which Parser defines: declared here for the type checker
    in_integral: int
    relation: Callable[..., Piece]
    additive: Callable[[], Piece]
    term: Callable[[], Piece]
    factor: Callable[[], Piece]
    power: Callable[[], Piece]
    atom: Callable[[], Piece]
    script: Callable[[], str]
    bracketed: Callable[[], Piece]
    starts_atom: Callable[..., bool]

    def bounds(self, low: str | None, high: str | None, limit: bool) -> tuple[str | None, str | None]:
        """Scripts ``_a^b`` (or Unicode ``₀¹``), or "from a to b" (sums and integrals), or "as x -> a" (limits)."""
        while self.text() in SUBSCRIPTS or self.text() in SUPERSCRIPTS:
            if self.text() in SUBSCRIPTS:
                low = self.unicode_script(SUBSCRIPTS)
            else:
                high = self.unicode_script(SUPERSCRIPTS)
        while self.text() in ("_", "^"):
            mark = self.take().text
            value = self.script() if mark == "^" else group_latex(self.subscript())
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
        if not limit and low is None and (word in ("from", "for") or self.text(1) == "="):
            saved = self.pos  # "from n=1 to N", or "n=1 to N" without the "from"
            self.pos += 1 if word in ("from", "for") else 0
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

    def subscript(self) -> Piece:
        if self.text() in ("(", "{", "["):
            return self.bracketed()
        return self.atom()

    def approach(self) -> str:
        """``x -> 0``, ``x to infinity``, ``x approaches 0``, ``n goes to infinity``."""
        var = self.atom()
        if not is_variable(var):
            raise NoMaths
        word = self.text().lower()
        if self.text() in ("->", "→", "-->"):
            self.pos += 1
        elif word in ("approaches", "to"):
            self.pos += 1
        elif word in ("goes", "tends") and self.text(1).lower() == "to":
            self.pos += 2
        else:
            raise NoMaths
        value = self.end_point()
        side = ""
        if self.text() in ("+", "-") and (self.peek(1) is None or not self.starts_atom_at(1)):
            side = "^{" + self.take().text + "}"  # one-sided: x -> 0+
        return join_latex(var.latex, r"\to", value) + side

    def end_point(self) -> str:
        """A bound or a limit point: one factor ("x -> 0 sin(x)/x", "from 0 to infinity (sin x)/x"),
        or a factor over a number ("pi/2")."""
        value = self.factor()
        while value.letter is not None and (t := self.peek()) is not None and t.text == "(" and not t.space_before:
            value = Piece(value.latex + self.bracketed().latex, True)  # "to f(b)"
        after = self.peek(1)
        if self.text() == "/" and after is not None and after.kind == "num":
            self.pos += 1
            return rf"\frac{{{group_latex(value)}}}{{{self.take().text}}}"
        return value.latex

    def starts_atom_at(self, k: int) -> bool:
        saved = self.pos
        self.pos += k
        try:
            return self.starts_atom()
        finally:
            self.pos = saved

    def big_operator(self) -> Piece:
        t = self.take()
        low: str | None = None
        high: str | None = None
        word = t.text if t.text in INTEGRALS or t.text in SUMS else t.text.lower()
        if word in INTEGRALS:
            cmd, kind = INTEGRALS[word], "integral"
        elif word in SUMS:
            cmd, kind = SUMS[word], "sum"
        else:
            cmd, kind = LIMITS[word], "limit"
        low, high = self.bounds(low, high, kind == "limit")
        bounded = low is not None or high is not None
        if not bounded and kind == "sum" and word.isalpha() and self.pos >= 2 and \
                self.toks[self.pos - 2].text.lower() in NOUN_BEFORE:
            raise NoMaths  # "the sum of", "cross product": the English word
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
            raise NoMaths
        if not bounded:  # bounds written after the body: "sum 1/n^2 from n=1 to oo", "sum k from 1 to n"
            low, high = self.bounds(low, high, kind == "limit")
            if kind == "sum" and body is not None and body.letter and low is not None and "=" not in low:
                low = f"{body.letter}={low}"  # the summed letter runs over the bounds
        if not bounded and low is None and high is None and body is not None and not dx \
                and (not body.strong or body.latex.startswith((r"\int", r"\sum", r"\prod"))):
            raise NoMaths  # "integral integral from ...", "the sum S_n": no operator of its own
        if kind == "limit" and low is None and body is None:
            raise NoMaths
        scripts = ("_{" + low + "}" if low is not None else "") + ("^{" + high + "}" if high is not None else "")
        return Piece(join_latex(cmd + scripts, body.latex if body is not None else "", dx), True)

    def derivative(self) -> Piece:
        """"derivative of f with respect to x" (d f / d x; of an expression, d/dx of it) and "partial
        derivative of f with respect to x" (with the partial sign): the variable is said, or there is
        no derivative to write ("the derivative of a function" stays English)."""
        partial = self.text().lower() == "partial"
        self.pos += 3 if partial else 2
        if self.english_letter():
            raise NoMaths
        f = self.term()
        if not self.words_ahead("with", "respect", "to"):
            raise NoMaths
        self.pos += 3
        x = self.atom()
        if not is_variable(x):
            raise NoMaths
        d, gap = (r"\partial", " ") if partial else ("d", "")
        if is_variable(f):
            return Piece(rf"\frac{{{d}{gap}{f.latex}}}{{{d}{gap}{x.latex}}}", True)
        return Piece(join_latex(rf"\frac{{{d}}}{{{d}{gap}{x.latex}}}", group_latex(f)), True)

    def differential(self) -> str:
        t = self.peek()
        if t is None or t.kind != "word":
            return ""
        if is_differential(t.text, self.text(1)):
            self.pos += 1
            if t.text == "d":
                var = self.take().text
                return "d" + (GREEK_NAMES.get(var, var))
            rest = t.text[1:]
            return "d" + GREEK_NAMES.get(rest, rest)
        return ""
