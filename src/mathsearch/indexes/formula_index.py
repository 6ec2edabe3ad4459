"""The formula index: one entry per visually distinct formula, its symbol-pair tuples as tokens.

The collection repeats itself (28M instances, far fewer distinct formulae), so each visual id
(the store's, or our visual key where the collection has none) is parsed once and indexed once;
its instances (formula id, post, thread, kind) hang off it.  Layout under ``INDEX_DIR/formula/``
(flat numpy arrays, memory-mapped at search time):

``manifest.json``
    version, tuple windows, counts.
``tok_hash.npy`` (uint64, sorted), ``tok_idf.npy`` (float32)
    the vocabulary: a 64-bit hash of ``family + token`` per token id, and its idf
    ``log(1 + N / df)`` over the N visual formulae.
``post_start.npy`` / ``post_end.npy`` (int64), ``post_doc.npy`` (int32), ``post_tf.npy`` (uint16)
    postings of each token id (a block of ``post_doc``/``post_tf``): visual formulae and term
    frequencies; blocks are written family by family, to bound the build's memory.
``len_plain.npy`` / ``len_idf.npy`` (float32, families x N)
    per family the number of tuples of each visual formula, and their idf-weighted sum
    (the denominators of the Dice overlaps, so a query never re-parses a candidate).
``n_nodes.npy`` (int32), ``vkey.npy`` (uint64)
    SLT size and our visual key (exact matches) of each visual formula.
``inst_ptr.npy`` (int64, CSR over visual formulae), ``inst_formula.npy``, ``inst_post.npy``,
``inst_thread.npy`` (int64), ``inst_kind.npy`` (int8: :data:`KINDS`), ``inst_answer.npy`` (bool:
the post is an answer, for Task 1), ``retrievable.npy`` (bool per visual formula: some
instance is in a question or answer post, i.e. a possible Task 2 hit) and ``first_hit.npy``
(int64: that first question/answer instance, -1 if none).

Token families: ``s`` SLT tuples, ``o`` OPT tuples (commutative operands unordered), ``u`` SLT
tuples with variable names unified (alpha-equivalent formulae share them), ``p`` Approach0-style
leaf-to-root paths of the OPT (longer context than a pair).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
import re
import shutil
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..formula import Analysis, FormulaAnalyzer, leaf_paths
from ..store import Store, atomic_directory

FORMULA_DIR = "formula"
MANIFEST = "manifest.json"
VERSION = 4
FAMILIES = ("s", "o", "u", "p")
KINDS = ("title", "question", "answer", "comment")
RETRIEVABLE = (0, 1, 2)  # kinds that may be Task 2 hits (never comments)
SLT_WINDOW = 2
OPT_WINDOW = 2
CHUNK = 2000  # distinct formulae per worker task
Progress = Callable[[str, int, int], None]

_VAR = re.compile(r"V![^\t]*")


# -- analysis of one formula into hashed tokens ------------------------------------------------
class TokenHasher:
    """``family + token`` -> 64-bit id, cached (the tuple vocabulary is far smaller than its uses)."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def __call__(self, key: str) -> int:
        h = self._cache.get(key)
        if h is None:
            h = int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
            if len(self._cache) < 2_000_000:
                self._cache[key] = h
        return h


def family_tokens(analysis: Analysis) -> dict[str, Counter]:
    """The token bags of each family of one analysed formula."""
    slt_tokens = analysis.slt_tokens
    return {
        "s": Counter(slt_tokens),
        "o": Counter(analysis.opt_tokens),
        "u": Counter(_VAR.sub("V!", t) for t in slt_tokens),
        "p": Counter(leaf_paths(analysis.parsed.opt)),
    }


@dataclass(slots=True)
class QueryTokens:
    """A query formula as the index sees it: per family, token hashes and their frequencies."""

    hashes: dict[str, np.ndarray]
    tfs: dict[str, np.ndarray]
    vkey: int
    n_nodes: int


def _vkey_int(key: str) -> int:
    try:
        return int(key, 16) & 0xFFFFFFFFFFFFFFFF
    except ValueError:
        return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def query_tokens(analyzer: FormulaAnalyzer, latex: str, hasher: TokenHasher) -> QueryTokens:
    a = analyzer.analyze(latex)
    hashes, tfs = {}, {}
    for fam, bag in family_tokens(a).items():
        hashes[fam] = np.fromiter((hasher(fam + t) for t in bag), dtype=np.uint64, count=len(bag))
        tfs[fam] = np.fromiter(bag.values(), dtype=np.float64, count=len(bag))
    return QueryTokens(hashes, tfs, _vkey_int(a.visual_key), a.n_nodes)


# Worker state (one analyzer and hasher per process).
_W: dict[str, object] = {}


def _analyze_chunk(latexes: list[str]) -> tuple:
    """Per formula: SLT size, visual key, and per family (lengths, token hashes, tfs) arrays."""
    analyzer = _W.get("analyzer")
    if analyzer is None:
        analyzer = _W["analyzer"] = FormulaAnalyzer(slt_window=SLT_WINDOW, opt_window=OPT_WINDOW, cache_size=1024,
                                                    keep_trees=True)
        _W["hasher"] = TokenHasher()
    hasher: TokenHasher = _W["hasher"]  # type: ignore[assignment]
    n = len(latexes)
    n_nodes = np.zeros(n, dtype=np.int32)
    vkeys = np.zeros(n, dtype=np.uint64)
    lens = {f: np.zeros(n, dtype=np.int32) for f in FAMILIES}
    hs: dict[str, list[int]] = {f: [] for f in FAMILIES}
    tf: dict[str, list[int]] = {f: [] for f in FAMILIES}
    for i, latex in enumerate(latexes):
        a = analyzer.analyze(latex)  # type: ignore[attr-defined]
        n_nodes[i] = a.n_nodes
        vkeys[i] = _vkey_int(a.visual_key)
        for fam, bag in family_tokens(a).items():
            lens[fam][i] = len(bag)
            hs[fam].extend(hasher(fam + t) for t in bag)
            tf[fam].extend(min(c, 65535) for c in bag.values())
    fams = [(lens[f], np.array(hs[f], dtype=np.uint64), np.array(tf[f], dtype=np.uint16)) for f in FAMILIES]
    return n_nodes, vkeys, fams


# -- build --------------------------------------------------------------------------------------
@dataclass(slots=True)
class _Instances:
    """Columns of every instance (typed arrays: 28M Python ints in lists would take gigabytes)."""

    group: array = field(default_factory=lambda: array("q"))
    formula: array = field(default_factory=lambda: array("q"))
    post: array = field(default_factory=lambda: array("q"))
    thread: array = field(default_factory=lambda: array("q"))
    kind: array = field(default_factory=lambda: array("b"))


def _collect(store: Store, progress: Progress | None) -> tuple[list[str], _Instances, int]:
    """Every formula instance grouped by visual formula; the LaTeX of each group's first instance."""
    groups: dict[str, int] = {}
    latex_of: list[str] = []
    inst = _Instances()
    kind_code = {k: i for i, k in enumerate(KINDS)}
    analyzer = FormulaAnalyzer(cache_size=10_000)
    total = int(store.counts().get("formulas", 0) or 0)
    keyed_here = 0
    for n, f in enumerate(store.iter_formulas(), 1):
        if f.visual_id is not None:
            key = f.visual_id
        else:  # no visual id in the collection: our visual key groups visually equal formulae
            key = "k:" + analyzer.analyze(f.latex).visual_key
            keyed_here += 1
        g = groups.get(key)
        if g is None:
            g = groups[key] = len(latex_of)
            latex_of.append(f.latex)
        inst.group.append(g)
        inst.formula.append(f.formula_id)
        inst.post.append(f.post_id)
        inst.thread.append(f.thread_id)
        inst.kind.append(kind_code.get(f.kind, 3))
        if progress and n % 50_000 == 0:
            progress("formula instances", n, max(total, n))
    return latex_of, inst, keyed_here


class _Spill:
    """Per family, the analysed formulae's tuple counts, hashes and tfs, appended to flat files as
    each chunk comes back from the workers: at full size (millions of visual formulae, hundreds of
    millions of postings) holding every chunk in memory until the postings are built took most of
    the build's peak memory."""

    PARTS = (("len", np.int32), ("hash", np.uint64), ("tf", np.uint16))

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self._files = {(f, part): open(self.path(f, part), "wb") for f in FAMILIES for part, _ in self.PARTS}
        self.postings = dict.fromkeys(FAMILIES, 0)

    def path(self, family: str, part: str) -> Path:
        return self.folder / f"{family}.{part}"

    def add(self, fams: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        for fam, (lens, hashes, tfs) in zip(FAMILIES, fams, strict=True):
            lens.astype(np.int32, copy=False).tofile(self._files[fam, "len"])
            hashes.tofile(self._files[fam, "hash"])
            tfs.tofile(self._files[fam, "tf"])
            self.postings[fam] += len(hashes)

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()

    def read(self, family: str, part: str) -> np.ndarray:
        return np.fromfile(self.path(family, part), dtype=dict(self.PARTS)[part])


def _analyze_all(latex_of: list[str], workers: int, progress: Progress | None, spill: _Spill) -> tuple[np.ndarray, np.ndarray]:
    """Analyse every visual formula (in ``workers`` processes); tuples go to ``spill``, in order.
    Returns the SLT sizes and visual keys."""
    chunks = (latex_of[i : i + CHUNK] for i in range(0, len(latex_of), CHUNK))
    n_nodes, vkeys = [], []
    done = 0

    def take(res: tuple) -> None:
        nonlocal done
        n_nodes.append(res[0])
        vkeys.append(res[1])
        spill.add(res[2])
        done += len(res[0])
        if progress:
            progress("formula analysis", done, len(latex_of))

    if workers > 1 and len(latex_of) > 2 * CHUNK:
        ctx = mp.get_context("fork" if hasattr(os, "fork") else "spawn")
        with ctx.Pool(workers) as pool:
            for res in pool.imap(_analyze_chunk, chunks):
                take(res)
    else:
        for chunk in chunks:
            take(_analyze_chunk(chunk))
    spill.close()
    if not n_nodes:
        return np.zeros(0, np.int32), np.zeros(0, np.uint64)
    return np.concatenate(n_nodes), np.concatenate(vkeys)


def _write_postings(out: Path, spill: _Spill, n_groups: int, progress: Progress | None) -> dict[str, np.ndarray]:
    """Postings family by family (token hashes never collide across families), written straight into
    ``post_doc.npy``/``post_tf.npy``: the peak memory is that of the largest family's tuples.
    Returns the small arrays (vocabulary, idf, posting bounds, formula lengths)."""
    n_fam = len(FAMILIES)
    total = sum(spill.postings.values())
    post_doc = np.lib.format.open_memmap(out / "post_doc.npy", mode="w+", dtype=np.int32, shape=(total,))
    post_tf = np.lib.format.open_memmap(out / "post_tf.npy", mode="w+", dtype=np.uint16, shape=(total,))
    len_plain = np.zeros((n_fam, n_groups), dtype=np.float32)
    len_idf = np.zeros((n_fam, n_groups), dtype=np.float32)
    vocab, idfs, starts, ends = [], [], [], []
    offset = 0
    for fi, fam in enumerate(FAMILIES):
        if progress:
            progress("formula postings", fi, n_fam)
        docs = np.repeat(np.arange(n_groups, dtype=np.int32), spill.read(fam, "len"))
        hashes = spill.read(fam, "hash")
        tfs = spill.read(fam, "tf")
        # One stable sort by hash: it groups each token's postings and keeps them in doc order.
        order = np.argsort(hashes, kind="stable")
        hashes = hashes[order]
        new = np.empty(len(hashes), dtype=bool)
        new[:1] = True
        np.not_equal(hashes[1:], hashes[:-1], out=new[1:])
        first = np.flatnonzero(new)
        uniq = hashes[first]
        del hashes
        df = np.diff(np.append(first, len(new)))
        idf = np.log1p(max(n_groups, 1) / np.maximum(df, 1)).astype(np.float32)
        tok = np.cumsum(new, dtype=np.int32) - 1  # token id of each sorted posting
        del new
        m = len(order)
        sorted_docs = docs[order]
        sorted_tfs = tfs[order]
        del order, docs, tfs
        len_plain[fi] = np.bincount(sorted_docs, weights=sorted_tfs, minlength=n_groups)
        len_idf[fi] = np.bincount(sorted_docs, weights=sorted_tfs * idf[tok], minlength=n_groups)
        del tok
        post_doc[offset : offset + m] = sorted_docs
        post_tf[offset : offset + m] = sorted_tfs
        del sorted_docs, sorted_tfs
        vocab.append(uniq)
        idfs.append(idf)
        starts.append(first.astype(np.int64) + offset)
        ends.append(first.astype(np.int64) + df + offset)
        offset += m
    post_doc.flush()
    post_tf.flush()
    del post_doc, post_tf
    # One vocabulary sorted by hash for the query's binary search; posting blocks stay where they are.
    tok_hash = np.concatenate(vocab) if vocab else np.zeros(0, np.uint64)
    perm = np.argsort(tok_hash, kind="stable")
    return {
        "tok_hash": tok_hash[perm], "tok_idf": np.concatenate(idfs)[perm],
        "post_start": np.concatenate(starts)[perm], "post_end": np.concatenate(ends)[perm],
        "len_plain": len_plain, "len_idf": len_idf,
    }


def _instance_arrays(store: Store, inst: _Instances, n_groups: int) -> dict[str, np.ndarray]:
    """Instances in CSR order over visual formulae, and what Task 1 and Task 2 need of them."""
    group = np.frombuffer(inst.group, dtype=np.int64)
    inst_order = np.argsort(group, kind="stable")
    inst_ptr = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=n_groups), out=inst_ptr[1:])
    inst_kind = np.frombuffer(inst.kind, dtype=np.int8)[inst_order]
    inst_post = np.frombuffer(inst.post, dtype=np.int64)[inst_order]
    answers = np.fromiter((r[0] for r in store.db.execute("SELECT post_id FROM posts WHERE post_type=2")), dtype=np.int64)
    arrays = {
        "inst_ptr": inst_ptr,
        "inst_formula": np.frombuffer(inst.formula, dtype=np.int64)[inst_order],
        "inst_post": inst_post,
        "inst_thread": np.frombuffer(inst.thread, dtype=np.int64)[inst_order],
        "inst_kind": inst_kind,
        "inst_answer": np.isin(inst_post, answers),
        "retrievable": np.zeros(n_groups, dtype=bool),
    }
    good = np.isin(inst_kind, RETRIEVABLE)
    owners = group[inst_order][good]
    arrays["retrievable"][owners] = True
    # The first question/answer instance of each visual formula: its Task 2 hit without text boost.
    first_hit = np.full(n_groups, -1, dtype=np.int64)
    owner_ids, first_pos = np.unique(owners, return_index=True)
    first_hit[owner_ids] = arrays["inst_formula"][np.flatnonzero(good)[first_pos]]
    arrays["first_hit"] = first_hit
    return arrays


def build_formula_index(store: Store, index_dir: str | Path, progress: Progress | None = None,
                        workers: int | None = None) -> dict:
    """Write ``index_dir/formula`` from the store (into a sibling folder swapped in only when
    complete: a failed build leaves the old index alone); return the counts for
    ``mathsearch index --json``."""
    root = Path(index_dir) / FORMULA_DIR
    workers = workers or min(2, os.cpu_count() or 1)
    with atomic_directory(root) as out:
        latex_of, inst, keyed_here = _collect(store, progress)
        n_groups = len(latex_of)
        spill = _Spill(out / "scratch")
        n_nodes, vkey = _analyze_all(latex_of, workers, progress, spill)
        del latex_of
        arrays = _write_postings(out, spill, n_groups, progress)
        shutil.rmtree(spill.folder)
        n_postings = sum(spill.postings.values())
        arrays.update(n_nodes=n_nodes, vkey=vkey)
        arrays.update(_instance_arrays(store, inst, n_groups))
        counts = {
            "formula_instances": int(len(inst.group)),
            "formula_visual": int(n_groups),
            "formula_visual_retrievable": int(arrays["retrievable"].sum()),
            "formula_keyed_by_us": int(keyed_here),
            "formula_tokens": int(len(arrays["tok_hash"])),
            "formula_postings": int(n_postings),
        }
        del inst
        for name, arr in arrays.items():
            np.save(out / f"{name}.npy", arr)
        del arrays
        meta = {"version": VERSION, "families": FAMILIES, "kinds": KINDS, "slt_window": SLT_WINDOW,
                "opt_window": OPT_WINDOW, **counts}
        (out / MANIFEST).write_text(json.dumps(meta, indent=1))
    counts["formula_bytes"] = sum(p.stat().st_size for p in root.iterdir())
    if progress:
        progress("formula postings", 1, 1)
    return counts


# -- search -------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Scoring:
    """How visual formulae are scored against a query formula (every weight of a config file).

    The score is ``sum_f w_f * Dice_f``, with Dice over symbol-pair tuples of family ``f`` (idf-
    weighted when ``idf``), plus ``exact`` for a formula with the query's visual key, times a
    size factor ``(min(n, m) / max(n, m)) ** size_power`` of SLT node counts.

    ``postings_budget`` bounds the work of a query: its tuples are read rarest first until that
    many postings are read, and the formulae met there are the candidates; the more frequent tuples
    (a variable next to ``=`` is in millions of formulae) only complete the candidates' scores, so
    a candidate's score is exact but a formula sharing none of the rarer tuples is not found.
    """

    slt: float = 0.5
    opt: float = 0.5
    unified: float = 0.0
    paths: float = 0.0
    idf: bool = False
    exact: float = 0.0
    size_power: float = 0.0
    postings_budget: int = 1_000_000

    @property
    def weights(self) -> tuple[float, float, float, float]:
        return (self.slt, self.opt, self.unified, self.paths)


@dataclass(slots=True)
class _Tuples:
    """The query's tuples found in the index, over the families that score: one row per tuple."""

    fam: np.ndarray  # family index
    lo: np.ndarray  # posting block
    hi: np.ndarray
    qtf: np.ndarray  # query frequency (float64)
    idf: np.ndarray  # weight per matched occurrence (float64: idf, or 1)
    q_len: dict[int, float]  # per scoring family (with a tuple found): the query's Dice length

    @property
    def df(self) -> np.ndarray:
        return self.hi - self.lo


class FormulaIndex:
    """Search side of the formula index (arrays memory-mapped; safe to share across queries)."""

    def __init__(self, root: Path):
        manifest = root / MANIFEST
        if not manifest.is_file():
            raise InputError(f"{root.parent} has no formula index ({FORMULA_DIR}/{MANIFEST}): rebuild it with "
                             "`mathsearch index`.")
        meta = json.loads(manifest.read_text())
        if meta.get("version") != VERSION:
            raise InputError(f"the formula index in {root.parent} is out of date: rebuild it with `mathsearch index`.")
        self.meta = meta
        self.root = root

        def load(name: str) -> np.ndarray:
            return np.load(root / f"{name}.npy", mmap_mode="r")

        self.tok_hash = np.asarray(load("tok_hash"))  # small enough to hold; searched per query
        self.tok_idf = np.asarray(load("tok_idf"))
        self.post_start = np.asarray(load("post_start"))
        self.post_end = np.asarray(load("post_end"))
        self.post_doc = load("post_doc")
        self.post_tf = load("post_tf")
        self.len_plain = np.asarray(load("len_plain"))
        self.len_idf = np.asarray(load("len_idf"))
        self.n_nodes = np.asarray(load("n_nodes"))
        self.vkey = np.asarray(load("vkey"))
        self.inst_ptr = np.asarray(load("inst_ptr"))
        self.first_hit = np.asarray(load("first_hit"))
        self.inst_formula = load("inst_formula")
        self.inst_post = load("inst_post")
        self.inst_thread = load("inst_thread")
        self.inst_kind = load("inst_kind")
        self.inst_answer = load("inst_answer")
        self.retrievable = np.asarray(load("retrievable"))
        self.n = len(self.n_nodes)
        self.analyzer = FormulaAnalyzer(slt_window=meta["slt_window"], opt_window=meta["opt_window"], cache_size=4096,
                                       keep_trees=True)
        self.hasher = TokenHasher()

    @classmethod
    def open(cls, index_dir: str | Path) -> FormulaIndex:
        return cls(Path(index_dir) / FORMULA_DIR)

    def query(self, latex: str) -> QueryTokens:
        return query_tokens(self.analyzer, latex, self.hasher)

    def score(self, q: QueryTokens, scoring: Scoring) -> tuple[np.ndarray, np.ndarray]:
        """``(visual formulae ascending, scores)`` of every visual formula sharing a tuple with the
        query (within ``scoring.postings_budget``: see :class:`Scoring`)."""
        return self._search(q, scoring, None, None)

    def top(self, q: QueryTokens, scoring: Scoring, k: int, retrievable_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` visual formulae, score descending."""
        docs, scores = self._search(q, scoring, k, self.retrievable if retrievable_only else None)
        if len(docs) > k:
            part = np.argpartition(-scores, k - 1)[:k]
            docs, scores = docs[part], scores[part]
        order = np.lexsort((docs, -scores))
        return docs[order], scores[order]

    def instances(self, doc: int) -> slice:
        return slice(int(self.inst_ptr[doc]), int(self.inst_ptr[doc + 1]))

    # A query's work is bounded by the budget, not by its tuples' postings: candidates and their
    # overlaps from the rarer tuples (by sorting their postings, or per-family bincounts over all N
    # formulae when that is cheaper), then each frequent tuple looked up for the candidates only,
    # dropping those that can no longer reach the best k.  Within the budget this is exactly the
    # sum of per-family bincounts, in the same order (the sample's runs are byte-identical).
    def _search(self, q: QueryTokens, scoring: Scoring, k: int | None,
                keep: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        tuples = self._tuples(q, scoring)
        df = tuples.df
        by_df = np.argsort(df, kind="stable")
        within = np.cumsum(df[by_df]) <= scoring.postings_budget
        within[:1] = True  # the rarest tuple at least
        rare = np.zeros(len(df), dtype=bool)
        rare[by_df[within]] = True
        docs, ov = self._accumulate(tuples, rare)
        if scoring.exact > 0:
            docs, ov = self._with_exact(docs, ov, q)
        if keep is not None:
            kept = keep[docs]
            docs, ov = docs[kept], ov[:, kept]
        frequent = by_df[~within]
        if len(frequent):
            rest = np.zeros(len(FAMILIES))  # what the tuples not read yet may still add, per family
            np.add.at(rest, tuples.fam[frequent], tuples.qtf[frequent] * tuples.idf[frequent])
            bounds = _Bounds(self, docs, tuples, scoring, q) if k is not None else None
            members = _Members(self.n, docs)
            slack = np.inf  # what the unread tuples could add at the last pruning
            for j in frequent.tolist():
                # Prune again once the unread tuples' weight has dropped by a third: a bound over
                # all candidates per tuple would cost more than the lookups it saves.
                if bounds is not None and len(docs) > k and rest.sum() <= slack * (2 / 3):
                    slack = rest.sum()
                    alive = bounds.alive(ov, rest, k)
                    members.drop(docs[~alive])
                    docs, ov = docs[alive], ov[:, alive]
                    members.number(docs)
                    bounds.keep(alive)
                rows, tf = self._lookup(docs, members, int(tuples.lo[j]), int(tuples.hi[j]))
                fi = int(tuples.fam[j])
                ov[fi, rows] += np.minimum(tf.astype(np.float64), tuples.qtf[j]) * tuples.idf[j]
                rest[fi] -= tuples.qtf[j] * tuples.idf[j]
        return docs.astype(np.int64), self._combine(docs, ov, tuples, scoring, q)

    def _tuples(self, q: QueryTokens, scoring: Scoring) -> _Tuples:
        fams, pos, qtfs, idfs, q_len = [], [], [], [], {}
        for fi, fam in enumerate(FAMILIES):
            hashes, qtf = q.hashes[fam], q.tfs[fam]
            if scoring.weights[fi] <= 0 or not len(hashes) or not len(self.tok_hash):
                continue
            p = np.minimum(np.searchsorted(self.tok_hash, hashes), len(self.tok_hash) - 1)
            found = self.tok_hash[p] == hashes
            idf = self.tok_idf[p].astype(np.float64) if scoring.idf else np.ones(len(p))
            if not found.any():
                continue
            q_len[fi] = float((qtf * idf).sum())  # every query tuple counts, found in the index or not
            fams.append(np.full(int(found.sum()), fi, dtype=np.int64))
            pos.append(p[found])
            qtfs.append(qtf[found])
            idfs.append(idf[found])
        if not fams:
            empty = np.zeros(0, dtype=np.int64)
            return _Tuples(empty, empty, empty, np.zeros(0), np.zeros(0), {})
        p = np.concatenate(pos)
        return _Tuples(np.concatenate(fams), self.post_start[p], self.post_end[p], np.concatenate(qtfs),
                       np.concatenate(idfs), q_len)

    def _accumulate(self, tuples: _Tuples, rare: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The formulae in the postings of the ``rare`` tuples (ascending) and their overlap per
        family (families x formulae), summed in query tuple order as a per-family bincount would."""
        docs, weights = [], []
        for j in np.flatnonzero(rare).tolist():
            lo, hi = int(tuples.lo[j]), int(tuples.hi[j])
            docs.append(np.asarray(self.post_doc[lo:hi]))
            weights.append(np.minimum(np.asarray(self.post_tf[lo:hi], dtype=np.float64), tuples.qtf[j]) * tuples.idf[j])
        n_fam = len(FAMILIES)
        if not docs:
            return np.zeros(0, dtype=np.int32), np.zeros((n_fam, 0))
        if sum(len(d) for d in docs) * 4 >= self.n:  # many postings for few formulae: dense arrays are cheaper
            return self._accumulate_dense(tuples, rare, docs, weights)
        all_docs = np.concatenate(docs)
        fam = np.repeat(tuples.fam[rare], [len(d) for d in docs])
        order = np.argsort(all_docs, kind="stable")  # merges the sorted blocks
        ordered = all_docs[order]
        first = np.empty(len(ordered), dtype=bool)
        first[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        slot = np.empty(len(ordered), dtype=np.int64)
        slot[order] = np.cumsum(first) - 1
        uniq = ordered[first]  # int32 like the postings: searchsorted in a block must not convert it
        m = len(uniq)
        ov = np.bincount(fam * m + slot, weights=np.concatenate(weights), minlength=n_fam * m)
        return uniq, ov.reshape(n_fam, m)

    def _accumulate_dense(self, tuples: _Tuples, rare: np.ndarray, docs: list[np.ndarray],
                          weights: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_accumulate` with one bincount over all N formulae per family."""
        fam = tuples.fam[rare]
        per_fam = {fi: np.bincount(np.concatenate([d for d, f in zip(docs, fam, strict=True) if f == fi]),
                                   weights=np.concatenate([w for w, f in zip(weights, fam, strict=True) if f == fi]),
                                   minlength=self.n)
                   for fi in np.unique(fam).tolist()}
        touched = np.zeros(self.n, dtype=bool)
        for ov in per_fam.values():
            touched |= ov > 0
        uniq = np.flatnonzero(touched).astype(np.int32)
        out = np.zeros((len(FAMILIES), len(uniq)))
        for fi, ov in per_fam.items():
            out[fi] = ov[uniq]
        return uniq, out

    def _with_exact(self, docs: np.ndarray, ov: np.ndarray, q: QueryTokens) -> tuple[np.ndarray, np.ndarray]:
        """Add the formulae with the query's visual key (they may share no tuple with it)."""
        same = np.flatnonzero(self.vkey == np.uint64(q.vkey)).astype(np.int32)
        at = np.minimum(np.searchsorted(docs, same), max(len(docs) - 1, 0))
        new = same[docs[at] != same] if len(docs) else same
        if not len(new):
            return docs, ov
        merged = np.sort(np.concatenate([docs, new]))
        out = np.zeros((ov.shape[0], len(merged)))
        out[:, np.searchsorted(merged, docs)] = ov
        return merged, out

    def _lookup(self, docs: np.ndarray, members: _Members, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows of ``docs`` (ascending) found in the posting block ``lo:hi``, and their tf there."""
        if not len(docs):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint16)
        block = self.post_doc[lo:hi]
        if len(docs) * 32 < hi - lo:  # few candidates, long block: binary-search each candidate
            at = np.minimum(np.searchsorted(block, docs), hi - lo - 1)
            hit = np.asarray(block[at]) == docs
            return np.flatnonzero(hit), np.asarray(self.post_tf[lo + at[hit]])
        block = np.asarray(block)  # else one pass over the block against the candidates' marks
        hit = members.mark[block]
        return members.row[block[hit]], np.asarray(self.post_tf[lo:hi])[hit]

    def _combine(self, docs: np.ndarray, ov: np.ndarray, tuples: _Tuples, scoring: Scoring,
                 q: QueryTokens) -> np.ndarray:
        """Scores from per-family overlaps: weighted Dice, size factor, exact-match bonus."""
        scores = np.zeros(len(docs), dtype=np.float64)
        lens = self.len_idf if scoring.idf else self.len_plain
        for fi, q_len in tuples.q_len.items():
            scores += scoring.weights[fi] * 2.0 * ov[fi] / np.maximum(q_len + lens[fi][docs], 1e-9)
        if scoring.size_power > 0 and len(docs):
            m = self.n_nodes[docs].astype(np.float64)
            ratio = np.minimum(m, q.n_nodes) / np.maximum(np.maximum(m, q.n_nodes), 1)
            scores *= ratio ** scoring.size_power
        if scoring.exact > 0 and len(docs):
            scores += scoring.exact * (self.vkey[docs] == np.uint64(q.vkey))
        return scores


class _Bounds:
    """Bounds on the final scores of candidates while frequent tuples are still unread: the
    score so far (a lower bound) and the score if every unread tuple matched in full, each
    overlap capped by both lengths (an upper bound).  A candidate whose upper bound is below the
    k-th best lower bound cannot reach the best k."""

    def __init__(self, ix: FormulaIndex, docs: np.ndarray, tuples: _Tuples, scoring: Scoring, q: QueryTokens):
        lens = ix.len_idf if scoring.idf else ix.len_plain
        self.fams = list(tuples.q_len)
        q_len = np.array([tuples.q_len[fi] for fi in self.fams])
        length = np.stack([lens[fi][docs] for fi in self.fams]).astype(np.float64)  # families x candidates
        weight = np.array([scoring.weights[fi] for fi in self.fams])[:, None]
        self.ratio = 2.0 * weight / np.maximum(q_len[:, None] + length, 1e-9)
        self.cap = np.minimum(length, q_len[:, None]) * (1 + 1e-6) + 1e-9  # an overlap is at most either length
        self.factor = np.ones(len(docs))
        if scoring.size_power > 0:
            m = ix.n_nodes[docs].astype(np.float64)
            self.factor = (np.minimum(m, q.n_nodes) / np.maximum(np.maximum(m, q.n_nodes), 1)) ** scoring.size_power
        self.bonus = scoring.exact * (ix.vkey[docs] == np.uint64(q.vkey)) if scoring.exact > 0 else np.zeros(len(docs))

    def alive(self, ov: np.ndarray, rest: np.ndarray, k: int) -> np.ndarray:
        seen = ov[self.fams]
        low = (seen * self.ratio).sum(axis=0) * self.factor + self.bonus
        floor = np.partition(low, len(low) - k)[len(low) - k]
        high_ov = np.minimum(seen + rest[self.fams][:, None] * (1 + 1e-9) + 1e-12, self.cap)  # slack: rounding
        high = (high_ov * self.ratio).sum(axis=0) * self.factor * (1 + 1e-9) + self.bonus
        return high >= floor

    def keep(self, alive: np.ndarray) -> None:
        self.ratio, self.cap = self.ratio[:, alive], self.cap[:, alive]
        self.factor, self.bonus = self.factor[alive], self.bonus[alive]


class _Members:
    """The candidates as dense per-formula arrays: marked, and their row; one pass over a posting
    block then finds them (the arrays are allocated per query, so queries may run in threads)."""

    def __init__(self, n: int, docs: np.ndarray):
        self.mark = np.zeros(n, dtype=bool)
        self.mark[docs] = True
        self.row = np.empty(n, dtype=np.int64)  # only the candidates' entries are ever read
        self.number(docs)

    def drop(self, docs: np.ndarray) -> None:
        self.mark[docs] = False

    def number(self, docs: np.ndarray) -> None:
        self.row[docs] = np.arange(len(docs))
