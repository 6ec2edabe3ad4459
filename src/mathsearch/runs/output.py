"""Output files: checked before any work, and never one the program did not write.

Every command that writes a file (``run``, ``fuse``, ``pool``, ``qrels export``) calls
:func:`check_output` before its work, so that a run never fails at its end for want of a place to
write, and a file a user made (notes, a run of another tool, a topics file) is never replaced
unless ``--force`` says so.  "Ours" is decided per kind of output by a recogniser that reads the
file (:func:`run_file_problem` for run files); an empty file holds nothing to lose and is replaced.
"""

from __future__ import annotations

import csv
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import InputError

# A recogniser says why an existing file is not one of ours, as the end of a sentence that starts
# with the file's name ("is not a run file: line 3 ..."); None: it is ours, it may be replaced.
Recogniser = Callable[[Path], "str | None"]


def _is_int(text: str) -> bool:
    return text.strip().lstrip("-").isdigit()


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def is_run_row(row: list[str]) -> bool:
    """A row (tab-separated fields) of one of the three layouts mathsearch writes: six fields, with
    an integer rank and a number score, at columns 4-5 (Task 1 ``topic Q0 doc rank score tag``,
    Task 2 ``topic formula post rank score tag``) or 2-3 (Task 3 ``topic rank score tag sources answer``)."""
    if len(row) != 6:
        return False
    return (_is_int(row[3]) and _is_float(row[4])) or (_is_int(row[1]) and _is_float(row[2]))


def run_file_problem(path: Path) -> str | None:
    """None when ``path`` is a run file as mathsearch writes them (every line a run row of one layout,
    tab-separated, UTF-8; an empty file too), else why not."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            for n, row in enumerate(csv.reader(handle, delimiter="\t", quotechar='"'), 1):
                if row and not is_run_row(row):
                    return f"is not a run file written by mathsearch (line {n} is not a tab-separated run line)"
    except UnicodeDecodeError:
        return "is not a run file written by mathsearch (it is not UTF-8 text)"
    except csv.Error as exc:
        return f"is not a run file written by mathsearch ({exc})"
    return None


def check_output(
    path: str | Path,
    inputs: Iterable[str | Path | None] = (),
    *,
    option: str = "--out",
    force: bool = False,
    ours: Recogniser | None = run_file_problem,
) -> Path:
    """Check an output file before any work is done; refuse, with one sentence naming the path and
    nothing changed, what must not be written.

    Refused: a folder, anything that exists and is not a regular file (a FIFO or a character device
    such as /dev/null or /dev/stdout is fine: writing to it overwrites nothing), one of the command's
    ``inputs`` (even with ``force``), a path whose folder is a file, a file or folder that cannot be
    written, and, unless ``force``, a non-empty file that ``ours`` does not recognise.  Missing parent
    folders are created.  Nothing is deleted and nothing is written to ``path`` here.
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
        if stat.S_ISREG(mode) and path.stat().st_size and ours is not None and not force:
            problem = ours(path)
            if problem is not None:
                raise InputError(f"{option} {path} exists and {problem}; refusing to overwrite it: "
                                 f"give another {option}, or --force to replace it (nothing was changed).")
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
