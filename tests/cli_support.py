"""Helpers of the tests that drive the command line in process (pool, qrels export, ...)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from mathsearch.cli import app


def cli(*args: object) -> object:
    """``mathsearch ARGS`` in process (each argument as its str); the typer Result."""
    return CliRunner().invoke(app, [str(a) for a in args])


def write(path: Path, lines: list[str]) -> Path:
    """Write ``lines`` to ``path``, each ending in a newline (UTF-8); returns ``path``."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
