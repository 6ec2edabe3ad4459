"""Dense pseudo-relevance feedback: the fused ranking's best answers vote for the answers like them.

After ``ours`` has fused its signals, the mean of the vectors of the best ``k`` answers (those the
signals agree on) is compared with the vector of each of the best ``depth`` answers; the cosines,
min-max normalised over those answers, are added with ``weight``.  It is Rocchio's feedback moved
into the answers' vector space (as Li et al., 2021, did for dense retrievers), but as one more
vote beside the fused score rather than a new query: it re-scores only answers already fused, so it
adds no candidate and never reads a thread the query hides.

It costs ``depth`` dot products a query (the vectors are in memory or memory-mapped), so it is the
same at full size as on the sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .. import ranking
from ..errors import InputError
from .base import SearchContext


@dataclass(frozen=True)
class Feedback:
    """``[feedback]`` of an ``ours`` config: off (weight 0) unless a config turns it on."""

    weight: float = 0.0
    k: int = 3  # the best fused answers whose mean vector votes
    depth: int = 1000  # the fused answers it re-scores

    def __post_init__(self) -> None:
        if self.weight < 0:
            raise InputError(f"weight must be 0 or more, not {self.weight}")
        if self.k < 1 or self.depth < self.k:
            raise InputError(f"k must be at least 1 and depth at least k, not k {self.k}, depth {self.depth}")

    @property
    def on(self) -> bool:
        return self.weight > 0


def rescore(ctx: SearchContext, fused: Mapping[int, float], feedback: Feedback) -> dict[int, float]:
    """A copy of ``fused`` with the feedback's vote added to its best ``depth`` answers (unchanged
    when the feedback is off or no answer of the best ``k`` has a vector)."""
    if not feedback.on or not fused:
        return dict(fused)
    best = ranking.ranked(fused)[: feedback.depth]
    ids, vectors = ctx.dense.answer_vectors(best)
    voters = set(best[: feedback.k])
    first = [i for i, a in enumerate(ids) if a in voters]
    if not first:
        return dict(fused)
    centre = vectors[first].mean(axis=0)
    norm = float(np.linalg.norm(centre))
    if norm > 0:
        centre /= norm
    vote = ranking.minmax_normalise(dict(zip(ids, (vectors @ centre).tolist(), strict=True)))
    out = dict(fused)
    for a, v in vote.items():
        out[a] += feedback.weight * v
    return out
