"""One ranking type and one ranking order, for every system, fusion, run writer and evaluator.

The order is trec_eval's, which the lab's evaluation used: **score descending, then id
descending**.  Ids compare as they are given: the string ids of run files (``"99" > "100"``, as
trec_eval's ``strcmp``) or, inside a system that keys its signals by post number, integers.
:func:`ranked` is that order; nothing else in the package sorts hits.

A :class:`Ranking` is one query's hits: ``{id: score}`` (ids as strings, as in run files), and for
Task 2 the post that holds each formula instance, so that the post id travels with its hit from
the system to the run file.  The per-query score transformations and fusions that systems and
``mathsearch fuse`` share are here too: :func:`minmax_normalise`, :func:`rank_normalise`,
:func:`rrf` and :func:`combsum`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)


def ranked(scores: Mapping[K, float]) -> list[K]:
    """The ids of ``scores`` in ranking order: score descending, then id descending."""
    # Two stable sorts (ids, then scores) avoid building a tuple per hit: twice as fast.
    order = sorted(scores, reverse=True)  # type: ignore[type-var]
    order.sort(key=scores.__getitem__, reverse=True)
    return order


def top(scores: Mapping[K, float], k: int) -> dict[K, float]:
    """The best ``k`` of ``scores``, in ranking order."""
    return {d: scores[d] for d in ranked(scores)[:k]}


class Ranking(Mapping[str, float]):
    """One query's hits: ``{id: score}`` with ids as strings, and for formula instances (Task 2)
    the post that holds each one (``posts``).  Iteration follows insertion, not rank: use
    :meth:`ordered` (or :func:`ranked`) for the ranking order."""

    __slots__ = ("_scores", "posts")

    def __init__(self, scores: Mapping[Any, float] | Iterable[tuple[Any, float]] = (),
                 posts: Mapping[Any, Any] | None = None):
        items = scores.items() if isinstance(scores, Mapping) else scores
        self._scores: dict[str, float] = {str(d): s for d, s in items}
        self.posts: dict[str, str] | None = {str(f): str(p) for f, p in posts.items()} if posts is not None else None

    def __getitem__(self, doc: str) -> float:
        return self._scores[doc]

    def __iter__(self) -> Iterator[str]:
        return iter(self._scores)

    def __len__(self) -> int:
        return len(self._scores)

    def __repr__(self) -> str:
        shown = ", ".join(f"{d}: {self._scores[d]:.4g}" for d in self.ordered()[:5])
        return f"Ranking({len(self)} hits: {shown}{', ...' if len(self) > 5 else ''})"

    def ordered(self) -> list[str]:
        return ranked(self._scores)

    def post_of(self, doc: str) -> str | None:
        """The post holding formula instance ``doc`` (Task 2), when the system said."""
        return self.posts.get(doc) if self.posts is not None else None

    def top(self, k: int) -> Ranking:
        """The best ``k`` hits (all of them, in their order, when there are no more than ``k``)."""
        if len(self) <= k:
            return self
        best = top(self._scores, k)
        posts = {d: self.posts[d] for d in best if d in self.posts} if self.posts is not None else None
        return Ranking(best, posts)


def minmax_normalise(scores: Mapping[K, float]) -> dict[K, float]:
    """Scores mapped to [0, 1]; when all are equal, all become 1."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return dict.fromkeys(scores, 1.0)
    return {d: (s - lo) / (hi - lo) for d, s in scores.items()}


def rank_normalise(scores: Mapping[K, float]) -> dict[K, float]:
    """``1 - (rank - 1) / n``: the first hit 1, the last ``1/n``."""
    order = ranked(scores)
    n = len(order)
    return {d: 1.0 - i / n for i, d in enumerate(order)}


NORMALISERS: dict[str, Callable[[Mapping[Any, float]], dict[Any, float]]] = {
    "minmax": minmax_normalise, "rank": rank_normalise, "none": dict}


def rrf(rankings: Sequence[Mapping[K, float]], weights: Sequence[float], k: float = 60.0) -> dict[K, float]:
    """Weighted reciprocal rank fusion of one query's rankings: ``sum_i w_i / (k + rank_i)``."""
    fused: dict[K, float] = {}
    for scores, w in zip(rankings, weights, strict=True):
        for rank, doc in enumerate(ranked(scores), 1):
            fused[doc] = fused.get(doc, 0.0) + w / (k + rank)
    return fused


def combsum(rankings: Sequence[Mapping[K, float]], weights: Sequence[float], normalise: str = "minmax") -> dict[K, float]:
    """Weighted CombSUM of one query's rankings, each normalised first (``minmax``, ``rank``, ``none``)."""
    norm = NORMALISERS[normalise]
    fused: dict[K, float] = {}
    for scores, w in zip(rankings, weights, strict=True):
        for doc, s in norm(scores).items():
            fused[doc] = fused.get(doc, 0.0) + w * s
    return fused
