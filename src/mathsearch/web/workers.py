"""Where the server's searches run: worker processes side by side, or one at a time in the server.

    lane = WorkerPool(index_dir, workers=2)      # processes, each with its own open indexes
    lane = InProcess(index_dir)                  # --workers 0: the server's own Searcher, one at a time
    lane.submit("search", (q, task, page, size, depth), deadline)   # -> a Future of what the op returns
    lane.stats()                                 # workers, busy, stopped, memory

Why processes and not threads over one Searcher: the formula search (Task 2) is Python that holds
the GIL (two threads over one Searcher ran 30 Task 2 queries of the 100k index no faster than one
did), and a thread cannot be stopped, while a process past its query's budget can be: it is
killed and a fresh one takes its place, so no search runs on behind a 503.  Each worker opens
the indexes once; the formula index's arrays and tantivy's segments are memory-mapped files, so
the operating system keeps one copy of them in its page cache for every worker (what a worker
adds of its own is its Python heap and SQLite's page cache: :func:`memory_of` measures it).

The ops (:data:`OPS`) are plain functions of a Searcher, the same in a worker and in the server:
a page of a search is decorated by :func:`page_json` from a ranking, new or kept.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..answers import NO_ANSWER
from ..errors import InputError
from ..ranking import Ranking
from ..searcher import ParsedQuery, Searcher, group_by_visual_id
from .results import MAX_PAGE, ranked_results


class Overrun(Exception):
    """A call past its deadline: ``waited`` when it never got a worker (nothing ran)."""

    def __init__(self, waited: bool):
        super().__init__("waited for a worker past the deadline" if waited else "stopped past the deadline")
        self.waited = waited


class WorkerLost(Exception):
    """A worker process ended in the middle of a call (killed from outside, out of memory)."""


# -- the ops ------------------------------------------------------------------------------------
def page_json(s: Searcher, p: ParsedQuery, system: str, ranking: Ranking, page: int, size: int) -> dict:
    """One page of a Task 1 or 2 search from its ranking (at least ``page * size`` deep where the
    search found that many): hits, Task 2's groups, whether a next page exists, and what the query
    was searched as and the notices to read first (page 1: "no close match" too)."""
    hits = s.hits(p, p.task, ranking, (page - 1) * size, page * size)
    more = len(ranking) >= page * size and page < MAX_PAGE
    groups = [asdict(g) for g in group_by_visual_id(hits, s)] if p.task == 2 else None
    best = hits[0].id if hits and page == 1 else None
    return {"query": p.typed, "task": p.task, "system": system, "page": page, "size": size,
            "hits": [asdict(h) for h in hits], "groups": groups, "answer": None,
            "next_page": page + 1 if more else None,
            "searched_as": p.searched_as_json(), "notices": s.notices(p, p.task, best),
            "suggestion": s.spelling(p, p.task).suggestion}


def answer_json(s: Searcher, p: ParsedQuery, size: int, made: Any) -> dict:
    declined = made.mode == "declined"  # no post close enough: "no close match" says why
    return {"query": p.typed, "task": 3, "system": made.system, "page": 1, "size": size, "hits": [], "groups": None,
            "answer": {"text": made.text, "system": made.system, "mode": made.mode,
                       "sources": [asdict(x) for x in made.sources]}, "next_page": None,
            "searched_as": p.searched_as_json(),
            # declined from sources: "no close match"; from none: why there was nothing (answer()'s notes)
            "notices": s.notices(p, 3, -1 if declined and made.sources else None)
            + [n for n in made.notes if n == NO_ANSWER],
            "suggestion": made.suggestion}


def op_search(s: Searcher, q: str, task: int, page: int, size: int,
              depth: int) -> tuple[str, Ranking, ParsedQuery, dict]:
    """A search ranked ``depth`` deep (the pages a person may ask next), the query as parsed (to
    keep with the ranking) and its page ``page``."""
    p = s.parse(q, task)
    system, ranking = s.rank(p, task, k=max(depth, page * size))
    return system, ranking, p, page_json(s, p, system, ranking, page, size)


def op_results(s: Searcher, q: str, task: int, page: int) -> tuple[str, Ranking, ParsedQuery, dict]:
    """The search page's grouped results (:func:`mathsearch.web.results.ranked_results`): the
    ranking and parsed query to keep and page ``page`` grouped and decorated, in the worker (the
    server does no store work for a query it has not kept)."""
    return ranked_results(s, q, task, page)


def op_answer(s: Searcher, q: str, size: int,
              depth: int) -> tuple[str | None, Ranking | None, ParsedQuery, dict]:
    """A Task 3 answer, and the Task 1 ranking it was drawn from (where the system takes one) with
    the question as parsed, to keep."""
    if not q.replace("$", "").strip():
        s.answer(q)  # an empty question: answer() says so
    p = s.parse(q, 1)  # a question is read as a Task 1 query
    base = s.answer_base()
    if base is None:
        return None, None, p, answer_json(s, p, size, s.answer(p))
    system, ranking = s.rank(p, 1, base, k=depth)
    return system, ranking, p, answer_json(s, p, size, s.answer(p, ranking=ranking))


def op_answer_from(s: Searcher, p: ParsedQuery, size: int, ranking: Ranking) -> dict:
    return answer_json(s, p, size, s.answer(p, ranking=ranking))


OPS = {"search": op_search, "results": op_results, "answer": op_answer, "answer_from": op_answer_from}


# -- memory ------------------------------------------------------------------------------------
def memory_of(pid: int) -> dict[str, int] | None:
    """A process's memory in bytes from ``/proc/PID/smaps_rollup`` (Linux): ``rss`` (resident),
    ``pss`` (shared pages divided among their sharers) and ``private`` (its own: what it adds);
    None where the kernel does not say."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return None
    kb = {}
    for line in text.splitlines()[1:]:
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            kb[name] = int(parts[0])
    return {"rss": kb.get("Rss", 0) * 1024, "pss": kb.get("Pss", 0) * 1024,
            "private": (kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0)) * 1024}


# -- one at a time in the server -------------------------------------------------------------------
class InProcess:
    """``--workers 0``: the server's own Searcher runs every call, one at a time (one set of open
    indexes and one SQLite connection, not made for threads).  A call past its deadline cannot be
    stopped here: it runs to its end while its request has had its 503."""

    workers = 0

    def __init__(self, index_dir: Path, searcher: Searcher | None = None, threads: int = 1):
        self.searcher = searcher or Searcher(index_dir)
        self.models: list[str] | None = None  # loaded by warm(): what the searches need
        self.lock = threading.Lock()
        self.threads = threads  # requests that may wait for the lock at once (each waits on a thread)
        self._executor: ThreadPoolExecutor | None = None

    def submit(self, op: str, args: tuple, deadline: float) -> Future:
        """A Future of ``OPS[op](searcher, *args)`` run under the lock (a job cancelled before it
        starts never runs)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix="mathsearch-search")
        return self._executor.submit(self.call, op, args, deadline)

    def call(self, op: str, args: tuple, deadline: float) -> Any:
        return self.run(OPS[op], *args, deadline=deadline)

    def run(self, fn, *args, deadline: float | None = None) -> Any:
        """``fn(searcher, *args)`` under the lock (waiting for it until ``deadline``)."""
        if not self.lock.acquire(timeout=-1 if deadline is None else max(0.0, deadline - time.monotonic())):
            raise Overrun(waited=True)
        try:
            return fn(self.searcher, *args)
        finally:
            self.lock.release()

    def warm(self) -> None:
        """Open the indexes and load the models the default systems need, before the first search."""
        with self.lock:
            self.models = _warm(self.searcher)

    def ready(self) -> bool:
        return self.models is not None

    def loaded(self) -> list[str]:
        return list(self.models or ())

    def stats(self) -> dict[str, Any]:
        return {"workers": 0, "mode": "in the server, one at a time", "busy": int(self.lock.locked()),
                "stopped": 0, "replaced": 0}

    def close(self) -> None:
        pass


# -- worker processes ----------------------------------------------------------------------------
def _warm(s: Searcher) -> list[str]:
    """Open the indexes and load the models the default systems need (:meth:`Searcher.load_models`),
    so that the first query pays for none of it; the names of the models loaded."""
    for name in ("store", "text", "formula", "dense"):
        if s.ctx.has(name):
            s.ctx.open(name)
    return s.load_models()


def main(argv: list[str]) -> None:
    """A worker process's start: ``FD INDEX_DIR`` (its end of the server's socket pair)."""
    _work(argv[1], Connection(int(argv[0])))


def _work(index_dir: str, conn: Connection) -> None:
    """A worker process: open the indexes once, then answer ops until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle: it closes the pipes
    searcher = Searcher(index_dir)
    try:
        models = _warm(searcher)
    except Exception as exc:  # noqa: BLE001  (told to the server, which says it)
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", (os.getpid(), models)))
    while True:
        try:
            op, args, deadline = conn.recv()
        except (EOFError, OSError):
            return
        if time.monotonic() >= deadline:  # (the monotonic clock is the machine's: the server's too)
            reply: tuple = ("expired", None)
        else:
            try:
                reply = ("ok", OPS[op](searcher, *args))
            except Exception as exc:  # noqa: BLE001  (the request's error, raised again in the server)
                reply = ("err", exc)
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except Exception as exc:  # noqa: BLE001  (an error that does not pickle: its words instead)
            conn.send(("err", RuntimeError(f"{type(reply[1]).__name__}: {reply[1]} ({exc})")))


# A worker is a fresh interpreter running this module's main(), not multiprocessing's spawn, which
# would run the server's main script again in each worker (a script without a __main__ guard,
# or code typed into python, could not start a server); it imports this very mathsearch.
_START = "import sys; from mathsearch.web.workers import main; main(sys.argv[1:])"


class _Worker:
    def __init__(self, index_dir: Path, number: int):
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        try:
            self.process = subprocess.Popen([sys.executable, "-c", _START, str(theirs.fileno()), str(index_dir)],
                                            pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL)
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        self.number = number
        self.calls = 0
        self.held = 0  # jobs in its hands (its feeder's count)
        self.models: list[str] = []  # the models it loaded before it said it was ready

    @property
    def pid(self) -> int:
        return self.process.pid

    def ready(self, timeout: float) -> None:
        """Wait for the worker's indexes to open; InputError (one sentence) when they do not."""
        if not self.conn.poll(timeout):
            self.kill()
            raise InputError(f"a search worker did not open its indexes within {timeout:g} s")
        try:
            status, detail = self.conn.recv()
        except (EOFError, OSError):
            status, detail = "failed", f"it ended (exit code {self.process.poll()})"
        if status != "ready":
            self.kill()
            raise InputError(f"a search worker could not open the indexes: {detail}")
        self.models = list(detail[1])

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        self.conn.close()


PREFETCH = 2  # jobs a worker holds at once: the one it runs and the next, so that it never waits for the server


@dataclass(eq=False)
class _Job:
    op: str
    args: tuple
    deadline: float
    future: Future = field(default_factory=Future)
    started: bool = False


class WorkerPool:
    """``workers`` processes, each with its own Searcher over ``index_dir``, fed from one queue of
    jobs by a thread of the server each.  A worker holds up to :data:`PREFETCH` jobs, so it starts
    the next as soon as it answers one (on a busy machine the server's threads may wait their turn
    for a core: the workers do not wait for them).  A job past its deadline is skipped if not
    started, and if running is stopped by killing its worker, which a fresh one replaces (a job it
    held but had not started goes back to the queue).  Each worker is a new interpreter (the server
    has threads: no fork)."""

    def __init__(self, index_dir: Path, workers: int, start_timeout: float = 300.0):
        if workers < 1:
            raise ValueError(f"a pool has at least 1 worker, not {workers}")
        self.index_dir = Path(index_dir)
        self.workers = workers
        self.start_timeout = start_timeout
        self._pending: deque[_Job] = deque()
        self._cond = threading.Condition()
        self._lock = threading.Lock()
        self._all: dict[int, _Worker] = {}
        self._numbers = iter(range(1, 1 << 30))
        self._closed = False
        self.stopped = 0  # jobs stopped past their deadline (their worker killed)
        self.replaced = 0  # workers started again after a kill or a crash
        made = [self._new() for _ in range(workers)]
        try:
            for w in made:
                w.ready(start_timeout)
        except BaseException:
            for w in made:
                w.kill()
            raise
        for w in made:
            self._start(w)
        atexit.register(self.close)  # (a worker also ends by itself when the server's end of its socket closes)

    def _new(self) -> _Worker:
        return _Worker(self.index_dir, next(self._numbers))

    def _start(self, w: _Worker) -> None:
        with self._lock:
            self._all[w.number] = w
        threading.Thread(target=self._feed, args=(w,), name=f"mathsearch-feed-{w.number}", daemon=True).start()

    # -- jobs --------------------------------------------------------------------------------------
    def submit(self, op: str, args: tuple, deadline: float) -> Future:
        """``OPS[op](searcher, *args)`` on the next free worker: a Future of its value (the op's own
        error raised again here; Overrun past ``deadline``; WorkerLost)."""
        job = _Job(op, args, deadline)
        with self._cond:
            self._pending.append(job)
            self._cond.notify()
        return job.future

    def call(self, op: str, args: tuple, deadline: float) -> Any:
        return self.submit(op, args, deadline).result()

    def _take(self, wait: bool) -> _Job | None:
        """The next job still wanted (its request neither gone nor past its deadline), or None;
        ``wait``: for up to half a second (the feeder then looks whether the pool is closed)."""
        with self._cond:
            if wait and not self._pending:
                self._cond.wait(0.5)
            while self._pending:
                job = self._pending.popleft()
                if not job.started:
                    if not job.future.set_running_or_notify_cancel():
                        continue  # its request is gone
                    job.started = True
                if time.monotonic() >= job.deadline:
                    job.future.set_exception(Overrun(waited=True))
                    continue
                return job
            return None

    def _give_back(self, jobs: list[_Job]) -> None:
        """Jobs a killed worker held but had not started: first in the queue again."""
        with self._cond:
            self._pending.extendleft(reversed(jobs))
            self._cond.notify(len(jobs))

    def _feed(self, w: _Worker) -> None:
        """The server's side of one worker: hand it jobs, answer their futures, stop it past a deadline."""
        held: deque[_Job] = deque()
        try:
            while not self._closed:
                while len(held) < PREFETCH:
                    job = self._take(wait=not held)
                    if job is None:
                        break
                    held.append(job)
                    w.conn.send((job.op, job.args, job.deadline))
                w.held = len(held)
                if not held:
                    continue
                head = held[0]
                # wait for the first job's answer; while the worker holds one job only, look for a
                # next one every 10 ms (a job that arrives is handed over before this one ends)
                left = head.deadline - time.monotonic()
                if w.conn.poll(max(0.0, min(left, 0.01) if len(held) < PREFETCH else left)):
                    status, value = w.conn.recv()
                    held.popleft()
                    w.held = len(held)
                    if status == "expired":  # past its deadline before the worker came to it
                        head.future.set_exception(Overrun(waited=True))
                        continue
                    w.calls += 1
                    if status == "ok":
                        head.future.set_result(value)
                    else:
                        head.future.set_exception(value)
                elif time.monotonic() >= head.deadline:  # past its budget: stopped with its worker
                    with self._lock:
                        self.stopped += 1
                    held.popleft()
                    self._replace(w, list(held))  # (killed before the request hears of it)
                    head.future.set_exception(Overrun(waited=False))
                    return
        except (EOFError, OSError) as exc:
            lost = held.popleft() if held else None
            self._replace(w, list(held))
            if lost is not None:
                lost.future.set_exception(WorkerLost(f"a search worker ended during the query ({type(exc).__name__})"))

    def _replace(self, w: _Worker, unstarted: list[_Job]) -> None:
        """Kill ``w`` now, give back the jobs it had not started, and start another worker in its
        place (in the background: a worker takes seconds to open its indexes)."""
        with self._lock:
            self._all.pop(w.number, None)
        w.kill()
        self._give_back(unstarted)

        def start() -> None:
            if self._closed:
                return
            fresh = self._new()
            try:
                fresh.ready(self.start_timeout)
            except InputError:
                fresh.kill()
                return
            with self._lock:
                if self._closed:
                    fresh.kill()
                    return
                self.replaced += 1
            self._start(fresh)

        if not self._closed:
            threading.Thread(target=start, name="mathsearch-worker-start", daemon=True).start()

    # -- what /health shows ------------------------------------------------------------------------
    def ready(self) -> bool:
        """Every worker is up with its indexes open and its models loaded (false while one killed
        past its budget is being replaced)."""
        with self._lock:
            return not self._closed and len(self._all) == self.workers

    def loaded(self) -> list[str]:
        with self._lock:
            return sorted({m for w in self._all.values() for m in w.models})

    def pids(self) -> list[int]:
        with self._lock:
            return [w.pid for w in self._all.values()]

    def stats(self) -> dict[str, Any]:
        with self._lock:
            alive = list(self._all.values())
        with self._cond:
            waiting = len(self._pending)
        mem = [m for w in alive if (m := memory_of(w.pid)) is not None]
        return {"workers": self.workers, "mode": "worker processes side by side", "alive": len(alive),
                "busy": sum(1 for w in alive if w.held), "waiting": waiting, "stopped": self.stopped,
                "replaced": self.replaced, "calls": sum(w.calls for w in alive),
                "memory": {"worker_rss": sum(m["rss"] for m in mem), "worker_pss": sum(m["pss"] for m in mem),
                           "worker_private": sum(m["private"] for m in mem)} if mem else None}

    def close(self) -> None:
        self._closed = True
        with self._lock:
            workers = list(self._all.values())
            self._all.clear()
        for w in workers:
            w.kill()
        with self._cond:
            jobs, self._pending = list(self._pending), deque()
            self._cond.notify_all()
        for job in jobs:
            if not job.started and job.future.set_running_or_notify_cancel():
                job.future.set_exception(WorkerLost("the server is closing"))
