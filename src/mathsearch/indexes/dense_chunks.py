"""The chunks of a long embedding, written to disk as they are made so that an interrupted build
resumes from them (where they live and when they go: :mod:`mathsearch.building.resume`).

A chunk (``000012.npz``, one sub-folder per encoder and part: ``minilm-v1/answers/``) holds its
posts' vectors (float16, as the index stores them), their ids and a digest of their passages, and is
written to a temporary name then renamed, so a ``kill -9`` leaves whole chunks or none.  A chunk is
reused only when its ids and passages are the ones the build embeds at that place now: a changed
collection or encoder starts over from the first chunk that differs.  The folder of the chunks is
marked as ours by a ``.mathsearch-resume`` file.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

RESUME_MARK = ".mathsearch-resume"
CHUNK_FILE = re.compile(r"^\d{6}\.npz(\.tmp-\d+)?$")
# Posts a chunk holds: a multiple of every encoder's own batch (MiniLM 64, a static encoder 1,024),
# so the vectors are those of one call.  MiniLM's is small because each of its posts is dear: 2,048
# posts are ~3 minutes on two cores, the most a kill can cost.
SLOW_CHUNK = 2_048
FAST_CHUNK = 51_200
SLOW_KINDS = ("minilm", "compubert")


def chunk_size(encoder_kind: str) -> int:
    return SLOW_CHUNK if encoder_kind in SLOW_KINDS else FAST_CHUNK


def say(message: str) -> None:
    """One line for the person waiting (stderr: ``--json`` keeps stdout to itself)."""
    print(message, file=sys.stderr, flush=True)


def _digest(texts: list[str]) -> np.ndarray:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return np.frombuffer(h.digest(), dtype=np.uint8)


def _duration(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


def _made_by(stage: str) -> str:
    """Who made the chunks read back: an interrupted build, or for the teacher also this build's
    head start (made while its store was written)."""
    return "made by this build's head start or an interrupted build" if stage.startswith("teacher") else \
        "from an interrupted build"


def mark(root: Path) -> None:
    """Make ``root`` a resume folder of ours (what :func:`remove_resume` removes, and nothing else)."""
    root.mkdir(parents=True, exist_ok=True)
    mark = root / RESUME_MARK
    if not mark.exists():
        mark.write_text("resumable chunks of a mathsearch build: removed when the build completes\n")



class ChunkedEmbedding:
    """The chunks of one part (``answers``, ``questions``) of one encoder's embedding under ``folder``.

    :meth:`embed` encodes ``(post id, passage)`` pairs chunk by chunk, keeping the chunks an earlier,
    interrupted run left when they match, and returns ``(ids, vectors)``; ``resumed`` and ``encoded``
    count the posts read back and the posts encoded now; ``stopped`` says whether ``stop`` ended it
    before the last chunk."""

    def __init__(self, root: Path, key: str, part: str, chunk: int):
        self.root = Path(root)
        self.folder = self.root / re.sub(r"[^A-Za-z0-9_.-]+", "-", key) / part
        self.chunk = chunk
        self.resumed = 0
        self.encoded = 0
        self.stopped = False

    def _path(self, i: int) -> Path:
        return self.folder / f"{i:06d}.npz"

    def _load(self, i: int, ids: list[int], texts: list[str]) -> np.ndarray | None:
        path = self._path(i)
        if not path.is_file():
            return None
        try:
            with np.load(path) as saved:
                if (saved["ids"].tolist() == ids and np.array_equal(saved["digest"], _digest(texts))
                        and len(saved["vectors"]) == len(ids)):
                    return saved["vectors"]
        except (OSError, ValueError, KeyError, EOFError):
            pass  # a chunk we cannot read is made again
        return None

    def _save(self, i: int, ids: list[int], texts: list[str], vectors: np.ndarray) -> None:
        mark(self.root)
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f"{i:06d}.npz.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            np.savez(f, ids=np.asarray(ids, dtype=np.int64), digest=_digest(texts), vectors=vectors)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._path(i))

    def embed(self, model, passages: Iterable[tuple[int, str]], total: int, stage: str,
              progress: Callable[[str, int, int], None] | None = None,
              stop: Callable[[], bool] | None = None) -> tuple[list[int], np.ndarray]:
        """``stop()``, asked before each chunk: true ends the embedding there, every chunk made so far
        kept on disk for the next call (the vectors returned are then those of the first chunks)."""
        ids: list[int] = []
        parts: list[np.ndarray] = []
        encoding_since: float | None = None
        said = False
        batch_ids: list[int] = []
        batch_texts: list[str] = []
        i = 0
        trusted = True  # chunks after one that had to be made again are made again too

        def flush() -> None:
            nonlocal i, trusted, encoding_since, said
            kept = self._load(i, batch_ids, batch_texts) if trusted else None
            if kept is not None:
                self.resumed += len(batch_ids)
                vectors = kept
            else:
                if trusted and self.resumed and not said:
                    say(f"{stage}: resumed {self.resumed:,} of {max(total, self.resumed):,} posts' vectors "
                        f"{_made_by(stage)} ({self.folder})")
                    said = True
                trusted = False
                if encoding_since is None:
                    encoding_since = time.perf_counter()
                done_before = len(ids)
                within = ((lambda _s, n, _of: progress(stage, done_before + n, max(total, done_before + n)))
                          if progress else None)
                vectors = model.encode(batch_texts, within, stage).astype(np.float16)
                self._save(i, batch_ids, batch_texts, vectors)
                self.encoded += len(batch_ids)
                rate = self.encoded / max(time.perf_counter() - encoding_since, 1e-9)
                left = max(total - len(ids) - len(batch_ids), 0)
                say(f"{stage}: {len(ids) + len(batch_ids):,} / {max(total, len(ids) + len(batch_ids)):,} posts, "
                    f"{rate:,.1f} posts/s, about {_duration(left / rate)} left")
            ids.extend(batch_ids)
            parts.append(vectors)
            if progress:
                progress(stage, len(ids), max(total, len(ids)))
            batch_ids.clear()
            batch_texts.clear()
            i += 1

        for post_id, text in passages:
            batch_ids.append(post_id)
            batch_texts.append(text)
            if len(batch_ids) == self.chunk:
                if stop is not None and stop():
                    break
                flush()
        else:
            if batch_ids and not (stop is not None and stop()):
                flush()
        self.stopped = bool(batch_ids)
        if self.stopped:  # the chunks beyond are not stale: the next call goes on from them
            vectors = np.concatenate(parts) if parts else np.zeros((0, getattr(model, "dim", 0)), dtype=np.float16)
            return ids, vectors
        if trusted and self.resumed and not said:
            say(f"{stage}: resumed all {self.resumed:,} posts' vectors {_made_by(stage)} ({self.folder})")
        # chunks beyond the end (a collection that shrank) are stale
        while self._path(i).exists():
            self._path(i).unlink()
            i += 1
        vectors = np.concatenate(parts) if parts else np.zeros((0, getattr(model, "dim", 0)), dtype=np.float16)
        return ids, vectors
