"""The formula scoring primitives of Task 1: answers by their best-matching formula
(:func:`answer_scores`, :func:`answer_scores_among`, :class:`Rescorer`), the Tangent-S weights
and the choice of query formulae (:func:`largest_formulae`).  Shared by the formula systems
(:mod:`.formula`) and ``ours``' formula signal (:mod:`.signals`), below both."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from functools import cache, cached_property

import numpy as np

from ..indexes.formula import Scoring
from .base import SearchContext

MAX_INSTANCES = 500_000  # instances expanded per query formula (Task 1)
TANGENT_S = Scoring(slt=0.5, opt=0.5, unified=0.0, idf=False, exact=0.0, size_power=0.0)


@cache
def query_analyzer():
    """The analyzer of query formulae (one a process: its parse cache is shared)."""
    from ..formula import FormulaAnalyzer

    return FormulaAnalyzer(cache_size=4096)


def answer_scores(ctx: SearchContext, latexes: Sequence[str], scoring: Scoring | None = None,
                  depth: int = 2000, limit: int = 1000) -> dict[int, float]:
    """Task 1 evidence: ``{answer id: score}``, an answer's best-matching formula (instances in the
    answer itself, its comments included) per query formula, summed over ``latexes``."""
    ix = ctx.formula
    scoring = scoring or TANGENT_S
    total: dict[int, float] = {}
    for latex in latexes:
        best = ix.answers_by_best_formula(ix.query(latex), scoring, depth, limit, MAX_INSTANCES)
        for p, s in best.items():
            total[p] = total.get(p, 0.0) + s
    return total


def answer_scores_among(ctx: SearchContext, latexes: Sequence[str], answers: Iterable[int],
                        scoring: Scoring | None = None) -> dict[int, float]:
    """:func:`answer_scores` of the given ``answers`` only (re-scoring candidates: the cost follows
    their number of formulae, not the size of the collection)."""
    rescorer = Rescorer(ctx, latexes, scoring)
    rescorer.add(answers)
    return rescorer.total


class Rescorer:
    """:func:`answer_scores_among` fed its candidates in batches (``ours`` re-scores the best answers
    of each candidate signal as soon as that signal is done, while slower ones still run).  An
    answer's score is its own (its best formula per query formula, summed in the query formulae's
    order), so the scores are those of one call on every candidate; an answer given twice is scored once.
    Batches may be added from two threads at once: each claims its fresh answers first."""

    def __init__(self, ctx: SearchContext, latexes: Sequence[str], scoring: Scoring | None = None):
        self.ctx = ctx
        self.latexes = tuple(latexes)
        self.scoring = scoring or TANGENT_S
        self.scored: set[int] = set()
        self.total: dict[int, float] = {}
        self._lock = threading.Lock()

    @cached_property
    def queries(self) -> list:
        """The query formulae parsed once for every batch, at the first batch (none given: none parsed)."""
        ix = self.ctx.formula
        return [ix.query(latex) for latex in self.latexes]

    def add(self, answers: Iterable[int]) -> None:
        with self._lock:
            fresh = sorted(set(answers) - self.scored)
            if not fresh or not self.latexes:
                return
            self.scored.update(fresh)
            queries = self.queries
        found: dict[int, float] = {}  # this batch's answers are its own: no other batch scores them
        for best in self.ctx.formula.answers_best_formula_among_all(queries, self.scoring,
                                                                   np.asarray(fresh, dtype=np.int64)):
            for p, s in best.items():  # summed in the query formulae's order
                found[p] = found.get(p, 0.0) + s
        with self._lock:
            self.total.update(found)


def largest_formulae(formulae: Sequence[str], n: int) -> list[str]:
    """At most ``n`` of ``formulae``, the largest (most SLT nodes) when there are more: they say most."""
    if len(formulae) <= n:
        return list(formulae)
    return sorted(formulae, key=lambda x: query_analyzer().analyze(x).n_nodes, reverse=True)[:n]
