"""The steps that make a sharded index out of N shards (:mod:`.shards` says the layout and searches
it; :func:`mathsearch.building.build.build_partitioned` runs the build):

* :func:`split_store`: a shard's store from the full store (a :class:`~.steps.StepTask` ``split``);
* once every shard is indexed, the collection's statistics given to each: the formula vocabulary
  and idf (:func:`write_global_formula_stats`), the BM25 field lengths by padding
  (:func:`write_global_text_stats`), and the parent's dense manifest
  (:func:`write_sharded_dense_manifest`).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..indexes.shards import GLOBAL_DIR, HASH, encoder_identity, sql_shard
from ..store.schema import POSTS_INDEXES, POSTS_TABLES, SIDE_FILE, SIDE_INDEXES, SIDE_TABLES, STORE_FILE


# -- the build: splitting the store ----------------------------------------------------------------
def _new_database(path: Path, tables: str) -> sqlite3.Connection:
    """A fresh shard database with ``tables``, written without a journal: a failed split is redone
    from nothing, so crash safety would only cost time."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.executescript(tables)
    return db


def split_store(full: Path, out: Path, shard: int, n: int) -> dict[str, int]:
    """Write the store of shard ``shard`` of ``n`` into ``out`` from the store in ``full``: every
    row lands in exactly one shard (posts by thread; comments, links and formulae by the thread of
    their post, or by their own post id when that post is not in the collection)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in (STORE_FILE, SIDE_FILE):
        (out / name).unlink(missing_ok=True)  # a retried task starts again from nothing
    main = _new_database(out / STORE_FILE, POSTS_TABLES)
    try:
        main.execute("ATTACH DATABASE ? AS full", (f"file:{full / STORE_FILE}?mode=ro",))
        main.execute("BEGIN")
        main.execute(f"INSERT INTO posts SELECT * FROM full.posts WHERE {sql_shard('thread_id', n)} = ?", (shard,))
        meta = dict(main.execute("SELECT key, value FROM full.meta").fetchall())
        main.execute("COMMIT")
        main.execute("DETACH DATABASE full")
        main.executescript(POSTS_INDEXES)
        counts = {
            "questions": main.execute("SELECT COUNT(*) FROM posts WHERE post_type=1").fetchone()[0],
            "answers": main.execute("SELECT COUNT(*) FROM posts WHERE post_type=2").fetchone()[0],
        }
        side = _new_database(out / SIDE_FILE, SIDE_TABLES)
        try:
            side.execute("ATTACH DATABASE ? AS fullside", (f"file:{full / SIDE_FILE}?mode=ro",))
            side.execute("ATTACH DATABASE ? AS fullmain", (f"file:{full / STORE_FILE}?mode=ro",))
            side.execute("BEGIN")
            owner = sql_shard("COALESCE(p.thread_id, x.post_id)", n)
            side.execute(f"INSERT INTO comments SELECT x.* FROM fullside.comments x LEFT JOIN fullmain.posts p "
                         f"ON p.post_id = x.post_id WHERE {owner} = ?", (shard,))
            side.execute(f"INSERT INTO links SELECT x.* FROM fullside.links x LEFT JOIN fullmain.posts p "
                         f"ON p.post_id = x.post_id WHERE {owner} = ?", (shard,))
            side.execute(f"INSERT INTO formulas SELECT * FROM fullside.formulas WHERE {sql_shard('thread_id', n)} = ?",
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
    from ..indexes.formula import FORMULA_DIR

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
    from ..indexes.formula import FAMILIES, FORMULA_DIR

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
    (:class:`~.shards.ShardedTextIndex`); the padding's count is written to ``global/stats.json``."""
    import tantivy

    from ..indexes.documents import ANSWER_FIELDS, QUESTION_FIELDS
    from ..indexes.text_index import TEXT_DIR

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


def write_sharded_dense_manifest(parent: Path, shards: Sequence[Path]) -> dict[str, Any]:
    """``parent/dense/manifest.json``: the encoder every shard's vectors were made by (each shard
    records it in its own ``dense/manifest.json``; they must be one), with the shards' counts summed.
    The vectors stay in the shards; this file says the sharded index has them (``ours`` reads it to
    pick its config) and which encoder encodes the topics."""
    from ..indexes.dense import DENSE_DIR

    manifests = [json.loads((s / DENSE_DIR / "manifest.json").read_text()) for s in shards]
    identities = {encoder_identity(m) for m in manifests}
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
