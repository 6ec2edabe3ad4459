"""The compiled core: which modules are compiled (Cython) and which path a process runs.

The modules in :data:`COMPILED` are compiled from their own ``.py`` source by the package's build
step (setup.py): the extension module sits beside the ``.py`` file and Python imports it first.
The ``.py`` files are the reference and the fallback: where the build found no compiler or no
Cython they are all there is, and ``MATHSEARCH_PURE_PYTHON=1`` in the environment makes a
process import them even where the extension exists (a finder ahead of the default ones,
installed when :mod:`mathsearch` is first imported).  Both paths give byte-identical indexes
and equal scores (tests/test_compiled.py).

Standard library only: setup.py reads :data:`COMPILED` before the package is installed.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path

# The formula step's hot loops (parser, OPT builder, tuple/path extraction, visual key, token
# bags), profiled in docs/log/compiled.md.  Their interfaces are those of the Python source.
COMPILED = (
    "mathsearch.formula.slt",
    "mathsearch.formula.symbols",
    "mathsearch.formula.parser",
    "mathsearch.formula.opt",
    "mathsearch.formula.representations",
    "mathsearch.formula.analysis",
    "mathsearch.indexes.formula.tokens",
    "mathsearch.formula.words",
    "mathsearch.text.analysis",
    "mathsearch.text.dollar_math",
    "mathsearch.readers.formula_tsv",
)
# Compiled-only kernels (.pyx, no .py twin): their callers run their own Python code where the
# kernel was not built, is stale, or the pure path is asked for (:func:`load_kernel`): the formula
# search's candidate loop, the formula build's token bags, the text analysis' hot loops, a static
# encoder's word pieces.
KERNELS = ("mathsearch.indexes.formula._kernel", "mathsearch.indexes.formula._tokens",
           "mathsearch.indexes.formula._postings", "mathsearch.text._terms", "mathsearch.encoders._wordpiece")
ENV = "MATHSEARCH_PURE_PYTHON"


def pure_python_requested() -> bool:
    """``MATHSEARCH_PURE_PYTHON`` set to anything but empty or ``0``."""
    return os.environ.get(ENV, "") not in ("", "0")


# An extension older than its .py by more than this is stale (the source was edited or checked
# out after the build); the slack covers an install writing both files a moment apart.
STALE_AFTER_S = 10.0
_warned: set[str] = set()


def _stale(source: Path) -> bool:
    """Whether an extension beside ``source`` was built before the source last changed."""
    built = [p for p in source.parent.glob(source.stem + ".*.so") if p.is_file()]
    return bool(built) and source.stat().st_mtime > max(p.stat().st_mtime for p in built) + STALE_AFTER_S


class _PurePythonFinder:
    """Finds the ``.py`` source of a compiled module when the environment asks for the pure path,
    or when the extension beside it is stale, so an edited source never runs as its old build."""

    def find_spec(self, name: str, path=None, target=None):  # noqa: ANN001, ANN201 - the finder protocol
        if name not in COMPILED or not path:
            return None
        source = Path(next(iter(path))) / (name.rpartition(".")[2] + ".py")
        if not source.is_file():
            return None
        if not pure_python_requested():
            if not _stale(source):
                return None
            if name not in _warned:
                _warned.add(name)
                print(f"mathsearch: WARNING: the compiled {name} is older than its source; running the .py "
                      "(rebuild: python setup.py build_ext --inplace, or pip install -e .)", file=sys.stderr)
        return importlib.util.spec_from_file_location(name, source)


def install() -> None:
    """Put the finder first (once per process): the pure path on request, and never a stale build."""
    if not any(isinstance(f, _PurePythonFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PurePythonFinder())


def load_kernel(name: str):  # noqa: ANN201 - a module, or None
    """The compiled kernel ``name`` (one of :data:`KERNELS`), or None where the pure path is asked
    for, it was not built, or it is older than its ``.pyx`` (then with one warning line)."""
    if pure_python_requested():
        return None
    spec = importlib.util.find_spec(name.rpartition(".")[0])
    locations = list(spec.submodule_search_locations or []) if spec else []
    source = Path(locations[0]) / (name.rpartition(".")[2] + ".pyx") if locations else None
    if source is not None and source.is_file() and _stale(source):
        if name not in _warned:
            _warned.add(name)
            print(f"mathsearch: WARNING: the compiled {name} is older than its source; running its Python path "
                  "(rebuild: python setup.py build_ext --inplace, or pip install -e .)", file=sys.stderr)
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def status() -> dict[str, str]:
    """Per module of :data:`COMPILED` and :data:`KERNELS`, ``compiled`` or ``python``: what this
    process runs (importing them if not yet imported)."""
    out = {}
    for name in COMPILED:
        module = importlib.import_module(name)
        loader = getattr(module.__spec__, "loader", None)
        out[name] = "compiled" if isinstance(loader, importlib.machinery.ExtensionFileLoader) else "python"
    for name in KERNELS:
        out[name] = "compiled" if load_kernel(name) is not None else "python"
    return out


def is_compiled() -> bool:
    """Whether every module of :data:`COMPILED` and :data:`KERNELS` runs compiled in this process."""
    return all(v == "compiled" for v in status().values())
