"""How ``mathsearch serve`` answers many people at once: searches side by side in worker processes,
pages from a result cache, each query within its time budget, and a bounded queue.

    service = SearchService(index_dir, workers=2, queue=64, cache_entries=256, budget=20.0)
    await service.search(q, task, page, size)   # a page of hits, or Task 3's answer (dict)
    await service.call(fn, *args)               # a store lookup (thread, formula) in the server
    service.health()                            # workers, queue, cache: what /health shows

A search is ranked ``MAX_PAGE x size`` deep and its ranking kept (least recently used first out,
by query, task and system): the query's next pages, a reload, and its Task 3 answer are decorated
from it in the server without waiting for a worker.  A search past its budget is stopped (its
worker killed and replaced; with ``workers=0`` it cannot be, and runs on behind its 503); a slow
client holds no worker (a worker hands its result back before the response is written); more
than ``workers + queue`` searches at once are refused with 503 and Retry-After.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import HTTPException
from fastapi.concurrency import run_in_threadpool

from ..ranking import Ranking
from ..searcher import ParsedQuery
from .cache import DEFAULT_ENTRIES, ResultCache
from .results import DEPTH, MAX_PAGE, results_from
from .workers import InProcess, Overrun, WorkerLost, WorkerPool, op_answer_from, page_json

DEFAULT_QUEUE = 64  # searches waiting for a worker, beyond those running
TIME_BUDGET = 20.0  # seconds a query may take, waiting for its turn included
GRACE = 2.0  # seconds past the budget before the server gives up on a worker's own stop
PAGES_KEPT = 4  # decorated pages kept with a ranking (a reload, back and forth), the latest first out last


@dataclass
class Kept:
    """A query's ranking as the cache keeps it: ``depth`` asked (it holds fewer hits when the search
    found fewer), and the pages of it already decorated: the API's by ``(page, size)``, the search
    page's grouped ones by ``("grouped", page)``."""

    system: str
    ranking: Ranking
    depth: int
    parsed: ParsedQuery  # the query as it was read once: its next pages are not read again
    pages: OrderedDict[tuple, dict] = field(default_factory=OrderedDict)

    def covers(self, page: int, size: int) -> bool:
        return self.depth >= page * size or len(self.ranking) < self.depth

    def keep(self, at: tuple, found: dict) -> None:
        self.pages[at] = found
        self.pages.move_to_end(at)
        while len(self.pages) > PAGES_KEPT:
            self.pages.popitem(last=False)


class SearchService:
    """The server's searches: a lane (worker processes, or ``workers=0``: the server's own Searcher
    one call at a time), the result cache and the bounds.  ``searcher`` is the server's own, for
    decorating kept rankings and for the thread and formula pages."""

    def __init__(self, index_dir: Path, *, workers: int = 0, queue: int = DEFAULT_QUEUE,
                 cache_entries: int = DEFAULT_ENTRIES, budget: float = TIME_BUDGET):
        if workers < 0 or queue < 0:
            raise ValueError(f"workers and queue are 0 or more, not {workers} and {queue}")
        self.index_dir = Path(index_dir)
        self.budget = budget
        self.queue = queue
        self.slots = max(1, workers) + queue  # searches admitted at once (running and waiting)
        self.local = InProcess(self.index_dir, threads=self.slots)
        self.searcher = self.local.searcher
        self.searcher.ctx.store  # noqa: B018  (a folder that is no index is refused now, not at the first query)
        if workers == 0:
            self.local.warm()  # the models the searches need, loaded before the server says it serves
        self.lane: InProcess | WorkerPool = self.local if workers == 0 else WorkerPool(self.index_dir, workers)
        self.cache = ResultCache(cache_entries)
        self._count = threading.Lock()
        self.in_flight = 0
        self.refused = 0  # searches answered 503 for a full queue
        self.overruns = 0  # searches answered 503 past their budget
        self._service_s = 0.2  # a running mean of a search's time in its lane, for Retry-After
        self._counts: dict[str, Any] | None = None

    # -- store lookups in the server ---------------------------------------------------------------
    async def call(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` on the server's own Searcher (one at a time) within the budget."""
        deadline = time.monotonic() + self.budget
        try:
            return await asyncio.wait_for(run_in_threadpool(self.local.run, lambda _s: fn(*args, **kwargs),
                                                            deadline=deadline), self.budget)
        except (TimeoutError, Overrun):
            raise self._too_long() from None

    def _too_long(self) -> HTTPException:
        return HTTPException(503, f"the query took longer than its {self.budget:g} s budget; "
                                  "try fewer words or a shorter formula.")

    # -- searches --------------------------------------------------------------------------------
    async def search(self, q: str, task: int, page: int, size: int) -> dict:
        """Page ``page`` of ``size`` hits of a Task 1 or 2 search, or Task 3's answer, from the
        cache where the query's ranking is kept, else from a worker."""
        depth = MAX_PAGE * size
        if task == 3:
            return await self._answer(q, size, depth)
        name = self.searcher.system_for(task)
        key = (q, task, name)
        kept = self.cache.get(key)
        if kept is not None and kept.covers(page, size):
            found = kept.pages.get((page, size))
            if found is None:
                found = await self.call(page_json, self.searcher, kept.parsed, kept.system, kept.ranking, page, size)
            kept.keep((page, size), found)
            return found
        system, ranking, parsed, found = await self._lane("search", (q, task, page, size, depth))
        kept = Kept(system, ranking, max(depth, page * size), parsed)
        kept.keep((page, size), found)
        self.cache.put(key, kept)
        return found

    async def grouped(self, q: str, task: int, page: int) -> dict:
        """Page ``page`` of the search page's grouped results (:mod:`.results`) of a Task 1 or 2
        query: where its ranking is kept :data:`~.results.DEPTH` deep (the API's searches and the
        page's share it), grouped and decorated from it in the server (and kept with it, as the
        API's pages are: a reload or back is not grouped again); else ranked, grouped and
        decorated by a worker, and its ranking kept."""
        key = (q, task, self.searcher.system_for(task))
        kept = self.cache.get(key)
        at = ("grouped", page)
        if kept is not None and kept.covers(1, DEPTH):
            found = kept.pages.get(at)
            if found is None:
                found = await self.call(results_from, self.searcher, kept.parsed, kept.system, kept.ranking, page)
            kept.keep(at, found)
            return found
        system, ranking, parsed, found = await self._lane("results", (q, task, page))
        kept = Kept(system, ranking, DEPTH, parsed)
        kept.keep(at, found)
        self.cache.put(key, kept)
        return found

    async def _answer(self, q: str, size: int, depth: int) -> dict:
        key = (q, 3, "")
        kept = self.cache.get(key, count=False)
        base = self.searcher.answer_base() if kept is None and q.replace("$", "").strip() else None
        ranked = self.cache.get((q, 1, base), count=False) if base is not None else None
        self.cache.count(kept is not None or ranked is not None)
        if kept is not None:
            return kept
        if ranked is not None:  # the question's Task 1 ranking is kept: the answer is drawn from it
            found = await self.call(op_answer_from, self.searcher, ranked.parsed, size, ranked.ranking)
        else:
            system, ranking, parsed, found = await self._lane("answer", (q, size, depth))
            if system is not None:
                self.cache.put((q, 1, system), Kept(system, ranking, depth, parsed))
        self.cache.put(key, found)
        return found

    async def _lane(self, op: str, args: tuple) -> Any:
        with self._count:
            if self.in_flight >= self.slots:
                self.refused += 1
                raise self._busy()
            self.in_flight += 1
        started = time.monotonic()
        deadline = started + self.budget
        grace = 0.0 if isinstance(self.lane, InProcess) else GRACE  # a worker stops itself at the deadline
        try:
            value = await asyncio.wait_for(asyncio.wrap_future(self.lane.submit(op, args, deadline)),
                                           self.budget + grace)
        except (TimeoutError, Overrun) as exc:
            with self._count:
                self.overruns += 1
            if isinstance(exc, Overrun) and exc.waited:
                raise HTTPException(503, f"the server is busy: the query waited its whole {self.budget:g} s budget "
                                         "for a free search; try again shortly.",
                                    headers={"Retry-After": str(self._retry_after())}) from None
            raise self._too_long() from None
        except WorkerLost as exc:
            raise HTTPException(503, f"{exc}; try again.", headers={"Retry-After": "1"}) from None
        finally:
            with self._count:
                self.in_flight -= 1
        self._service_s = 0.9 * self._service_s + 0.1 * (time.monotonic() - started)
        return value

    def _retry_after(self) -> int:
        """Seconds until the queue has likely drained: searches ahead x mean time / workers."""
        return max(1, math.ceil(self.in_flight * self._service_s / max(1, self.lane.workers)))

    def _busy(self) -> HTTPException:
        return HTTPException(503, f"the server is busy ({self.in_flight} searches running or waiting, "
                                  f"at most {self.slots}); try again shortly.",
                             headers={"Retry-After": str(self._retry_after())})

    # -- what /health shows --------------------------------------------------------------------------
    def counts(self) -> dict[str, Any]:
        """The store's counts (read once: an index does not change under a running server)."""
        if self._counts is None:
            self._counts = self.local.run(lambda s: s.ctx.store.counts())
        return self._counts

    def health(self) -> dict[str, Any]:
        with self._count:
            bounds = {"in_flight": self.in_flight, "slots": self.slots, "queue": self.queue,
                      "refused": self.refused, "overruns": self.overruns}
        return {"ready": self.lane.ready(), "models": self.lane.loaded(),
                "searches": {**self.lane.stats(), **bounds, "budget_s": self.budget}, "cache": self.cache.stats()}

    def close(self) -> None:
        """End the worker processes (an app may start and stop serving more than once: nothing else ends)."""
        self.lane.close()
