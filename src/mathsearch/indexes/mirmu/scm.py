"""The Soft Cosine Measure (seed 002, section 4): fastText on the collection, a sparse term
similarity matrix, TF-IDF answer vectors.

Layout under ``INDEX_DIR/mirmu/scm/``: ``terms.json`` (the dictionary, a term per id), ``idf.npy``,
``similarity.npz`` (the term similarity matrix S, scipy CSR), ``docs.npz`` (answers x terms,
TF-IDF, CSR), ``doc_ids.npy``, ``doc_norms.npy`` (sqrt(d S d) of each answer, so that a query costs
one sparse product), ``manifest.json`` (config, seed, counts).  The fastText model itself is not
kept: only S is read at query time.

Weighting is SMART ``dtn`` (4.3): ``(1 + ln(1 + ln tf)) * log2(N / df)``, no normalisation; the
soft cosine normalises (:func:`soft_cosine`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ...store import Store
from .common import (
    artifact_dir,
    build_config,
    mixed_tokens,
    prefix_tokens,
    read_manifest,
    visual_formulae,
    write_manifest,
)

NAME = "scm"
VERSION = 1
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ScmBuild:
    """``[build]`` of ``scm.toml`` (every value cites the seed there)."""

    vector_size: int = 300
    bucket: int = 200_000
    negative: int = 5
    alpha: float = 0.05
    sample: float = 1e-4
    window: int = 5
    min_count: int = 5
    min_n: int = 3
    max_n: int = 6
    epochs: int = 5
    threshold: float = -1.0
    exponent: float = 4.0
    symmetric: bool = True
    dominant: bool = True
    nonzero_limit: int = 100
    min_df: int = 2
    seed: int = 1
    workers: int = 2


def dtn(tf: np.ndarray, idf: np.ndarray) -> np.ndarray:
    tf = np.asarray(tf, dtype=np.float64)
    return ((1.0 + np.log(1.0 + np.log(np.maximum(tf, 1.0)))) * idf).astype(np.float32)


def _quiet(make, *args, **kwargs):
    """``make(*args, **kwargs)`` without gensim's tqdm bar over every term on stderr."""
    from functools import partial

    import tqdm

    bar = tqdm.tqdm
    tqdm.tqdm = partial(bar, disable=True)
    try:
        return make(*args, **kwargs)
    finally:
        tqdm.tqdm = bar


def _norms(matrix, sim) -> np.ndarray:
    """sqrt(d S d) of each row d."""
    return np.sqrt(np.maximum(np.asarray((matrix @ sim).multiply(matrix).sum(axis=1)).ravel(), 0.0))


def _tfidf(docs: list[list[str]], dictionary, weight) -> tuple:
    """Rows of dtn weights of ``docs`` over ``dictionary``'s terms, idf from these docs; and that idf."""
    from scipy import sparse

    bows = [dictionary.doc2bow(d) for d in docs]
    dfs = np.zeros(len(dictionary), dtype=np.float64)
    for bow in bows:
        for t, _ in bow:
            dfs[t] += 1
    idf = np.where(dfs > 0, np.log2(max(len(docs), 1) / np.maximum(dfs, 1.0)), 0.0).astype(np.float32)
    rows, cols, vals = [], [], []
    for r, bow in enumerate(bows):
        if bow:
            c = np.fromiter((t for t, _ in bow), dtype=np.int64, count=len(bow))
            tf = np.fromiter((f for _, f in bow), dtype=np.float64, count=len(bow))
            rows.append(np.full(len(bow), r, dtype=np.int64))
            cols.append(c)
            vals.append(weight(tf, idf[c]))
    empty = np.zeros(0, np.int64)
    matrix = sparse.csr_matrix(
        (np.concatenate(vals) if vals else np.zeros(0, np.float32),
         (np.concatenate(rows) if rows else empty, np.concatenate(cols) if cols else empty)),
        shape=(len(docs), len(dictionary)), dtype=np.float32)
    return matrix, idf


def answer_texts(store: Store):
    for a in store.iter_answers():
        yield a.post_id, a.text


def build_scm(store: Store, index_dir: Path, progress: Progress | None = None, config: str = "") -> dict:
    """Train fastText on every post's body (4.1), then the dictionary, S and the answer vectors."""
    from gensim.corpora import Dictionary
    from gensim.models import FastText, TfidfModel
    from gensim.similarities import SparseTermSimilarityMatrix, WordEmbeddingSimilarityIndex
    from scipy import sparse

    from ...config import typed

    started = time.perf_counter()
    cfg = typed(ScmBuild, build_config(NAME, config), f"{NAME}.toml [build]")
    root = artifact_dir(index_dir, NAME)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    # 1. the training text: every post's body, formulae in prefix notation, one line a post
    corpus = root / "train.txt"
    n_posts = n_tokens = 0
    with corpus.open("w", encoding="utf-8") as out:
        for post in store.iter_posts():
            tokens = mixed_tokens(post.text)
            if tokens:
                out.write(" ".join(tokens) + "\n")
                n_posts += 1
                n_tokens += len(tokens)
    if progress:
        progress("scm fastText", 0, 1)
    t0 = time.perf_counter()
    model = FastText(corpus_file=str(corpus), sg=1, vector_size=cfg.vector_size, bucket=cfg.bucket,
                     negative=cfg.negative, alpha=cfg.alpha, min_alpha=0.0, sample=cfg.sample, window=cfg.window,
                     min_count=cfg.min_count, min_n=cfg.min_n, max_n=cfg.max_n, epochs=cfg.epochs, seed=cfg.seed,
                     workers=cfg.workers)
    fasttext_seconds = time.perf_counter() - t0
    corpus.unlink()
    if progress:
        progress("scm fastText", 1, 1)
    # 2. the dictionary and TF-IDF of the answers (the retrieval units of Task 1, 4.2)
    ids: list[int] = []
    docs: list[list[str]] = []
    for pid, text in answer_texts(store):
        ids.append(pid)
        docs.append(mixed_tokens(text))
    dictionary = Dictionary(docs)
    dictionary.filter_extremes(no_below=cfg.min_df, no_above=1.0, keep_n=None)
    dictionary.compactify()
    n_docs = len(docs)
    doc_matrix, idf = _tfidf(docs, dictionary, dtn)
    del docs
    # 3. the term similarity matrix (4.3: orthogonalised, Sym, Dom, C, t, o)
    if progress:
        progress("scm matrix", 0, 1)
    t0 = time.perf_counter()
    tfidf = TfidfModel(dictionary=dictionary, smartirs="dtn")
    index = WordEmbeddingSimilarityIndex(model.wv, threshold=cfg.threshold, exponent=cfg.exponent)
    matrix = _quiet(SparseTermSimilarityMatrix, index, dictionary, tfidf, symmetric=cfg.symmetric,
                    dominant=cfg.dominant, nonzero_limit=cfg.nonzero_limit)
    matrix_seconds = time.perf_counter() - t0
    sim = sparse.csr_matrix(matrix.matrix, dtype=np.float32)
    del model, index, matrix
    norms = _norms(doc_matrix, sim)
    # 4. Task 2 (4.2): each visual formula a unit, its prefix tokens weighted dtn over the formulae
    instance_ids, post_ids, latexes, _ = visual_formulae(store)
    formula_matrix, formula_idf = _tfidf([list(prefix_tokens(x)) for x in latexes], dictionary, dtn)
    sparse.save_npz(root / "formula_docs.npz", formula_matrix)
    np.save(root / "formula_norms.npy", _norms(formula_matrix, sim).astype(np.float32))
    np.save(root / "formula_idf.npy", formula_idf)
    np.save(root / "formula_instance_ids.npy", np.asarray(instance_ids, dtype=np.int64))
    np.save(root / "formula_post_ids.npy", np.asarray(post_ids, dtype=np.int64))
    sparse.save_npz(root / "similarity.npz", sim)
    sparse.save_npz(root / "docs.npz", doc_matrix)
    np.save(root / "doc_ids.npy", np.asarray(ids, dtype=np.int64))
    np.save(root / "doc_norms.npy", norms.astype(np.float32))
    np.save(root / "idf.npy", idf)
    (root / "terms.json").write_text(json.dumps([dictionary[i] for i in range(len(dictionary))], ensure_ascii=False))
    if progress:
        progress("scm matrix", 1, 1)
    counts = {"scm_answers": n_docs, "scm_terms": len(dictionary), "scm_similarity_nonzero": int(sim.nnz),
              "scm_formulae": len(instance_ids), "scm_train_posts": n_posts, "scm_train_tokens": n_tokens,
              "scm_fasttext_seconds": round(fasttext_seconds, 2), "scm_matrix_seconds": round(matrix_seconds, 2)}
    write_manifest(root, NAME, VERSION, {**asdict(cfg), "cpu_count": os.cpu_count()}, counts, started)
    return counts


class ScmIndex:
    """The soft VSM of the answers: ``score(q, d) = q S d / (sqrt(q S q) sqrt(d S d))``."""

    def __init__(self, root: Path):
        from scipy import sparse

        self.meta = read_manifest(root, NAME, VERSION)
        self.terms = {t: i for i, t in enumerate(json.loads((root / "terms.json").read_text(encoding="utf-8")))}
        self.idf = np.load(root / "idf.npy")
        self.sim = sparse.load_npz(root / "similarity.npz").tocsr()
        self.docs = sparse.load_npz(root / "docs.npz").tocsr()
        self.doc_ids = np.load(root / "doc_ids.npy")
        self.doc_norms = np.load(root / "doc_norms.npy")
        self._row: dict[int, int] | None = None
        self._root = root
        self._formulae: ScmFormulaIndex | None = None

    @classmethod
    def open(cls, index_dir: str | Path) -> ScmIndex:
        return cls(artifact_dir(index_dir, NAME))

    @property
    def formulae(self) -> ScmFormulaIndex:
        if self._formulae is None:
            self._formulae = ScmFormulaIndex(self, self._root)
        return self._formulae

    def query_vector(self, tokens: Sequence[str], idf: np.ndarray | None = None):
        """The query's dtn vector (1 x terms, CSR), or None when no token is in the dictionary
        (or every known token has idf 0).  ``idf``: the answers' unless given (formulae's, Task 2)."""
        from scipy import sparse

        counts: dict[int, int] = {}
        for t in tokens:
            i = self.terms.get(t)
            if i is not None:
                counts[i] = counts.get(i, 0) + 1
        if not counts:
            return None
        cols = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        tf = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        vals = dtn(tf, (self.idf if idf is None else idf)[cols])
        if not np.any(vals > 0):
            return None  # only terms in every answer: idf 0
        return sparse.csr_matrix((vals, (np.zeros(len(cols), dtype=np.int64), cols)), shape=(1, len(self.terms)))

    def rows_of(self, answer_ids: Sequence[int]) -> np.ndarray:
        if self._row is None:
            self._row = {int(a): i for i, a in enumerate(self.doc_ids.tolist())}
        return np.asarray([self._row[a] for a in answer_ids if a in self._row], dtype=np.int64)

    def soft_cosine(self, tokens: Sequence[str], rows: np.ndarray | None = None) -> dict[int, float]:
        """``{answer id: soft cosine}`` for the answers at ``rows`` (all answers when None);
        empty when the query has no known term (never NaN)."""
        q = self.query_vector(tokens)
        if q is None:
            return {}
        qs = q @ self.sim
        q_norm = float(np.sqrt(max(qs.multiply(q).sum(), 0.0)))
        if q_norm == 0.0:
            return {}
        docs = self.docs if rows is None else self.docs[rows]
        norms = self.doc_norms if rows is None else self.doc_norms[rows]
        ids = self.doc_ids if rows is None else self.doc_ids[rows]
        dots = np.asarray((docs @ qs.T).todense()).ravel()
        ok = (norms > 0) & (dots != 0)
        scores = dots[ok] / (q_norm * norms[ok])
        return {int(i): float(s) for i, s in zip(ids[ok], scores, strict=True)}


class ScmFormulaIndex:
    """Task 2 side of the SCM artifacts: the soft VSM of the visual formulae (4.2)."""

    def __init__(self, scm: ScmIndex, root: Path):
        from scipy import sparse

        self.scm = scm
        self.docs = sparse.load_npz(root / "formula_docs.npz").tocsr()
        self.norms = np.load(root / "formula_norms.npy")
        self.idf = np.load(root / "formula_idf.npy")
        self.instance_ids = np.load(root / "formula_instance_ids.npy")
        self.post_ids = np.load(root / "formula_post_ids.npy")

    def soft_cosine(self, tokens: Sequence[str], limit: int) -> dict[int, float]:
        """``{row: soft cosine}`` of the best ``limit`` formulae (every formula scored: one sparse product)."""
        q = self.scm.query_vector(tokens, self.idf)
        if q is None:
            return {}
        qs = q @ self.scm.sim
        q_norm = float(np.sqrt(max(qs.multiply(q).sum(), 0.0)))
        if q_norm == 0.0:
            return {}
        dots = np.asarray((self.docs @ qs.T).todense()).ravel()
        ok = np.flatnonzero((self.norms > 0) & (dots != 0))
        scores = dots[ok] / (q_norm * self.norms[ok])
        if len(ok) > limit:
            keep = np.argpartition(-scores, limit - 1)[:limit]
            ok, scores = ok[keep], scores[keep]
        return {int(r): float(s) for r, s in zip(ok, scores, strict=True)}
