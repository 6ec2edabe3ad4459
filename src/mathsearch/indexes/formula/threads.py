"""The worker threads a large formula search runs its second half on (see
:meth:`FormulaIndex._search_halves <mathsearch.indexes.formula.search.FormulaIndex._search_halves>`)."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def halves() -> int:
    """Halves a large top-k search runs in: two where this process may use two cores or more."""
    return 2 if cores() > 1 else 1


def pool() -> ThreadPoolExecutor:
    """The worker threads, made on first use (one per core, for queries that run at once) and
    shared by every index of the process."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=cores(), thread_name_prefix="formula-half")
        return _POOL


def _forget_pool() -> None:
    """In a forked child: the parent's worker threads are not there, so the first use makes new ones."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)
