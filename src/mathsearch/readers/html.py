"""Formulae and plain text out of post HTML, titles, comments and topic fields.

ARQMath marks each formula instance as
``<span class="math-container" id="FORMULA_ID">LaTeX</span>``: in post bodies and topic
questions the LaTeX is HTML-escaped, in titles and comments it is raw.  Topic files
also keep the ``$...$`` delimiters inside the span.  Spans without an id are
un-annotated math: they stay in the text but are not formula instances.

The plain text keeps every formula as ``$LaTeX$`` and each :class:`Formula` records
where, so text analysis and snippets can find the math again.
"""

from __future__ import annotations

import html as htmllib
import re

from ..records import Formula

# The content may not hold another span: the sample nests id'd spans in un-annotated ones.
MATH_SPAN = re.compile(r'<span class="math-container"(?: id="([^"]*)")?\s*>([^<]*(?:<(?!/?span\b)[^<]*)*)</span>')
_BLOCK_TAG = re.compile(r"</?(?:p|br|div|li|ul|ol|h[1-6]|blockquote|pre|hr|tr|table)\b[^>]*>", re.I)
_ANY_TAG = re.compile(r"<[^>]*>")

# LaTeX the site typesets that the collection left outside its math spans (post pages and snippets): an environment,
# \\[..\\], \\(..\\), $$..$$, $..$ (or a "$" left without its pair) in the text (in HTML, lines broken by <br> are one formula, as
# MathJax joins them; code, tags and their attributes are passed over; \\$ is a dollar).
ENV_PATTERN = r"\\begin\{(?P<env>[A-Za-z]+\*?)\}{body}*?\\end\{(?P=env)\}"
OUTSIDE_MATH = re.compile("|".join((
    r"(?P<code><pre\b.*?</pre>|<code\b.*?</code>|<[^>]*>|\\\$)",
    r"(?P<envir>" + ENV_PATTERN.replace("{body}", r"(?:[^<]|<br\s*/?>)") + ")",
    r"\\\[(?P<bracket>(?:[^<]|<br\s*/?>)+?)\\\]",
    r"\\\((?P<paren>[^<]+?)\\\)",
    r"\$\$(?P<ddollar>(?:[^<$]|<br\s*/?>)+?)\$\$",
    r"\$(?P<dollar>(?:[^<$\\]|\\.)+?)\$",
    # a "$" whose closing one the collection lost (cut by a math span): its LaTeX up to the next tag
    # (or the next formula held by post_html)
    r"\$(?P<dangling>(?:[^<$\\]|\\.)*?\\[A-Za-z]+(?:[^<$\\]|\\.)*?)(?=<|\Z)")), re.S | re.I)
BR_TAG = re.compile(r"<br\s*/?>", re.I)


def strip_delimiters(latex: str) -> str:
    """``$$x$$`` -> ``x``; also ``\\(x\\)`` and ``\\[x\\]``; white space inside delimiters removed."""
    s = latex.strip()
    if s.startswith("\\(") and s.endswith("\\)") or s.startswith("\\[") and s.endswith("\\]"):
        return s[2:-2].strip()
    n = 0
    while n < len(s) // 2 and s[n] == "$" and s[-1 - n] == "$":
        n += 1
    # Without delimiters the LaTeX is kept byte for byte (it must equal the formula TSV).
    return s[n : len(s) - n].strip() if n else latex


def html_fragment_to_text(fragment: str) -> str:
    """Tags removed (block tags become line breaks), entities decoded, white space tidied."""
    text = _BLOCK_TAG.sub("\n", fragment)
    text = _ANY_TAG.sub("", text)
    text = htmllib.unescape(text) if "&" in text else text
    # str.split is far cheaper than a white-space regex that matches between every two words.
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


_PLACEHOLDER = re.compile("\x00(\\d+)\x00")


def extract_math(markup: str, *, escaped: bool, is_html: bool) -> tuple[str, list[Formula]]:
    """Plain text of ``markup`` with formulae as ``$LaTeX$``, and the formula instances with ids.

    ``escaped``: the LaTeX inside spans is HTML-escaped (bodies, topic questions).
    ``is_html``: the text around the spans is HTML (bodies) rather than plain text
    (titles, comments).
    """
    if "math-container" not in markup:
        return (html_fragment_to_text(markup).strip() if is_html else markup), []
    spans: list[tuple[str | None, str]] = []

    def hold(m: re.Match[str]) -> str:
        latex = htmllib.unescape(m.group(2)) if escaped else m.group(2)
        spans.append((m.group(1) or None, strip_delimiters(latex)))
        return f"\x00{len(spans) - 1}\x00"

    # Formulae are set aside so that one pass of tag stripping and unescaping does the rest.
    held = MATH_SPAN.sub(hold, markup)
    if is_html:
        held = html_fragment_to_text(held)
    out: list[str] = []
    formulas: list[Formula] = []
    length = 0
    pos = 0
    for m in _PLACEHOLDER.finditer(held):
        piece = held[pos : m.start()]
        out.append(piece)
        length += len(piece)
        formula_id, latex = spans[int(m.group(1))]
        shown = f"${latex}$"
        if formula_id:
            formulas.append(Formula(formula_id, latex, length, length + len(shown)))
        out.append(shown)
        length += len(shown)
        pos = m.end()
    out.append(held[pos:])
    return "".join(out), formulas


_SPAN_ID = re.compile(r'<span class="math-container" id="([^"]*)"')


def markup_text(markup: str, *, is_html: bool) -> str:
    """The plain text of :func:`extract_math` without the formula list, in a few C-level passes.

    Bulk ingest with a formula TSV needs only the text: tags are stripped while the LaTeX is
    still escaped (so ``&lt;`` is never taken for a tag), then everything is unescaped once.
    Unlike :func:`extract_math`, white space inside formulae is tidied too, and ``$``
    delimiters inside spans are kept.
    """
    text = _spans_as_dollars(markup) if "math-container" in markup else markup
    return html_fragment_to_text(text).strip() if is_html else text


def _spans_as_dollars(markup: str) -> str:
    """``MATH_SPAN.sub(r"$\\2$", markup)``: each math span as its LaTeX between dollars.  Split,
    then joined: before Python 3.12 a template replacement is expanded by Python code per match
    (half of this call's time, ~3% of the store step's CPU at 100k)."""
    parts = MATH_SPAN.split(markup)  # text, (id, LaTeX, text) per span
    parts[1::3] = ["$"] * (len(parts) // 3)
    parts[2::3] = [latex + "$" for latex in parts[2::3]]
    return "".join(parts)


def span_ids(markup: str) -> list[str]:
    """Ids of the formula spans of ``markup`` (in order)."""
    return _SPAN_ID.findall(markup)


def body_text(body_html: str) -> tuple[str, list[Formula]]:
    """Post body (HTML, escaped LaTeX in spans)."""
    return extract_math(body_html, escaped=True, is_html=True)


def plain_text(text: str) -> tuple[str, list[Formula]]:
    """Title or comment (plain text, raw LaTeX in spans)."""
    return extract_math(text, escaped=False, is_html=False)
