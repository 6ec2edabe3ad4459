"""Running a system over topics: the hits of a run, ready for :mod:`mathsearch.runs` writers."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..records import FormulaHit, ScoredDoc, Topic
from .base import Ranking, SearchContext, SearchQuery, spec

MAX_HITS = 1000


def ranking_to_hits(system, ctx: SearchContext, query_id: str, ranking: Ranking, tag: str) -> list:
    """Task 1: ScoredDocs; Task 2: FormulaHits (the post of each formula from the store)."""
    if system.TASK == 2:
        store = ctx.store
        hits = []
        for fid, score in ranking.items():
            f = store.formula(fid)
            if f is not None:
                hits.append(FormulaHit(query_id, str(fid), str(f.post_id), score, 0, tag))
        return hits
    return [ScoredDoc(query_id, doc, score, 0, tag) for doc, score in ranking.items()]


def top(ranking: Ranking, limit: int) -> Ranking:
    """The best ``limit`` hits (score descending, then id descending, as trec_eval orders)."""
    if len(ranking) <= limit:
        return ranking
    best = sorted(ranking.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:limit]
    return dict(best)


def run_rankings(
    system, ctx: SearchContext, topics: Iterable[Topic], limit: int = MAX_HITS,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Ranking]:
    """``{topic id: ranking}`` of a system over topics (each cut at ``limit``)."""
    topics = list(topics)
    out: dict[str, Ranking] = {}
    for i, topic in enumerate(topics, 1):
        out[topic.topic_id] = top(system.search(ctx, SearchQuery.from_topic(topic), limit), limit)
        if progress:
            progress(i, len(topics))
    return out


def run_system(
    system, ctx: SearchContext, topics: Iterable[Topic], limit: int = MAX_HITS,
    progress: Callable[[int, int], None] | None = None,
) -> list:
    """Every hit of a run of ``system`` over ``topics``, tagged with the system's spec."""
    tag = spec(system)
    hits: list = []
    for qid, ranking in run_rankings(system, ctx, topics, limit, progress).items():
        hits.extend(ranking_to_hits(system, ctx, qid, ranking, tag))
    return hits
