"""Build everything under an INDEX_DIR from a collection folder, atomically.

Today: the collection store.  Search indexes (issue 5) register further steps here
so that one ``mathsearch index`` builds them all into the same temporary folder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .readers.collection import detect_collection
from .store import IngestCounts, atomic_directory, build_store
from .store.build import Progress

# Later steps: (name, function(index_dir_being_built, progress) -> dict of counts)
IndexStep = Callable[[Path, Progress | None], dict]
EXTRA_STEPS: list[tuple[str, IndexStep]] = []


def build_index(collection_dir: str | Path, index_dir: str | Path, progress: Progress | None = None) -> IngestCounts:
    """Read ``collection_dir`` (ARQMath or raw dump, detected) into ``index_dir``."""
    files = detect_collection(collection_dir)
    with atomic_directory(index_dir) as building:
        counts = build_store(files, building, progress)
    return counts
