"""The package's shape: imports go down the layers (``.importlinter``, checked by ``lint-imports``),
no module is part of an import loop, none takes another module's underscored names, none grows
past 600 lines (the LaTeX parser excepted).

The loop and private-name checks read every ``import`` with :mod:`ast`, function-local and
``TYPE_CHECKING`` ones included: a loop that is only closed inside a function is still a loop
for whoever reads, tests or changes one side alone.
"""

from __future__ import annotations

import ast
import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
CONFIG = REPO / ".importlinter"
MAX_LINES = 600
LONGER_ALLOWED = {"mathsearch.formula.parser"}  # the LaTeX parser: one grammar, read as one


def modules(src: Path, package: str = "mathsearch") -> dict[str, tuple[Path, bool]]:
    """``{module name: (file, is a package __init__)}`` of every module under ``src/package``."""
    out = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph(src: Path, package: str = "mathsearch") -> tuple[dict[str, set[str]], list[str]]:
    """The modules each module imports (within ``package``), and every import of another module's
    underscored name, as ``"importer: from module import _name (line N)"``."""
    mods = modules(src, package)

    def owner(name: str) -> str | None:  # the module a dotted name lives in
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    private: list[str] = []
    for name, (path, is_package) in mods.items():
        here = name if is_package else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(m for a in node.names if a.name.split(".")[0] == package and (m := owner(a.name)))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != package:
                    continue
                for alias in node.names:
                    if f"{target}.{alias.name}" in mods:  # a submodule
                        found.add(f"{target}.{alias.name}")
                        continue
                    source = owner(target)
                    if source is None:
                        continue
                    found.add(source)
                    dunder = alias.name.startswith("__") and alias.name.endswith("__")
                    if alias.name.startswith("_") and not dunder and source != name:
                        private.append(f"{name}: from {source} import {alias.name} (line {node.lineno})")
        found.discard(name)
        graph[name] = found
    return graph, private


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop of ``graph`` (``[a, b, ..., a]``), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (loop := visit(nxt)):
                return loop
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (loop := visit(start)):
            return loop
    return None


def lint_imports(src: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` (this environment's) on the package under ``src``, with the contracts in ``cwd``."""
    script = Path(sys.executable).parent / "lint-imports"
    exe = [str(script)] if script.exists() else [
        sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run([*exe, str(cwd / ".importlinter"), "--no-cache"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_import_contracts_hold():
    done = lint_imports(SRC, REPO)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout, done.stdout[-2000:]


def _linted_with(tmp_path: Path, module: str, code: str) -> subprocess.CompletedProcess:
    """``lint-imports`` on a copy of the package whose ``module`` (a path under src/mathsearch) ends
    with ``code``."""
    shutil.copytree(SRC / "mathsearch", tmp_path / "src" / "mathsearch", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(CONFIG, tmp_path / ".importlinter")
    path = tmp_path / "src" / "mathsearch" / module
    path.write_text(path.read_text() + "\n\n" + code)
    return lint_imports(tmp_path / "src", tmp_path)


def test_an_upward_import_breaks_the_contracts(tmp_path):
    """The contracts can fail: an import of the Ray batch runs from the index build, even inside a
    function, breaks the layers and the no-loop contract (distributed.batch reads building.engine)."""
    done = _linted_with(tmp_path, "building/build.py",
                        "def _ray():\n    from ..distributed.batch import run_batch\n\n    return run_batch\n")
    assert done.returncode != 0, done.stdout[-2000:]
    assert "mathsearch.building is not allowed to import mathsearch.distributed" in done.stdout, done.stdout[-3000:]
    assert "mathsearch.building.build -> mathsearch.distributed.batch" in done.stdout
    assert "0 kept, 2 broken" in done.stdout, done.stdout[-2000:]


def test_the_layers_contract_fails_alone(tmp_path):
    """An upward import that closes no loop (the build reading the searcher) breaks the layers only."""
    done = _linted_with(tmp_path, "building/build.py",
                        "def _searcher():\n    from ..searcher import Searcher\n\n    return Searcher\n")
    assert done.returncode != 0, done.stdout[-2000:]
    assert "mathsearch.building is not allowed to import mathsearch.searcher" in done.stdout, done.stdout[-3000:]
    assert "1 kept, 1 broken" in done.stdout, done.stdout[-2000:]
    assert "Layers: imports go down the data flow, never up BROKEN" in done.stdout


def test_the_no_loop_contract_fails_alone(tmp_path):
    """A loop inside one package (the shard split reading the steps, which run the split) breaks the
    no-loop contract only: the layers allow any import within a package."""
    done = _linted_with(tmp_path, "building/shard_build.py",
                        "def _steps():\n    from .steps import StepTask\n\n    return StepTask\n")
    assert done.returncode != 0, done.stdout[-2000:]
    assert "1 kept, 1 broken" in done.stdout, done.stdout[-2000:]
    assert "No loops between sibling packages or modules, at any depth BROKEN" in done.stdout


def test_no_contract_ignores_an_import():
    """``ignore_imports`` hides a broken contract: none is allowed (a loop is fixed, not listed)."""
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    ignoring = {name: parser[name]["ignore_imports"] for name in parser.sections() if "ignore_imports" in parser[name]}
    assert ignoring == {}
    assert [name for name in parser.sections() if name.startswith("importlinter:contract:")]  # the file was read


def test_no_import_loops():
    graph, _ = import_graph(SRC)
    assert len(graph) > 100 and graph["mathsearch.building.build"], "the import graph was not read"
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_no_module_takes_another_modules_private_names():
    _, private = import_graph(SRC)
    assert private == []


def test_the_checks_see_loops_and_private_names(tmp_path):
    """A loop closed inside a function and an underscored name taken across modules are found."""
    pkg = tmp_path / "mathsearch"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub.b import thing\n")
    (pkg / "sub" / "b.py").write_text("def thing():\n    from .. import a\n    from ..c import _helper\n    return a, _helper\n")
    (pkg / "c.py").write_text("def _helper():\n    return 1\n\n__all__ = []\n")
    graph, private = import_graph(tmp_path)
    assert find_cycle(graph) in (["mathsearch.a", "mathsearch.sub.b", "mathsearch.a"],
                                 ["mathsearch.sub.b", "mathsearch.a", "mathsearch.sub.b"])
    assert private == ["mathsearch.sub.b: from mathsearch.c import _helper (line 3)"]


def test_every_top_level_module_has_a_layer():
    """A new package must be placed in the layers, or nothing checks its imports."""
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    layered = {m.strip() for line in parser["importlinter:contract:layers"]["layers"].split("\n")
               for m in line.replace("|", ":").split(":") if m.strip()}
    top = {".".join(name.split(".")[:2]) for name in modules(SRC) if name != "mathsearch"}
    assert top - layered == set()
    assert layered - top == set()


def test_modules_stay_small():
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, (path, _) in modules(SRC).items()}
    assert sizes["mathsearch.formula.parser"] > MAX_LINES  # what the check counts is lines
    assert {n: lines for n, lines in sizes.items() if lines > MAX_LINES and n not in LONGER_ALLOWED} == {}


def test_the_systems_load_no_evaluation():
    """A search never pays for the evaluation: ``import mathsearch.systems`` (what every face loads)
    loads neither mathsearch.evaluation nor ir_measures (checked in a fresh interpreter)."""
    code = ("import sys, mathsearch.systems, mathsearch.searcher\n"
            "print(sorted(m for m in sys.modules if m.startswith(('mathsearch.evaluation', 'mathsearch.runs', "
            "'ir_measures', 'pytrec_eval'))))\n"
            "print('mathsearch.systems.task3' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(SRC)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded, task3 = done.stdout.splitlines()
    assert loaded == "[]"
    assert task3 == "True"  # the check saw the systems (Task 3's among them) loaded
