"""The tiers of tests/conftest.py name tests that exist: a renamed or removed test must not leave a
stale entry (it would silently drop a slow test back into the fast tier under its new name)."""

from __future__ import annotations

import ast
from pathlib import Path

import conftest

TESTS = Path(__file__).resolve().parent


def _test_functions(name: str) -> set[str]:
    tree = ast.parse((TESTS / name).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_slow_file_and_longest_first_file_exists() -> None:
    named = conftest.SLOW_FILES | set(conftest.LONGEST_FIRST)
    missing = sorted(name for name in named if not (TESTS / name).is_file())
    assert not missing, f"conftest names test files that do not exist: {missing}"


def test_every_slow_test_names_a_test_function_of_its_file() -> None:
    stale = []
    for entry in sorted(conftest.SLOW_TESTS):
        file, _, function = entry.partition("::")
        if not (TESTS / file).is_file() or function not in _test_functions(file):
            stale.append(entry)
    assert not stale, f"conftest's SLOW_TESTS names tests that do not exist: {stale}"

