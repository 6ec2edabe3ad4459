"""The ``mathsearch`` command: one typer app, one module per sub-command.

Each ``*_cmd`` module defines ``register(app)``; the commands call the library API and
turn :class:`~mathsearch.errors.MathsearchError` into one clear sentence and an exit code.
"""

from __future__ import annotations

import signal
import sys

import typer

app = typer.Typer(
    name="mathsearch",
    help="Math-aware search and evaluation for ARQMath / Math Stack Exchange collections.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"mathsearch {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Math-aware search and evaluation for ARQMath / Math Stack Exchange collections."""


def _terminated(signum: int, _frame: object) -> None:
    """SIGTERM stops a command as Ctrl-C does: half-built folders are removed on the way out."""
    sys.stderr.write("terminated\n")
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _terminated)
    app()


def _register_commands() -> None:
    from . import (
        answer_cmd,
        check_cmd,
        eval_cmd,
        formula_cmd,
        fuse_cmd,
        index_cmd,
        pool_cmd,
        qrels_cmd,
        run_cmd,
        search_cmd,
        serve_cmd,
        train_cmd,
    )

    # One module per sub-command, in the order `mathsearch --help` lists them.
    commands = (index_cmd, eval_cmd, check_cmd, run_cmd, search_cmd, fuse_cmd, formula_cmd, train_cmd,
                answer_cmd, pool_cmd, qrels_cmd, serve_cmd)
    for module in commands:
        module.register(app)


_register_commands()
