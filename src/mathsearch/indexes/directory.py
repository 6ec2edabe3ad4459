"""The INDEX_DIR folder as a whole: its manifest, and the rule for when a build may replace it.

``mathsearch index`` writes ``INDEX_DIR/mathsearch-index.json``, the manifest: what built the
folder, from which collection, with which counts, and every entry it holds.  A build replaces an
existing INDEX_DIR only when the manifest (or, for indexes made before manifests, the store's own
metadata) says that mathsearch made it and the folder holds nothing else: a user's file is never
deleted.  A folder that is, contains or is inside the collection is never a target.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..store.atomic import LOCK_FILE

MANIFEST = "mathsearch-index.json"
FORMAT = "mathsearch-index"
MANIFEST_VERSION = 1
# What indexes built before manifests hold (the store's two files and the index folders).
_LEGACY_ENTRIES = frozenset({"store.sqlite", "store-side.sqlite", "text", "formula", "dense"})
_SQLITE_SIDE_FILES = ("-journal", "-wal", "-shm")


def read_manifest(index_dir: str | Path) -> dict[str, Any] | None:
    """The manifest of ``index_dir``, or None when it has none (or one that is not ours)."""
    path = Path(index_dir) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == FORMAT else None


def write_manifest(index_dir: Path, collection: Path, collection_kind: str, counts: Mapping[str, Any]) -> dict[str, Any]:
    """Record what the finished build in ``index_dir`` holds (call it last: it lists the entries)."""
    from .. import __version__

    manifest = {
        "format": FORMAT,
        "version": MANIFEST_VERSION,
        "mathsearch": __version__,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "collection": str(Path(collection).resolve()),
        "collection_kind": collection_kind,
        "entries": sorted([p.name for p in index_dir.iterdir() if p.name != LOCK_FILE] + [MANIFEST]),
        "counts": dict(counts),
    }
    (index_dir / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def _legacy_store(index_dir: Path) -> bool:
    """An index made before manifests: its store names our schema version in its meta table."""
    store = index_dir / "store.sqlite"
    if not store.is_file():
        return False
    try:
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return row is not None


def _ours(name: str, entries: frozenset[str]) -> bool:
    base = next((name[: -len(s)] for s in _SQLITE_SIDE_FILES if name.endswith(s)), name)
    return name in entries or base in entries


def foreign_entries(index_dir: str | Path) -> list[str] | None:
    """Entries of ``index_dir`` that mathsearch did not make; None when it is not an index at all."""
    index_dir = Path(index_dir)
    manifest = read_manifest(index_dir)
    if manifest is not None:
        entries = frozenset(manifest.get("entries", ())) | {MANIFEST}
    elif _legacy_store(index_dir):
        entries = _LEGACY_ENTRIES
    else:
        return None
    return sorted(p.name for p in index_dir.iterdir() if not _ours(p.name, entries))


def _within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_index_target(index_dir: str | Path, collection: str | Path) -> None:
    """Raise InputError (one sentence) unless a build may write ``index_dir``.

    Allowed: a path that does not exist yet, an empty folder, or a mathsearch index that holds
    nothing but what mathsearch made.  Refused: a file, any other folder, and a folder that is,
    contains or is inside the collection.
    """
    given = Path(index_dir)
    target = given.resolve()
    coll = Path(collection).resolve()
    if _within(target, coll):
        raise InputError(f"--index {given} is inside the collection {collection}: choose a folder outside it.")
    if _within(coll, target):
        raise InputError(f"--index {given} holds the collection {collection}: choose a folder outside it.")
    if not target.exists():
        return
    if not target.is_dir():
        raise InputError(f"--index {given} is a file, not an index folder: choose another path.")
    if not any(target.iterdir()):
        return
    foreign = foreign_entries(target)
    if foreign is None:
        raise InputError(
            f"--index {given} is a folder that is not a mathsearch index and is not empty: "
            "choose a new or empty folder (nothing was changed)."
        )
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise InputError(
            f"--index {given} is a mathsearch index but also holds {shown}, which mathsearch did not make: "
            "move them out or choose another folder (nothing was changed)."
        )
