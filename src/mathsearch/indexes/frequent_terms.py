"""The answer index's frequent terms, answer by answer (a forward index), for BM25 that reads their
posting lists for a short list of candidates only.

At 1.4M answers a topic's answer BM25 reads ~25M postings, ~23M of them for the ~70 query terms held
by more than 5% of the answers (``m:=``, ``m:(``, common words), whose idf is small.  With this
index, :meth:`mathsearch.indexes.text_index.TextIndex.search_answers` (``rare_first`` > 0) lets
tantivy score the query's other terms over the whole index, keeps the best ``rare_first`` answers,
and adds the frequent terms' BM25 to those from here.  Every answer it returns has its exact score
(the same idf, the same quantised field lengths as tantivy, to float rounding); what can differ from
the one-query ranking is which answers were candidates.

Layout under ``text/frequent/``: ``manifest.json`` (fields, the terms, total tokens per field),
``ids.npy`` (answer id per row, in the order tantivy was fed), ``norms.npy`` (uint8 [rows, fields]:
tantivy's field-length code), ``indptr.npy`` (int64 [rows + 1]) and ``cols.npy`` / ``tfs.npy``
(term number and its frequency in the row's answer, row by row).

Which terms are kept is decided before the workers start, from the first answers of the collection
(:data:`SAMPLE_JOBS` jobs): a term held by at least :data:`MIN_SHARE` of them.  That choice only
moves time between tantivy and this index; every term is scored either way.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError

FREQUENT_DIR = "frequent"
VERSION = 1
# The answer fields ``ours`` weights; the baselines' own fields (body_raw, body_lw) stay in tantivy only.
FIELDS = ("body", "body_math", "comments", "title", "question", "tags", "q_math")
THREAD_FIELDS = frozenset({"title", "question", "tags", "q_math"})  # the same for every answer of a thread
MIN_SHARE = 0.01  # a term held by >= 1% of the sampled answers is kept (at 1.4M: >= ~14k postings)
SAMPLE_JOBS = 20  # analysis jobs (of 200 threads) whose answers choose the terms
K1, B = np.float32(1.2), np.float32(0.75)  # tantivy's BM25 constants


def _fieldnorm_table() -> np.ndarray:
    """The field length of each of tantivy's 256 one-byte length codes: exact up to 23, then a
    3-bit mantissa with an exponent (tantivy's ``fieldnorm`` encoding)."""
    out = np.zeros(256, dtype=np.int64)
    for code in range(256):
        if code < 24:
            out[code] = code
            continue
        c = code - 24
        bits, shift = c & 7, c >> 3
        out[code] = 24 + (bits if shift == 0 else (bits | 8) << (shift - 1))
    return out


FIELDNORM_TABLE = _fieldnorm_table()


def fieldnorm_codes(lengths: np.ndarray) -> np.ndarray:
    """Tantivy's one-byte code of each field length (the largest table entry not above it)."""
    return (np.searchsorted(FIELDNORM_TABLE, lengths, side="right") - 1).astype(np.uint8)


Vocabulary = dict[str, dict[str, int]]  # field -> token -> term number


def choose_terms(docs: Iterable[Mapping[str, str]], min_share: float = MIN_SHARE) -> Vocabulary:
    """The terms (per field of :data:`FIELDS`) held by at least ``min_share`` of ``docs`` (analysed
    answer fields, tokens joined by spaces), at least 2 of them; ``min_share`` <= 0 keeps every term.
    Numbered field by field, tokens sorted, so the same documents give the same numbers."""
    df: dict[str, Counter[str]] = {f: Counter() for f in FIELDS}
    n = 0
    for fields in docs:
        n += 1
        for f in FIELDS:
            text = fields.get(f)
            if text:
                df[f].update(set(text.split()))
    least = 1 if min_share <= 0 else max(2, int(np.ceil(min_share * n)))
    vocab: Vocabulary = {}
    col = 0
    for f in FIELDS:
        vocab[f] = {}
        for token in sorted(t for t, c in df[f].items() if c >= least):
            vocab[f][token] = col
            col += 1
    return vocab


@dataclass(slots=True)
class Block:
    """The rows of a run of answers: their ids, length codes, and (term, frequency) pairs."""

    ids: np.ndarray  # int64 [n]
    lengths: np.ndarray  # int64 [n, fields]: tokens per field
    counts: np.ndarray  # int64 [n]: pairs per row
    cols: np.ndarray  # uint32
    tfs: np.ndarray  # uint16


def block_of(docs: Iterable[tuple[int, Mapping[str, str]]], vocab: Vocabulary) -> Block:
    """Rows for ``(answer id, analysed fields)`` in order."""
    ids, lengths, counts, cols, tfs = [], [], [], [], []
    seen: dict[tuple[str, str], tuple[int, list[int], list[int]]] = {}  # a thread's fields repeat per answer
    for doc_id, fields in docs:
        ids.append(doc_id)
        row_len, n_pairs = [], 0
        for f in FIELDS:
            text = fields.get(f)
            if not text:
                row_len.append(0)
                continue
            done = seen.get((f, text))
            if done is None:
                tokens = text.split()
                terms = vocab[f]
                tf = Counter(tokens)
                held = sorted(tf.keys() & terms.keys())
                done = (len(tokens), [terms[t] for t in held], [min(tf[t], 65535) for t in held])
                if f in THREAD_FIELDS:
                    seen[(f, text)] = done
            row_len.append(done[0])
            cols.extend(done[1])
            tfs.extend(done[2])
            n_pairs += len(done[1])
        lengths.append(row_len)
        counts.append(n_pairs)
    return Block(np.asarray(ids, dtype=np.int64), np.asarray(lengths, dtype=np.int64).reshape(-1, len(FIELDS)),
                 np.asarray(counts, dtype=np.int64), np.asarray(cols, dtype=np.uint32),
                 np.asarray(tfs, dtype=np.uint16))


class FrequentTermsWriter:
    """Appends blocks to ``root`` (raw files), then writes the ``.npy`` arrays and the manifest."""

    _PARTS = (("ids", np.int64), ("lengths", np.int64), ("counts", np.int64), ("cols", np.uint32), ("tfs", np.uint16))

    def __init__(self, root: Path, vocab: Vocabulary, sampled: int, min_share: float):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.vocab, self.sampled, self.min_share = vocab, sampled, min_share
        self._files = {name: open(self.root / f"{name}.raw", "wb") for name, _ in self._PARTS}  # noqa: SIM115
        self.rows = 0
        self.pairs = 0
        self.total_tokens = np.zeros(len(FIELDS), dtype=np.int64)

    def add(self, block: Block) -> None:
        for name, dtype in self._PARTS:
            self._files[name].write(np.ascontiguousarray(getattr(block, name), dtype=dtype).tobytes())
        self.rows += len(block.ids)
        self.pairs += len(block.cols)
        self.total_tokens += block.lengths.sum(axis=0)

    def _raw(self, name: str, dtype) -> np.ndarray:
        return np.fromfile(self.root / f"{name}.raw", dtype=dtype)

    def close(self) -> dict:
        for f in self._files.values():
            f.close()
        for name, dtype in (("ids", np.int64), ("cols", np.uint32), ("tfs", np.uint16)):
            _raw_to_npy(self.root / f"{name}.raw", self.root / f"{name}.npy", dtype)
        lengths = self._raw("lengths", np.int64).reshape(-1, len(FIELDS))
        np.save(self.root / "norms.npy", fieldnorm_codes(lengths))
        counts = self._raw("counts", np.int64)
        indptr = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        np.save(self.root / "indptr.npy", indptr)
        for name in ("lengths", "counts"):
            (self.root / f"{name}.raw").unlink()  # ours: written above
        terms = [[f, t] for f in FIELDS for t, _ in sorted(self.vocab[f].items(), key=lambda x: x[1])]
        manifest = {"version": VERSION, "fields": list(FIELDS), "terms": terms, "rows": self.rows,
                    "pairs": self.pairs, "total_tokens": dict(zip(FIELDS, map(int, self.total_tokens), strict=True)),
                    "min_share": self.min_share, "sampled_answers": self.sampled}
        (self.root / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False))
        return {"frequent_terms": len(terms), "frequent_pairs": self.pairs}


def _raw_to_npy(raw: Path, out: Path, dtype, chunk: int = 1 << 24) -> None:
    """``raw`` (written by this module) as an ``.npy`` file, copied in chunks (it can be GBs)."""
    src = np.memmap(raw, dtype=dtype, mode="r") if raw.stat().st_size else np.zeros(0, dtype=dtype)
    dst = np.lib.format.open_memmap(out, mode="w+", dtype=dtype, shape=(len(src),))
    for i in range(0, len(src), chunk):
        dst[i:i + chunk] = src[i:i + chunk]
    dst.flush()
    del src, dst
    raw.unlink()


class FrequentTerms:
    """Search side: the frequent terms' BM25 for given answers."""

    def __init__(self, root: Path):
        meta = json.loads((root / "manifest.json").read_text())
        if meta.get("version") != VERSION or tuple(meta.get("fields", ())) != FIELDS:
            raise InputError(f"the frequent-terms index in {root} is out of date: rebuild with `mathsearch index`.")
        self.meta = meta
        self.field_no = {f: i for i, f in enumerate(FIELDS)}
        self.terms: dict[tuple[str, str], int] = {(f, t): i for i, (f, t) in enumerate(meta["terms"])}
        self.term_field = np.asarray([self.field_no[f] for f, _ in meta["terms"]], dtype=np.int64)
        self.total_tokens = np.asarray([meta["total_tokens"][f] for f in FIELDS], dtype=np.float64)
        load = lambda name: np.load(root / f"{name}.npy", mmap_mode="r")  # noqa: E731
        self.ids, self.norms, self.indptr, self.cols, self.tfs = (load(n) for n in ("ids", "norms", "indptr", "cols", "tfs"))
        self._order = np.argsort(self.ids, kind="stable")
        self._sorted_ids = np.asarray(self.ids)[self._order]

    @classmethod
    def open(cls, text_root: Path) -> FrequentTerms | None:
        root = Path(text_root) / FREQUENT_DIR
        return cls(root) if (root / "manifest.json").is_file() else None

    def holds(self, field: str, token: str) -> bool:
        return (field, token) in self.terms

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """Row of each answer id (every id must be an indexed answer)."""
        pos = np.searchsorted(self._sorted_ids, ids)
        pos = np.minimum(pos, len(self._sorted_ids) - 1)
        if len(ids) and not np.array_equal(self._sorted_ids[pos], ids):
            raise InputError("the frequent-terms index does not hold every answer of the text index: rebuild it")
        return self._order[pos]

    def scores(self, ids: np.ndarray, terms: list[tuple[str, str, float]], doc_freq, n_docs: int) -> np.ndarray:
        """BM25 of the frequent ``terms`` ((field, token, boost), each held here) for answers ``ids``,
        as tantivy scores it over ``n_docs`` answers with ``doc_freq(field, token)``."""
        out = np.zeros(len(ids), dtype=np.float64)
        if not len(ids) or not terms:
            return out
        from .text_index import bm25_idf

        weight = np.zeros(len(self.terms), dtype=np.float32)  # boost x idf x (1 + k1), float32 as tantivy
        for fld, token, boost in terms:
            weight[self.terms[(fld, token)]] += (np.float32(bm25_idf(doc_freq(fld, token), n_docs))
                                                 * (np.float32(1.0) + K1) * np.float32(boost))
        avg = (self.total_tokens / n_docs).astype(np.float32)
        norm = K1 * (np.float32(1.0) - B + B * FIELDNORM_TABLE.astype(np.float32)[None, :] / avg[:, None])  # [fields, 256]
        rows = self.rows_of(np.asarray(ids, dtype=np.int64))
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        lens = ends - starts
        total = int(lens.sum())
        if total == 0:
            return out
        which = np.repeat(np.arange(len(rows)), lens)
        pos = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(starts, lens)
        cols = np.asarray(self.cols[pos], dtype=np.int64)
        w = weight[cols]
        keep = w != 0
        which, cols, w, pos = which[keep], cols[keep], w[keep], pos[keep]
        tf = np.asarray(self.tfs[pos], dtype=np.float32)
        fields = self.term_field[cols]
        codes = np.asarray(self.norms[rows[which], fields], dtype=np.int64)
        contrib = w * (tf / (tf + norm[fields, codes]))
        return np.bincount(which, weights=contrib.astype(np.float64), minlength=len(rows))
