"""Running a system over topics: the hits of a run, ready for :mod:`mathsearch.runs` writers."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import MathsearchError
from ..ranking import Ranking
from ..records import FormulaHit, ScoredDoc, Topic
from .base import SearchContext, SearchQuery, check_hiding, spec

MAX_HITS = 1000


def ranking_to_hits(system, query_id: str, ranking: Ranking, tag: str) -> list:
    """Task 1: ScoredDocs; Task 2: FormulaHits, each with the post the system gave for it."""
    if system.TASK == 2:
        hits = []
        for fid, score in ranking.items():
            post = ranking.post_of(fid)
            if post is None:
                raise MathsearchError(f"system {spec(system)} gave formula {fid} without its post")
            hits.append(FormulaHit(query_id, fid, post, score, 0, tag))
        return hits
    return [ScoredDoc(query_id, doc, score, 0, tag) for doc, score in ranking.items()]


def top(ranking: Ranking, limit: int) -> Ranking:
    """The best ``limit`` hits in the one ranking order (:mod:`mathsearch.ranking`)."""
    return (ranking if isinstance(ranking, Ranking) else Ranking(ranking)).top(limit)


def run_rankings(
    system, ctx: SearchContext, topics: Iterable[Topic], limit: int = MAX_HITS,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Ranking]:
    """``{topic id: ranking}`` of a system over topics (each cut at ``limit``)."""
    topics = list(topics)
    check_hiding(system, topics)
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
        hits.extend(ranking_to_hits(system, qid, ranking, tag))
    return hits
