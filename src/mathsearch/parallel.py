"""Work in other processes goes through here: one way to run it, one way for a child's error to
come back, one chunker, and the bulk loops' pause of the cyclic collector (:func:`cyclic_gc_paused`).

* :func:`ordered_map` ``fn`` over items by a pool of forked workers, results in input order, with a
  bounded number in flight (memory stays flat at full size); the work runs here when one process
  is asked for or fork is not available.
* :func:`side_by_side` independent steps at the same time: the first in this process, the others
  each in a child process of their own (which may have a pool of its own); their progress reaches
  the caller.

The engines that run a build's tasks (here or on Ray) are :mod:`mathsearch.building.engine`.

Either way a child's exception is raised in the parent as itself, or, when it cannot be pickled,
as a :class:`~mathsearch.errors.MathsearchError` with its words.  A child that dies without a word
(killed, out of memory) is an error that says so.  Leaving early (an error, Ctrl-C, SIGTERM) stops
every child.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import queue
import signal
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import Any, TypeVar

from .errors import MathsearchError

T = TypeVar("T")
R = TypeVar("R")
# (stage name, done so far, total of the stage)
Progress = Callable[[str, int, int], None]


def batched(items: Iterable[T], n: int) -> Iterator[list[T]]:
    """Lists of ``n`` items (the last one shorter)."""
    it = iter(items)
    while chunk := list(islice(it, n)):
        yield chunk


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a loop that makes millions of objects, none of them
    garbage in a cycle (the collector runs every 700 allocations, and its full passes walk every
    object still alive: the formula step's groups and trees, the text step's caches).  The
    formula analysis gave a fifth of its time to it, the text analysis a sixth."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def can_fork() -> bool:
    """Fork is available, and this process may have children (a pool's workers may not)."""
    return "fork" in mp.get_all_start_methods() and not mp.current_process().daemon


def ordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int, *,
                initializer: Callable[..., None] | None = None, initargs: tuple = (),
                here: Callable[[T], R] | None = None) -> Generator[R, None, None]:
    """``fn(item)`` for each of ``items``, in order, by ``workers`` forked processes (each started
    with ``initializer(*initargs)``); in this process when ``workers <= 1`` or fork is not
    available, by ``here`` if given (what ``fn`` does with what this process already holds open),
    else by ``fn`` after the initializer.  At most ``2 * workers + 1`` items are in flight.
    Closing the iterator early stops the workers."""
    if workers <= 1 or not can_fork():
        if here is None and initializer is not None:
            initializer(*initargs)
        yield from map(here or fn, items)
        return
    # fork: workers inherit the imported, warmed-up modules; only the items travel to them.
    with _fork_pool(workers, initializer, initargs) as pool:
        pending: deque = deque()
        for item in items:
            pending.append(pool.apply_async(fn, (item,)))
            if len(pending) > 2 * workers:  # a bounded window keeps memory flat and order kept
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _fork_pool(workers: int, initializer: Callable[..., None] | None, initargs: tuple):
    """A pool of ``workers`` forked processes, SIGTERM blocked in them until each has reset its
    handler (:func:`_pool_worker_start`): a worker told to end in the instant between its fork and
    that reset ran the parent's handler instead, and one that only records the signal let it live on
    while the parent waited for it forever (seen under load).  The pool's own threads, made here,
    keep the block and pass it to the workers they fork later; this thread's mask is restored."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        return mp.get_context("fork").Pool(workers, initializer=_pool_worker_start, initargs=(initializer, initargs))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _pool_worker_start(initializer: Callable[..., None] | None, initargs: tuple) -> None:
    # The pool ends its workers with SIGTERM (leaving the ``with`` block, or early).  A forked worker
    # inherits its parent's Python handler for it, and with one that does not end the process at
    # once (a handler that only records the signal; Ray's driver installs its own) an idle worker
    # blocked on the pool's queue lived on and the parent waited for it forever (seen in the test
    # suite).  The default action ends the worker whatever the parent set; the signal, blocked since
    # the fork (:func:`_fork_pool`), is let through only then, and one already sent ends it now.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    if initializer is not None:
        initializer(*initargs)


# -- independent steps side by side ------------------------------------------------------------------
Step = Callable[[Progress | None], Any]


def _as_sent(exc: BaseException) -> BaseException:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))  # both ways: an exception with its own __init__ may not load
        return exc
    except Exception:  # an exception that does not pickle: its words at least
        return MathsearchError(f"{type(exc).__name__}: {exc}")


# Stopping signals wait while a child starts: SIGTERM or Ctrl-C handled in the middle of a start
# would cut the child's start-up data short (it would die with a traceback); they are handled,
# by the handler in place, as soon as the child has started.
_STOPPING = (signal.SIGINT, signal.SIGTERM)


def _start(proc: Any) -> None:
    came: list[int] = []
    try:
        held: dict[int, Any] = {s: signal.signal(s, lambda signum, _frame: came.append(signum)) for s in _STOPPING}
    except ValueError:  # not the main thread: signals are not delivered here anyway
        proc.start()
        return
    try:
        proc.start()
    finally:
        for s, handler in held.items():
            signal.signal(s, handler)
        for signum in came[:1]:
            handler = held[signum]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)


def _child(step: Step, events: Any, nice: int = 0) -> None:
    """A step in a child process: its progress and its outcome travel back through ``events``."""
    try:
        if nice:
            os.nice(nice)  # this child and the workers it forks only
        result = step(lambda stage, done, total: events.put(("progress", (stage, done, total))))
        events.put(("done", result))
    except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
        events.put(("error", _as_sent(exc)))


def side_by_side(steps: Sequence[tuple[str, Step]], progress: Progress | None = None,
                 context: str = "fork", nice: int = 0,
                 meanwhile: Callable[[Callable[[], bool]], Any] | None = None) -> dict[str, Any]:
    """Run independent ``steps`` at once and return ``{name: result}``: the first here, the others
    each in a child process started with ``context`` (``fork``, or ``spawn`` when this process
    runs threads a fork must not copy; then a step must pickle).  ``nice``: added to the children's
    niceness (never to this process's, even when the steps run one after another here), so that
    the first step, when it is the longest chain, gets the cores it asks for and the children the
    rest.  ``meanwhile(waiting)``: work for this process once its step is done and children still
    run (the core it would leave idle), called only then; ``waiting()`` says whether they still
    do, so it can stop in time.  Its result is ``results["meanwhile"]`` when it was called.  The
    first error is raised once every step has ended or been stopped."""
    if len(steps) < 2 or context not in mp.get_all_start_methods():
        return {name: step(progress) for name, step in steps}
    ctx: Any = mp.get_context(context)  # fork or spawn: both make Processes
    children: list[tuple[str, Any, Any]] = []
    outcome: dict[str, tuple[str, Any]] = {}

    def listen(name: str, proc: Any, events: Any) -> None:
        while name not in outcome:
            try:
                kind, payload = events.get(timeout=0.5)
            except queue.Empty:
                if proc.is_alive():
                    continue
                try:  # a child that sent its result and ended between the wait above and the check
                    kind, payload = events.get(timeout=2.0)
                except queue.Empty:
                    outcome[name] = ("error", MathsearchError(f"the {name} step stopped (exit code {proc.exitcode})"))
                    continue
            if kind == "progress":
                if progress is not None:
                    progress(*payload)
            else:
                outcome[name] = (kind, payload)

    results: dict[str, Any] = {}
    try:
        for name, step in steps[1:]:  # started before this process opens anything the fork would copy
            events = ctx.Queue()
            proc = ctx.Process(target=_child, args=(step, events, nice), name=f"mathsearch-{name}")
            children.append((name, proc, events))  # listed first: a stop during the start still stops it
            _start(proc)
        listeners = [threading.Thread(target=listen, args=child, daemon=True) for child in children]
        for t in listeners:
            t.start()
        name, step = steps[0]
        results[name] = step(progress)
        if meanwhile is not None:
            def waiting() -> bool:
                return any(child not in outcome for child, _, _ in children)

            if waiting():
                results["meanwhile"] = meanwhile(waiting)
        for t in listeners:
            t.join()
    finally:
        for name, proc, _ in children:
            if proc.pid is None:
                continue  # never started
            if proc.is_alive() and name not in outcome:
                proc.terminate()
                proc.join(1.0)
                if proc.is_alive():  # it did not stop: it has nothing to clean up that we would keep
                    proc.kill()
            proc.join()
    for name, _, _ in children:
        kind, payload = outcome[name]
        if kind == "error":
            raise payload
        results[name] = payload
    return results


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))
