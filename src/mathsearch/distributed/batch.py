"""Batch runs as Ray tasks: many systems over many topics (``mathsearch run --ray ADDRESS``).

A task is one system over a chunk of topics; each worker opens the index once (its indexes are
memory-mapped, so several workers on a machine share the pages) and keeps it for the tasks that
follow.  The rankings are those of :func:`mathsearch.systems.run_rankings`, topic for topic: a
run made on Ray is the run made here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..building.engine import RayEngine
from ..parallel import batched
from ..ranking import Ranking
from ..records import Topic

CHUNK = 10  # topics a task
_CONTEXTS: dict[str, Any] = {}  # per worker process: index folder -> SearchContext


def _run_chunk(index_dir: str, system: str, topics: list[Topic], limit: int) -> tuple[dict[str, Ranking], float]:
    """The rankings of one chunk, and the CPU seconds the worker spent on it (opening the index included)."""
    import time

    from ..systems import SearchContext, make_system, run_rankings

    cpu = time.process_time()
    ctx = _CONTEXTS.get(index_dir)
    if ctx is None:
        ctx = _CONTEXTS[index_dir] = SearchContext(index_dir)
    return run_rankings(make_system(system), ctx, topics, limit), time.process_time() - cpu


def run_batch(engine: RayEngine, index_dir: str, systems: Sequence[str], topics: Sequence[Topic],
              limit: int = 1000, chunk: int = CHUNK, stats: dict[str, float] | None = None) -> dict[str, dict[str, Ranking]]:
    """``{system spec: {topic id: ranking}}`` of every system over ``topics``, as Ray tasks
    (``stats``, when given, gets ``task_cpu_seconds``: the CPU the tasks spent, in the workers)."""
    ray = engine._ray
    remote = ray.remote(max_retries=2, num_cpus=1)(_run_chunk)
    from pathlib import Path

    where = str(Path(index_dir).resolve())
    refs = {s: [remote.remote(where, s, list(part), limit) for part in batched(topics, chunk)] for s in systems}
    out: dict[str, dict[str, Ranking]] = {}
    for s, parts in refs.items():
        merged: dict[str, Ranking] = {}
        for found, cpu in ray.get(parts):
            merged.update(found)
            if stats is not None:
                stats["task_cpu_seconds"] = stats.get("task_cpu_seconds", 0.0) + cpu
        out[s] = {t.topic_id: merged[t.topic_id] for t in topics}
    return out


def run_system_on_ray(engine: RayEngine, system: Any, index_dir: str, topics: Sequence[Topic], limit: int = 1000) -> list:
    """:func:`mathsearch.systems.run_system` with the topics spread over Ray tasks: the same hits."""
    from ..systems.base import spec
    from ..systems.runner import ranking_to_hits

    tag = spec(system)
    rankings = run_batch(engine, index_dir, [tag], topics, limit)[tag]
    hits: list = []
    for qid, ranking in rankings.items():
        hits.extend(ranking_to_hits(system, qid, ranking, tag))
    return hits
