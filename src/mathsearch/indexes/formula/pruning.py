"""The numpy search's pruning (the reference the compiled kernel matches): bounds on the final
scores of the candidates while frequent tuples are unread, and the candidates as per-formula marks
for one pass over a posting block.  :mod:`.search` runs them; its :class:`~.search.FormulaIndex`
gives them its arrays."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .scoring import QueryTuples, Scoring
from .tokens import QueryTokens


class FormulaArrays(Protocol):
    """The arrays of the index that the bounds read (:class:`~.search.FormulaIndex` has them)."""

    len_plain: np.ndarray  # families x formulae
    len_idf: np.ndarray
    n_nodes: np.ndarray
    vkey: np.ndarray


class Bounds:
    """Bounds on the final scores of candidates while frequent tuples are still unread: the
    score so far (a lower bound) and the score if every unread tuple matched in full, each
    overlap capped by both lengths (an upper bound).  A candidate whose upper bound is below the
    k-th best lower bound cannot reach the best k."""

    def __init__(self, ix: FormulaArrays, docs: np.ndarray, tuples: QueryTuples, scoring: Scoring, q: QueryTokens):
        lens = ix.len_idf if scoring.idf else ix.len_plain
        self.fams = list(tuples.q_len)
        q_len = np.array([tuples.q_len[fi] for fi in self.fams])
        length = np.stack([lens[fi][docs] for fi in self.fams]).astype(np.float64)  # families x candidates
        weight = np.array([scoring.weights[fi] for fi in self.fams])[:, None]
        self.ratio = 2.0 * weight / np.maximum(q_len[:, None] + length, 1e-9)
        self.cap = np.minimum(length, q_len[:, None]) * (1 + 1e-6) + 1e-9  # an overlap is at most either length
        self.factor, self.bonus = self.factor_and_bonus(ix, docs, scoring, q)

    @staticmethod
    def factor_and_bonus(ix: FormulaArrays, docs: np.ndarray, scoring: Scoring,
                         q: QueryTokens) -> tuple[np.ndarray, np.ndarray]:
        """Per candidate, the size factor and the exact-match bonus of its score."""
        factor = np.ones(len(docs))
        if scoring.size_power > 0:
            m = ix.n_nodes[docs].astype(np.float64)
            factor = (np.minimum(m, q.n_nodes) / np.maximum(np.maximum(m, q.n_nodes), 1)) ** scoring.size_power
        bonus = scoring.exact * (ix.vkey[docs] == np.uint64(q.vkey)) if scoring.exact > 0 else np.zeros(len(docs))
        return factor, bonus

    def alive(self, ov: np.ndarray, rest: np.ndarray, k: int) -> np.ndarray:
        seen = ov[self.fams]
        low = (seen * self.ratio).sum(axis=0) * self.factor + self.bonus
        floor = np.partition(low, len(low) - k)[len(low) - k]
        high_ov = np.minimum(seen + rest[self.fams][:, None] * (1 + 1e-9) + 1e-12, self.cap)  # slack: rounding
        high = (high_ov * self.ratio).sum(axis=0) * self.factor * (1 + 1e-9) + self.bonus
        return high >= floor

    def keep(self, alive: np.ndarray) -> None:
        self.ratio, self.cap = self.ratio[:, alive], self.cap[:, alive]
        self.factor, self.bonus = self.factor[alive], self.bonus[alive]


class Members:
    """The candidates as dense per-formula arrays: marked, and their row; one pass over a posting
    block then finds them (the arrays are allocated per query, so queries may run in threads)."""

    def __init__(self, n: int, docs: np.ndarray):
        self.mark = np.zeros(n, dtype=bool)
        self.mark[docs] = True
        self.row = np.empty(n, dtype=np.int64)  # only the candidates' entries are ever read
        self.number(docs)

    def drop(self, docs: np.ndarray) -> None:
        self.mark[docs] = False

    def number(self, docs: np.ndarray) -> None:
        self.row[docs] = np.arange(len(docs))
