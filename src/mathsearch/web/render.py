"""Stored text and post HTML made safe for a page, with every formula ready for KaTeX.

Shared by every page of ``mathsearch serve`` (the assessment pages import it too):

* :func:`post_html`: post HTML sanitised with nh3 (no script, no event handler, no ``javascript:``
  link survives), each ARQMath math span turned into a formula element;
* :func:`text_html`: plain text with ``$LaTeX$`` (titles, comments, snippets, answers) escaped, each
  formula a formula element;
* :func:`formula_html`: one formula element: ``<span class="tex">LaTeX, escaped</span>``, which
  ``static/mathsearch.js`` renders with KaTeX (``trust: false``: ``\\href{javascript:..}`` is shown,
  never linked); ``hl`` added when the formula is one the query matched; a formula longer than
  :data:`MAX_RENDER` characters is shown as the start of its LaTeX in ``<code>``, never typeset;
* :func:`marks_of`: the keys that mark a formula as matched (the query's formulae, whatever their
  spacing or grouping: :func:`mathsearch.text.analysis.formula_key`).

Snippets that never cut a formula are made by the library (:func:`mathsearch.searcher.snippet`);
here they are only rendered.
"""

from __future__ import annotations

import html as htmllib
import secrets
from collections.abc import Iterable
from pathlib import Path

import nh3
from markupsafe import Markup, escape

from ..readers.dollar_math import find_math
from ..readers.html import MATH_SPAN, strip_delimiters
from ..text.analysis import formula_key, split_math

STATIC_DIR = Path(__file__).parent / "static"
TEMPLATES_DIR = Path(__file__).parent / "templates"
KATEX_DIR = STATIC_DIR / "katex"
KATEX_FILES = ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js")
SETUP_COMMAND = "bash scripts/setup_web.sh"
MAX_RENDER = 2000  # characters: a longer formula is shown as LaTeX text, not typeset
SHOWN_OF_LONG = 200  # characters of a long formula's LaTeX shown

# What a post may keep: Stack Exchange's markup, minus anything active.
ALLOWED_TAGS = {
    "a", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strike", "strong", "sub",
    "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title", "width", "height"},
                      "td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan"}}
URL_SCHEMES = {"http", "https", "mailto"}


def katex_missing() -> list[str]:
    """The KaTeX files the page needs that are not in ``static/katex`` (empty when all are)."""
    return [name for name in KATEX_FILES if not (KATEX_DIR / name).is_file()]


def marks_of(query: str) -> set[str]:
    """Keys of the query's formulae: a formula whose :func:`formula_key` is among them is marked."""
    return {formula_key(latex) for latex in split_math(query)[1]}


def formula_html(latex: str, marks: Iterable[str] = (), *, mark: bool = False, formula_id: int | str | None = None,
                 display: bool = False) -> Markup:
    """One formula element; marked (class ``hl``) when ``mark`` or its key is in ``marks``."""
    marked = mark or (bool(marks) and formula_key(latex) in marks)
    fid = f' data-fid="{escape(str(formula_id))}"' if formula_id is not None else ""
    if len(latex) > MAX_RENDER:
        cls = "tex-long hl" if marked else "tex-long"
        return Markup(f'<code class="{cls}"{fid} title="a formula of {len(latex):,} characters, not typeset">'
                      f"{escape(latex[:SHOWN_OF_LONG])}\u2026</code>")
    cls = "tex" + (" display" if display else "") + (" hl" if marked else "")
    return Markup(f'<span class="{cls}"{fid}>{escape(latex)}</span>')


def latex_code(latex: str) -> Markup:
    """LaTeX shown as text, not typeset (a formula the library cut is no longer whole)."""
    return Markup(f'<code class="tex-long">{escape(latex)}</code>')


def text_html(text: str, marks: Iterable[str] = (), *, lines: bool = False) -> Markup:
    """Plain text with ``$LaTeX$`` (``$$``, ``\\(..\\)``, ``\\[..\\]`` too) as escaped HTML whose
    formulae are formula elements; with ``lines`` line breaks are kept."""
    marks = set(marks)
    out: list[str] = []
    pos = 0
    found = find_math(text, is_html=False) if ("$" in text or "\\" in text) else []
    for start, end, latex in found:
        out.append(str(escape(text[pos:start])))
        out.append(formula_html(latex, marks, display=text.startswith("$$", start)))
        pos = end
    out.append(str(escape(text[pos:])))
    joined = "".join(out)
    return Markup(joined.replace("\n", "<br>") if lines else joined)


def sanitize(fragment: str) -> str:
    """nh3 with the tags and attributes a post may keep; links get rel="nofollow noopener noreferrer"."""
    return nh3.clean(fragment, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES,
                     clean_content_tags={"script", "style"}, link_rel="nofollow noopener noreferrer")


def post_html(body: str, marks: Iterable[str] = (), marked_ids: Iterable[int] = ()) -> Markup:
    """A post body (HTML as stored) sanitised, each math span a formula element.

    The math spans are set aside behind a random placeholder before nh3 cleans the rest (so no
    markup of the post can forge one), and put back as formula elements built here."""
    marks = set(marks)
    marked = {str(i) for i in marked_ids}
    nonce = secrets.token_hex(8)
    held: list[Markup] = []

    def hold(m) -> str:
        fid = m.group(1) or None
        latex = strip_delimiters(htmllib.unescape(m.group(2)))
        held.append(formula_html(latex, marks, mark=fid is not None and fid in marked, formula_id=fid))
        return f"ms{nonce}x{len(held) - 1}x"

    clean = sanitize(MATH_SPAN.sub(hold, body))
    for i, element in enumerate(held):
        clean = clean.replace(f"ms{nonce}x{i}x", str(element), 1)
    return Markup(clean)
