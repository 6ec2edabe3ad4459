"""Stored text and post HTML made safe for a page, with every formula ready for MathJax.

Shared by every page of ``mathsearch serve`` (the assessment pages import it too):

* :func:`post_html`: post HTML sanitised with nh3 (no script, no event handler, no ``javascript:``
  link survives), each ARQMath math span turned into a formula element, and so is each LaTeX
  environment (``\\begin{align*}..\\end{align*}``) and ``\\[..\\]`` standing outside the spans, as
  Math Stack Exchange's MathJax typesets them wherever they stand (never inside code);
* :func:`text_html`: plain text with ``$LaTeX$`` (titles, snippets, answers) escaped, each formula
  (environments too) a formula element;
* :func:`comment_html`: a comment as the site shows it: its mini-Markdown (links, bare URLs,
  ```code```, ``**bold**``, ``*italic*``) as HTML through the same nh3 sanitiser as posts, its
  formulae formula elements;
* :func:`formula_html`: one formula element: ``<span class="tex">LaTeX, escaped</span>``, which
  ``static/mathsearch.js`` typesets with MathJax (``static/mathjax-config.js``: no ``\\class``,
  ``\\style``, nor ``javascript:`` link); ``hl`` added when the formula is one the query matched; a
  formula longer than :data:`MAX_RENDER` characters is shown as the start of its LaTeX in ``<code>``,
  never typeset;
* :func:`marks_of`: the keys that mark a formula as matched (the query's formulae, whatever their
  spacing or grouping: :func:`mathsearch.text.analysis.formula_key`).

Snippets that never cut a formula are made by the library (:mod:`mathsearch.readers.snippets`);
here they are only rendered.
"""

from __future__ import annotations

import html as htmllib
import re
import secrets
from collections.abc import Iterable
from pathlib import Path

import nh3
from markupsafe import Markup, escape

from ..readers.html import BR_TAG, ENV_PATTERN, MATH_SPAN, OUTSIDE_MATH, strip_delimiters
from ..text.analysis import formula_key, split_math
from ..text.dollar_math import find_math

STATIC_DIR = Path(__file__).parent / "static"
TEMPLATES_DIR = Path(__file__).parent / "templates"
MATHJAX_DIR = STATIC_DIR / "mathjax"  # MathJax 3 from npm, copied by scripts/setup_web.sh (gitignored)
MATHJAX_FILES = ("tex-chtml-full.js", "ui/safe.js", "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff")
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


_ENV_TEXT = re.compile(ENV_PATTERN.replace("{body}", "."), re.S)


def math_missing() -> list[str]:
    """The MathJax files the page needs that are not in ``static/mathjax`` (empty when all are)."""
    return [name for name in MATHJAX_FILES if not (MATHJAX_DIR / name).is_file()]


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
    joined = _escaped(text, set(marks))
    return Markup(joined.replace("\n", "<br>") if lines else joined)


def _escaped(text: str, marks: set[str], hold=str) -> str:
    """Plain ``text`` escaped, each of its formulae a formula element (passed through ``hold``)."""
    out: list[str] = []
    pos = 0
    for start, end, latex, display in math_in_text(text):
        out.append(prose_html(text[pos:start]))
        out.append(hold(formula_html(latex, marks, display=display)))
        pos = end
    out.append(prose_html(text[pos:]))
    return "".join(out)


def prose_html(text: str) -> str:
    """Text between formulae, escaped; ``\\$`` is a dollar sign (as MathJax's processEscapes shows it)."""
    return str(escape(text.replace("\\$", "$") if "\\$" in text else text))


def math_in_text(text: str) -> list[tuple[int, int, str, bool]]:
    """``(start, end, LaTeX, display)`` of each formula of plain text: ``$..$``, ``$$..$$``,
    ``\\(..\\)``, ``\\[..\\]`` (:func:`find_math`), and environments standing between them."""
    if "$" not in text and "\\" not in text:
        return []
    found = [(a, b, latex, text.startswith(("$$", "\\[", "\\begin"), a)) for a, b, latex in find_math(text, is_html=False)]
    if "\\begin{" in text:
        gaps, pos = [], 0
        for a, b, *_ in found + [(len(text), len(text))]:
            gaps += [(m.start(), m.end(), m.group(0), True) for m in _ENV_TEXT.finditer(text, pos, a)]
            pos = b
        found = sorted(found + gaps)
    return found


def sanitize(fragment: str) -> str:
    """nh3 with the tags and attributes a post may keep; links get rel="nofollow noopener noreferrer"."""
    return nh3.clean(fragment, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES, url_schemes=URL_SCHEMES,
                     clean_content_tags={"script", "style"}, link_rel="nofollow noopener noreferrer")


def post_html(body: str, marks: Iterable[str] = (), marked_ids: Iterable[int] = ()) -> Markup:
    """A post body (HTML as stored) sanitised, each math span a formula element, and so is each
    formula the site typesets that stands outside the spans (not in code): an environment,
    ``\\[..\\]``, ``\\(..\\)``, ``$$..$$``, ``$..$``.

    The formulae are set aside behind a random placeholder before nh3 cleans the rest (so no
    markup of the post can forge one), and put back as formula elements built here."""
    marks = set(marks)
    marked = {str(i) for i in marked_ids}
    hold = _Held()

    def span(m) -> str:
        fid = m.group(1) or None
        latex = strip_delimiters(htmllib.unescape(m.group(2)))
        return hold(formula_html(latex, marks, mark=fid is not None and fid in marked, formula_id=fid))

    def outside(m) -> str:
        if m.group("code"):
            return m.group(0)
        inline = m.group("paren") or m.group("dollar") or m.group("dangling")
        latex = m.group("envir") or m.group("bracket") or m.group("ddollar") or inline
        rest = ""
        if m.group("dangling") and hold.prefix in latex:
            latex, rest = latex[: latex.index(hold.prefix)], latex[latex.index(hold.prefix):]
        latex = htmllib.unescape(BR_TAG.sub("\n", latex)).strip()
        return hold(formula_html(latex, marks, display=not inline)) + rest if latex else m.group(0)

    held_body = MATH_SPAN.sub(span, body)
    if "\\" in held_body or "$" in held_body:
        held_body = OUTSIDE_MATH.sub(outside, held_body)
    return Markup(hold.put_back(sanitize(held_body)))


class _Held:
    """Markup made here, set aside behind random placeholders while nh3 cleans the text around it
    (so no markup of a post or comment can forge one), then put back."""

    def __init__(self) -> None:
        self.prefix = f"ms{secrets.token_hex(8)}x"
        self.items: list[Markup] = []

    def __call__(self, element: Markup) -> str:
        self.items.append(element)
        return f"{self.prefix}{len(self.items) - 1}x"

    def put_back(self, clean: str) -> str:
        for i, element in enumerate(self.items):
            clean = clean.replace(f"{self.prefix}{i}x", str(element), 1)
        return clean


# A comment's mini-Markdown (https://math.stackexchange.com/editing-help#comment-formatting):
# `code`, [text](url "title"), bare http(s) URLs, **bold** / __bold__, *italic* / _italic_.
_MD_CODE = re.compile(r"`([^`\n]+)`")
_MD_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s)]+|/[^\s)]*)(?:\s+&#34;([^\n]*?)&#34;)?\)")
_MD_URL = re.compile(r"(?<![\w\"'=/])(https?://[^\s<>\"']+[^\s<>\"'.,;:!?)\]])")
_MD_BOLD = re.compile(r"(?<![\w*])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w*])|(?<![\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_])")
_MD_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")
SITE = "https://math.stackexchange.com"  # where a comment's site-relative link ("/q/123") leads


def comment_html(text: str, marks: Iterable[str] = ()) -> Markup:
    """A comment (plain text as stored) as the site shows it: ```code``` first (nothing inside it
    is math or Markdown), then its formulae (formula elements, as :func:`text_html`), then links,
    bare URLs, bold and italic; the HTML made goes through :func:`sanitize`, as a post's does."""
    marks = set(marks)
    hold = _Held()
    parts: list[str] = []
    pos = 0
    for code in _MD_CODE.finditer(text):
        parts.append(_comment_text(text[pos:code.start()], marks, hold))
        parts.append(hold(Markup(f"<code>{escape(code.group(1))}</code>")))
        pos = code.end()
    parts.append(_comment_text(text[pos:], marks, hold))
    return Markup(hold.put_back(sanitize("".join(parts))))


def _comment_text(text: str, marks: set[str], hold) -> str:
    html = _escaped(text, marks, hold).replace("\x02", "").replace("\x03", "")
    # links are made first and kept from the bold and italic rules ("_" and "*" in URLs), then
    # put back before the whole goes through nh3 (which checks each URL's scheme and adds rel)
    kept: list[str] = []

    def keep(markup: str) -> str:  # control characters: escaped text holds none, and no \w
        kept.append(markup)
        return f"\x02{len(kept) - 1}\x03"

    def link(m) -> str:
        url = SITE + m.group(2) if m.group(2).startswith("/") else m.group(2)
        title = f' title="{m.group(3)}"' if m.group(3) else ""
        return keep(f'<a href="{url}"{title}>') + m.group(1) + keep("</a>")

    html = _MD_LINK.sub(link, html)
    html = _MD_URL.sub(lambda m: keep(f'<a href="{m.group(1)}">{m.group(1)}</a>'), html)
    html = _MD_BOLD.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", html)
    html = _MD_ITALIC.sub(lambda m: f"<i>{m.group(1) or m.group(2)}</i>", html)
    return re.sub("\x02(\\d+)\x03", lambda m: kept[int(m.group(1))], html)
