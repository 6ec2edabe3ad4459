"""The teacher's re-scoring of the similar questions: a student's index, MiniLM's closeness.

On an index whose vectors come from a static student (the full-size path), the topic is encoded by
its teacher, MiniLM, and compared with the student's vectors of the collection questions. The
student finds the right neighbourhood but orders it worse than MiniLM would: on the sample, ``ours``
with MiniLM's own question vectors ranks better than with the student's (docs/log/tuning.md). So,
with ``[teacher] rescore = M``, the best ``M`` questions by the student's vectors are encoded again
by the teacher at query time (each question's first ``tokens`` word pieces, as the index embeds its
passage) and scored by their cosine to the topic's vector; the best of those are the similar
questions by vector that ``dense_questions`` and ``dense_linked`` start from.

It costs ``M`` MiniLM encodings a query (1.6-2.0 s on two cores for 100 questions of 256 word
pieces; ~2 s a query at 1.4M answers), the same at any collection size: nothing is built. On an index whose vectors are the
query encoder's own (MiniLM's), there is nothing to re-score and it does nothing. Encoded questions
are kept for the context's life (bounded), so a server or a tuning run encodes each once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from .. import ranking
from ..errors import InputError
from .base import SearchContext

KEEP = 50_000  # encoded questions a context keeps (384 float32 each: ~77 MB at most)
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Teacher:
    """``[teacher]`` of an ``ours`` config: off (``rescore = 0``) unless a config turns it on."""

    rescore: int = 0  # the best this many similar questions by the index's vectors are re-scored
    tokens: int = 256  # word pieces of each question the teacher reads (MiniLM's own limit; 128: ~0.6x the cost)

    def __post_init__(self) -> None:
        if self.rescore < 0:
            raise InputError(f"rescore must be 0 or more, not {self.rescore}")
        if not 1 <= self.tokens <= 256:
            raise InputError(f"tokens must be 1 to 256 (MiniLM's word pieces), not {self.tokens}")

    @property
    def on(self) -> bool:
        return self.rescore > 0


def applies(ctx: SearchContext, teacher: Teacher) -> bool:
    """Whether ``teacher`` re-scores on ``ctx``'s index: on, and the index's vectors are not the
    query encoder's own (its manifest names a separate query encoder, as a student's does)."""
    return teacher.on and bool(ctx.dense.manifest.get("query_encoder"))


def rescored(ctx: SearchContext, vector: np.ndarray, found: dict[int, float], teacher: Teacher,
             limit: int) -> dict[int, float]:
    """The best ``limit`` of ``found`` (the best ``max(limit, teacher.rescore)`` questions by the
    index's vectors, where the teacher :func:`applies`), every one re-scored by the teacher's cosine
    to the topic's ``vector``."""
    pool = list(found)
    if not pool:
        return {}
    cosine = question_vectors(ctx, pool, teacher.tokens) @ np.asarray(vector, dtype=np.float32)
    return ranking.top(dict(zip(pool, cosine.tolist(), strict=True)), limit)


def question_vectors(ctx: SearchContext, question_ids: list[int], tokens: int) -> np.ndarray:
    """The teacher's vectors of ``question_ids``' passages (as the index embeds them: title, then
    text), one row each, encoded once a context."""
    from ..indexes.dense import passage

    kept = ctx.teacher_vectors
    with _LOCK:
        have = {q: kept[(tokens, q)] for q in question_ids if (tokens, q) in kept}
    missing = [q for q in dict.fromkeys(question_ids) if q not in have]
    if missing:
        posts = ctx.store.posts(missing)
        texts = [passage(posts[q].title, posts[q].text) if q in posts else "" for q in missing]
        encoder = ctx.dense.query_encoder()
        if hasattr(encoder, "encode_passages"):
            encoded = encoder.encode_passages(texts, tokens)
        else:  # a query encoder without a word-piece limit reads each passage as it reads a topic
            encoded = encoder.encode(texts)
        have.update(zip(missing, np.asarray(encoded, dtype=np.float32), strict=True))
        with _LOCK:
            if len(kept) + len(missing) > KEEP:
                kept.clear()
            kept.update(((tokens, q), have[q]) for q in missing)
    return np.vstack([have[q] for q in question_ids])
