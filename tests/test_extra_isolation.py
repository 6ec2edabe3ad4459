"""The pyterrier extra stays out of the core: only mathsearch.pyterrier and mathsearch.irds name
PyTerrier or ir_datasets, nothing else imports those two, and the CLI at work loads neither
(scripts/smoke_core.sh shows the same in a venv without the extra)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from conftest import DATA, REPO

SRC = REPO / "src"
EXTRA_PACKAGES = {"pyterrier", "ir_datasets"}
EXTRA_MODULES = {"mathsearch.pyterrier", "mathsearch.irds"}


def _imports(path) -> set[str]:
    """Every module a file imports (function-local ones too), relative imports made absolute."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def test_only_the_extra_modules_name_its_packages() -> None:
    files = sorted((SRC / "mathsearch").rglob("*.py"))
    assert len(files) > 100
    offenders = []
    for path in files:
        module = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        if module in EXTRA_MODULES:
            continue
        imported = _imports(path)
        named = {i for i in imported if i.split(".")[0] in EXTRA_PACKAGES} | (imported & EXTRA_MODULES)
        if named:
            offenders.append(f"{module}: {', '.join(sorted(named))}")
    assert not offenders, offenders
    assert "pyterrier" in _imports(SRC / "mathsearch" / "pyterrier.py")  # the check sees what it looks for


def test_cli_at_work_loads_neither_package() -> None:
    script = f"""
import sys
from typer.testing import CliRunner
from mathsearch.cli import app
import mathsearch.systems, mathsearch.evaluation, mathsearch.searcher
done = CliRunner().invoke(app, ["eval", "--task", "1", "--qrels", {str(DATA / "qrels" / "task1-2020.tsv")!r},
                                {str(next((DATA / "runs").glob("*.tsv")))!r}])
assert done.exit_code == 0, done.output
assert "nDCG'" in done.output
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {sorted(EXTRA_PACKAGES)!r} or m in {sorted(EXTRA_MODULES)!r})
print("loaded:", loaded)
"""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "loaded: []"
