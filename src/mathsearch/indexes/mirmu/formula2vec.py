"""Formula2Vec (seed 002, section 5): Doc2Vec DBOW over the collection's formulae in prefix notation.

One training document per visual formula of a question or an answer (comments left out, as the
seed's Task 2 results, 4.4/5.3), tagged by its row.  Layout under ``INDEX_DIR/mirmu/formula2vec/``:
``model`` (gensim's Doc2Vec, for inferring query vectors), ``vectors.npy`` (the trained formula
vectors, L2-normalised float16), ``instance_ids.npy`` and ``post_ids.npy`` (a representative
instance of each visual formula, the first, and its post), ``answer_ptr.npy``/``answer_ids.npy``
(CSR: the answers holding each visual formula, for Task 1), ``manifest.json``; from ``ann_min``
formulae on (``[build]``), ``vectors.ivf``: a faiss IVF-SQ8 index of the vectors
(:func:`mathsearch.indexes.dense.build_ann`, memory-mapped when read) that finds the nearest
formulae (nprobe lists of about 2 sqrt(n)), which are then re-scored exactly from ``vectors.npy``.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ...store import Store
from .common import artifact_dir, build_config, prefix_tokens, read_manifest, visual_formulae, write_manifest

NAME = "formula2vec"
VERSION = 1
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Formula2VecBuild:
    """``[build]`` of ``formula2vec.toml``."""

    vector_size: int = 300
    negative: int = 12
    alpha: float = 0.1
    window: int = 8
    min_count: int = 5
    epochs: int = 5
    seed: int = 1
    workers: int = 2
    ann_min: int = 200_000


ANN_FILE = "vectors.ivf"


def build_formula2vec_ann(index_dir: str | Path, ann_min: int | None = None) -> dict:
    """Write ``vectors.ivf`` beside the built vectors when they are ``ann_min`` (default: the
    ``[build]`` value the manifest records) or more and it is not there yet; the manifest's counts
    say so.  What :func:`build_formula2vec` runs last; callable on artifacts built before it."""
    import json

    from ..dense import build_ann

    root = artifact_dir(index_dir, NAME)
    meta = read_manifest(root, NAME, VERSION)
    limit = int(meta["config"].get("ann_min", Formula2VecBuild.ann_min)) if ann_min is None else ann_min
    vectors = np.load(root / "vectors.npy", mmap_mode="r")
    if vectors.shape[0] < limit or (root / ANN_FILE).is_file():
        return {}
    t0 = time.perf_counter()
    info = build_ann(vectors, root / ANN_FILE, seed=int(meta.get("seed") or 0))
    counts = {"formula2vec_ann_lists": info["nlist"], "formula2vec_ann_seconds": round(time.perf_counter() - t0, 2)}
    meta["counts"].update(counts)
    meta["config"]["ann_min"] = limit
    (root / "manifest.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return counts


def build_formula2vec(store: Store, index_dir: Path, progress: Progress | None = None, config: str = "") -> dict:
    from gensim.models import Doc2Vec

    from ...config import typed

    started = time.perf_counter()
    cfg = typed(Formula2VecBuild, build_config(NAME, config), f"{NAME}.toml [build]")
    root = artifact_dir(index_dir, NAME)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    instance_ids, post_ids, latexes, answers = visual_formulae(store)
    corpus = root / "train.txt"
    with corpus.open("w", encoding="utf-8") as out:
        for latex in latexes:
            out.write(" ".join(prefix_tokens(latex)) + "\n")
    if progress:
        progress("formula2vec", 0, 1)
    t0 = time.perf_counter()
    # corpus_file mode: the tag of a document is its line number, our row
    model = Doc2Vec(corpus_file=str(corpus), dm=0, vector_size=cfg.vector_size, negative=cfg.negative,
                    alpha=cfg.alpha, min_alpha=0.0001, window=cfg.window, min_count=cfg.min_count,
                    epochs=cfg.epochs, seed=cfg.seed, workers=cfg.workers)
    train_seconds = time.perf_counter() - t0
    corpus.unlink()
    vectors = np.asarray(model.dv.vectors, dtype=np.float32)
    if vectors.shape[0] != len(instance_ids):
        raise RuntimeError(f"Doc2Vec made {vectors.shape[0]} vectors for {len(instance_ids)} formulae")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    np.save(root / "vectors.npy", (vectors / norms).astype(np.float16))
    np.save(root / "instance_ids.npy", np.asarray(instance_ids, dtype=np.int64))
    np.save(root / "post_ids.npy", np.asarray(post_ids, dtype=np.int64))
    ptr = np.zeros(len(answers) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(a) for a in answers])
    np.save(root / "answer_ptr.npy", ptr)
    np.save(root / "answer_ids.npy", np.asarray([p for a in answers for p in a], dtype=np.int64))
    model.dv.vectors = np.zeros((0, cfg.vector_size), dtype=np.float32)  # kept once, in vectors.npy
    model.save(str(root / "model"))
    if progress:
        progress("formula2vec", 1, 1)
    counts = {"formula2vec_formulae": len(instance_ids), "formula2vec_vocabulary": len(model.wv),
              "formula2vec_train_seconds": round(train_seconds, 2)}
    write_manifest(root, NAME, VERSION, {**asdict(cfg), "cpu_count": os.cpu_count()}, counts, started)
    counts.update(build_formula2vec_ann(index_dir, cfg.ann_min))
    return counts


class Formula2VecIndex:
    """Query vectors inferred by the model; cosine to every formula vector (exact, numpy blocks), or
    to the candidates of the IVF index when the artifacts have one (:meth:`nearest`)."""

    def __init__(self, root: Path):
        from gensim.models import Doc2Vec

        self.meta = read_manifest(root, NAME, VERSION)
        self.model = Doc2Vec.load(str(root / "model"))
        self.vectors = np.load(root / "vectors.npy", mmap_mode="r")
        self.instance_ids = np.load(root / "instance_ids.npy")
        self.post_ids = np.load(root / "post_ids.npy")
        self.answer_ptr = np.load(root / "answer_ptr.npy")
        self.answer_ids = np.load(root / "answer_ids.npy")
        self._ann_path = root / ANN_FILE
        self._ann = None

    @classmethod
    def open(cls, index_dir: str | Path) -> Formula2VecIndex:
        return cls(artifact_dir(index_dir, NAME))

    def infer(self, latex: str, epochs: int) -> np.ndarray:
        """The formula's vector (L2-normalised), repeatable: gensim starts it from a hash of the
        tokens, and its negative sampling from the model's random state, reset here to the seed."""
        self.model.random = np.random.RandomState(int(self.meta.get("seed") or 1))
        vec = self.model.infer_vector(list(prefix_tokens(latex)), epochs=epochs)
        norm = float(np.linalg.norm(vec))
        return (vec / norm if norm else vec).astype(np.float32)

    def scores(self, vec: np.ndarray, block: int = 500_000) -> np.ndarray:
        out = np.empty(self.vectors.shape[0], dtype=np.float32)
        for i in range(0, len(out), block):
            out[i : i + block] = self.vectors[i : i + block].astype(np.float32) @ vec
        return out

    @staticmethod
    def best(scores: np.ndarray, k: int) -> np.ndarray:
        """Rows of the ``k`` best scores, best first (ties by row)."""
        k = min(k, len(scores))
        if k <= 0:
            return np.zeros(0, dtype=np.int64)
        rows = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        # Not ranking's order (ids): vector rows in numpy, ties by row, the order answers are then collected in.
        return rows[np.lexsort((rows, -scores[rows]))]

    @property
    def ann(self):
        """The faiss IVF index (memory-mapped), or None when the artifacts have none (exact search)."""
        if self._ann is None and self._ann_path.is_file():
            from ..dense import read_ann

            self._ann = read_ann(self._ann_path)
        return self._ann

    def nearest(self, vec: np.ndarray, k: int, nprobe: int) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cosines)`` of the ``k`` formulae nearest ``vec``, best first (ties by row):
        exact over every vector when ``nprobe`` is 0 or there is no IVF index; else the IVF index's
        ``k`` candidates from ``nprobe`` lists, re-scored exactly (one gather of ``k`` vectors)."""
        ann = self.ann if nprobe > 0 else None
        if ann is None:
            scores = self.scores(vec)
            rows = self.best(scores, k)
            return rows, scores[rows]
        k = min(k, self.vectors.shape[0])
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        ann.nprobe = nprobe
        _, found = ann.search(np.ascontiguousarray(vec, dtype=np.float32)[None, :], k)
        rows = np.sort(found[0][found[0] >= 0]).astype(np.int64)
        scores = self.vectors[rows].astype(np.float32) @ np.asarray(vec, dtype=np.float32)
        order = np.lexsort((rows, -scores))  # as best(): rows, not ids, ties by row
        return rows[order], scores[order]

    def answers_of(self, row: int) -> np.ndarray:
        return self.answer_ids[self.answer_ptr[row] : self.answer_ptr[row + 1]]
