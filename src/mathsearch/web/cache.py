"""The server's result cache: a query's ranking kept, so that its next pages, its Task 3 answer
and a reload are answered without searching again.

    cache = ResultCache(256)
    cache.put(("q", 1, "ours:dense=False"), ranking)   # key: (query, task, system spec)
    cache.get(key)  -> the value, or None (a miss)
    cache.stats()   -> {"entries", "capacity", "hits", "misses", "hit_rate"}

Bounded by entries, the least recently used one goes first; a capacity of 0 keeps nothing (every
request searches).  Thread-safe: the server's request threads share one.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

DEFAULT_ENTRIES = 256  # rankings kept (each at most MAX_PAGE x size ids and scores: a few tens of KB)


class ResultCache:
    """A bounded least-recently-used map with its hit and miss counts."""

    def __init__(self, capacity: int = DEFAULT_ENTRIES):
        if capacity < 0:
            raise ValueError(f"a cache holds 0 or more entries, not {capacity}")
        self.capacity = capacity
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, count: bool = True) -> Any | None:
        """The value kept for ``key`` (now the most recently used), else None; counted as a hit or
        a miss unless ``count`` is false (a look beside the request's own: see :meth:`count`)."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            if count:
                if value is None:
                    self.misses += 1
                else:
                    self.hits += 1
            return value

    def count(self, hit: bool) -> None:
        """Count a request answered from kept values looked up uncounted (a hit) or not (a miss)."""
        with self._lock:
            if hit:
                self.hits += 1
            else:
                self.misses += 1

    def put(self, key: Hashable, value: Any) -> None:
        if self.capacity == 0 or value is None:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            asked = self.hits + self.misses
            return {"entries": len(self._items), "capacity": self.capacity, "hits": self.hits, "misses": self.misses,
                    "hit_rate": round(self.hits / asked, 4) if asked else None}
