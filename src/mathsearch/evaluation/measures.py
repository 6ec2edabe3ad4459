"""The measures of the ARQMath lab as named, configured objects.

Ranked-list measures (Tasks 1 and 2) delegate the arithmetic to trec_eval through ir_measures'
pytrec_eval provider; what the lab added around trec_eval (removing unjudged hits, H+M
binarisation, visual-id de-duplication) is done by us before the call.  Task 3 measures are
computed here (:mod:`.task3`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ir_measures

H_M = 2  # "H+M binarisation": relevance >= 2 (high or medium) counts as relevant
DEPTH = 1000  # the lab scored the first 1,000 hits of a topic


@dataclass(frozen=True, slots=True)
class TrecMeasure:
    """A trec_eval measure, optionally on the run with unjudged hits removed (the "prime" measures).

    ``judged_only`` is trec_eval's ``-J``; ``measure`` carries the relevance threshold (``-l2``)
    and cutoff (``ndcg_cut.10``) as ir_measures expresses them.
    """

    name: str
    measure: Any
    judged_only: bool
    trec_eval: str  # the trec_eval invocation it reproduces, for the record


NDCG_PRIME = TrecMeasure("nDCG'", ir_measures.nDCG, True, "trec_eval -J -m ndcg")
MAP_PRIME = TrecMeasure("MAP'", ir_measures.AP(rel=H_M), True, "trec_eval -J -l2 -m map")
P10_PRIME = TrecMeasure("P'@10", ir_measures.P(rel=H_M) @ 10, True, "trec_eval -J -l2 -m P.10")
# For small or partial collections where the prime measures saturate: unjudged count as non-relevant.
NDCG_10 = TrecMeasure("nDCG@10", ir_measures.nDCG @ 10, False, "trec_eval -m ndcg_cut.10")

RANKED_MEASURES: tuple[TrecMeasure, ...] = (NDCG_PRIME, MAP_PRIME, P10_PRIME, NDCG_10)
TASK3_MEASURES: tuple[str, ...] = ("AR", "P@1", "AR_src", "P@1_src", "LO", "CS")  # _src: the development protocol
JUDGED_AT: tuple[int, ...] = (1, 10, 20, 50, 100, 1000)


def measure_names(task: int) -> tuple[str, ...]:
    """The measure names reported for ``task``, in table order."""
    if task == 3:
        return TASK3_MEASURES
    return tuple(m.name for m in RANKED_MEASURES)
