"""Find math in raw Stack Exchange text: ``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``.

Escaped dollars (``\\$``) and code (``<code>``, ``<pre>``, and `` `backticks` `` in plain
text) are not math.  Found formulae are rewritten as ARQMath math-container spans
with ids, so a raw dump is treated exactly like the ARQMath collection afterwards.
"""

from __future__ import annotations

import html as htmllib
import re
from collections.abc import Callable

_HTML_MATH = re.compile(
    r"(?P<code><pre\b.*?</pre>|<code\b.*?</code>)"
    r"|(?P<esc>\\\$)"
    r"|\$\$(?P<display>.+?)\$\$"
    r"|\$(?P<inline>(?:[^$\\]|\\.)+?)\$"
    r"|\\\((?P<paren>.+?)\\\)"
    r"|\\\[(?P<bracket>.+?)\\\]",
    re.S | re.I,
)
_PLAIN_MATH = re.compile(
    r"(?P<code>`[^`]*`)"
    r"|(?P<esc>\\\$)"
    r"|\$\$(?P<display>.+?)\$\$"
    r"|\$(?P<inline>(?:[^$\\]|\\.)+?)\$"
    r"|\\\((?P<paren>.+?)\\\)"
    r"|\\\[(?P<bracket>.+?)\\\]",
    re.S,
)


def find_math(text: str, *, is_html: bool) -> list[tuple[int, int, str]]:
    """``(start, end, latex)`` for each formula of ``text``, delimiters excluded from ``latex``."""
    pattern = _HTML_MATH if is_html else _PLAIN_MATH
    found = []
    for m in pattern.finditer(text):
        if m.group("code") or m.group("esc"):
            continue
        latex = m.group("display") or m.group("inline") or m.group("paren") or m.group("bracket") or ""
        if latex.strip():
            found.append((m.start(), m.end(), latex.strip()))
    return found


def annotate_math(text: str, next_id: Callable[[], int], *, is_html: bool) -> tuple[str, list[tuple[int, str]]]:
    """Rewrite each formula as ``<span class="math-container" id="N">LaTeX</span>``.

    In HTML the LaTeX stays HTML-escaped (as in ARQMath bodies); in plain text (titles,
    comments) it is raw.  Returns the new text and ``(formula_id, latex)`` pairs, the
    LaTeX unescaped.
    """
    out: list[str] = []
    formulas: list[tuple[int, str]] = []
    pos = 0
    for start, end, latex in find_math(text, is_html=is_html):
        fid = next_id()
        out.append(text[pos:start])
        out.append(f'<span class="math-container" id="{fid}">{latex}</span>')
        formulas.append((fid, htmllib.unescape(latex) if is_html else latex))
        pos = end
    out.append(text[pos:])
    return "".join(out), formulas
