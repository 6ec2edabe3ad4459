"""Helpers shared by the CLI modules: error reporting, consoles, output paths and JSON output."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import InputError, MathsearchError

F = TypeVar("F", bound=Callable[..., Any])


def console(stderr: bool = False) -> Console:
    """The Console every command prints with: on a terminal it wraps at the terminal's width; piped
    or redirected it never wraps (rich would hard-wrap at 80 columns, splitting paths and formulae
    in logs), so each message stays one line."""
    c = Console(stderr=stderr)
    if not c.is_terminal:
        c.soft_wrap = True
    return c


# Error messages are one sentence: never hard-wrapped, on a terminal or not.
err_console = Console(stderr=True, soft_wrap=True)


def _plain_flags() -> None:
    """Rich help shows no ``<bool>`` after a flag (``--json``, ``--help``).

    typer's rich help renders ``display_type_rich`` for every option, flags included, so each flag
    reads as if it took a value; its plain help already leaves flags bare.  Do the same here: a flag
    (or a counter) takes no value, so it has no type to show.
    """
    try:
        from typer.core import TyperOption
    except ImportError:  # another typer layout: nothing to adjust
        return
    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or getattr(original, "_mathsearch_plain_flags", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) or getattr(self, "count", False):
            return None
        return original(self, ctx)

    display_type_rich._mathsearch_plain_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


_plain_flags()


def check_output(path: Path, inputs: Iterable[Path] = (), option: str = "--out") -> Path:
    """Check an output file before any work is done, so a run never fails at its very end.

    Refused (exit 2, one sentence naming the path): a folder, anything that exists and is not a
    regular file (a FIFO or character device such as /dev/null or /dev/stdout is fine: writing to it
    overwrites nothing), one of the command's input files, a path whose folder is a file, and a file
    or folder that cannot be written.  Missing parent folders are created (the commands' --help
    says so).  Nothing is deleted and nothing is written to ``path`` here.
    """
    path = Path(path)
    if path.exists():
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise InputError(f"{option} {path} is a folder; give the name of a file to write (e.g. {path / 'run.tsv'}).")
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise InputError(f"{option} {path} exists and is not a regular file; refusing to write to it.")
        for inp in inputs:
            try:
                if inp is not None and Path(inp).exists() and path.samefile(inp):
                    raise InputError(f"{option} {path} is also an input of this command; refusing to overwrite it.")
            except OSError:
                continue
        if not os.access(path, os.W_OK):
            raise InputError(f"{option} {path} is not writable.")
        return path
    parent = path.parent
    missing = []
    p = parent
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    if p.exists() and not p.is_dir():
        raise InputError(f"{option} {path}: {p} is a file, not a folder.")
    if not os.access(p, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path}: folder {p} is not writable.")
    if missing:
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{option} {path}: cannot create folder {parent} ({exc.strerror}).") from None
    return path


def friendly_errors(func: F) -> F:
    """Turn MathsearchError (and a missing file) into one sentence on stderr and a non-zero exit."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MathsearchError as exc:
            err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None
        except FileNotFoundError as exc:
            err_console.print(f"[red]error:[/red] no such file: {escape(str(exc.filename))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            err_console.print("interrupted")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=None) + "\n")
