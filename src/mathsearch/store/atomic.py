"""Build an index folder beside the old one and swap it in only when complete.

An interrupted build leaves the previous INDEX_DIR untouched and usable; the
half-built folder (``.INDEX_DIR.building-*``) is removed on failure.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_directory(target: str | Path) -> Iterator[Path]:
    target = Path(target).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
    building.chmod(0o755)
    try:
        yield building
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.old-{os.getpid()}"
        os.replace(target, old)
    os.replace(building, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
