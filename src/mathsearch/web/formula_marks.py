"""Formulae of a result page with the part that matched the query marked inside them (issue 42.7).

    formula_parts_html(latex, queries, marks)   # a Task 2 hit's formula
    text_parts_html(text, marks, queries)       # a Task 1 snippet: text with $LaTeX$

A formula equal to a query formula (its key in ``marks``) is marked whole, as before
(:func:`mathsearch.web.render.formula_html`, class ``hl``).  A larger one that shares symbol pairs
with a query formula is written with those parts in MathJax boxes
(:func:`mathsearch.formula.highlight.marked_latex`) and gets the class ``part-match``; its stored
LaTeX stays in ``data-query-latex``, which "search this formula" and "add to query" use
(``static/formula-tools.js``).  Only the hits a page shows pass through here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from markupsafe import Markup, escape

from ..formula.highlight import marked_latex
from ..text.analysis import formula_key
from .render import MAX_RENDER, formula_html, math_in_text, prose_html

PART_TITLE = "the highlighted part matched the query's formula"


@lru_cache(maxsize=4096)
def _marked(latex: str, queries: tuple[str, ...], bound: tuple[str, ...]) -> str | None:
    return marked_latex(latex, queries, bound)


def formula_parts_html(latex: str, queries: Iterable[str], marks: Iterable[str] = (), bound: Iterable[str] = (), *,
                       display: bool = False) -> Markup:
    """One formula element: marked whole when its key is in ``marks``, else with the parts that
    matched ``queries`` (and the sub-formulae ``bound`` to query variables) boxed, else plain."""
    marks = set(marks)
    queries, bound = tuple(q for q in queries if q.strip()), tuple(b for b in bound if b.strip())
    whole = bool(marks) and formula_key(latex) in marks
    if whole or not (queries or bound) or len(latex) > MAX_RENDER:
        return formula_html(latex, marks, display=display)
    marked = _marked(latex, queries, bound)
    if marked is None:
        return formula_html(latex, display=display)
    cls = "tex part-match" + (" display" if display else "")
    return Markup(f'<span class="{cls}" data-query-latex="{escape(latex)}" title="{PART_TITLE}">{escape(marked)}</span>')


def text_parts_html(text: str, marks: Iterable[str], queries: Iterable[str], bound: Iterable[str] = ()) -> Markup:
    """Plain text with ``$LaTeX$`` as :func:`mathsearch.web.render.text_html` makes it, each formula
    through :func:`formula_parts_html`."""
    marks, queries, bound = set(marks), tuple(queries), tuple(bound)
    out: list[str] = []
    pos = 0
    for start, end, latex, display in math_in_text(text):
        out.append(prose_html(text[pos:start]))
        out.append(str(formula_parts_html(latex, queries, marks, bound, display=display)))
        pos = end
    out.append(prose_html(text[pos:]))
    return Markup("".join(out))
