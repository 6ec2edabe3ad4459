"""Long embeddings that survive an interruption: where a build keeps its resumable vectors, and when
they go.

A build writes into a temporary folder that a failed or stopped build loses (``store.atomic``),
so the chunks (:mod:`mathsearch.indexes.dense_chunks`: written as they are made, read back when
they match) live outside it: ``.NAME.resume/`` beside INDEX_DIR, marked as ours by a
``.mathsearch-resume`` file, one sub-folder per encoder and part (``minilm-v1/answers/``).  The
folder is removed, file by file (only what mathsearch wrote), once the index it served is complete.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..indexes.dense_chunks import CHUNK_FILE, RESUME_MARK


def resume_root(target: str | Path) -> Path:
    """Where the resumable chunks of the build of ``target`` live: ``.NAME.resume`` beside it."""
    target = Path(target).resolve()
    return target.parent / f".{target.name}.resume"


def ours(folder: Path) -> bool:
    """A resume folder made by mathsearch (its mark file is there)."""
    return (folder / RESUME_MARK).is_file()


def check_resume_root(target: str | Path) -> None:
    """Refuse, before any work, a resume folder of ``target`` that something else made: marking it
    ours would let :func:`remove_resume` delete a user's files that share our names."""
    root = resume_root(target)
    if root.is_symlink() or (root.exists() and not (root.is_dir() and (ours(root) or not any(root.iterdir())))):
        raise InputError(f"{root} is in the way: the build keeps its resumable vectors there, but it holds files "
                         "mathsearch did not write; move it or give another --index (nothing was built).")


def kept_vectors(target: str | Path) -> int:
    """Posts whose vectors the resume folder of ``target`` holds (what a next build reads back)."""
    root = resume_root(target)
    if not ours(root):
        return 0
    kept = 0
    for path in root.rglob("*.npz"):
        try:
            with np.load(path) as saved:
                kept += len(saved["ids"])
        except (OSError, ValueError, KeyError, EOFError):
            pass
    return kept


def remove_resume(target: str | Path) -> int:
    """Remove the resume folder of ``target`` once its build is complete: only the files this module
    writes, in a folder marked as ours, then the folders left empty.  Returns the files removed."""
    root = resume_root(target)
    if not root.is_dir() or root.is_symlink() or not ours(root):
        return 0
    removed = 0
    for folder, _dirs, files in os.walk(root, topdown=False):
        for name in files:
            if CHUNK_FILE.match(name) or name in RESUME_OWN_FILES:
                os.unlink(os.path.join(folder, name))
                removed += 1
        try:
            os.rmdir(folder)
        except OSError:
            pass  # holds something we did not write: left as it is
    return removed


# Files other modules write in a resume folder (the student plan's teacher and student): removed with it.
RESUME_OWN_FILES = {RESUME_MARK, "encoder.json", "tokenizer.json", "embeddings.npy", "manifest.json", "questions.npy",
                    "answers.npy", "question_ids.npy", "answer_ids.npy", "plan.json"}
