"""Errors that stop a command with one clear sentence (no traceback)."""

from __future__ import annotations


class MathsearchError(Exception):
    """Base class: the message is a complete sentence naming the file or field at fault."""

    exit_code = 2


class InputError(MathsearchError):
    """A file is missing, is not of the expected kind, or cannot be read at all."""


class NotFoundError(InputError):
    """What was asked for by id (a post, a formula, a pool topic or item) is not there: a 404 on the web."""


class FormatError(MathsearchError):
    """A line of a file is malformed in a way that the caller asked to be strict about."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}, line {line}: {message}")
        self.path = path
        self.line = line


def run_script(main) -> None:
    """Run a script's ``main()`` (the benchmarks in ``bench/``) and exit with what it returns; a
    :class:`MathsearchError` (a wrong ``--index``, a missing file) is its one sentence on stderr and
    its ``exit_code``, not a traceback."""
    import sys

    try:
        code = main()
    except MathsearchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    sys.exit(code)
