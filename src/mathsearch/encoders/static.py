"""Static encoders: a word-piece tokenizer and one vector per token; a passage's vector is the
normalised sum of its tokens' vectors (token weights live in the vectors' norms, as in model2vec).
A student trained with ``bigrams = B`` (``config`` of its ``encoder.json``) has B more rows after
the tokenizer's: each pair of neighbouring word pieces adds the row its hash falls in (fastText's
hashed n-grams), so that ``\\frac`` ``{`` or "prime" "number" can mean more than their parts.

Encoding needs only ``tokenizers`` and numpy (no torch): thousands of posts a second per core, some
twenty thousand with the compiled word pieces (``_wordpiece.pyx``, the same ids).
Saved as a folder: ``encoder.json`` (name, kind, version, dim, config, trained_on, speed),
``tokenizer.json`` and ``embeddings.npy`` (float16, one row per token id).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from .._compiled import load_kernel
from ..errors import InputError
from .base import Progress, normalise

MAX_TOKENS = 256  # the teacher (MiniLM) reads 256 word pieces: the student is trained on the same cut
CHUNK = 1024
PAIR_PRIME = 1_000_003  # a word-piece pair (a, b) falls in bucket (a * PAIR_PRIME + b) % bigrams


def pair_rows(ids: np.ndarray | list[int], vocab: int, buckets: int) -> np.ndarray:
    """The bigram rows of one passage's word-piece ids (``vocab`` + bucket), one per neighbouring pair, in order."""
    ids = np.asarray(ids, dtype=np.int64)
    return vocab + (ids[:-1] * PAIR_PRIME + ids[1:]) % buckets


# The word pieces compiled (_wordpiece.pyx); None where not built or the pure path is asked for.
_KERNEL = load_kernel("mathsearch.encoders._wordpiece")


class StaticEncoder:
    kind = "static"

    def __init__(self, tokenizer, table: np.ndarray, info: dict[str, Any], max_tokens: int = MAX_TOKENS):
        self.tokenizer = tokenizer
        tokenizer.no_padding()  # MiniLM's tokenizer.json pads to 128 and truncates
        tokenizer.no_truncation()
        self.table = np.ascontiguousarray(table, dtype=np.float32)
        self.max_tokens = int(info.get("config", {}).get("max_tokens", max_tokens))
        self.bigrams = int(info.get("config", {}).get("bigrams", 0) or 0)
        self.vocab = self.table.shape[0] - self.bigrams  # rows of single word pieces; the buckets follow
        self._info = {**info, "dim": int(self.table.shape[1])}
        self.name = str(info.get("name", "static"))
        self.dim = int(self.table.shape[1])
        # The compiled word pieces (_wordpiece.pyx), read from the tokenizer as it is now: where it
        # was not built, the pure path is asked for, or the tokenizer is not the pipeline it reads,
        # the tokenizer itself (the reference).
        self._pieces = _KERNEL.WordPieces(tokenizer) if _KERNEL is not None and _KERNEL.WordPieces.accepts(tokenizer) else None

    def info(self) -> dict[str, Any]:
        return dict(self._info)

    def _reference_ids(self, texts: list[str]) -> list[list[int]]:
        """Each passage's first ``max_tokens`` word pieces, by the tokenizer (the kernel's reference)."""
        # encode_batch_fast gives the same ids without the offsets: ~15% less CPU.
        encode = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
        return [e.ids[: self.max_tokens] for e in encode(texts, add_special_tokens=False)]

    def piece_ids(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(flat, lengths)``: the passages' first ``max_tokens`` word pieces one after another (int64),
        and how many each has."""
        if self._pieces is not None:
            return self._pieces.ids(texts, self.max_tokens)
        pieces = self._reference_ids(texts)
        lengths = np.fromiter((len(i) for i in pieces), dtype=np.int64, count=len(pieces))
        return np.fromiter((t for i in pieces for t in i), dtype=np.int64, count=int(lengths.sum())), lengths

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """The table rows each passage sums: its first ``max_tokens`` word pieces, then their pairs' buckets."""
        if self._pieces is None:
            pieces = self._reference_ids(texts)
        else:
            flat, lengths = self.piece_ids(texts)
            pieces = [part.tolist() for part in np.split(flat, np.cumsum(lengths)[:-1])] if len(texts) else []
        if not self.bigrams:
            return pieces
        return [ids + pair_rows(ids, self.vocab, self.bigrams).tolist() for ids in pieces]

    def encode(self, texts: list[str], progress: Progress | None = None, stage: str = "dense") -> np.ndarray:
        from scipy.sparse import csr_matrix

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows_total = self.table.shape[0]
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start : start + CHUNK]
            if self.bigrams:
                ids = self.token_ids(chunk)
                lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
                flat = np.fromiter((t for i in ids for t in i), dtype=np.int64, count=int(lengths.sum()))
            else:  # the tokenizer's ids as they come: no list per passage
                flat, lengths = self.piece_ids(chunk)
            indptr = np.concatenate(([0], np.cumsum(lengths)))
            # bag of rows (posts x table rows, counts summed) times the table: no row copies
            bags = csr_matrix((np.ones(len(flat), dtype=np.float32), flat, indptr), shape=(len(chunk), rows_total))
            bags.sum_duplicates()
            out[start : start + len(chunk)] = bags @ self.table
            if progress:
                progress(stage, min(start + CHUNK, len(texts)), len(texts))
        return normalise(out)

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    def save(self, folder: str | Path) -> Path:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.tokenizer.save(str(folder / "tokenizer.json"))
        table = self.table.astype(np.float16)
        np.save(folder / "embeddings.npy", table)
        digest = hashlib.sha256(table.tobytes())
        digest.update((folder / "tokenizer.json").read_bytes())
        info = {k: v for k, v in self._info.items() if k != "path"}
        info.update(kind="static", fingerprint=f"static/{digest.hexdigest()[:16]}")
        (folder / "encoder.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
        self._info = info
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> StaticEncoder:
        folder = Path(folder)
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise InputError(f"static encoders need the 'tokenizers' package (the 'dense' extras): {exc}.") from None
        try:
            info = json.loads((folder / "encoder.json").read_text())
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            table = np.load(folder / "embeddings.npy")
        except (OSError, ValueError, Exception) as exc:  # tokenizers raises its own Exception type
            raise InputError(f"{folder} is not a complete static encoder (encoder.json, tokenizer.json, embeddings.npy): {exc}.") from None
        bigrams = info.get("config", {}).get("bigrams", 0) or 0
        if not isinstance(bigrams, int) or bigrams < 0:
            raise InputError(f"{folder}/encoder.json: config.bigrams is {bigrams!r}, not a count of buckets.")
        if table.ndim != 2 or table.shape[0] < tokenizer.get_vocab_size() + bigrams:
            raise InputError(f"{folder}/embeddings.npy has shape {table.shape}, not one row per token of its tokenizer"
                             f" and per bigram bucket ({bigrams}).")
        info["path"] = str(folder.resolve())
        return cls(tokenizer, table, info)
