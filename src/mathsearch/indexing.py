"""Build everything under an INDEX_DIR from a collection folder, atomically.

First the collection store, then each search index step of :data:`INDEX_STEPS`, all into the
same temporary folder, which replaces INDEX_DIR only when every step has finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .readers.collection import detect_collection
from .store import IngestCounts, Store, atomic_directory, build_store
from .store.build import Progress

# A step: (name, function(index_dir_being_built, progress) -> dict of counts); it opens the
# freshly built store from that folder itself.
IndexStep = Callable[[Path, Progress | None], dict]


def _text_step(building: Path, progress: Progress | None) -> dict:
    from .indexes.text_index import build_text_indexes

    with Store.open(building) as store:
        return build_text_indexes(store, building, progress)


def _dense_step(building: Path, progress: Progress | None) -> dict:
    from .indexes.dense import build_dense_index

    with Store.open(building) as store:
        return build_dense_index(store, building, progress)


def _formula_step(building: Path, progress: Progress | None) -> dict:
    from .indexes.formula_index import build_formula_index

    with Store.open(building) as store:
        return build_formula_index(store, building, progress)


# One line per index.
INDEX_STEPS: list[tuple[str, IndexStep]] = [("text", _text_step), ("formula", _formula_step)]
# Built only on request (``mathsearch index --dense``): embeddings cost minutes on a CPU.
OPTIONAL_STEPS: dict[str, IndexStep] = {"dense": _dense_step}


@dataclass
class IndexCounts(IngestCounts):
    """What the store read, plus the counts and build seconds of each search index step."""

    indexes: dict[str, Any] = field(default_factory=dict)


def build_index(
    collection_dir: str | Path, index_dir: str | Path, progress: Progress | None = None, *, store_only: bool = False,
    optional: tuple[str, ...] = (),
) -> IndexCounts:
    """Read ``collection_dir`` (ARQMath or raw dump, detected) into ``index_dir``, with search indexes
    unless ``store_only``, and the ``optional`` ones named (``("dense",)``)."""
    files = detect_collection(collection_dir)
    with atomic_directory(index_dir) as building:
        store_counts = build_store(files, building, progress)
        counts = IndexCounts(**{f.name: getattr(store_counts, f.name) for f in fields(IngestCounts)})
        steps = [] if store_only else INDEX_STEPS + [(name, OPTIONAL_STEPS[name]) for name in optional]
        for name, step in steps:
            started = time.perf_counter()
            step_counts = step(building, progress)
            counts.indexes.update(step_counts)
            counts.indexes[f"{name}_seconds"] = round(time.perf_counter() - started, 2)
    return counts
