"""Optional dense index: embeddings of answers (with their question's title) and of questions, by
a named encoder (:mod:`mathsearch.encoders`), for cosine similarity to a topic.

Built only on request (``mathsearch index --dense``).  ``minilm`` runs at about 22 posts a second on
2 CPU cores (the sample in minutes, the full collection's 2.4M posts in about 30 hours); a static
encoder trained on the collection (``mathsearch train-encoder``) at thousands a second.  Vectors are
L2-normalised float16 in ``dense/{answers,questions}.npy`` with their post ids beside them; search
is exact inner product (numpy, in blocks), or from :data:`ANN_MIN` vectors on a memory-mapped faiss
IVF-SQ8 index (``dense/{answers,questions}.ivf``, nprobe :data:`ANN_NPROBE`).  ``dense/manifest.json`` records the encoder that made
the vectors (name, kind, version, fingerprint); a static encoder is copied into ``dense/encoder/``
so the index is whole on its own.  Queries are encoded by that same encoder; asking for another
is an error.
"""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..store import Store

DENSE_DIR = "dense"
ENCODER_DIR = "encoder"
MAX_CHARS = 1200  # MiniLM reads 256 word pieces; more text only costs time
Progress = Callable[[str, int, int], None]


def passage(title: str | None, text: str) -> str:
    """What is embedded: the title, then the text with formulae kept as LaTeX, cut short."""
    joined = f"{title}\n{text}" if title else text
    return " ".join(joined.split())[:MAX_CHARS]


def query_passage(title: str, question: str) -> str:
    return passage(title, question)


def iter_passages(store: Store) -> Iterator[tuple[int, int, str, int | None]]:
    """What the dense index embeds, post by post: ``(post type, post id, passage, thread id)``,
    every question (1) first, then every answer (2) with its question's title."""
    titles: dict[int, str] = {}
    for q in store.iter_posts(1):
        titles[q.post_id] = q.title or ""
        yield 1, q.post_id, passage(q.title, q.text), None
    for a in store.iter_answers():
        yield 2, a.post_id, passage(titles.get(a.thread_id), a.text), a.thread_id


def post_passages(store: Store) -> tuple[list[int], list[str], list[int], list[str], dict[int, int]]:
    """:func:`iter_passages` as lists: ``(question ids, their passages, answer ids, their passages,
    answer id -> question id)``."""
    q_ids, q_texts, a_ids, a_texts, parent = [], [], [], [], {}
    for kind, post_id, text, thread in iter_passages(store):
        if kind == 1:
            q_ids.append(post_id)
            q_texts.append(text)
        else:
            a_ids.append(post_id)
            a_texts.append(text)
            parent[post_id] = thread
    return q_ids, q_texts, a_ids, a_texts, parent


def encoder_fingerprint(info: dict) -> str:
    """What tells two encoders apart (a sharded index compares its shards' encoders by it)."""
    return str(info.get("fingerprint") or f"{info.get('name')}/v{info.get('version')}")


ANN_MIN = 200_000  # from this many vectors on, a faiss IVF index (SQ8) answers queries; below, exact numpy
ANN_NPROBE = 64


def read_ann(path: Path):
    """The faiss index :func:`build_ann` wrote at ``path``, memory-mapped and read-only."""
    import faiss

    return faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)


def build_ann(vectors: np.ndarray, path: Path, nlist: int | None = None, seed: int = 0) -> dict:
    """A faiss IVF index with 8-bit scalar quantisation (inner product) of ``vectors``, written to
    ``path`` (memory-mapped when read).  ``nlist`` lists (default about 2 x sqrt(n)), trained on 40
    vectors a list chosen with ``seed``; vectors are added in blocks (no float32 copy of them all)."""
    import faiss

    n, dim = vectors.shape
    nlist = nlist or max(1, min(int(2 * np.sqrt(n)), n // 40))
    index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, nlist, faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT)
    rng = np.random.default_rng(seed)
    chosen = np.arange(n) if n <= 40 * nlist else np.sort(rng.choice(n, 40 * nlist, replace=False))
    index.cp.seed = seed
    index.train(np.ascontiguousarray(vectors[chosen], dtype=np.float32))
    for i in range(0, n, 200_000):
        index.add(np.ascontiguousarray(vectors[i : i + 200_000], dtype=np.float32))
    faiss.write_index(index, str(path))
    return {"nlist": nlist, "vectors": n}


EMBED_BATCH = 51_200  # posts embedded at a time (a multiple of every encoder's own batch, so the vectors do not change)


def _embed_batches(model, passages: Iterable[tuple[int, str]], path: Path, progress: Progress | None, stage: str,
                   total: int, chunks=None) -> list[int]:
    """Embed the ``(post id, passage)`` pairs, :data:`EMBED_BATCH` at a time, into ``path`` (float16,
    one row per post); their ids, in order.  With ``chunks`` (a :class:`~.dense_chunks.ChunkedEmbedding`),
    chunk by chunk on disk, an interrupted run's chunks read back (the same vectors)."""
    if chunks is not None:
        ids, vectors = chunks.embed(model, passages, total, stage, progress)
        np.save(path, vectors)
        return ids
    ids: list[int] = []
    parts: list[np.ndarray] = []
    texts: list[str] = []

    def flush() -> None:
        done = len(ids) - len(texts)
        within = (lambda _stage, n, _of: progress(stage, done + n, max(total, len(ids)))) if progress else None
        parts.append(model.encode(texts, within, stage).astype(np.float16))
        texts.clear()

    for post_id, text in passages:
        ids.append(post_id)
        texts.append(text)
        if len(texts) == EMBED_BATCH:
            flush()
    if texts or not parts:
        flush()
    np.save(path, np.concatenate(parts))
    return ids


def build_dense_index(store: Store, index_dir: Path, progress: Progress | None = None, encoder: str | None = None,
                      query_encoder: str | None = None, ann_min: int = ANN_MIN, resume: str | Path | None = None,
                      device: str | None = None) -> dict:
    """Embed every question and answer of ``store`` with ``encoder`` (default
    :data:`mathsearch.encoders.DEFAULT_ENCODER`) into ``index_dir/dense``.

    ``query_encoder`` (e.g. ``minilm`` for a static student of MiniLM, which lives in its teacher's
    space) encodes the topics instead of ``encoder``; it is recorded and must have the same dimension.
    From ``ann_min`` vectors on, a faiss IVF index is built beside the vectors (:func:`build_ann`).
    ``resume``: a resume folder (:mod:`mathsearch.building.resume`) where the vectors go chunk by
    chunk as they are made (:mod:`.dense_chunks`),
    and where an interrupted build's chunks are read back instead of embedded again.  ``device``: where
    an encoder with a network runs (auto, cpu, cuda: :mod:`mathsearch.encoders.device`).
    """
    from ..encoders import DEFAULT_ENCODER, check_encoders, encoder_info, load_encoder

    name = encoder or DEFAULT_ENCODER
    check_encoders(name, query_encoder)  # before any post is embedded: at full size that is the long part
    asked = encoder_info(query_encoder) if query_encoder else None
    root = Path(index_dir) / DENSE_DIR
    root.mkdir(parents=True, exist_ok=True)
    model = load_encoder(name, device=device)
    resumed = {}
    if resume is not None:
        from .dense_chunks import ChunkedEmbedding, chunk_size

        made = model.info()
        resumed = {part: ChunkedEmbedding(Path(resume), encoder_fingerprint(made), part, chunk_size(str(made.get("kind"))))
                   for part in ("questions", "answers")}
    # In batches, from one pass over the store: at full size the passages and float32 vectors of all
    # 2.4M posts at once made this step's peak (6.8 GiB).
    counts = store.counts()
    ids: dict[int, list[int]] = {}
    for kind, group in itertools.groupby(iter_passages(store), key=lambda p: p[0]):
        part = "questions" if kind == 1 else "answers"
        ids[kind] = _embed_batches(model, ((post_id, text) for _, post_id, text, _ in group), root / f"{part}.npy",
                                   progress, f"dense {part}", int(counts.get(part, 0)), resumed.get(part))
    for kind, part, key in ((1, "questions", "question_ids"), (2, "answers", "answer_ids")):
        if kind not in ids:  # no post of that kind: an empty block of vectors
            ids[kind] = _embed_batches(model, (), root / f"{part}.npy", progress, f"dense {part}", 0)
        np.save(root / f"{key}.npy", np.asarray(ids[kind], dtype=np.int64))
    q_ids, a_ids = ids[1], ids[2]
    ann = {}
    for part in ("answers", "questions"):
        (root / f"{part}.ivf").unlink(missing_ok=True)
        vectors = np.load(root / f"{part}.npy", mmap_mode="r")
        if len(vectors) >= ann_min:
            ann[part] = build_ann(vectors, root / f"{part}.ivf")
    info = model.info()
    if info.get("kind") == "static":
        # the index carries its encoder: queries never depend on a folder outside it
        if (root / ENCODER_DIR).exists():
            shutil.rmtree(root / ENCODER_DIR)
        model.save(root / ENCODER_DIR)
        info = json.loads((root / ENCODER_DIR / "encoder.json").read_text())
    meta = {
        "encoder": {k: info.get(k) for k in ("name", "kind", "version", "dim", "fingerprint", "trained_on")},
        "query_encoder": ({k: asked.get(k) for k in ("name", "kind", "version", "dim", "fingerprint")}
                          if asked is not None else None),
        "model": info.get("config", {}).get("model", info.get("name")),
        "dense_answers": len(a_ids), "dense_questions": len(q_ids), "ann": ann,
    }
    (root / "manifest.json").write_text(json.dumps(meta, indent=1))
    out = {"dense_answers": len(a_ids), "dense_questions": len(q_ids), "dense_encoder": str(info.get("name"))}
    if resume is not None:
        out["dense_resumed_posts"] = sum(c.resumed for c in resumed.values())
        out["dense_encoded_posts"] = sum(c.encoded for c in resumed.values())
    device_used = getattr(model, "device", None)
    if device_used is not None:
        out["dense_device"] = str(device_used)
    return out


class DenseIndex:
    """Cosine similarity of a query passage to every answer / question (exact, numpy)."""

    def __init__(self, root: Path, encoder: str | None = None):
        if not (root / "manifest.json").is_file():
            raise InputError(
                f"{root.parent} has no dense index: build it with `mathsearch index --dense`, "
                "or run the system without its dense signal"
            )
        self.root = root
        self.manifest = json.loads((root / "manifest.json").read_text())
        # indexes from before encoders were named hold MiniLM vectors
        self.encoder_info = self.manifest.get("encoder") or {"name": "minilm", "kind": "minilm", "version": 1}
        self.encoder_name = str(self.encoder_info.get("name"))
        if encoder and encoder != self.encoder_name:
            raise InputError(
                f"{root.parent} holds vectors made by encoder {self.encoder_name!r}, not {encoder!r}: "
                f"query it with {self.encoder_name!r} or rebuild it with `mathsearch index --dense --encoder {encoder}`."
            )
        self.answers = np.load(root / "answers.npy", mmap_mode="r")
        self.answer_ids = np.load(root / "answer_ids.npy")
        self.questions = np.load(root / "questions.npy", mmap_mode="r")
        self.question_ids = np.load(root / "question_ids.npy")
        self._model = None
        self._ann: dict = {}
        self._exact: dict[str, np.ndarray] = {}
        self._answer_row: dict[int, int] | None = None

    @classmethod
    def open(cls, index_dir: str | Path, encoder: str | None = None) -> DenseIndex:
        return cls(Path(index_dir) / DENSE_DIR, encoder)

    @staticmethod
    def exists(index_dir: str | Path) -> bool:
        return (Path(index_dir) / DENSE_DIR / "manifest.json").is_file()

    def query_encoder(self):
        """The encoder of the topics: the one that made the vectors (kept in the index for static
        encoders), or the query encoder the index recorded."""
        if self._model is None:
            from ..encoders import shared_encoder

            asked = self.manifest.get("query_encoder")
            if asked:
                model = shared_encoder(str(asked["name"]))
                if encoder_fingerprint(model.info()) != encoder_fingerprint(asked):
                    raise InputError(f"{self.root.parent}: query encoder {asked['name']!r} is not the one recorded "
                                     f"({encoder_fingerprint(model.info())} vs {encoder_fingerprint(asked)}): rebuild with `mathsearch index --dense`.")
                self._model = model
                return model
            local = self.root / ENCODER_DIR
            model = shared_encoder(str(local) if (local / "encoder.json").is_file() else self.encoder_name)
            if encoder_fingerprint(model.info()) != encoder_fingerprint(self.encoder_info):
                raise InputError(
                    f"{self.root.parent}: the encoder {self.encoder_name!r} found now ({encoder_fingerprint(model.info())}) "
                    f"is not the one that made the vectors ({encoder_fingerprint(self.encoder_info)}): rebuild with `mathsearch index --dense`."
                )
            self._model = model
        return self._model

    def encode(self, text: str) -> np.ndarray:
        return self.query_encoder().encode_one(text).astype(np.float32)

    def exact(self, part: str) -> np.ndarray:
        """``part``'s vectors as float32 in memory, read once: exact search serves collections below
        the ANN threshold (at most ~300 MB a part), and converting the memory-mapped float16 rows on
        every query cost ~40 ms per 100k vectors."""
        if part not in self._exact:
            self._exact[part] = np.asarray(getattr(self, part), dtype=np.float32)
        return self._exact[part]

    @staticmethod
    def _top(matrix: np.ndarray, ids: np.ndarray, vec: np.ndarray, limit: int, block: int = 200_000) -> dict[int, float]:
        scores = np.empty(matrix.shape[0], dtype=np.float32)
        vec = np.asarray(vec, dtype=np.float32)
        for i in range(0, matrix.shape[0], block):
            scores[i : i + block] = matrix[i : i + block] @ vec
        if limit < len(scores):
            best = np.argpartition(-scores, limit)[:limit]
        else:
            best = np.arange(len(scores))
        return {int(ids[i]): float(scores[i]) for i in best}

    def ann(self, part: str):
        """The faiss index of ``part`` (answers, questions), memory-mapped, or None (exact search)."""
        if part not in self._ann:
            path = self.root / f"{part}.ivf"
            index = None
            if path.is_file():
                index = read_ann(path)
                index.nprobe = ANN_NPROBE
            self._ann[part] = index
        return self._ann[part]

    @staticmethod
    def _ann_top(index, ids: np.ndarray, vec: np.ndarray, limit: int) -> dict[int, float]:
        scores, rows = index.search(np.ascontiguousarray(vec, dtype=np.float32)[None, :], limit)
        return {int(ids[r]): float(s) for s, r in zip(scores[0], rows[0], strict=True) if r >= 0}

    def answer_vectors(self, answer_ids: list[int]) -> tuple[list[int], np.ndarray]:
        """The ids of ``answer_ids`` that have a vector, in their order, and those vectors (float32)."""
        if self._answer_row is None:  # built once, on first use: a dict over every answer
            self._answer_row = {int(a): i for i, a in enumerate(self.answer_ids.tolist())}
        found = [(a, row) for a in answer_ids if (row := self._answer_row.get(a)) is not None]
        rows = np.asarray([row for _, row in found], dtype=np.int64)
        vectors = self.answers[rows].astype(np.float32) if found else np.zeros((0, self.answers.shape[1]), np.float32)
        return [a for a, _ in found], vectors  # one gather

    def score_answers(self, vec: np.ndarray, answer_ids: list[int]) -> dict[int, float]:
        """Cosine of ``vec`` to each of ``answer_ids`` that has a vector."""
        ids, vectors = self.answer_vectors(answer_ids)
        if not ids:
            return {}
        scores = vectors @ np.asarray(vec, dtype=np.float32)
        return {a: float(s) for a, s in zip(ids, scores, strict=True)}

    def search_answers(self, vec: np.ndarray, limit: int = 1000) -> dict[int, float]:
        index = self.ann("answers")
        if index is not None:
            return self._ann_top(index, self.answer_ids, vec, limit)
        return self._top(self.exact("answers"), self.answer_ids, vec, limit)

    def search_questions(self, vec: np.ndarray, limit: int = 100) -> dict[int, float]:
        index = self.ann("questions")
        if index is not None:
            return self._ann_top(index, self.question_ids, vec, limit)
        return self._top(self.exact("questions"), self.question_ids, vec, limit)
