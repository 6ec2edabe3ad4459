"""``tfidf-tangent-s``: the lab's TF-IDF + Tangent-S baseline for Task 1.

The rankings of ``tfidf-words`` and of the formula side's Task 1 ``tangent-s`` (answers by their
best-matching formula for the topic formula the lab's rule picks) are min-max normalised per
topic and averaged without weights, an answer missing from one ranking counting 0 there.
Until ``tangent-s`` is registered this system says so instead of running.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .base import Ranker, Ranking, SearchContext, SearchQuery, make_system, register, system_names
from .fusion import minmax
from .lexical import TfidfWords

TANGENT_S = "tangent-s"


@register
@dataclass(frozen=True)
class TfidfTangentS:
    NAME = "tfidf-tangent-s"
    TASK = 1
    NEEDS = ("text", "formula")
    DESCRIPTION = "min-max normalised, unweighted average of tfidf-words and tangent-s"

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        if TANGENT_S not in system_names(1):
            raise InputError(f"{self.NAME} needs the Task 1 formula system {TANGENT_S}, which this build does not have")
        words = TfidfWords().search(ctx, query, limit)
        tangent = make_system(TANGENT_S)
        assert isinstance(tangent, Ranker), tangent
        formulas = tangent.search(ctx, query, limit)
        return Ranking(minmax([{"q": words}, {"q": formulas}], depth=limit).get("q", {}))
