"""The optional compiled core (Cython): the formula step's modules compiled from their own source.

``pip install .`` / ``pip install -e .`` (and scripts/setup.sh) compile the modules listed in
``mathsearch/_compiled.py`` (COMPILED) to extension modules beside their ``.py`` files.  The
``.py`` files stay the reference: ``MATHSEARCH_PURE_PYTHON=1`` imports them instead at run time,
and where Cython or a C compiler is missing the install goes on without the extension, with one
warning line, and the package runs the pure-Python path.  Everything else is in pyproject.toml.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "src" / "mathsearch"))
from _compiled import COMPILED, KERNELS  # noqa: E402 - one list of modules, read by the build and the run

sys.path.pop(0)

# Same semantics as the Python source: annotations are not C types, no unchecked indexing.
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True, "embedsignature": True}
WARNING = "mathsearch: WARNING: the compiled core was not built ({why}); the pure-Python path will be used."


def _extensions() -> list:
    if os.environ.get("MATHSEARCH_PURE_PYTHON") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print(WARNING.format(why="Cython is not installed"), file=sys.stderr)
        return []
    from setuptools import Extension

    exts = [Extension(name, [f"src/{name.replace('.', '/')}.py"]) for name in COMPILED]
    # The kernels' sums are those of the numpy code they replace: no fused multiply-add.
    exts += [Extension(name, [f"src/{name.replace('.', '/')}.pyx"], extra_compile_args=["-ffp-contract=off"])
             for name in KERNELS]
    try:
        return cythonize(exts, compiler_directives=DIRECTIVES, quiet=True)
    except Exception as exc:  # noqa: BLE001 - any failure here means: build without it
        print(WARNING.format(why=f"Cython failed: {exc}"), file=sys.stderr)
        return []


class OptionalBuildExt(build_ext):
    """build_ext that turns a failed compile (no compiler, no headers) into one warning line."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001
            print(WARNING.format(why=f"{type(exc).__name__}: {exc}".splitlines()[0]), file=sys.stderr)

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:  # gcc is most of an install's time: the modules compile side by side
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext) -> None:  # noqa: ANN001 - setuptools' Extension
        # An extension module already built beside its source (setup.sh's editable install) and
        # newer than it is copied, not compiled again (the core venv of scripts/smoke_core.sh).
        beside = HERE / "src" / self.get_ext_filename(ext.name)
        target = Path(self.get_ext_fullpath(ext.name))
        sources = [HERE / s for s in ext.sources] + [HERE / "src" / f"{ext.name.replace('.', '/')}{x}" for x in (".py", ".pxd", ".pyx")]
        if (not self.force and beside.is_file() and beside.resolve() != target.resolve()
                and all(not s.is_file() or s.stat().st_mtime <= beside.stat().st_mtime for s in sources)):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(beside, target)
            return
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            raise _Failed(str(exc)) from exc


class _Failed(RuntimeError):
    pass


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
