"""Sharded indexes: N complete INDEX_DIRs under one parent, split by thread, searched as one.

``mathsearch index COLLECTION --index DIR --shards N`` reads the collection once into a store,
splits it by a hash of the thread id (:func:`shard_of`: a thread, its answers, their comments
and formulae never span shards), builds each shard's text and formula indexes (as Ray tasks with
``--ray``, see :mod:`mathsearch.distributed`), then gives every shard the collection's statistics
where our own code scores (formula idf over the collection's visual formulae).  Layout::

  DIR/mathsearch-index.json    the parent's manifest: "shards": {"count", "hash", "dirs"}
  DIR/shard-000/ ...           each a complete INDEX_DIR (store, text, formula, manifest; dense)
  DIR/dense/manifest.json      with --dense: the encoder of every shard's vectors, counts summed
  DIR/shard-000/global/        formula_group.npy / formula_canonical.npy: the collection-wide visual
                               formula of each of the shard's, and whether the shard holds its
                               first instance (for the merge); stats.json (the padding's count)

Searching (:func:`open_sharded`, called by :class:`~mathsearch.indexes.directory.IndexDirectory`
for a sharded parent, so every system and ``mathsearch run/search`` work unchanged) merges the
shards' top-k under collection-wide statistics:

* text (tantivy BM25): the document frequency and document count of every query term are summed
  over the shards, and each shard's term query is boosted by ``idf_collection / idf_shard``, so a
  term's idf is the collection's; the average field lengths (BM25's length normaliser, which
  tantivy-py cannot set) are made the collection's at build time by padding each shard with a few
  documents holding only a token no query has (:func:`write_global_text_stats`).
* formula: each shard gets the collection's tuple vocabulary and idf (``tok_hash``, ``tok_idf``,
  ``len_idf`` rewritten at build time, over the collection's visual formulae), so a visual formula
  scores as in the single index; Task 1 keeps the answers of the collection's best ``depth``
  visual formulae, Task 2 one instance per collection-wide visual formula (the single index's
  choice of instance), each scored by the shard holding its first instance.
* dense (``--dense``): each shard embeds its own posts (a task per shard) with the one encoder,
  recorded in every shard's ``dense/manifest.json`` and in the parent's (which holds no vectors);
  cosine scores compare across shards, so the merged per-shard top k is the single index's.
* store: look-ups are answered by the shard that holds the thread, or by all shards.
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..ranking import Ranking, ranked
from ..store.schema import POSTS_INDEXES, POSTS_TABLES, SIDE_FILE, SIDE_INDEXES, SIDE_TABLES, STORE_FILE

HASH = "thread-fibonacci-v1"
_MULT = 2654435761  # Knuth's multiplicative hash: consecutive thread ids spread over the shards
GLOBAL_DIR = "global"


def shard_of(thread_id: int, n: int) -> int:
    """The shard of a thread: ``((id mod 2^32) * 2654435761 mod 2^32) mod n`` (as :func:`_sql_shard`)."""
    return (((int(thread_id) % 4294967296) * _MULT) % 4294967296) % n


def _sql_shard(column: str, n: int) -> str:
    """:func:`shard_of` in SQLite, whose integers are 64-bit: the product in two 16-bit halves."""
    t = f"(({column}) % 4294967296)"
    return (f"((((({t} / 65536) * {_MULT}) % 4294967296) * 65536 + ({t} % 65536) * {_MULT}) % 4294967296) % {n}")


def shard_name(i: int) -> str:
    return f"shard-{i:03d}"


def shard_dirs_of(index_dir: str | Path, manifest: dict[str, Any] | None) -> list[Path] | None:
    """The shard folders a parent manifest names, or None when the index is not sharded."""
    info = (manifest or {}).get("shards")
    if not isinstance(info, dict):
        return None
    return [Path(index_dir) / d for d in info.get("dirs", ())]


# -- the build: splitting the store ----------------------------------------------------------------
def split_store(full: Path, out: Path, shard: int, n: int) -> dict[str, int]:
    """Write the store of shard ``shard`` of ``n`` into ``out`` from the store in ``full``: every
    row lands in exactly one shard (posts by thread; comments, links and formulae by the thread of
    their post, or by their own post id when that post is not in the collection)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in (STORE_FILE, SIDE_FILE):
        (out / name).unlink(missing_ok=True)  # a retried task starts again from nothing
    main = sqlite3.connect(out / STORE_FILE, isolation_level=None)
    try:
        main.execute("PRAGMA journal_mode=OFF")
        main.execute("PRAGMA synchronous=OFF")
        main.executescript(POSTS_TABLES)
        main.execute("ATTACH DATABASE ? AS full", (f"file:{full / STORE_FILE}?mode=ro",))
        main.execute("BEGIN")
        main.execute(f"INSERT INTO posts SELECT * FROM full.posts WHERE {_sql_shard('thread_id', n)} = ?", (shard,))
        meta = dict(main.execute("SELECT key, value FROM full.meta").fetchall())
        main.execute("COMMIT")
        main.execute("DETACH DATABASE full")
        main.executescript(POSTS_INDEXES)
        counts = {
            "questions": main.execute("SELECT COUNT(*) FROM posts WHERE post_type=1").fetchone()[0],
            "answers": main.execute("SELECT COUNT(*) FROM posts WHERE post_type=2").fetchone()[0],
        }
        side = sqlite3.connect(out / SIDE_FILE, isolation_level=None)
        try:
            side.execute("PRAGMA journal_mode=OFF")
            side.execute("PRAGMA synchronous=OFF")
            side.executescript(SIDE_TABLES)
            side.execute("ATTACH DATABASE ? AS fullside", (f"file:{full / SIDE_FILE}?mode=ro",))
            side.execute("ATTACH DATABASE ? AS fullmain", (f"file:{full / STORE_FILE}?mode=ro",))
            side.execute("BEGIN")
            owner = _sql_shard("COALESCE(p.thread_id, x.post_id)", n)
            side.execute(f"INSERT INTO comments SELECT x.* FROM fullside.comments x LEFT JOIN fullmain.posts p "
                         f"ON p.post_id = x.post_id WHERE {owner} = ?", (shard,))
            side.execute(f"INSERT INTO links SELECT x.* FROM fullside.links x LEFT JOIN fullmain.posts p "
                         f"ON p.post_id = x.post_id WHERE {owner} = ?", (shard,))
            side.execute(f"INSERT INTO formulas SELECT * FROM fullside.formulas WHERE {_sql_shard('thread_id', n)} = ?",
                         (shard,))
            # comment_spans is build scratch, dropped from the full store once read
            if not side.execute("SELECT 1 FROM fullside.sqlite_master WHERE name='comment_spans'").fetchone():
                side.execute("DROP TABLE comment_spans")
            side.execute("COMMIT")
            side.execute("DETACH DATABASE fullside")
            side.execute("DETACH DATABASE fullmain")
            side.executescript(SIDE_INDEXES)
            for table in ("comments", "links", "formulas"):
                counts[table] = side.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        finally:
            side.close()
        stored = json.loads(meta.get("counts", "{}"))
        stored.update(counts)
        meta["counts"] = json.dumps(stored)
        meta["shard"] = json.dumps({"shard": shard, "of": n, "hash": HASH})
        main.executemany("INSERT OR REPLACE INTO meta VALUES (?,?)", meta.items())
    finally:
        main.close()
    return counts


# -- the build: collection-wide formula statistics ---------------------------------------------------
def _groups_of_shard(shard: Path) -> tuple[list[str], list[int]]:
    """The identity of each visual formula of a shard's formula index, as the single index groups
    instances (the collection's visual id of its first instance, else our visual key), and the
    formula id of that first instance."""
    from .formula import FORMULA_DIR

    root = shard / FORMULA_DIR
    inst_ptr = np.load(root / "inst_ptr.npy", mmap_mode="r")
    inst_formula = np.load(root / "inst_formula.npy", mmap_mode="r")
    vkey = np.load(root / "vkey.npy", mmap_mode="r")
    n = len(vkey)
    first = np.asarray(inst_formula[np.asarray(inst_ptr[:n])]).tolist() if n else []
    db = sqlite3.connect(f"file:{shard / SIDE_FILE}?mode=ro", uri=True)
    try:
        visual: dict[int, str | None] = {}
        for i in range(0, len(first), 900):
            chunk = first[i : i + 900]
            sql = f"SELECT formula_id, visual_id FROM formulas WHERE formula_id IN ({','.join('?' * len(chunk))})"
            visual.update(db.execute(sql, chunk).fetchall())
    finally:
        db.close()
    out = []
    for doc, fid in enumerate(first):
        vid = visual.get(fid)
        out.append(str(vid) if vid is not None else f"k:{int(vkey[doc]):016x}")
    return out, first


def _family_bounds(root: Path) -> list[int]:
    """Where each family's postings start and end in ``post_doc``/``post_tf`` (families are
    written one after the other; a family's tfs add up to its ``len_plain`` row)."""
    post_tf = np.load(root / "post_tf.npy", mmap_mode="r")
    len_plain = np.load(root / "len_plain.npy")
    cum = np.cumsum(np.asarray(post_tf, dtype=np.int64))
    bounds = [0]
    for total in np.cumsum(len_plain.sum(axis=1).round().astype(np.int64))[:-1].tolist():
        bounds.append(int(np.searchsorted(cum, total, side="right")))
    bounds.append(len(post_tf))
    return bounds


def write_global_formula_stats(shards: Sequence[Path]) -> dict[str, int]:
    """Rewrite each shard's formula vocabulary (the collection's: ``tok_hash``, ``post_start``,
    ``post_end``) and idf (``tok_idf``, ``len_idf``) over the collection's visual formulae, as the
    single index computes it (``log1p(N / df)``, N and df counting visual formulae once however
    many shards hold them); write ``global/formula_group.npy`` and ``formula_canonical.npy`` for
    the merge."""
    from .formula import FAMILIES, FORMULA_DIR

    # Collection-wide visual formulae numbered as the single index numbers them: by the formula id
    # of their first instance (so ties between equal scores break the same way).
    per_shard = [_groups_of_shard(shard) for shard in shards]
    first_fid: dict[str, int] = {}
    for ids, firsts in per_shard:
        for g, fid in zip(ids, firsts, strict=True):
            if g not in first_fid or fid < first_fid[g]:
                first_fid[g] = fid
    names = {g: i for i, g in enumerate(sorted(first_fid, key=first_fid.__getitem__))}
    groups = [np.array([names[g] for g in ids], dtype=np.int64) for ids, _ in per_shard]
    # The shard holding a visual formula's first instance parsed the LaTeX the single index parsed
    # (instances of one visual id may be written differently): its score is the one to use.
    canonical = [np.array([first_fid[g] == fid for g, fid in zip(ids, firsts, strict=True)], dtype=bool)
                 for ids, firsts in per_shard]
    n_groups = len(names)
    # Collection-wide df of every token: distinct (token hash, group) pairs over the shards.
    pairs_h, pairs_g = [], []
    for shard, group in zip(shards, groups, strict=True):
        root = shard / FORMULA_DIR
        tok_hash = np.load(root / "tok_hash.npy")
        start, end = np.load(root / "post_start.npy"), np.load(root / "post_end.npy")
        post_doc = np.load(root / "post_doc.npy", mmap_mode="r")
        lens = end - start
        tok_of_posting = np.repeat(tok_hash, lens)
        idx = np.repeat(start, lens) + (np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens))
        pairs_h.append(tok_of_posting)
        pairs_g.append(group[np.asarray(post_doc[idx])])
    all_h = np.concatenate(pairs_h) if pairs_h else np.zeros(0, np.uint64)
    all_g = np.concatenate(pairs_g) if pairs_g else np.zeros(0, np.int64)
    order = np.lexsort((all_g, all_h))
    all_h, all_g = all_h[order], all_g[order]
    new = np.ones(len(all_h), dtype=bool)
    new[1:] = (all_h[1:] != all_h[:-1]) | (all_g[1:] != all_g[:-1])
    uniq_h, df = np.unique(all_h[new], return_counts=True)
    del all_h, all_g, order, new
    for shard, group, canon in zip(shards, groups, canonical, strict=True):
        root = shard / FORMULA_DIR
        # Every shard gets the collection's vocabulary (a tuple it lacks has an empty posting
        # block): a query then finds the same tuples, with the same idfs, in every shard.
        tok_hash = np.load(root / "tok_hash.npy")
        at = np.searchsorted(uniq_h, tok_hash)
        start = np.zeros(len(uniq_h), dtype=np.int64)
        end = np.zeros(len(uniq_h), dtype=np.int64)
        start[at], end[at] = np.load(root / "post_start.npy"), np.load(root / "post_end.npy")
        np.save(root / "tok_hash.npy", uniq_h)
        np.save(root / "post_start.npy", start)
        np.save(root / "post_end.npy", end)
        tok_idf = np.log1p(max(n_groups, 1) / np.maximum(df, 1)).astype(np.float32)
        post_doc = np.load(root / "post_doc.npy", mmap_mode="r")
        post_tf = np.load(root / "post_tf.npy", mmap_mode="r")
        n_docs = len(group)
        # idf of each posting: postings are blocks by token; the token of a block from its start
        tok_by_start = np.argsort(start, kind="stable")
        block_idf = np.zeros(len(post_doc), dtype=np.float32)
        lens = end - start
        block_idf[:] = np.repeat(tok_idf[tok_by_start], lens[tok_by_start])
        bounds = _family_bounds(root)
        len_idf = np.zeros((len(FAMILIES), n_docs), dtype=np.float32)
        for fi in range(len(FAMILIES)):
            lo, hi = bounds[fi], bounds[fi + 1]
            docs = np.asarray(post_doc[lo:hi])
            tfs = np.asarray(post_tf[lo:hi])
            len_idf[fi] = np.bincount(docs, weights=tfs * block_idf[lo:hi], minlength=n_docs)
        np.save(root / "tok_idf.npy", tok_idf)
        np.save(root / "len_idf.npy", len_idf)
        out = shard / GLOBAL_DIR
        out.mkdir(exist_ok=True)
        np.save(out / "formula_group.npy", group)
        np.save(out / "formula_canonical.npy", canon)
        path = out / "stats.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data.update(formula_visual=n_groups, formula_tokens=int(len(uniq_h)))
        path.write_text(json.dumps(data))
    return {"formula_visual_collection": n_groups}


# -- the build: collection-wide BM25 field lengths ----------------------------------------------------
PAD = "\u2042pad\u2042"  # a token no analysis makes: padding documents match no query


def _avgdl(index, searcher, fld: str) -> float:
    """The average length tantivy's BM25 uses for ``fld`` (float32, read from an explanation of a
    match of the padding token: tantivy-py has no call for it)."""
    import tantivy

    q = tantivy.Query.term_query(index.schema, fld, PAD, index_option="freq")
    hits = searcher.search(q, limit=1, count=False).hits
    if not hits:
        raise InputError(f"the padding document of {fld} was not found (nothing was replaced)")
    detail = json.loads(q.explain(searcher, hits[0][1]).to_json())
    stack = [detail]
    while stack:
        node = stack.pop()
        if str(node.get("description", "")).startswith("avgdl"):
            return float(node["value"])
        stack.extend(node.get("details", ()))
    raise InputError(f"tantivy's explanation of a {fld} match names no avgdl (nothing was replaced)")


def _add_docs(index, docs: list[dict[str, str]], parent: bool) -> None:
    import tantivy

    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for fields in docs:
        doc = tantivy.Document()
        doc.add_unsigned("id", 0)  # post ids start at 1; padding never matches a query anyway
        if parent:
            doc.add_unsigned("thread", 0)
        for name, text in fields.items():
            doc.add_text(name, text)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()


def write_global_text_stats(shards: Sequence[Path]) -> dict[str, int]:
    """Pad each shard's tantivy indexes with a few documents of a token no query has, so that every
    shard's average field lengths (BM25's length normaliser, which tantivy-py cannot set) are the
    collection's: with n_s documents and t_sf tokens in field f, a shard gets m_s >= 2 documents
    holding p_sf tokens, with (t_sf + p_sf) / (n_s + m_s) = T_f / N (up to the rounding of p_sf
    to whole tokens).  The document frequencies are made the collection's at query time
    (:class:`ShardedTextIndex`); the padding's count is written to ``global/stats.json``."""
    import tantivy

    from .documents import ANSWER_FIELDS, QUESTION_FIELDS
    from .text_index import TEXT_DIR

    out: dict[str, int] = {}
    stats: list[dict[str, Any]] = [{} for _ in shards]
    for kind, fields, parent in (("answers", ANSWER_FIELDS, True), ("questions", QUESTION_FIELDS, False)):
        indexes, real, tokens = [], [], []
        for shard in shards:
            index = tantivy.Index.open(str(shard / TEXT_DIR / kind))
            _add_docs(index, [dict.fromkeys(fields, PAD)], parent)  # the probe: one token in every field
            searcher = index.searcher()
            n = searcher.num_docs
            indexes.append(index)
            real.append(n - 1)
            tokens.append({f: int(round(_avgdl(index, searcher, f) * n)) - 1 for f in fields})
        total_docs = sum(real)
        target = {f: sum(t[f] for t in tokens) / max(total_docs, 1) for f in fields}
        padding = 0
        for i, (index, n_s, t_s) in enumerate(zip(indexes, real, tokens, strict=True)):
            need = [math.ceil((t_s[f] + 1) / target[f] - n_s) for f in fields if target[f] > 0]
            m = max([2, *need])
            extra = {f: int(round(target[f] * (n_s + m))) - t_s[f] - 1 for f in fields if target[f] > 0}
            _add_docs(index, [{f: " ".join([PAD] * k) for f, k in extra.items() if k > 0}] + [{}] * (m - 2), parent)
            stats[i][kind] = {"documents": n_s, "padding": m}
            padding += m
        out[f"text_{kind}_padding"] = padding
    for shard, st in zip(shards, stats, strict=True):
        path = shard / GLOBAL_DIR / "stats.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data["text"] = st
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(data))
    return out


# -- searching: the facades IndexDirectory opens for a sharded parent ---------------------------------
def open_store(index_dir: str | Path) -> Any:
    """The collection store of ``index_dir``: its :class:`~mathsearch.store.Store`, or for a sharded
    parent one :class:`ShardedStore` over its shards' (for the commands that read only the store:
    ``eval``, ``check``, ``pool`` with ``--index``)."""
    from ..store import Store
    from .directory import read_manifest

    dirs = shard_dirs_of(index_dir, read_manifest(index_dir)) if Path(index_dir).is_dir() else None
    if not dirs:
        return Store.open(index_dir)
    stores: list[Any] = []
    try:
        for d in dirs:
            stores.append(Store.open(d))
    except BaseException:
        for s in stores:
            s.close()
        raise
    return ShardedStore(stores)


def open_sharded(name: str, shards: Sequence[Path]) -> Any:
    """The index ``name`` of a sharded parent: one object with the single index's interface."""
    from .directory import INDEX_KINDS

    parts = [INDEX_KINDS[name].open(s) for s in shards]
    if name == "store":
        return ShardedStore(parts)
    if name == "text":
        stats = [json.loads((s / GLOBAL_DIR / "stats.json").read_text()).get("text", {}) for s in shards]
        return ShardedTextIndex(parts, stats)
    if name == "formula":
        return ShardedFormulaIndex(parts, [np.load(s / GLOBAL_DIR / "formula_group.npy") for s in shards],
                                   [np.load(s / GLOBAL_DIR / "formula_canonical.npy") for s in shards])
    if name == "dense":
        return ShardedDenseIndex(parts)
    raise InputError(f"a sharded index has no {name} index: build it without --shards.")


class ShardedStore:
    """The store's read interface over the shards' stores (each thread in one of them)."""

    def __init__(self, stores: Sequence[Any]):
        self.stores = list(stores)
        self.index_dir = stores[0].index_dir.parent if stores else None

    def _by_thread(self, thread_id: int) -> Any:
        return self.stores[shard_of(thread_id, len(self.stores))]

    def _merged(self, method: str, *args: Any) -> dict:
        out: dict = {}
        for s in self.stores:
            out.update(getattr(s, method)(*args))
        return out

    def _first(self, method: str, *args: Any) -> Any:
        for s in self.stores:
            found = getattr(s, method)(*args)
            if found is not None:
                return found
        return None

    def close(self) -> None:
        for s in self.stores:
            s.close()

    def __enter__(self) -> ShardedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def meta(self) -> dict[str, str]:
        return self.stores[0].meta()

    def counts(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for s in self.stores:
            for k, v in s.counts().items():
                if isinstance(v, int | float) and not isinstance(v, bool):
                    out[k] = out.get(k, 0) + v
        return out

    def post(self, post_id):
        return self._first("post", post_id)

    def posts(self, post_ids):
        ids = list(post_ids)
        return self._merged("posts", ids)

    def iter_posts(self, post_type=None):
        return _merge_by(lambda s: s.iter_posts(post_type), self.stores, lambda p: p.post_id)

    def iter_answers(self):
        return self.iter_posts(2)

    def answers_of(self, thread_id):
        return self._by_thread(thread_id).answers_of(thread_id)

    def comments_of(self, post_id):
        return _comments_of(self.stores, post_id)

    def answers_of_threads(self, thread_ids):
        return _by_threads(self.stores, "answers_of_threads", thread_ids)

    def comments_of_posts(self, post_ids):
        ids = list(post_ids)
        return self._merged("comments_of_posts", ids)

    def answer_ids_of_threads(self, thread_ids):
        return _by_threads(self.stores, "answer_ids_of_threads", thread_ids)

    def accepted_answers(self, thread_ids):
        return _by_threads(self.stores, "accepted_answers", thread_ids)

    def iter_post_ids(self, post_type):
        return _merge_by(lambda s: s.iter_post_ids(post_type), self.stores, lambda r: r[0])

    def post_type(self, post_id):
        return self._first("post_type", post_id)

    def answer_ids(self):
        return set().union(*(s.answer_ids() for s in self.stores))

    def post_ids(self):
        return set().union(*(s.post_ids() for s in self.stores))

    def linked(self, post_id, link_type=None):
        return sorted(set().union(*(s.linked(post_id, link_type) for s in self.stores)))

    def linked_many(self, post_ids, link_type=None):
        ids = list(post_ids)
        out: dict[int, set[int]] = {}
        for s in self.stores:
            for k, v in s.linked_many(ids, link_type).items():
                out.setdefault(k, set()).update(v)
        return {k: sorted(v) for k, v in out.items()}

    def formula(self, formula_id):
        return self._first("formula", formula_id)

    def formula_kind(self, formula_id):
        f = self.formula(formula_id)
        return f.kind if f else None

    def visual_id(self, formula_id):
        f = self.formula(formula_id)
        return f.visual_id if f else None

    def visual_ids(self, formula_ids):
        ids = list(formula_ids)
        return self._merged("visual_ids", ids)

    def formulas_of(self, post_id):
        for s in self.stores:
            found = s.formulas_of(post_id)
            if found:
                return found
        return []

    def iter_formulas(self, kinds=None):
        kinds = None if kinds is None else list(kinds)
        return _merge_by(lambda s: s.iter_formulas(kinds), self.stores, lambda f: f.formula_id)


def _comments_of(stores: Sequence[Any], post_id: int) -> list:
    for s in stores:
        found = s.comments_of(post_id)
        if found:
            return found
    return []


def _by_threads(stores: Sequence[Any], method: str, thread_ids: Iterable[int]) -> dict:
    """``method`` of each shard's store asked for the threads it holds only."""
    per: dict[int, list[int]] = {}
    for t in thread_ids:
        try:
            per.setdefault(shard_of(int(t), len(stores)), []).append(int(t))
        except (TypeError, ValueError):
            continue
    out: dict = {}
    for i, ids in sorted(per.items()):
        out.update(getattr(stores[i], method)(ids))
    return out


def _merge_by(make, stores: Sequence[Any], key) -> Iterator:
    import heapq

    return heapq.merge(*(make(s) for s in stores), key=key)


class ShardedTextIndex:
    """BM25 over the shards' text indexes with the collection's document frequencies: each shard's
    term query boosted by ``idf_collection / idf_shard`` (see the module's docstring)."""

    def __init__(self, parts: Sequence[Any], stats: Sequence[dict[str, Any]]):
        self.parts = list(parts)
        self.meta = dict(parts[0].meta)
        # per shard and index: its documents, without the padding that evens the field lengths
        self.padding = {kind: [int(st.get(kind, {}).get("padding", 0)) for st in stats] for kind in ("answers", "questions")}

    @property
    def num_answers(self) -> int:
        return sum(p.num_answers for p in self.parts) - sum(self.padding["answers"])

    def _search(self, which: str, bags, clauses, limit: int, max_terms: int = 0) -> dict[int, float]:
        import tantivy

        from .text_index import bm25_idf, query_terms, select_terms

        if limit <= 0:
            return {}
        indexes = [getattr(p, which) for p in self.parts]
        searchers = [getattr(p, "_a_searcher" if which == "answers" else "_q_searcher") for p in self.parts]
        n_shard = [s.num_docs for s in searchers]  # what tantivy's idf counts, padding included
        n_all = sum(n_shard) - sum(self.padding[which])
        # The single index's query, term by term (TextIndex._query makes it): (field, token, boost)
        terms = query_terms(bags, clauses)
        df_cache: dict[tuple[str, str], list[int]] = {}

        def dfs_of(fld: str, token: str) -> list[int]:
            if (fld, token) not in df_cache:
                df_cache[(fld, token)] = [s.doc_freq(fld, token) for s in searchers]
            return df_cache[(fld, token)]

        if max_terms > 0:  # chosen by the collection's document frequencies, as the single index would
            terms = select_terms(terms, lambda fld, token: sum(dfs_of(fld, token)), n_all, max_terms)
        if not terms:
            return {}
        found: dict[int, float] = {}
        for i, (index, searcher) in enumerate(zip(indexes, searchers, strict=True)):
            subs = []
            for fld, token, boost in terms:
                dfs = dfs_of(fld, token)
                if dfs[i] == 0:
                    continue
                scale = bm25_idf(sum(dfs), n_all) / bm25_idf(dfs[i], n_shard[i])
                q = tantivy.Query.term_query(index.schema, fld, token, index_option="freq")
                subs.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, boost * scale)))
            if not subs:
                continue
            hits = searcher.search(tantivy.Query.boolean_query(subs), limit=limit, count=False).hits
            if hits:
                ids = searcher.fast_field_values("id", [addr for _, addr in hits])
                found.update({int(d): float(s) for (s, _), d in zip(hits, ids, strict=True)})
        return dict(ranked_items(found)[:limit])

    def search_answers(self, bags, clauses, limit: int = 1000, max_terms: int = 0) -> dict[int, float]:
        return self._search("answers", bags, clauses, limit, max_terms)

    def search_questions(self, bags, clauses, limit: int = 100, max_terms: int = 0) -> dict[int, float]:
        return self._search("questions", bags, clauses, limit, max_terms)


def ranked_items(scores: dict[int, float]) -> list[tuple[int, float]]:
    """Score descending, then id ascending (tantivy's order among equal scores is by address)."""
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


class ShardedFormulaIndex:
    """The formula index's questions (:meth:`answers_by_best_formula`, :meth:`best_instances`)
    over the shards, each visual formula counted once however many shards hold it."""

    def __init__(self, parts: Sequence[Any], groups: Sequence[np.ndarray], canonical: Sequence[np.ndarray]):
        self.parts = list(parts)
        self.groups = list(groups)
        self.canonical = list(canonical)
        self.meta = dict(parts[0].meta)
        self.n = int(max((int(g.max()) + 1 for g in groups if len(g)), default=0))

    def query(self, latex: str):
        return self.parts[0].query(latex)

    def _tops(self, q, scoring, depth: int, retrievable_only: bool) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per shard, its visual formulae among the collection's best ``depth`` (a visual formula in
        several shards counted once; ties broken as the single index numbers them), best first."""
        tops = [p.top(q, scoring, depth, retrievable_only) for p in self.parts]
        # A visual formula scores as its first instance's shard scores it, where that shard found it.
        canon_score: dict[int, float] = {}
        for group, canon, (docs, scores) in zip(self.groups, self.canonical, tops, strict=True):
            mine = canon[docs]
            canon_score.update(zip(group[docs][mine].tolist(), scores[mine].tolist(), strict=True))
        best: dict[int, float] = {}
        adjusted = []
        for group, (docs, scores) in zip(self.groups, tops, strict=True):
            g = group[docs]
            s = np.array([canon_score.get(k, v) for k, v in zip(g.tolist(), scores.tolist(), strict=True)], dtype=np.float64)
            for k, v in zip(g.tolist(), s.tolist(), strict=True):
                if v > best.get(k, -math.inf):
                    best[k] = v
            adjusted.append((docs, g, s))
        kept = set(sorted(best, key=lambda k: (-best[k], k))[:depth])
        out = []
        for docs, g, s in adjusted:
            keep = np.fromiter((k in kept for k in g.tolist()), dtype=bool, count=len(g))
            docs, g, s = docs[keep], g[keep], s[keep]
            order = np.lexsort((g, -s))  # best first, ties as the single index breaks them
            out.append((docs[order], s[order]))
        return out

    def answers_by_best_formula(self, q, scoring, depth: int, limit: int, max_instances: int = 500_000) -> dict[int, float]:
        found: dict[int, float] = {}
        for part, (docs, scores) in zip(self.parts, self._tops(q, scoring, depth, False), strict=True):
            found.update(_answers_of(part, docs, scores, max_instances))
        return dict(ranked_items(found)[:limit])

    def answers_best_formula_among(self, q, scoring, answers: np.ndarray) -> dict[int, float]:
        """Task 1 re-scoring (``ours``' formula signal): an answer and its formulae are in one
        shard, which scores them with the collection's idf; the shards' answers merged."""
        found: dict[int, float] = {}
        for part in self.parts:
            found.update(part.answers_best_formula_among(q, scoring, answers))
        return found

    def best_instances(self, q, scoring, depth: int, limit: int, thread_boosts=None, boost: float = 0.0) -> Ranking:
        tops = self._tops(q, scoring, depth, True)
        best: dict[int, tuple[float, int, int, float]] = {}  # group: (final score, -formula id, post, score)
        for part, group, (docs, scores) in zip(self.parts, self.groups, tops, strict=True):
            picks = part._first_hit_positions(docs)
            final = scores.copy()
            if thread_boosts is not None and boost > 0 and len(thread_boosts[0]):
                pick_b, bonus = part._boosted_positions(docs, *thread_boosts)
                picks = np.where(bonus > 0, pick_b, picks)
                final = final + boost * bonus
            fids = np.where(picks >= 0, part.inst_formula[np.maximum(picks, 0)], -1)
            posts = np.where(picks >= 0, part.inst_post[np.maximum(picks, 0)], -1)
            for g, fid, post, fin, s in zip(group[docs].tolist(), fids.tolist(), posts.tolist(), final.tolist(),
                                            scores.tolist(), strict=True):
                if fid < 0:
                    continue
                cand = (fin, -fid, post, s)
                if g not in best or cand[:2] > best[g][:2]:
                    best[g] = cand
        score_of = {-c[1]: c[0] for c in best.values()}
        post_at = {-c[1]: c[2] for c in best.values()}
        top = ranked(score_of)[:limit]
        scored = {fid: round(score_of[fid], 6) for fid in top}
        post_of = {fid: post_at[fid] for fid in top}
        if len(scored) < limit:  # further instances of the same formulae fill free slots, best formula first
            from .formula.layout import COMMENT

            held: dict[int, list[tuple[int, int]]] = {}  # group: (shard, visual formula there)
            score_of_group: dict[int, float] = {}
            for i, (group, (docs, scores)) in enumerate(zip(self.groups, tops, strict=True)):
                for d, s in zip(docs.tolist(), scores.tolist(), strict=True):
                    g = int(group[d])
                    held.setdefault(g, []).append((i, d))
                    score_of_group[g] = max(s, score_of_group.get(g, -math.inf))
            for g in sorted(held, key=lambda g: (-score_of_group[g], g)):
                instances = []
                for i, d in held[g]:
                    part = self.parts[i]
                    sl = part.instances(d)
                    keep = np.asarray(part.inst_kind[sl]) != COMMENT
                    instances += zip(np.asarray(part.inst_formula[sl])[keep].tolist(),
                                     np.asarray(part.inst_post[sl])[keep].tolist(), strict=True)
                for fid, post in sorted(instances):
                    if fid not in scored:
                        scored[fid] = round(score_of_group[g], 6)
                        post_of[fid] = post
                        if len(scored) >= limit:
                            return Ranking(scored, post_of)
        return Ranking(scored, post_of)


def _answers_of(part: Any, docs: np.ndarray, scores: np.ndarray, max_instances: int) -> dict[int, float]:
    """:meth:`FormulaIndex.answers_by_best_formula` from given visual formulae (best first)."""
    if not len(docs):
        return {}
    uniq, best = part.best_of_answers(docs, scores, max_instances)
    return dict(zip(uniq.tolist(), best.tolist(), strict=True))


def _encoder_identity(manifest: dict[str, Any]) -> tuple[str, str]:
    """What must agree between shards: the fingerprints of the vectors' encoder and of the query encoder."""
    from .dense import _fingerprint

    asked = manifest.get("query_encoder")
    return _fingerprint(manifest.get("encoder") or {}), _fingerprint(asked) if asked else ""


def write_sharded_dense_manifest(parent: Path, shards: Sequence[Path]) -> dict[str, Any]:
    """``parent/dense/manifest.json``: the encoder every shard's vectors were made by (each shard
    records it in its own ``dense/manifest.json``; they must be one), with the shards' counts summed.
    The vectors stay in the shards; this file says the sharded index has them (``ours`` reads it to
    pick its config) and which encoder encodes the topics."""
    from .dense import DENSE_DIR

    manifests = [json.loads((s / DENSE_DIR / "manifest.json").read_text()) for s in shards]
    identities = {_encoder_identity(m) for m in manifests}
    if len(identities) != 1:
        raise InputError(f"the shards' vectors were made by different encoders ({sorted(identities)}): nothing was replaced.")
    first = manifests[0]
    meta = {
        "encoder": first.get("encoder"), "query_encoder": first.get("query_encoder"), "model": first.get("model"),
        "dense_answers": sum(int(m.get("dense_answers", 0)) for m in manifests),
        "dense_questions": sum(int(m.get("dense_questions", 0)) for m in manifests),
        "ann": {}, "shards": [s.name for s in shards],  # the vectors (and any ANN index) are each shard's
    }
    root = parent / DENSE_DIR
    root.mkdir(exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(meta, indent=1))
    return meta


class ShardedDenseIndex:
    """Cosine similarity over the shards' vectors: each shard's top ``limit``, merged.  Every shard's
    vectors come from the same encoder (checked when opened), so scores compare across shards and
    the merge of exact per-shard searches is the single index's exact search (up to ties at the cut)."""

    def __init__(self, parts: Sequence[Any]):
        identities = {_encoder_identity(p.manifest) for p in parts}
        if len(identities) != 1:
            raise InputError(f"the shards of {parts[0].root.parent.parent} hold vectors of different encoders "
                             f"({sorted(identities)}): rebuild them with `mathsearch index --shards N --dense`.")
        self.parts = list(parts)
        self.manifest = parts[0].manifest
        self.encoder_info = parts[0].encoder_info
        self.encoder_name = parts[0].encoder_name

    def query_encoder(self):
        return self.parts[0].query_encoder()

    def encode(self, text: str) -> np.ndarray:
        return self.parts[0].encode(text)

    @staticmethod
    def _merged(found: Iterable[dict[int, float]], limit: int) -> dict[int, float]:
        out: dict[int, float] = {}
        for part in found:
            out.update(part)
        return dict(ranked_items(out)[:limit])

    def search_answers(self, vec: np.ndarray, limit: int = 1000) -> dict[int, float]:
        return self._merged((p.search_answers(vec, limit) for p in self.parts), limit)

    def search_questions(self, vec: np.ndarray, limit: int = 100) -> dict[int, float]:
        return self._merged((p.search_questions(vec, limit) for p in self.parts), limit)

    def score_answers(self, vec: np.ndarray, answer_ids: list[int]) -> dict[int, float]:
        out: dict[int, float] = {}
        for p in self.parts:
            out.update(p.score_answers(vec, answer_ids))
        return out


def remove_partial(path: Path) -> None:
    """Remove what a killed attempt of a build task left at ``path`` (inside our building folder)."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


# -- the build ------------------------------------------------------------------------------------------
def build_partitioned(
    collection_dir: str | Path, index_dir: str | Path, progress=None, *, shards: int = 1, ray: str | None = None,
    optional: tuple[str, ...] = (), encoder: str | None = None, query_encoder: str | None = None, engine=None,
    device: str = "auto",
):
    """:func:`~mathsearch.indexes.build.build_index` with its steps run by an engine (Ray with
    ``ray``, see :mod:`mathsearch.distributed`) and, with ``shards`` > 1, a sharded index: the store
    read once, split by thread into ``shards`` complete INDEX_DIRs, each indexed, then given the
    collection's formula statistics.  The same guarantees: every check first, the target replaced
    only when complete and only when mathsearch made it."""
    import time
    from dataclasses import fields

    from ..distributed.engine import CPU_KEY, StepTask, make_engine
    from ..readers.collection import detect_collection
    from ..store import IngestCounts, atomic_directory, build_store
    from ..store.atomic import clean_stale_builds
    from .build import INDEX_STEPS, IndexCounts, check_optional_steps
    from .directory import check_index_target, write_manifest

    started = time.perf_counter()
    if shards < 1:
        raise InputError(f"--shards must be at least 1, not {shards}")
    others = [name for name in optional if name != "dense"]
    if shards > 1 and others:
        raise InputError(f"{', '.join(others)} cannot be combined with --shards yet: build the shards without "
                         "them (nothing was built).")
    files = detect_collection(collection_dir)
    check_index_target(index_dir, files.root)
    check_optional_steps(optional, encoder, query_encoder)
    own_engine = engine is None
    engine = make_engine(ray) if engine is None else engine
    try:
        cleaned = [(str(path), size) for path, size in clean_stale_builds(index_dir)]
        with atomic_directory(index_dir) as building:
            full = building if shards == 1 else building / ".full-store"
            full.mkdir(exist_ok=True)
            store_counts = build_store(files, full, progress)
            if store_counts.questions + store_counts.answers == 0:
                raise InputError(f"{files.posts} holds no readable posts: nothing to index ({index_dir} was left as it was).")
            counts = IndexCounts(**{f.name: getattr(store_counts, f.name) for f in fields(IngestCounts)})
            counts.cleaned = cleaned
            from .resume import mark, resume_root

            resume = resume_root(index_dir)  # the vectors of a killed task or build, read back by the next
            if "dense" in optional:
                mark(resume)
            dense_opts = {"encoder": encoder, "query_encoder": query_encoder, "device": device, "resume": str(resume)}
            if shards == 1:
                tasks = [StepTask(str(building), name) for name, _ in INDEX_STEPS]
                tasks += [StepTask(str(building), name, options=dense_opts if name == "dense" else {}) for name in optional]
                for task, (step_counts, seconds) in zip(tasks, engine.run(tasks, progress), strict=True):
                    step_counts = dict(step_counts)
                    counts.indexes[f"{task.step}_cpu_seconds"] = step_counts.pop(CPU_KEY, None)
                    counts.indexes.update(step_counts)
                    counts.indexes[f"{task.step}_seconds"] = seconds
                extra = None
            else:
                dirs = [building / shard_name(i) for i in range(shards)]
                split = [StepTask(str(d), "split", i, shards, str(full)) for i, d in enumerate(dirs)]
                shard_counts: list[dict[str, Any]] = []
                for c, _ in engine.run(split, progress):
                    c = dict(c)
                    c["split_cpu"] = c.pop(CPU_KEY, 0.0)
                    shard_counts.append(c)
                shutil.rmtree(full)
                tasks = [StepTask(str(d), name) for d in dirs for name, _ in INDEX_STEPS]
                if "dense" in optional:  # each shard's posts embedded by the same encoder, one task a shard
                    tasks += [StepTask(str(d), "dense", i, shards, options={**dense_opts, "resume": str(resume / d.name)})
                              for i, d in enumerate(dirs)]
                for task, (step_counts, seconds) in zip(tasks, engine.run(tasks, progress), strict=True):
                    mine = shard_counts[dirs.index(Path(task.path))]
                    step_counts = dict(step_counts)
                    mine[f"{task.step}_cpu"] = step_counts.pop(CPU_KEY, 0.0)  # summed over the shards below
                    mine.update(step_counts)
                    mine[f"{task.step}_seconds"] = seconds
                step_started = time.perf_counter()
                counts.indexes.update(write_global_formula_stats(dirs))
                counts.indexes.update(write_global_text_stats(dirs))
                if "dense" in optional:
                    write_sharded_dense_manifest(building, dirs)
                counts.indexes["global_seconds"] = round(time.perf_counter() - step_started, 2)
                for key in sorted({k for c in shard_counts for k in c}):
                    values = [c.get(key, 0) for c in shard_counts]
                    if not all(isinstance(v, int | float) for v in values):  # e.g. dense_encoder: one name
                        counts.indexes[key] = values[0] if len(set(map(str, values))) == 1 else values
                    elif key.endswith("_seconds"):
                        counts.indexes[f"{key[:-8]}_seconds_max_shard"] = max(values)
                    elif key.endswith("_cpu"):  # CPU seconds of a step, all shards together
                        counts.indexes[f"{key}_seconds"] = round(sum(values), 2)
                    elif key not in ("questions", "answers", "comments", "links", "formulas"):
                        counts.indexes[key] = sum(values)
                counts.indexes["shards"] = shards
                for d, c in zip(dirs, shard_counts, strict=True):
                    write_manifest(d, files.root, files.kind, c)
                extra = {"shards": {"count": shards, "hash": HASH, "dirs": [d.name for d in dirs]}}
            counts.total_seconds = round(time.perf_counter() - started, 2)
            check_index_target(index_dir, files.root)  # again: the folder may have changed during the build
            read = {k: v for k, v in counts.as_json().items() if k not in ("indexes", "cleaned")}
            write_manifest(building, files.root, files.kind, {**read, **counts.indexes}, extra=extra)
    finally:
        if own_engine:
            engine.close()
    if "dense" in optional:
        from .resume import remove_resume

        remove_resume(index_dir)  # complete: the resumable chunks are not needed any more
    return counts
