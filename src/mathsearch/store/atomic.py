"""Build a folder beside its target and swap it in only when complete.

An interrupted build leaves the previous target untouched and usable.  The half-built folder
(``.NAME.building-*``) is removed when the build fails or is stopped by SIGINT or SIGTERM.  A
build killed outright (``kill -9``, a power cut) cannot clean up after itself, so each building
folder holds a lock file that its build holds open (``flock``) for its whole life: the next build
of the same target removes every building folder whose lock is free, since its build is dead.
Only folders that hold such a lock file are ever removed: they are ours.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = ".mathsearch-build.lock"

# Lock descriptors of the builds running in this process: closed in forked children, so that the
# lock dies with the process that owns the build (a child keeps it alive otherwise).
_held: set[int] = set()


_of_a_build = False  # True in the processes forked by a build (and in theirs)


def _in_forked_child() -> None:
    global _of_a_build
    if not (_held or _of_a_build):
        return  # a fork that has nothing to do with a build
    _of_a_build = True
    for fd in list(_held):
        try:
            os.close(fd)
        except OSError:
            pass
    _held.clear()
    # A child of a build ends with it: SIGTERM when the parent dies, even by SIGKILL (Linux only),
    # with the default action, so that a worker does not run the parent's Python handler.
    if _PR_SET_PDEATHSIG is not None:
        _PR_SET_PDEATHSIG()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _pdeathsig_setter():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # not Linux: children outlive a killed build there
        return None
    return lambda: prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1: PR_SET_PDEATHSIG


_PR_SET_PDEATHSIG = _pdeathsig_setter() if os.name == "posix" else None
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_in_forked_child)


def die_with_parent() -> None:
    """For a child started without fork (``spawn``): end when the process that started it dies."""
    if _PR_SET_PDEATHSIG is not None:
        _PR_SET_PDEATHSIG()


def _lock(folder: Path) -> int:
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _held.add(fd)
    return fd


def _unlock(fd: int) -> None:
    _held.discard(fd)
    os.close(fd)


def _is_dead_build(folder: Path) -> bool:
    """True when ``folder`` holds our lock file and no process holds the lock."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDWR)
    except OSError:
        return False  # no lock file: not a folder of ours (or one being swapped in right now)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False  # its build is alive
    finally:
        os.close(fd)


def _size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def clean_stale_builds(target: str | Path) -> list[tuple[Path, int]]:
    """Remove the building folders of ``target`` left by builds that died; ``[(folder, bytes)]``."""
    target = Path(target).resolve()
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.building-[^/]+$")
    removed: list[tuple[Path, int]] = []
    if not target.parent.is_dir():
        return removed
    for entry in sorted(target.parent.iterdir()):
        if pattern.match(entry.name) and entry.is_dir() and not entry.is_symlink() and _is_dead_build(entry):
            size = _size(entry)
            if _remove_dead_build(entry):
                removed.append((entry, size))
    return removed


def _remove_dead_build(folder: Path, tries: int = 5) -> bool:
    """Remove ``folder``, its lock file last, so that a folder we could not empty (a child of the
    dead build still writing) keeps the mark that lets a later build finish the job."""
    for attempt in range(tries):
        for entry in folder.iterdir():
            if entry.name == LOCK_FILE:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        if [e.name for e in folder.iterdir()] == [LOCK_FILE]:
            (folder / LOCK_FILE).unlink()
            try:
                folder.rmdir()
                return True
            except OSError:
                pass
        time.sleep(0.2 * (attempt + 1))
    return False


@contextmanager
def atomic_directory(target: str | Path) -> Iterator[Path]:
    """Yield an empty folder beside ``target``; on success it replaces ``target`` whole.

    The caller decides whether ``target`` may be replaced (see
    :func:`mathsearch.indexes.directory.check_index_target`); this only makes the swap atomic.
    """
    target = Path(target).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
    building.chmod(0o755)
    lock = _lock(building)
    old = None
    try:
        yield building
        # The lock file is ours, not the index's: gone before the folder takes the target's name.
        (building / LOCK_FILE).unlink()
        if target.exists():
            old = target.parent / f".{target.name}.old-{os.getpid()}"
            os.replace(target, old)
        os.replace(building, target)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        if old is not None and not target.exists():  # stopped between the two renames
            os.replace(old, target)
        raise
    finally:
        _unlock(lock)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
