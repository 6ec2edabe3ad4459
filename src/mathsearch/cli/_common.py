"""Helpers shared by the CLI modules: error reporting, consoles, output paths and JSON output."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from functools import wraps
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import MathsearchError
from ..runs.output import check_output  # noqa: F401  (the commands' one output check)

F = TypeVar("F", bound=Callable[..., Any])


def console(stderr: bool = False) -> Console:
    """The Console every command prints with: on a terminal it wraps at the terminal's width; piped
    or redirected it never wraps (rich would hard-wrap at 80 columns, splitting paths and formulae
    in logs), so each message stays one line."""
    c = Console(stderr=stderr)
    if not c.is_terminal:
        c.soft_wrap = True
    return c


def searching() -> AbstractContextManager[object]:
    """"Searching..." on standard error while a search or an answer runs, on a terminal only (piped
    output and logs stay as they were): the first search over an index with vectors loads the
    MiniLM encoder, about 10 s in which nothing else is printed."""
    err = console(stderr=True)
    if not err.is_terminal:
        return nullcontext()
    return err.status("Searching...")


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


def friendly_errors(func: F) -> F:
    """Turn MathsearchError (and a missing file, or another path the system refuses) into one sentence
    on stderr and a non-zero exit."""

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
        except OSError as exc:  # a path the system refuses (no room, no right, a device): one line, not a traceback
            where = f"{exc.filename}: " if exc.filename else ""
            err_console.print(f"[red]error:[/red] {escape(where + (exc.strerror or str(exc)))}", highlight=False,
                              soft_wrap=True)
            raise typer.Exit(2 if isinstance(exc, PermissionError | IsADirectoryError | NotADirectoryError) else 1) from None

    return wrapper  # type: ignore[return-value]


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=None) + "\n")


class QueryCommand(typer.core.TyperCommand):
    """A command whose argument is a typed query: one that starts with an excluded tag
    (``-[calculus] limit``) is the query, not a cluster of short options (click read ``-[``, ``-c``
    and took the rest as ``-s``'s value)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, [" " + a if a.startswith("-[") else a for a in args])
