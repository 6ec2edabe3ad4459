"""The collection store: posts, comments, links and formula instances in SQLite under INDEX_DIR."""

from .atomic import atomic_directory
from .build import IngestCounts, build_store
from .store import Store, StoredFormula, StoredPost

__all__ = ["IngestCounts", "Store", "StoredFormula", "StoredPost", "atomic_directory", "build_store"]
