"""Snippets: the stretch of a post around the query's words (or a formula), cut only between formulae.

A snippet is cut from the stored post's HTML, not from its plain text: the formulae are the post's
own math spans (ARQMath's ``math-container``, inline or display, whatever LaTeX they hold: ``$``
inside LaTeXML's eqnarray, ``\\begin{align*}``...) and the LaTeX the site typesets outside them
(environments, ``\\[..\\]``, ``$$..$$``, ``$..$``: :data:`~mathsearch.readers.html.OUTSIDE_MATH`, as
the thread page finds it).  Re-finding the formulae in the plain text by their ``$`` is what cut
snippets inside ``$$..$$`` and set prose as maths: a span's LaTeX may itself hold ``$``.

    atoms = post_atoms(post.body)                       # words and whole formulae, in order
    post_snippet(post.body, {"prime"}, width=200)       # "...every prime $p>2$ is odd..."

The snippet is plain text with each formula written so that the page's and the CLI's reading of
``$LaTeX$`` (:func:`mathsearch.text.dollar_math.find_math`) gives it back whole: ``$..$`` or
``$$..$$``, else ``\\(..\\)`` or ``\\[..\\]`` for LaTeX holding a ``$``; a ``$`` of the prose is
written ``\\$``.  Each formula is shown as the page typesets it (:func:`tex_shown`: LaTeXML's ``%``
line continuations dropped, HTML entities left in the LaTeX decoded); the stored LaTeX is unchanged.
A snippet is never empty: a post without text is ``[no text]``.
"""

from __future__ import annotations

import html as htmllib
import re
from collections.abc import Collection
from dataclasses import dataclass

from ..text.dollar_math import find_math
from .html import BR_TAG, MATH_SPAN, OUTSIDE_MATH, strip_delimiters

WIDTH = 200  # characters of a snippet's prose; a formula counts half its LaTeX, at most half the width
LONG_FORMULA = 400  # characters: a longer formula stands in a snippet as "[formula, N characters]" ...
LONG_ANCHOR = 2000  # ... unless it is the one the snippet is cut around (the page typesets up to 2,000)
NO_TEXT = "[no text]"
ELLIPSIS = "..."

# Tags that end a word: everything but inline markup (<b>x</b><i>y</i> is one word, <td>x</td><td>y</td> two).
_INLINE_TAGS = frozenset({"a", "abbr", "b", "big", "code", "del", "em", "i", "kbd", "mark", "s", "small", "span",
                          "strike", "strong", "sub", "sup", "u", "var"})
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)\b[^>]*>|<!--.*?-->", re.S)
_TOKEN = re.compile("(\\s*)(?:\x00(\\d+)\x00|([^\\s\x00]+))")


@dataclass(frozen=True)
class Atom:
    """A word of a post's text, or one of its formulae (``text`` is then its LaTeX, stripped)."""

    text: str
    space: bool  # white space before it (none: "($x$)" is three atoms without spaces)
    formula: bool = False
    display: bool = False
    formula_id: str | None = None


# -- what the page's texcompat.js does before MathJax, for the text of a snippet -----------------
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "nbsp": "~", "#39": "'", "#34": '"'}
_ENTITY = re.compile(r"&(?:%\s*)?(amp|lt|gt|quot|apos|nbsp|#39|#34);")
_CELL_ENTITY = re.compile(r"(?:\\hfil\s*)?&(?:%\s*)?\\displaystyle\s*(lt|gt);")
_CELL_AMP = re.compile(r"(&\s*\$?\s*(?:\\displaystyle\s*)?)amp;")
_COMMENT = re.compile(r"(\\[a-zA-Z]+)(%\s*)?|\\[^a-zA-Z]|%\s*")
# LaTeXML's failures leave debris holding a "$" (answers/passages.py drops it too): "...$\par\end{document}"
_DEBRIS = re.compile(r"\s*\$\s*\\par\s*\\end\{document\}.*$|\\qvar@construct\{\$\}\\par", re.S)
# A formula that defines macros (a post's first span often does) and the names it defines.
_DEFINED = re.compile(r"\\(?:(?:re)?newcommand|DeclareMathOperator\*?)\s*\{?\s*\\([A-Za-z]+)|\\def\s*\\([A-Za-z]+)")


def tex_shown(latex: str) -> str:
    """``latex`` as the page typesets it (``static/texcompat.js``: prepareTex's first steps): a ``%``
    and the spaces after it taken out (LaTeXML's line continuations: ``\\frac{1}{2% ^{n}}`` is
    ``\\frac{1}{2^{n}}``; ``\\%`` is a percent sign and stays; LaTeXML's failure debris
    ``$\\par\\end{document}`` dropped, as in answers), then HTML entities decoded, also
    twice-escaped ones and LaTeXML's ``&\\displaystyle amp;`` cells (``&amp;`` half decoded)."""
    if "\\par" in latex or "\\qvar" in latex:
        latex = _DEBRIS.sub("", latex)
    if "%" in latex:
        latex = _COMMENT.sub(lambda m: (m.group(1) + " " if m.group(2) else m.group(1)) if m.group(1)
                             else (m.group(0) if m.group(0).startswith("\\") else ""), latex)
    if "&" in latex:
        latex = _CELL_ENTITY.sub(lambda m: _ENTITIES[m.group(1)], latex)
        before = None
        while before != latex and "&" in latex:  # "&amp;lt;" was escaped twice
            before = latex
            latex = _ENTITY.sub(lambda m: _ENTITIES[m.group(1)], latex)
        latex = _CELL_AMP.sub(r"\1", latex)
    return latex.strip()


# -- a post as words and formulae ----------------------------------------------------------------
def post_atoms(body_html: str) -> list[Atom]:
    """The words and formulae of a post body (HTML as stored), in reading order: each math span
    one formula (its LaTeX unescaped once, as the formula TSV holds it; display when delimited by
    ``$$`` or ``\\[``), and so is each formula the site typesets outside the spans (not in code).
    Tags other than inline markup, and line breaks, separate words; entities of the text are decoded."""
    formulae: list[tuple[str, bool, str | None]] = []  # (LaTeX, display, formula id)

    def hold(latex: str, display: bool, fid: str | None) -> str:
        formulae.append((latex, display, fid))
        return f"\x00{len(formulae) - 1}\x00"

    def span(m: re.Match[str]) -> str:
        raw = htmllib.unescape(m.group(2))
        opened = raw.lstrip()
        return hold(strip_delimiters(raw).strip(), opened.startswith(("$$", "\\[")), m.group(1) or None)

    def outside(m: re.Match[str]) -> str:
        if m.group("code"):
            return m.group(0)
        inline = m.group("paren") or m.group("dollar") or m.group("dangling")
        latex = m.group("envir") or m.group("bracket") or m.group("ddollar") or inline
        rest = ""
        if "\x00" in latex:
            if not m.group("dangling"):
                return m.group(0)  # "$" ... a math span ... "$": prose between two stray dollars
            latex, rest = latex[: latex.index("\x00")], latex[latex.index("\x00"):]
        latex = htmllib.unescape(BR_TAG.sub("\n", latex)).strip()
        return hold(latex, not inline, None) + rest if latex else m.group(0)

    held = MATH_SPAN.sub(span, body_html.replace("\x00", ""))
    if "\\" in held or "$" in held:
        held = OUTSIDE_MATH.sub(outside, held)
    text = _TAG.sub(lambda m: "" if m.group(2) and m.group(2).lower() in _INLINE_TAGS else " ", held)
    text = htmllib.unescape(text) if "&" in text else text
    atoms: list[Atom] = []
    for m in _TOKEN.finditer(text):
        space = bool(m.group(1)) and bool(atoms)
        if m.group(3) is not None:
            atoms.append(Atom(m.group(3), space))
            continue
        latex, display, fid = formulae[int(m.group(2))]
        if latex:  # ("$ $", an empty formula, is a space)
            atoms.append(Atom(latex, space, True, display, fid))
    return atoms


# -- writing a formula so that it reads back whole --------------------------------------------------
def formula_text(latex: str, display: bool = False) -> str | None:
    """``latex`` with delimiters that :func:`find_math` reads back as exactly this formula (``$..$``
    or ``$$..$$``; ``\\(..\\)`` or ``\\[..\\]`` when the LaTeX holds a ``$``), or None when none does."""
    latex = latex.strip()
    tries = (f"$${latex}$$", f"\\[{latex}\\]") if display else (f"${latex}$", f"\\({latex}\\)")
    for written in tries:
        if find_math(written, is_html=False) == [(0, len(written), latex)]:
            return written
    return None


def _word_text(word: str) -> str:
    return re.sub(r"(?<!\\)\$", r"\\$", word) if "$" in word else word  # a prose "$" is no delimiter


def _shown(atom: Atom, width: int, anchor: bool = False) -> tuple[str, int]:
    """What an atom puts in a snippet, and how much of the width it takes."""
    if not atom.formula:
        return _word_text(atom.text), len(atom.text)
    if len(atom.text) <= LONG_ANCHOR and _DEFINED.search(atom.text):  # macros: typeset as nothing, needed whole
        written = formula_text(tex_shown(atom.text))
        if written is not None:
            return written, 0
    if len(atom.text) > (LONG_ANCHOR if anchor else LONG_FORMULA):
        long = f"[formula, {len(atom.text):,} characters]"
        return long, len(long)
    latex = tex_shown(atom.text)
    written = formula_text(latex, atom.display) if latex else None
    if written is None:
        long = f"[formula, {len(atom.text):,} characters]"
        return long, len(long)
    return written, _formula_width(latex, width)


def _formula_width(latex: str, width: int) -> int:
    # typeset LaTeX is narrower than its source ("\\frac{1}{2}": 11 characters, one glyph wide); and
    # one display formula may take half a snippet, so that some prose is always shown beside it
    return min((len(latex) + 1) // 2, width // 2)


def _anchor_at(atoms: list[Atom], words: Collection[str], anchor: str | None, anchor_id: str | None) -> int:
    if anchor_id is not None:
        at = next((i for i, a in enumerate(atoms) if a.formula and a.formula_id == str(anchor_id)), None)
        if at is not None:
            return at
    if anchor:
        key = "".join(anchor.split())
        at = next((i for i, a in enumerate(atoms) if a.formula and "".join(a.text.split()) == key), None)
        if at is not None:
            return at
    wanted = [w.lower() for w in words if len(w) > 2]
    if wanted:
        for formula in (False, True):  # a word of the prose first, else a formula that holds it
            at = next((i for i, a in enumerate(atoms) if a.formula == formula and any(w in a.text.lower() for w in wanted)),
                      None)
            if at is not None:
                return at
    return 0


def snippet_of(atoms: list[Atom], words: Collection[str] = (), width: int = WIDTH, anchor: str | None = None,
               anchor_id: str | int | None = None) -> str:
    """The atoms around the formula ``anchor_id`` (a span's id) or ``anchor`` (its LaTeX), else the
    first holding a query word (else the start), about a third of ``width`` before it, on one line:
    whole words and whole formulae only, ``...`` where the post goes on.  Never empty."""
    if not atoms:
        return NO_TEXT
    at = _anchor_at(atoms, words, anchor, None if anchor_id is None else str(anchor_id))
    memo: dict[int, tuple[str, int]] = {}

    def cost(i: int) -> int:  # an atom's share of the width, with the space before it
        if i not in memo:
            memo[i] = _shown(atoms[i], width, anchor=i == at)
        return memo[i][1] + 1

    start, end = at, at + 1
    used = cost(at) - 1
    while start > 0 and used + cost(start - 1) <= width // 3:
        start -= 1
        used += cost(start)
    while end < len(atoms) and used + cost(end) <= width:
        used += cost(end)
        end += 1
    while start > 0 and used + cost(start - 1) <= width:  # the post ended: more before
        start -= 1
        used += cost(start)
    defs = _definitions(atoms, start, end)
    parts: list[str] = [" ".join(defs)] if defs else []
    for i in range(start, end):
        text = memo[i][0]
        if parts:
            # two formulae, or a word ending in "\" and a formula, are kept apart ("$a$$b$" is no pair)
            gap = atoms[i].space or (atoms[i].formula and (i == start or atoms[i - 1].formula or parts[-1].endswith("\\")))
            parts.append(" " if gap else "")
        parts.append(text)
    return (ELLIPSIS if start else "") + "".join(parts) + (ELLIPSIS if end < len(atoms) else "")


def _definitions(atoms: list[Atom], start: int, end: int) -> list[str]:
    """The post's formulae before ``start`` that define a macro a formula of ``start:end`` uses
    (``\\newcommand{\\pars}``...): put first in the snippet, where they typeset as nothing, so that
    the formulae using them typeset as on the thread page."""
    defs = [a for a in atoms[:start] if a.formula and ("command" in a.text or "\\def" in a.text or "Declare" in a.text)]
    if not defs:
        return []
    used = "".join(a.text for a in atoms[start:end] if a.formula)
    out: list[str] = []
    for a in defs:
        names = [m.group(1) or m.group(2) for m in _DEFINED.finditer(a.text)]
        written = formula_text(tex_shown(a.text)) if len(a.text) <= LONG_ANCHOR else None
        if written and any(re.search(rf"\\{n}(?![A-Za-z])", used) for n in names):
            out.append(written)
    return out


def post_snippet(body_html: str, words: Collection[str] = (), width: int = WIDTH, anchor: str | None = None,
                 anchor_id: str | int | None = None) -> str:
    """:func:`snippet_of` the atoms of a post body (HTML as stored)."""
    return snippet_of(post_atoms(body_html), words, width, anchor, anchor_id)


def formulae_of(snippet: str) -> list[str]:
    """The LaTeX of each formula of a snippet as the page and the CLI read it back."""
    return [latex for _, _, latex in find_math(snippet, is_html=False)]
