"""CompuBERT's artifacts (seed 002, section 6): the fine-tuned encoder and the answers' vectors.

Layout under ``INDEX_DIR/mirmu/compubert/``: ``encoder/`` (a ``compubert`` encoder,
:mod:`mathsearch.encoders.finetune`), and the dense index layout of :mod:`mathsearch.indexes.dense`
under ``dense/`` (``answers.npy`` float16, ``answer_ids.npy``; no question vectors), so that
:class:`~mathsearch.indexes.dense.DenseIndex` searches them; ``manifest.json`` last.

Training pairs (6.2): every answer with its question, the question as its title and body, the
answer as its body (the seed represented both "as the text and math in their body text").
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ...store import Store
from ..dense import DENSE_DIR, passage
from .common import TRAINED_ON, artifact_dir, build_config, read_manifest, write_manifest

NAME = "compubert"
VERSION = 1
ENCODER = "encoder"
Progress = Callable[[str, int, int], None]


def training_pairs(store: Store) -> list[tuple[str, str]]:
    """``(question passage, answer passage)`` of every answer whose question is in the collection."""
    questions = {q.post_id: passage(q.title, q.text) for q in store.iter_posts(1)}
    return [(questions[a.thread_id], passage(None, a.text)) for a in store.iter_answers() if a.thread_id in questions]


def build_compubert(store: Store, index_dir: Path, progress: Progress | None = None, config: str = "") -> dict:
    from ...config import typed
    from ...encoders.finetune import CompuBertEncoder, FinetuneConfig, finetune

    started = time.perf_counter()
    cfg = typed(FinetuneConfig, build_config(NAME, config), f"{NAME}.toml [build]")
    root = artifact_dir(index_dir, NAME)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    info = finetune(training_pairs(store), root / ENCODER, cfg, TRAINED_ON, progress)
    t0 = time.perf_counter()
    encoder = CompuBertEncoder.load(root / ENCODER)
    ids, texts = [], []
    for a in store.iter_answers():
        ids.append(a.post_id)
        texts.append(passage(None, a.text))
    dense = root / DENSE_DIR
    dense.mkdir()
    np.save(dense / "answers.npy", encoder.encode(texts, progress, "compubert answers").astype(np.float16))
    np.save(dense / "answer_ids.npy", np.asarray(ids, dtype=np.int64))
    np.save(dense / "questions.npy", np.zeros((0, encoder.dim), dtype=np.float16))
    np.save(dense / "question_ids.npy", np.zeros(0, dtype=np.int64))
    embed_seconds = time.perf_counter() - t0
    enc = {k: info.get(k) for k in ("name", "kind", "version", "dim", "fingerprint", "trained_on")}
    (dense / "manifest.json").write_text(json.dumps({
        "encoder": enc, "query_encoder": None, "model": NAME, "dense_answers": len(ids), "dense_questions": 0,
        "ann": {}}, indent=1))
    counts = {"compubert_pairs": info["pairs"], "compubert_steps": info["steps"],
              "compubert_train_seconds": info["train_seconds"], "compubert_answers": len(ids),
              "compubert_embed_seconds": round(embed_seconds, 2), "compubert_loss_first": info["loss_first"],
              "compubert_loss_last": info["loss_last"]}
    write_manifest(root, NAME, VERSION, asdict(cfg), counts, started)
    return counts


class CompuBertIndex:
    """The answers' vectors (a :class:`~mathsearch.indexes.dense.DenseIndex`) and the encoder of topics."""

    def __init__(self, root: Path):
        from ..dense import DenseIndex

        self.meta = read_manifest(root, NAME, VERSION)
        self.root = root
        self.dense = DenseIndex(root / DENSE_DIR)
        self._encoder = None

    @classmethod
    def open(cls, index_dir: str | Path) -> CompuBertIndex:
        return cls(artifact_dir(index_dir, NAME))

    def encode(self, text: str) -> np.ndarray:
        if self._encoder is None:
            from ...encoders import shared_encoder

            self._encoder = shared_encoder(str(self.root / ENCODER))
        return self._encoder.encode_one(text).astype(np.float32)

    def search(self, text: str, limit: int) -> dict[int, float]:
        return self.dense.search_answers(self.encode(text), limit)
