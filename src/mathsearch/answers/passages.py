"""A post's HTML body as the pieces an extractive answer is made of, and an answer fitted to a budget.

:func:`pieces` reads the body the collection stores (HTML, formulae in ``math-container`` spans)
into reading order: sentences of paragraphs, displayed equations (a paragraph that holds one
formula and nothing else, written ``$$LaTeX$$``), list items and code blocks.  Formulae are set
aside before sentences are split, so a sentence boundary can never fall inside ``$...$``; list
items and code blocks are pieces of their own, kept whole or left out whole.

:func:`compose` writes chosen pieces back as plain text with LaTeX: the pieces of one paragraph
joined by a space, blocks by a line break, list items with a ``-`` (or their number).
:func:`fit` keeps what fits in a budget of characters (1,200 for ARQMath Task 3), most valuable
first, always in the post's order.
"""

from __future__ import annotations

import html as htmllib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from ..readers.html import MATH_SPAN, strip_delimiters

MAX_ANSWER_CHARS = 1200  # the participant guidelines' limit, in Unicode characters

SENTENCE = "sentence"
DISPLAY = "display"
ITEM = "item"
CODE = "code"


@dataclass(frozen=True, slots=True)
class Piece:
    """One unit of a post: ``text`` is plain text with ``$LaTeX$`` (``$$LaTeX$$`` for a display)."""

    text: str
    kind: str  # sentence, display, item, code
    block: int  # pieces of one paragraph share it; a display, item or code block has its own
    index: int  # position in the post
    marker: str = ""  # list items: "-" or "3."
    formulae: tuple[str, ...] = ()  # the LaTeX of the formulae it holds


_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>")
_BREAKS = frozenset({"p", "div", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "table", "tr", "ul", "ol"})
_HOLD = re.compile("\x00(\\d+)\x00")


def _restore(spans: Sequence[tuple[int, int, object]], src: str, m: re.Match[str]) -> str:
    """The formula a held place ``\\x00i\\x00`` stands for: span ``i`` of ``src``."""
    start, end, _ = spans[int(m.group(1))]
    return src[start:end]


# A sentence ends at . ! or ? (closing brackets and quotes may follow) before white space and
# a capital, a digit, a formula or an opening bracket.  The text holds formulae as \x00N\x00 here.
_END = re.compile(r"(?<=[.!?])[\)\]\"'”’]*\s+(?=[A-Z0-9\x00(\[\"“])")
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|resp|cf|viz|vs|approx|Thm|Prop|Lem|Cor|Def|Eq|Eqn|Fig|Sec|Ch|No|Dr|Prof|Mr|Mrs|Ms|St)|\b[A-Z])\.$"
)


# An unescaped % starts a LaTeX comment.  LaTeXML's alttexts (the collection's LaTeX) wrap long
# formulae with "%" + newline; the collection's one-line text turns that into "% ", which in an
# answer would comment out the rest of the formula (3.5% of the sample's formulae).
# LaTeXML's failures leave debris that holds a "$", which would end the formula early in an answer:
# "...$ \par\end{document}\end{matrix}" (kept up to the "$") and "\qvar@construct{$}\par".
_COMMENT_BREAK = re.compile(r"(?<!\\)%\s*")
_DEBRIS = re.compile(r"\s*\$\s*\\par\s*\\end\{document\}.*$|\\qvar@construct\{\$\}\\par", re.S)


def latex_of(span_text: str) -> str:
    """The LaTeX of a ``math-container`` span's content: unescaped, without ``$`` delimiters, without
    LaTeXML's ``%`` line continuations (``\\%``, a percent sign, is kept) and its failure debris."""
    latex = _DEBRIS.sub("", strip_delimiters(htmllib.unescape(span_text)))
    return _COMMENT_BREAK.sub("", latex).strip()


def _clean(text: str) -> str:
    text = htmllib.unescape(text) if "&" in text else text
    return " ".join(text.split())


def _sentences(text: str) -> list[str]:
    """Sentences of one paragraph (formulae held as ``\\x00N\\x00``, so never cut inside one)."""
    out: list[str] = []
    start = 0
    for m in _END.finditer(text):
        head = text[start : m.start()].rstrip("\"')]”’")
        if _ABBREV.search(head):
            continue
        piece = text[start : m.start() + len(m.group(0))].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def pieces(body_html: str) -> list[Piece]:
    """The pieces of a post body (HTML as stored), in reading order."""
    formulae: list[str] = []

    def hold(m: re.Match[str]) -> str:
        formulae.append(latex_of(m.group(2)))
        return f"\x00{len(formulae) - 1}\x00"

    held = MATH_SPAN.sub(hold, body_html)
    blocks: list[tuple[str, str, str]] = []  # (kind, text, marker)
    buf: list[str] = []
    state = {"pre": 0, "li": 0}
    lists: list[list] = []  # per open list: [ordered, counter]

    def flush(kind: str = SENTENCE, marker: str = "") -> None:
        raw = "".join(buf)
        buf.clear()
        if kind == CODE:
            text = htmllib.unescape(raw).strip("\n")
            if text.strip():
                blocks.append((CODE, text, ""))
            return
        if raw.strip():
            blocks.append((kind, raw, marker))

    pos = 0
    item_marker = ""
    for m in _TAG.finditer(held):
        buf.append(held[pos : m.start()])
        pos = m.end()
        closing, name = m.group(1) == "/", m.group(2).lower()
        if name == "pre":
            if closing:
                flush(CODE)
                state["pre"] = max(0, state["pre"] - 1)
            else:
                flush(ITEM if state["li"] else SENTENCE, item_marker)
                state["pre"] += 1
        elif state["pre"]:
            continue  # tags inside code (<code>) are dropped, the text kept as it is
        elif name == "li":
            if closing:
                flush(ITEM, item_marker)
                state["li"] = max(0, state["li"] - 1)
            else:
                flush(ITEM if state["li"] else SENTENCE, item_marker)
                state["li"] += 1
                if lists:
                    lists[-1][1] += 1
                    item_marker = f"{lists[-1][1]}." if lists[-1][0] else "-"
                else:
                    item_marker = "-"
        elif name in ("ul", "ol"):
            flush(ITEM if state["li"] else SENTENCE, item_marker)
            if closing:
                if lists:
                    lists.pop()
            else:
                lists.append([name == "ol", 0])
        elif name in _BREAKS:
            if state["li"]:
                buf.append(" ")  # paragraphs inside a list item stay in the item
            else:
                flush()
        else:
            buf.append("")  # inline tags (a, em, strong, code, span) vanish, their text stays
    buf.append(held[pos:])
    flush(ITEM if state["li"] else SENTENCE, item_marker)

    out: list[Piece] = []

    def restore(text: str) -> tuple[str, tuple[str, ...]]:
        used = tuple(formulae[int(i)] for i in _HOLD.findall(text))
        restored = _HOLD.sub(lambda m: f"${formulae[int(m.group(1))]}$", text)
        return " ".join(restored.split()), used

    for b, (kind, raw, marker) in enumerate(blocks):
        if kind == CODE:
            out.append(Piece(raw, CODE, b, len(out)))
            continue
        text = _clean(raw)
        if not text:
            continue
        if kind == ITEM:
            restored, used = restore(text)
            out.append(Piece(restored, ITEM, b, len(out), marker, used))
            continue
        alone = _HOLD.fullmatch(text.rstrip(".,;:").strip())
        if alone:
            latex = formulae[int(alone.group(1))]
            tail = text.rstrip()[len(text.rstrip().rstrip(".,;:")) :]
            out.append(Piece(f"$${latex}$${tail}", DISPLAY, b, len(out), "", (latex,)))
            continue
        for sentence in _sentences(text):
            restored, used = restore(sentence)
            out.append(Piece(restored, SENTENCE, b, len(out), "", used))
    return out


def compose(chosen: Sequence[Piece]) -> str:
    """Plain text with LaTeX of ``chosen`` (in the given order)."""
    parts: list[str] = []
    last_block: int | None = None
    for p in chosen:
        text = f"{p.marker} {p.text}" if p.kind == ITEM and p.marker else p.text
        if last_block is None:
            parts.append(text)
        elif p.block == last_block and p.kind == SENTENCE:
            parts.append(" " + text)
        else:
            parts.append("\n" + text)
        last_block = p.block
    return "".join(parts).strip()


def _in_formula(text: str, at: int) -> bool:
    """Whether position ``at`` of ``text`` falls inside a ``$...$`` or ``$$...$$`` formula."""
    inside = False
    i = 0
    while i < at and i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "$":
            inside = not inside
            if text.startswith("$$", i):
                i += 2
                continue
        i += 1
    return inside


def cut_words(text: str, budget: int, ellipsis: str = " …") -> str:
    """``text`` cut at the last word boundary outside a formula that leaves room for ``ellipsis``
    within ``budget`` characters; "" when no such boundary exists."""
    if len(text) <= budget:
        return text
    limit = budget - len(ellipsis)
    for at in range(min(limit, len(text) - 1), 0, -1):
        if text[at].isspace() and not _in_formula(text, at):
            head = text[:at].rstrip()
            if head:
                return head + ellipsis
    return ""


def fit(
    all_pieces: Sequence[Piece],
    budget: int = MAX_ANSWER_CHARS,
    value: Callable[[Piece], float] | None = None,
    lead: int = 1,
) -> list[Piece]:
    """The pieces to keep within ``budget`` characters, in post order.

    Everything when it fits.  Without ``value``, the longest opening that fits (a prefix cut at a
    piece boundary).  With it, the first ``lead`` pieces (the opening usually states the answer),
    then the others by ``value`` (highest first) while they fit; a piece that does not fit is
    skipped, never cut.
    """
    if not all_pieces:
        return []
    if len(compose(all_pieces)) <= budget:
        return list(all_pieces)
    if value is None:
        prefix: list[Piece] = []
        for p in all_pieces:
            if len(compose([*prefix, p])) > budget:
                break
            prefix.append(p)
        return prefix
    order = list(all_pieces[:lead]) + sorted(all_pieces[lead:], key=lambda p: (-value(p), p.index))
    kept: list[Piece] = []
    for p in order:
        trial = sorted([*kept, p], key=lambda q: q.index)
        if len(compose(trial)) <= budget:
            kept = trial
    return kept


def condense(
    all_pieces: Sequence[Piece],
    budget: int = MAX_ANSWER_CHARS,
    value: Callable[[Piece], float] | None = None,
    lead: int = 1,
) -> str:
    """The answer text made of ``all_pieces`` in at most ``budget`` characters (see :func:`fit`);
    when no whole piece fits, the first prose piece cut at a word boundary outside any formula."""
    text = compose(fit(all_pieces, budget, value, lead))
    if text:
        return text
    for p in all_pieces:
        if p.kind in (SENTENCE, ITEM):
            cut = cut_words(compose([p]), budget)
            if cut:
                return cut
    return ""


def text_pieces(text: str) -> list[Piece]:
    """The pieces of plain text with ``$``/``$$`` LaTeX (a generated answer): lines are blocks,
    a line that is one formula is a display, lines opening with ``-``, ``*`` or ``N.`` are items."""
    from ..text.dollar_math import find_math

    out: list[Piece] = []
    for b, line in enumerate(x.strip() for x in text.split("\n")):
        if not line:
            continue
        found = find_math(line, is_html=False)
        formulae = [latex for _, _, latex in found]
        if len(found) == 1 and found[0][0] == 0 and not line[found[0][1] :].strip(" .,;:"):
            out.append(Piece(line, DISPLAY, b, len(out), "", tuple(formulae)))
            continue
        item = re.match(r"([-*]|\d+[.)])\s+", line)
        if item:
            out.append(Piece(line[item.end() :], ITEM, b, len(out), item.group(1), tuple(formulae)))
            continue
        held: list[str] = []
        pos = 0
        for i, (start, end, _) in enumerate(found):
            held.append(line[pos:start].replace("\x00", " "))
            held.append(f"\x00{i}\x00")
            pos = end
        held.append(line[pos:].replace("\x00", " "))
        for sentence in _sentences("".join(held)):
            restored = _HOLD.sub(partial(_restore, found, line), sentence)
            used = tuple(formulae[int(i)] for i in _HOLD.findall(sentence))
            out.append(Piece(restored, SENTENCE, b, len(out), "", used))
    return out
