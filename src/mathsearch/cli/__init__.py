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


@app.callback()
def _root() -> None:
    """Math-aware search and evaluation for ARQMath / Math Stack Exchange collections."""


def _terminated(signum: int, _frame: object) -> None:
    """SIGTERM stops a command as Ctrl-C does: half-built folders are removed on the way out."""
    sys.stderr.write("terminated\n")
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _terminated)
    app()


def _register_commands() -> None:
    # One line per sub-command module (helpers add theirs here).
    from . import check_cmd, eval_cmd, index_cmd

    index_cmd.register(app)
    eval_cmd.register(app)
    check_cmd.register(app)
    from . import fuse_cmd, run_cmd, search_cmd

    run_cmd.register(app)
    search_cmd.register(app)
    fuse_cmd.register(app)
    from . import formula_cmd

    formula_cmd.register(app)
    __import__(f"{__name__}.train_cmd", fromlist=["register"]).register(app)  # mathsearch train-encoder
    __import__(f"{__name__}.answer_cmd", fromlist=["register"]).register(app)  # mathsearch answer (Task 3)
    __import__(f"{__name__}.pool_cmd", fromlist=["register"]).register(app)  # mathsearch pool
    __import__(f"{__name__}.qrels_cmd", fromlist=["register"]).register(app)  # mathsearch qrels export|agreement|progress
    __import__(f"{__name__}.serve_cmd", fromlist=["register"]).register(app)  # mathsearch serve (web page, API)


_register_commands()
