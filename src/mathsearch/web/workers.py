"""Where the server's searches run: worker processes side by side, or one at a time in the server.

    lane = WorkerPool(index_dir, workers=2)      # processes, each with its own open indexes
    lane = InProcess(index_dir)                  # --workers 0: the server's own Searcher, one at a time
    lane.call("search", (q, task, page, size, depth), deadline)   # -> what the op returns
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
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..ranking import Ranking
from ..searcher import Searcher, group_by_visual_id

MAX_PAGE = 20  # pages of a result list


class Overrun(Exception):
    """A call past its deadline: ``waited`` when it never got a worker (nothing ran)."""

    def __init__(self, waited: bool):
        super().__init__("waited for a worker past the deadline" if waited else "stopped past the deadline")
        self.waited = waited


class WorkerLost(Exception):
    """A worker process ended in the middle of a call (killed from outside, out of memory)."""


# -- the ops ------------------------------------------------------------------------------------
def page_json(s: Searcher, q: str, task: int, system: str, ranking: Ranking, page: int, size: int) -> dict:
    """One page of a Task 1 or 2 search from its ranking (at least ``page * size`` deep where the
    search found that many): hits, Task 2's groups, and whether a next page exists."""
    hits = s.hits(q, task, ranking, (page - 1) * size, page * size)
    more = len(ranking) >= page * size and page < MAX_PAGE
    groups = [asdict(g) for g in group_by_visual_id(hits, s)] if task == 2 else None
    return {"query": q, "task": task, "system": system, "page": page, "size": size,
            "hits": [asdict(h) for h in hits], "groups": groups, "answer": None,
            "next_page": page + 1 if more else None}


def answer_json(q: str, size: int, made: Any) -> dict:
    return {"query": q, "task": 3, "system": made.system, "page": 1, "size": size, "hits": [], "groups": None,
            "answer": {"text": made.text, "system": made.system, "mode": made.mode,
                       "sources": [asdict(x) for x in made.sources]}, "next_page": None}


def op_search(s: Searcher, q: str, task: int, page: int, size: int, depth: int) -> tuple[str, Ranking, dict]:
    """A search ranked ``depth`` deep (the pages a person may ask next) and its page ``page``."""
    system, ranking = s.rank(q, task, k=max(depth, page * size))
    return system, ranking, page_json(s, q, task, system, ranking, page, size)


def op_answer(s: Searcher, q: str, size: int, depth: int) -> tuple[str | None, Ranking | None, dict]:
    """A Task 3 answer, and the Task 1 ranking it was drawn from (where the system takes one), to keep."""
    base = s.answer_base()
    if base is None or not q.replace("$", "").strip():  # (an empty question: answer() says so)
        return None, None, answer_json(q, size, s.answer(q))
    system, ranking = s.rank(q, 1, base, k=depth)
    return system, ranking, answer_json(q, size, s.answer(q, ranking=ranking))


def op_answer_from(s: Searcher, q: str, size: int, ranking: Ranking) -> dict:
    return answer_json(q, size, s.answer(q, ranking=ranking))


OPS = {"search": op_search, "answer": op_answer, "answer_from": op_answer_from}


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

    def __init__(self, index_dir: Path, searcher: Searcher | None = None):
        self.searcher = searcher or Searcher(index_dir)
        self.lock = threading.Lock()

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

    def stats(self) -> dict[str, Any]:
        return {"workers": 0, "mode": "in the server, one at a time", "busy": int(self.lock.locked()),
                "stopped": 0, "replaced": 0}

    def close(self) -> None:
        pass


# -- worker processes ----------------------------------------------------------------------------
def _warm(s: Searcher) -> None:
    """Open the indexes the default systems read, so that the first query does not pay for it."""
    for name in ("store", "text", "formula", "dense"):
        if s.ctx.has(name):
            s.ctx.open(name)


def main(argv: list[str]) -> None:
    """A worker process's start: ``FD INDEX_DIR`` (its end of the server's socket pair)."""
    _work(argv[1], Connection(int(argv[0])))


def _work(index_dir: str, conn: Connection) -> None:
    """A worker process: open the indexes once, then answer ops until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle: it closes the pipes
    searcher = Searcher(index_dir)
    try:
        _warm(searcher)
    except Exception as exc:  # noqa: BLE001  (told to the server, which says it)
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            op, args = conn.recv()
        except (EOFError, OSError):
            return
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

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        self.conn.close()


class WorkerPool:
    """``workers`` processes, each with its own Searcher over ``index_dir``; a call takes an idle one
    (waiting for one until its deadline) and a call past its deadline kills its worker, which a
    fresh one replaces.  Each is a new interpreter (the server has threads: no fork)."""

    def __init__(self, index_dir: Path, workers: int, start_timeout: float = 300.0):
        if workers < 1:
            raise ValueError(f"a pool has at least 1 worker, not {workers}")
        self.index_dir = Path(index_dir)
        self.workers = workers
        self.start_timeout = start_timeout
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        self._all: dict[int, _Worker] = {}
        self._numbers = iter(range(1, 1 << 30))
        self._closed = False
        self.stopped = 0  # calls stopped past their deadline (their worker killed)
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
            self._all[w.number] = w
            self._idle.put(w)
        atexit.register(self.close)  # (a worker also ends by itself when the server's end of its socket closes)

    def _new(self) -> _Worker:
        return _Worker(self.index_dir, next(self._numbers))

    def call(self, op: str, args: tuple, deadline: float) -> Any:
        """``OPS[op](searcher, *args)`` on an idle worker; Overrun past ``deadline``; the op's own
        error is raised again here."""
        try:
            w = self._idle.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise Overrun(waited=True) from None
        try:
            w.conn.send((op, args))
            if not w.conn.poll(max(0.0, deadline - time.monotonic())):
                with self._lock:
                    self.stopped += 1
                self._replace(w)
                raise Overrun(waited=False)
            status, value = w.conn.recv()
        except (EOFError, OSError) as exc:
            self._replace(w)
            raise WorkerLost(f"a search worker ended during the query ({type(exc).__name__})") from None
        w.calls += 1
        self._idle.put(w)
        if status == "err":
            raise value
        return value

    def _replace(self, w: _Worker) -> None:
        """Kill ``w`` now and start another in its place (in the background: a worker takes seconds
        to open its indexes, and the request that lost ``w`` is not made to wait for it)."""
        with self._lock:
            self._all.pop(w.number, None)
        w.kill()

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
                self._all[fresh.number] = fresh
                self.replaced += 1
            self._idle.put(fresh)

        threading.Thread(target=start, name="mathsearch-worker-start", daemon=True).start()

    def pids(self) -> list[int]:
        with self._lock:
            return [w.pid for w in self._all.values()]

    def stats(self) -> dict[str, Any]:
        with self._lock:
            alive = list(self._all.values())
        mem = [m for w in alive if (m := memory_of(w.pid)) is not None]
        return {"workers": self.workers, "mode": "worker processes side by side", "alive": len(alive),
                "busy": max(0, len(alive) - self._idle.qsize()), "stopped": self.stopped, "replaced": self.replaced,
                "calls": sum(w.calls for w in alive),
                "memory": {"worker_rss": sum(m["rss"] for m in mem), "worker_pss": sum(m["pss"] for m in mem),
                           "worker_private": sum(m["private"] for m in mem)} if mem else None}

    def close(self) -> None:
        self._closed = True
        with self._lock:
            workers = list(self._all.values())
            self._all.clear()
        for w in workers:
            w.kill()
