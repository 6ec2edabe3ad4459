"""How visual formulae are scored (:class:`Scoring`, every weight of a config file) and the query's
tuples found in the index (:class:`QueryTuples`): the types the search and its pruning share."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Scoring:
    """How visual formulae are scored against a query formula (every weight of a config file).

    The score is ``sum_f w_f * Dice_f``, with Dice over symbol-pair tuples of family ``f`` (idf-
    weighted when ``idf``), plus ``exact`` for a formula with the query's visual key, times a
    size factor ``(min(n, m) / max(n, m)) ** size_power`` of SLT node counts.

    ``postings_budget`` bounds the work of a query: its tuples are read rarest first until that
    many postings are read, and the formulae met there are the candidates; the more frequent tuples
    (a variable next to ``=`` is in millions of formulae) only complete the candidates' scores, so
    a candidate's score is exact but a formula sharing none of the rarer tuples is not found.
    """

    slt: float = 0.5
    opt: float = 0.5
    unified: float = 0.0
    paths: float = 0.0
    idf: bool = False
    exact: float = 0.0
    size_power: float = 0.0
    postings_budget: int = 1_000_000

    @property
    def weights(self) -> tuple[float, float, float, float]:
        return (self.slt, self.opt, self.unified, self.paths)


@dataclass(slots=True)
class QueryTuples:
    """The query's tuples found in the index, over the families that score: one row per tuple."""

    fam: np.ndarray  # family index
    lo: np.ndarray  # posting block
    hi: np.ndarray
    qtf: np.ndarray  # query frequency (float64)
    idf: np.ndarray  # weight per matched occurrence (float64: idf, or 1)
    q_len: dict[int, float]  # per scoring family (with a tuple found): the query's Dice length

    @property
    def df(self) -> np.ndarray:
        return self.hi - self.lo
