"""Plain-words math in typed queries: ``sqrt 2``, ``x sin x``, ``1/n^2``, ``integral from 0 to 1 of
x^2 dx``, ``lim x->0 sin(x)/x``, Greek letters by name, and maths said in words (``square root of 2``,
``x squared plus 1``, ``log base 2 of 8``), found in text and written as LaTeX.

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

from .dollar_math import find_math
from .plainmath_grammar import Parser
from .plainmath_vocab import (
    ENGLISH_LETTERS,
    GREEK_UNICODE,
    SETS,
    VULGAR,
    Piece,
    Token,
    letter_is_variable,
    tokenize,
)


@dataclass(frozen=True, slots=True)
class PlainSpan:
    """One span of typed text understood as maths: where it is, what was typed, its LaTeX."""

    start: int
    end: int
    typed: str
    latex: str


def _is_math(node: Piece, tokens: list[Token], after: Token | None) -> bool:
    if node.strong:
        return True
    if len(tokens) == 1:
        t = tokens[0]
        if t.kind != "word" or len(t.text) != 1:
            return False
        return t.text not in ENGLISH_LETTERS or letter_is_variable(t, after)
    return False


def find_plain_math(text: str) -> list[PlainSpan]:
    """The spans of ``text`` (no ``$`` formulae in it) that are maths typed without LaTeX."""
    toks = tokenize(text)
    spans: list[PlainSpan] = []
    parser = Parser(toks)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "op" or t.kind == "other" and t.text not in ("(", "[", "{", "|", "-", "√", "∫", "∑", "∏", "∞", "∂") \
                and t.text not in GREEK_UNICODE and t.text not in SETS and t.text not in VULGAR:
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

    Formulae already between ``$...$``, ``\\(...\\)`` or ``\\[...\\]`` are kept as they are; LaTeX typed
    without dollars (a backslash command and the maths around it: ``prove \\sqrt{2} is irrational``)
    is put between dollars as typed (:func:`find_bare_latex`).

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
    # LaTeX without dollars is read only in a text that delimits no formula: where dollars are
    # typed (some unpaired, as in topics copied from the site), the author's LaTeX is theirs
    if _COMMAND.search(text) and "$" not in text and "\\(" not in text and "\\[" not in text:
        return _annotate_bare(text, spans), spans
    pos = 0
    for start, end, _ in [*find_math(text, is_html=False), (len(text), len(text), "")]:
        segment = text[pos:start]
        out.append(_annotate_segment(segment, pos, spans))
        out.append(text[start:end])
        pos = end
    return "".join(out), spans


# LaTeX typed without dollars ("prove \\sqrt{2} is irrational", "\\int_0^1 x^2 dx"): a chunk between
# spaces holding a command, and the chunks around it that are maths too (scripts, operators, braces,
# a lone letter or number, a differential after an integral), up to the first word of English.
_CHUNK = re.compile(r"\S+")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_MATHY = re.compile(r"[\w^_{}()\[\]+\-*/=<>.,|'!]+")
_OPERATOR = re.compile(r"[\^_{}=+\-*/<>|]")
_TRAILING = ".,;:?!"


def _mathy(chunk: str, after_integral: bool) -> bool:
    if _COMMAND.search(chunk):
        return True
    if not _MATHY.fullmatch(chunk):
        return False
    core = chunk.rstrip(_TRAILING)
    return bool(_OPERATOR.search(core)) or len(core) == 1 or core.isdigit() or \
        after_integral and len(core) == 2 and core[0] == "d" and core[1].isalpha()


def _open_braces(latex: str) -> int:
    return latex.count("{") - latex.count("\\{") - (latex.count("}") - latex.count("\\}"))


def find_bare_latex(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are LaTeX typed without dollars: each holds a command."""
    chunks = [(m.start(), m.end(), m.group()) for m in _CHUNK.finditer(text)]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(chunks):
        if not _COMMAND.search(chunks[i][2]):
            i += 1
            continue
        lo = i
        while lo > 0 and _mathy(chunks[lo - 1][2], False) and not chunks[lo - 1][2].endswith(tuple(_TRAILING)):
            lo -= 1
        hi = i
        integral = r"\int" in chunks[i][2]
        while hi + 1 < len(chunks) and (_open_braces(text[chunks[lo][0]:chunks[hi][1]]) > 0 or (
                not chunks[hi][2].endswith(tuple(_TRAILING)) and _mathy(chunks[hi + 1][2], integral))):
            hi += 1  # ("\\text{for all} x": a brace opened is closed in the same formula)
            integral = integral or r"\int" in chunks[hi][2]
        start, end = chunks[lo][0], chunks[hi][1]
        while end > start and text[end - 1] in _TRAILING and _open_braces(text[start:end - 1]) >= 0:
            end -= 1  # "\\sqrt{2}." ends its sentence, not its formula
        if _open_braces(text[start:end]) != 0:  # "\\frac{1}{2": not a formula yet; left as typed
            i = hi + 1
            continue
        if spans and spans[-1][1] >= start:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
        i = hi + 1
    return spans


def _annotate_bare(text: str, spans: list[PlainSpan]) -> str:
    """A text that delimits no formula but holds LaTeX commands: each LaTeX span between dollars as
    typed, the text around it read as plain words."""
    out, pos = [], 0
    for start, end in find_bare_latex(text):
        out.append(_annotate_segment(text[pos:start], pos, spans))
        latex = text[start:end]
        out += ["$", latex, "$"]
        spans.append(PlainSpan(start, end, latex, latex))
        pos = end
    out.append(_annotate_segment(text[pos:], pos, spans))
    return "".join(out)


def _annotate_segment(segment: str, offset: int, spans: list[PlainSpan]) -> str:
    if not segment.strip() or _COMMAND.search(segment):  # LaTeX left as typed
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
    toks = tokenize(text)
    if not toks:
        return None
    parser = Parser(toks)
    node = parser.attempt(parser.relation, True)
    if node is None or parser.pos != len(toks):
        return None
    return node.latex
