"""What every encoder offers: a name, its recorded identity, its dimension, and ``encode``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

Progress = Callable[[str, int, int], None]


class Encoder(Protocol):
    name: str
    dim: int

    def info(self) -> dict[str, Any]:
        """Name, kind, version, dim, config, trained_on, speed: what an index's manifest records."""

    def encode(self, texts: list[str], progress: Progress | None = None, stage: str = "dense") -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def quiet_hf() -> None:
    """No progress bars or info lines from Hugging Face libraries on stderr (model loading included)."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from transformers.utils import logging as tlog

        tlog.set_verbosity_error()
        tlog.disable_progress_bar()
    except ImportError:
        pass
    try:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    except ImportError:
        pass


def encoder_home() -> Path:
    """Where trained encoders are saved by name: ``$MATHSEARCH_ENCODERS`` or ``~/.cache/mathsearch/encoders``."""
    env = os.environ.get("MATHSEARCH_ENCODERS")
    return Path(env) if env else Path.home() / ".cache" / "mathsearch" / "encoders"
