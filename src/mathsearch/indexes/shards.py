"""Sharded indexes: N complete INDEX_DIRs under one parent, split by thread, searched as one.
This module: the layout (which shard holds a thread) and the search over the shards; the build
is :mod:`mathsearch.building.shard_build` (its steps) and :func:`mathsearch.building.build.build_partitioned`.

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
  documents holding only a token no query has (:func:`~.shard_build.write_global_text_stats`).
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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..ranking import Ranking, ranked

HASH = "thread-fibonacci-v1"
_MULT = 2654435761  # Knuth's multiplicative hash: consecutive thread ids spread over the shards
GLOBAL_DIR = "global"


def shard_of(thread_id: int, n: int) -> int:
    """The shard of a thread: ``((id mod 2^32) * 2654435761 mod 2^32) mod n`` (as :func:`sql_shard`)."""
    return (((int(thread_id) % 4294967296) * _MULT) % 4294967296) % n


def sql_shard(column: str, n: int) -> str:
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



# -- searching: the facades IndexDirectory opens for a sharded parent ---------------------------------
def open_sharded(name: str, shards: Sequence[Path], open_part: Callable[[Path], Any]) -> Any:
    """The index ``name`` of a sharded parent (each shard's opened by ``open_part``): one object
    with the single index's interface."""
    parts = [open_part(s) for s in shards]
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

    def answer_doc_freq(self, field: str, token: str) -> int:
        """How many answers of the collection hold ``token`` in ``field``: the shards' counts summed
        (the padding documents hold no token of a query)."""
        return sum(p.answer_doc_freq(field, token) for p in self.parts)

    def _search(self, which: str, bags, clauses, limit: int, max_terms: int = 0,
                among: Sequence[int] = (), max_df: Mapping[str, float] | None = None) -> dict[int, float]:
        import tantivy

        from .text_index import bm25_idf, only_ids, query_terms, select_terms

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

        if max_terms > 0 or max_df:  # chosen by the collection's document frequencies, as the single index would
            terms = select_terms(terms, lambda fld, token: sum(dfs_of(fld, token)), n_all, max_terms, max_df)
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
            if among:
                subs.append((tantivy.Occur.Must, only_ids(index.schema, among)))
            hits = searcher.search(tantivy.Query.boolean_query(subs), limit=limit, count=False).hits
            if hits:
                ids = searcher.fast_field_values("id", [addr for _, addr in hits])
                found.update({int(d): float(s) for (s, _), d in zip(hits, ids, strict=True)})
        return dict(ranked_items(found)[:limit])

    def search_answers(self, bags, clauses, limit: int = 1000, max_terms: int = 0,
                       max_df: Mapping[str, float] | None = None) -> dict[int, float]:
        return self._search("answers", bags, clauses, limit, max_terms, max_df=max_df)

    def search_questions(self, bags, clauses, limit: int = 100, max_terms: int = 0,
                         max_df: Mapping[str, float] | None = None) -> dict[int, float]:
        return self._search("questions", bags, clauses, limit, max_terms, max_df=max_df)

    def score_answers(self, bags, clauses, answer_ids: Sequence[int], max_terms: int = 0,
                      max_df: Mapping[str, float] | None = None) -> dict[int, float]:
        """:meth:`TextIndex.score_answers` over the shards (the collection's statistics)."""
        ids = sorted(set(answer_ids))
        found = self._search("answers", bags, clauses, len(ids), max_terms, ids, max_df=max_df)
        return {a: s for a, s in found.items() if s > 0}


def ranked_items(scores: dict[int, float]) -> list[tuple[int, float]]:
    """Score descending, then id ascending (tantivy's order among equal scores is by address).
    Not ranking's order (id descending) on purpose: the merged top ``limit`` must keep the ties at
    the cut that the single index keeps, so that sharded and single runs are the same."""
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
        # The single index's cut: its best ``depth`` visual formulae, ties by number (FormulaIndex.top).
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
        return self.answers_best_formula_among_all([q], scoring, answers)[0]

    def answers_best_formula_among_all(self, qs, scoring, answers: np.ndarray) -> list[dict[int, float]]:
        found: list[dict[int, float]] = [{} for _ in qs]
        for part in self.parts:
            for mine, theirs in zip(found, part.answers_best_formula_among_all(qs, scoring, answers), strict=True):
                mine.update(theirs)
        return found

    def best_instances(self, q, scoring, depth: int, limit: int, thread_boosts=None, boost: float = 0.0) -> Ranking:
        tops = self._tops(q, scoring, depth, True)
        if callable(thread_boosts):  # given by a text search that ran meanwhile (FormulaIndex.best_instances)
            thread_boosts = thread_boosts()
        best: dict[int, tuple[float, int, int, float]] = {}  # group: (final score, -formula id, post, score)
        for part, group, (docs, scores) in zip(self.parts, self.groups, tops, strict=True):
            fids, posts, final = part.best_instance_of(docs, scores, thread_boosts, boost)
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
            for g in sorted(held, key=lambda g: (-score_of_group[g], g)):  # as the single index fills slots
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


def encoder_identity(manifest: dict[str, Any]) -> tuple[str, str]:
    """What must agree between shards: the fingerprints of the vectors' encoder and of the query encoder."""
    from .dense import encoder_fingerprint

    asked = manifest.get("query_encoder")
    return encoder_fingerprint(manifest.get("encoder") or {}), encoder_fingerprint(asked) if asked else ""


class ShardedDenseIndex:
    """Cosine similarity over the shards' vectors: each shard's top ``limit``, merged.  Every shard's
    vectors come from the same encoder (checked when opened), so scores compare across shards and
    the merge of exact per-shard searches is the single index's exact search (up to ties at the cut)."""

    def __init__(self, parts: Sequence[Any]):
        identities = {encoder_identity(p.manifest) for p in parts}
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

    def answer_vectors(self, answer_ids: list[int]) -> tuple[list[int], np.ndarray]:
        """:meth:`DenseIndex.answer_vectors` over the shards: each answer's vector from the shard
        that holds it, in the order of ``answer_ids``."""
        rows: dict[int, np.ndarray] = {}
        for p in self.parts:
            ids, vectors = p.answer_vectors(answer_ids)
            rows.update(zip(ids, vectors, strict=True))
        found = [a for a in answer_ids if a in rows]
        width = self.parts[0].answers.shape[1]
        return found, np.stack([rows[a] for a in found]) if found else np.zeros((0, width), np.float32)
