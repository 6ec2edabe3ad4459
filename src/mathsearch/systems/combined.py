"""``tfidf-tangent-s``: the lab's TF-IDF + Tangent-S baseline for Task 1.

Tangent-S ranks formula instances for one formula of the topic: from the title when it has any,
else from the question, the one with the most SLT nodes (the lab broke ties at random; here the
first in document order wins, so runs repeat).  An answer scores the best Tangent-S score of its
formulae.  Both rankings are min-max normalised per topic and averaged without weights, a missing
answer counting 0.  Tangent-S itself is the formula side's Task 2 system ``tangent-s``; until it
is registered this system says so instead of running.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..text.analysis import latex_symbols
from .base import Ranking, SearchContext, SearchQuery, make_system, register, system_names
from .fusion import minmax
from .lexical import TfidfWords

TANGENT_S = "tangent-s"


def node_count(latex: str) -> int:
    """SLT nodes of a formula (the formula module's count; symbol count when it cannot parse)."""
    try:
        from ..formula import node_count as slt_nodes
        from ..formula import parse_latex

        return slt_nodes(parse_latex(latex).slt)
    except ImportError:
        return len(latex_symbols(latex))


def query_formula(query: SearchQuery) -> str | None:
    """The lab's choice: the largest formula of the title, else of the question."""
    from ..text.analysis import split_math

    for text in (query.title, query.question):
        formulae = split_math(text)[1]
        if formulae:
            best = max(range(len(formulae)), key=lambda i: (node_count(formulae[i]), -i))
            return formulae[best]
    return None


def formula_answers(ctx: SearchContext, query: SearchQuery, system: str, limit: int) -> dict[str, float]:
    """Answers scored by the best score of their formula instances in a Task 2 system's ranking."""
    latex = query_formula(query)
    if latex is None:
        return {}
    found = make_system(system).search(ctx, SearchQuery(query.query_id, query.title, query.question, query.tags, latex),
                                       limit * 10)
    store = ctx.store
    out: dict[str, float] = {}
    for fid, score in found.items():
        f = store.formula(fid)
        if f is None or f.kind != "answer":
            continue
        key = str(f.post_id)
        if score > out.get(key, float("-inf")):
            out[key] = score
    return out


@register
@dataclass(frozen=True)
class TfidfTangentS:
    NAME = "tfidf-tangent-s"
    TASK = 1
    DESCRIPTION = "min-max normalised, unweighted average of tfidf-words and tangent-s"

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        if TANGENT_S not in system_names(2):
            raise InputError(f"{self.NAME} needs the formula system {TANGENT_S}, which this build does not have yet")
        words = TfidfWords().search(ctx, query, limit)
        formulas = formula_answers(ctx, query, TANGENT_S, limit)
        return minmax([{"q": words}, {"q": formulas}], depth=limit).get("q", {})
