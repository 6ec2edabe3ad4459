"""The INDEX_DIR folder as a whole: its manifest, the rule for when a build may replace it, and the
indexes it holds (:data:`~.kinds.INDEX_KINDS`), opened and checked through :class:`IndexDirectory`.

``mathsearch index`` writes ``INDEX_DIR/mathsearch-index.json``, the manifest: what built the
folder, from which collection, with which counts, and every entry it holds.  A build replaces an
existing INDEX_DIR only when the manifest (or, for indexes made before manifests, the store's own
metadata) says that mathsearch made it and the folder holds nothing else: a user's file is never
deleted.  A folder that is, contains or is inside the collection is never a target.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..store.atomic import LOCK_FILE
from .kinds import INDEX_KINDS

if TYPE_CHECKING:
    from ..store import Store
    from .dense import DenseIndex
    from .formula import FormulaIndex
    from .text_index import TextIndex

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


def write_manifest(index_dir: Path, collection: Path, collection_kind: str, counts: Mapping[str, Any],
                   extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Record what the finished build in ``index_dir`` holds (call it last: it lists the entries);
    ``extra`` adds keys (a sharded index: ``shards``, see :mod:`.shards`)."""
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
        **(extra or {}),
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
    foreign = [p.name for p in index_dir.iterdir() if not _ours(p.name, entries)]
    # A folder of several indexes (mirmu/): only the index folders mathsearch makes there are ours.
    for group, names in _index_groups().items():
        if group in entries and (index_dir / group).is_dir():
            foreign += [f"{group}/{p.name}" for p in (index_dir / group).iterdir() if p.name not in names]
    shards = (manifest or {}).get("shards")
    if isinstance(shards, dict):  # a sharded index: each shard holds only what mathsearch made, too
        for name in shards.get("dirs", ()):
            inner = foreign_entries(index_dir / name) if (index_dir / name).is_dir() else []
            foreign += [f"{name}/{n}" for n in (inner if inner is not None else ["(not a mathsearch index)"])]
    return sorted(foreign)


def _index_groups() -> dict[str, set[str]]:
    """``{folder: its index folders}`` for the indexes that live two levels down (``mirmu/mias``)."""
    groups: dict[str, set[str]] = {}
    for kind in INDEX_KINDS.values():
        parts = Path(kind.marker).parts
        if len(parts) > 2:
            groups.setdefault(parts[0], set()).add(parts[1])
    return groups


def dense_folders(index_dir: str | Path) -> list[Path]:
    """The folders of ``index_dir`` (itself, or its shards) that hold dense vectors."""
    from .shards import shard_dirs_of

    root = Path(index_dir)
    if not root.is_dir():
        return []
    dirs = shard_dirs_of(root, read_manifest(root)) or [root]
    return [d for d in dirs if (d / "dense" / "manifest.json").is_file()]


def check_dense_kept(index_dir: str | Path, builds_vectors: bool, drop_dense: bool = False) -> None:
    """Refuse (one sentence, nothing changed) a build without vectors over an index that has them,
    unless ``drop_dense``.  Vectors can take hours to make; keeping the old ones would be wrong when
    the collection changed (they are keyed by post), so the choice is the user's: --dense makes them
    again, --no-dense drops them."""
    if builds_vectors or drop_dense:
        return
    held = dense_folders(index_dir)
    if held:
        try:
            encoder = json.loads((held[0] / "dense" / "manifest.json").read_text()).get("encoder", {}).get("name")
        except (OSError, ValueError, AttributeError):
            encoder = None
        by = f" (encoder {encoder})" if encoder else ""
        raise InputError(f"--index {index_dir} holds dense vectors{by} that this build without --dense would drop: "
                         "give --dense to make them again, or --no-dense to build without them (nothing was changed).")


def _free_sibling(path: Path) -> Path:
    """A path beside ``path`` that does not exist yet: where a new index may be built."""
    base = path.parent / (path.stem + "-index" if path.suffix or path.is_dir() else "index")
    candidate, n = base, 2
    while candidate.exists():
        candidate, n = base.with_name(f"{base.name}-{n}"), n + 1
    return candidate


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


class IndexDirectory:
    """The indexes of one INDEX_DIR, each opened once on first use and shared by every system of
    a run or a server; :meth:`require` checks up front that the ones a system needs are there."""

    def __init__(self, path: str | Path):
        self.index_dir = Path(path)
        self._open: dict[str, Any] = {}
        self._opening = threading.RLock()
        self._shards: list[Path] | None | bool = False  # not read yet

    @property
    def shards(self) -> list[Path] | None:
        """The shard folders of a sharded index (its manifest names them), else None."""
        if self._shards is False:
            from .shards import shard_dirs_of

            self._shards = shard_dirs_of(self.index_dir, read_manifest(self.index_dir))
        return self._shards  # type: ignore[return-value]

    def has(self, name: str) -> bool:
        shards = self.shards
        if shards:  # a sharded index has what every shard has
            return all(INDEX_KINDS[name].exists(s) for s in shards)
        return INDEX_KINDS[name].exists(self.index_dir)

    def require(self, names: Iterable[str]) -> None:
        """Raise InputError (one sentence) naming every index of ``names`` this folder lacks, with a
        build command that works here (never one that ``mathsearch index`` would then refuse)."""
        given = self.index_dir
        if not given.is_dir() or (any(given.iterdir()) and foreign_entries(given) is None):
            what = "does not exist" if not given.exists() else ("is a file" if not given.is_dir() else
                                                                "is a folder of other files")
            target = given if not given.exists() else _free_sibling(given)
            raise InputError(f"{given} is not an index folder ({what}): build one with "
                             f"`mathsearch index COLLECTION --index {target}`.")
        missing = [INDEX_KINDS[n] for n in dict.fromkeys(names) if not self.has(n)]
        if missing:
            noun = "index" if len(missing) == 1 else "indexes"
            words = [k.build_with.split()[2:] for k in missing]  # ["--dense"], ["--with", "mias"], []
            flags = []
            if ["--dense"] in words or dense_folders(given):  # without it, a rebuild refuses to drop vectors
                flags.append("--dense")
            mirmu = [w[1] for w in words if w[:1] == ["--with"]]
            if mirmu:
                flags.append("--with " + ",".join(mirmu))
            raise InputError(f"{given} lacks the {', '.join(k.name for k in missing)} {noun} needed here: rebuild it "
                             f"with `mathsearch index COLLECTION --index {given}{''.join(' ' + f for f in flags)}`.")

    def open(self, name: str) -> Any:
        with self._opening:  # signals on several threads may ask for the same index first
            return self._open_once(name)

    def _open_once(self, name: str) -> Any:
        if name not in self._open:
            shards = self.shards
            if shards:  # one object over the shards, with the single index's interface
                from .shards import open_sharded

                self._open[name] = open_sharded(name, shards, INDEX_KINDS[name].open)
            else:
                self._open[name] = INDEX_KINDS[name].open(self.index_dir)
        return self._open[name]

    @property
    def manifest(self) -> dict[str, Any] | None:
        return read_manifest(self.index_dir)

    @property
    def store(self) -> Store:
        return self.open("store")

    @property
    def text(self) -> TextIndex:
        return self.open("text")

    @property
    def formula(self) -> FormulaIndex:
        return self.open("formula")

    @property
    def dense(self) -> DenseIndex:
        return self.open("dense")


def open_store(index_dir: str | Path) -> Any:
    """The collection store of ``index_dir``: its :class:`~mathsearch.store.Store`, or for a sharded
    parent one :class:`~.shards.ShardedStore` over its shards' (for the commands that read only the store:
    ``eval``, ``check``, ``pool`` with ``--index``)."""
    from ..store import Store
    from .shards import ShardedStore, shard_dirs_of

    dirs = shard_dirs_of(index_dir, read_manifest(index_dir)) if Path(index_dir).is_dir() else None
    if not dirs:
        return Store.open(index_dir)
    stores: list[Any] = []
    try:
        for d in dirs:
            stores.append(Store.open(d))
    except BaseException:
        for s in stores:
            s.close()
        raise
    return ShardedStore(stores)
