"""Building the formula index from the store: group instances by visual formula, analyse each
visual formula once (in worker processes), write postings family by family."""

from __future__ import annotations

import json
import os
import shutil
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..._compiled import load_kernel
from ...formula import FormulaAnalyzer, build_opt, visual_key
from ...formula.analysis import needs_latex_only
from ...formula.parser import parse_slt
from ...parallel import cyclic_gc_paused, ordered_map
from ...store import Store, atomic_directory
from .layout import (
    COMMENT,
    FAMILIES,
    FORMULA_DIR,
    KINDS,
    MANIFEST,
    OPT_WINDOW,
    RETRIEVABLE,
    SLT_WINDOW,
    VERSION,
)
from .tokens import TokenHasher, family_tokens, vkey_int

CHUNK = 2000  # distinct formulae per worker task
PART_POSTINGS = 1 << 25  # a family's postings are sorted in parts of about this many (_order_parts)
Progress = Callable[[str, int, int], None]

# Worker state (one analyzer and hasher, or one compiled token counter, per process).
_W: dict[str, object] = {}
# The token bags compiled (_tokens.pyx), or None: the analyzer's strings below, its reference.
_tokens = load_kernel("mathsearch.indexes.formula._tokens")
# A family's postings and formula lengths in one loop (_postings.pyx), or None: the numpy code of
# _write_postings, its reference.
_postings = load_kernel("mathsearch.indexes.formula._postings")


def _analyze_chunk(latexes: list[str]) -> tuple:
    """Per formula: SLT size, visual key, and per family (lengths, token hashes, tfs) arrays."""
    # The collector held a fifth of the chunk's time on both paths.
    with cyclic_gc_paused():
        return _analyze(latexes)


def _analyze(latexes: list[str]) -> tuple:
    if _tokens is not None and SLT_WINDOW == OPT_WINDOW == 2 and _trees_compiled():
        return _analyze_compiled(latexes)
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
    toks: dict[str, list[str]] = {f: [] for f in FAMILIES}
    tf: dict[str, list[int]] = {f: [] for f in FAMILIES}
    for i, latex in enumerate(latexes):
        a = analyzer.analyze(latex)  # type: ignore[attr-defined]
        n_nodes[i] = a.n_nodes
        vkeys[i] = vkey_int(a.visual_key)
        for fam, bag in family_tokens(a).items():
            lens[fam][i] = len(bag)
            toks[fam].extend(bag)  # whole lists, hashed once per chunk: a call per token cost ~9% of the step
            tf[fam].extend(bag.values())
    fams = [(lens[f], hasher.many(f, toks[f]), np.minimum(np.array(tf[f], dtype=np.int64), 65535).astype(np.uint16))
            for f in FAMILIES]
    return n_nodes, vkeys, fams


def _analyze_compiled(latexes: list[str]) -> tuple:
    """:func:`_analyze` with the token bags counted and hashed by the compiled ``_tokens``: the same
    arrays (its tokens as keys of interned ids, a string made and hashed once per distinct token)."""
    bags = _W.get("bags")
    if bags is None:
        bags = _W["bags"] = _tokens.Bags()  # type: ignore[union-attr]
    n = len(latexes)
    n_nodes = np.zeros(n, dtype=np.int32)
    vkeys = np.zeros(n, dtype=np.uint64)
    for i, latex in enumerate(latexes):
        latex = latex if isinstance(latex, str) else str(latex)  # as parse_latex takes it
        slt = parse_slt(latex)[0]  # parse_latex's trees, without its record
        n_nodes[i] = bags.add(slt, build_opt(slt))  # type: ignore[attr-defined]
        # (the lab's keys of \lt and \gt need a parse of their own: visual_key does it)
        vkeys[i] = vkey_int(visual_key(latex)) if needs_latex_only(latex) else _tokens.visual_key_int(slt, latex)  # type: ignore[union-attr]
    return n_nodes, vkeys, bags.take()  # type: ignore[attr-defined]


def _trees_compiled() -> bool:
    """Whether the trees are the compiled extension types the kernel reads (not so where the
    formula modules run from source: a stale build, or the pure path asked for)."""
    from ...formula import opt, slt

    return not (slt.__file__ or "").endswith(".py") and not (opt.__file__ or "").endswith(".py")


@dataclass(slots=True)
class _Instances:
    """Columns of every instance (typed arrays: 28M Python ints in lists would take gigabytes)."""

    group: array = field(default_factory=lambda: array("q"))
    formula: array = field(default_factory=lambda: array("q"))
    post: array = field(default_factory=lambda: array("q"))
    thread: array = field(default_factory=lambda: array("q"))
    kind: array = field(default_factory=lambda: array("b"))

    def to_files(self, folder: Path) -> dict[str, np.ndarray]:
        """Each column written to ``folder`` and let go here; returned as arrays over the files'
        pages (at full size 28M instances are ~0.9 GiB, held through the postings otherwise)."""
        columns = {}
        for name, dtype in (("group", np.int64), ("formula", np.int64), ("post", np.int64), ("thread", np.int64),
                            ("kind", np.int8)):
            path = folder / f"inst_{name}"
            with open(path, "wb") as fh:
                getattr(self, name).tofile(fh)
            setattr(self, name, array(getattr(self, name).typecode))
            size = path.stat().st_size
            columns[name] = np.asarray(np.memmap(path, dtype=dtype, mode="r")) if size else np.zeros(0, dtype)
        return columns


class _Grouping:
    """Every formula instance grouped by visual formula, as the store is read; :meth:`chunks` hands
    out the LaTeX of each new visual formula (its first instance's) a chunk at a time, so that the
    analysis workers start on the first chunk while this process still reads the rest of the store
    (at 100k answers the read and the grouping were a sixth of the compiled step's wall time, with
    both cores but one idle)."""

    def __init__(self, store: Store, progress: Progress | None):
        self.store, self.progress = store, progress
        self.inst = _Instances()
        self.n_groups = 0
        self.keyed_here = 0
        self.total = int(store.counts().get("formulas", 0) or 0)

    def chunks(self, size: int) -> Iterator[list[str]]:
        """The new visual formulae's LaTeX, ``size`` at a time in first-seen order (the last chunk
        may be shorter): the chunks that cutting the whole list would give.

        Plain rows a batch at a time, each column appended whole: at full size this loop runs 28M
        times, and a record object and five appends per instance took two thirds of its time
        (docs/log/compiled.md)."""
        groups: dict[str, int] = {}
        new: list[str] = []
        inst, store, progress = self.inst, self.store, self.progress
        kind_code = {k: i for i, k in enumerate(KINDS)}
        analyzer = FormulaAnalyzer(cache_size=10_000)
        n = 0
        get, add_group = groups.get, inst.group.append
        with cyclic_gc_paused():  # a quarter of the loop at 1.4M answers went to the collector's passes over the groups
            for rows in store.formula_rows():
                formula_ids, posts, threads, kinds, _comments, visual_ids, latexes = zip(*rows, strict=True)
                inst.formula.extend(formula_ids)
                inst.post.extend(posts)
                inst.thread.extend(threads)
                inst.kind.extend([kind_code.get(k, COMMENT) for k in kinds])
                for key, latex in zip(visual_ids, latexes, strict=True):
                    if key is None:  # no visual id in the collection: our visual key groups visually equal formulae
                        key = "k:" + analyzer.analyze(latex).visual_key
                        self.keyed_here += 1
                    g = get(key)
                    if g is None:
                        g = groups[key] = len(groups)
                        new.append(latex)
                    add_group(g)
                self.n_groups = len(groups)
                if progress and (n + len(rows)) // 50_000 > n // 50_000:
                    progress("formula instances", n + len(rows), max(self.total, n + len(rows)))
                n += len(rows)
                while len(new) >= size:
                    yield new[:size]
                    del new[:size]
        if new:
            yield new


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
        """The part as an array over the file's pages (clean pages of the page cache the kernel
        may drop and read again, not a copy held in this process: at full size a family's hashes
        and tfs are ~10 bytes a posting)."""
        path, dtype = self.path(family, part), dict(self.PARTS)[part]
        if path.stat().st_size == 0:
            return np.zeros(0, dtype)  # (an empty file cannot be mapped)
        return np.asarray(np.memmap(path, dtype=dtype, mode="r"))


def _analyze_all(chunks: Iterable[list[str]], workers: int, progress: Progress | None, spill: _Spill,
                 known: Callable[[], int] = lambda: 0) -> tuple[np.ndarray, np.ndarray]:
    """Analyse every chunk of visual formulae (in ``workers`` processes); tuples go to ``spill``, in
    order.  Returns the SLT sizes and visual keys.  ``known()``: the visual formulae found so far
    (the chunks may still be coming), for the progress line."""
    n_nodes, vkeys = [], []
    done = 0
    for res in ordered_map(_analyze_chunk, chunks, workers):
        n_nodes.append(res[0])
        vkeys.append(res[1])
        spill.add(res[2])
        done += len(res[0])
        if progress:
            progress("formula analysis", done, max(done, known()))
    spill.close()
    if not n_nodes:
        return np.zeros(0, np.int32), np.zeros(0, np.uint64)
    return np.concatenate(n_nodes), np.concatenate(vkeys)


def group_by_hash(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, hashes[order])`` with ``order = np.argsort(hashes, kind="stable")``, in a fifth of
    its time: numpy's stable argsort of 64-bit keys is a merge sort, its plain ``sort`` a vectorised
    one.  So each position is packed under its hash's top 32 bits and the packed keys sorted; the
    few runs where two hashes share those bits (and their positions interleave) are then put in
    order by a stable argsort of their own."""
    n = len(hashes)
    if n >= 1 << 32:  # positions must fit in the low 32 bits
        order = np.argsort(hashes, kind="stable")
        return order, hashes[order]
    key = (hashes >> np.uint64(32)) << np.uint64(32)
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    key &= np.uint64(0xFFFFFFFF)
    order = key.view(np.int64)  # the positions, by (top bits, position)
    ordered = hashes[order]
    descents = np.flatnonzero(ordered[1:] < ordered[:-1])
    if len(descents):
        # Out of order only inside such runs, whose values stay within their top bits' range: a
        # binary search for a run's bounds still holds, and no array of top bits is needed.
        low = np.unique(ordered[descents] >> np.uint64(32)) << np.uint64(32)
        starts = np.searchsorted(ordered, low, side="left").tolist()
        ends = np.searchsorted(ordered, low | np.uint64(0xFFFFFFFF), side="right").tolist()
        for lo, hi in zip(starts, ends, strict=True):
            run = order[lo:hi]
            run[:] = run[np.argsort(hashes[run], kind="stable")]
            ordered[lo:hi] = hashes[run]
    return order, ordered


def _write_postings(out: Path, spill: _Spill, n_groups: int, progress: Progress | None) -> dict[str, np.ndarray]:
    """Postings family by family (token hashes never collide across families), written straight into
    ``post_doc.npy``/``post_tf.npy``: the peak memory is that of the largest family's formulae and
    of one part's sort (:func:`_order_parts`).  Returns the small arrays (vocabulary, idf, posting
    bounds, formula lengths)."""
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
        hashes, tfs = spill.read(fam, "hash"), spill.read(fam, "tf")
        # The kernel takes the family in parts; numpy, the reference, at once (its bincounts would
        # add a formula's weights in another order across parts).
        parts = _order_parts(hashes) if _postings is not None else iter([group_by_hash(hashes)])
        plain, wsum = np.zeros(n_groups, np.float64), np.zeros(n_groups, np.float64)
        for order, ordered in parts:  # grouped by hash, each token's postings in doc order
            m = len(order)
            first, uniq, df, idf = _token_runs(ordered, n_groups)
            del ordered
            part_doc, part_tf = post_doc[offset : offset + m], post_tf[offset : offset + m]
            if _postings is not None:
                _postings.fill_family(order, docs, tfs, first, idf, part_doc, part_tf, plain, wsum)
            else:
                part_doc[:], part_tf[:] = docs[order], tfs[order]
                tok = np.repeat(np.arange(len(first), dtype=np.int32), df)  # token id of each sorted posting
                plain += np.bincount(part_doc, weights=part_tf, minlength=n_groups)
                wsum += np.bincount(part_doc, weights=part_tf * idf[tok], minlength=n_groups)
                del tok
            del order
            vocab.append(uniq)
            idfs.append(idf)
            starts.append(first + offset)
            ends.append(first + df + offset)
            offset += m
        len_plain[fi], len_idf[fi] = plain, wsum  # rounded to float32 as numpy's assignment rounds
        del docs, hashes, tfs, parts
    # No flush: a shared mapping's pages are the file's, in the page cache, as np.save's writes are
    # (msync made the build wait for the disk, ~10% of this step).
    del post_doc, post_tf
    # One vocabulary sorted by hash for the query's binary search; posting blocks stay where they are.
    tok_hash = np.concatenate(vocab) if vocab else np.zeros(0, np.uint64)
    perm = group_by_hash(tok_hash)[0]
    return {
        "tok_hash": tok_hash[perm], "tok_idf": np.concatenate(idfs)[perm],
        "post_start": np.concatenate(starts)[perm], "post_end": np.concatenate(ends)[perm],
        "len_plain": len_plain, "len_idf": len_idf,
    }


def _token_runs(ordered: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For hashes in order: where each token's run starts (int64), the token, its df, its idf."""
    new = np.empty(len(ordered), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    first = np.flatnonzero(new).astype(np.int64, copy=False)
    del new
    df = np.diff(np.append(first, len(ordered)))
    idf = np.log1p(max(n_groups, 1) / np.maximum(df, 1)).astype(np.float32)
    return first, ordered[first], df, idf


def _order_parts(hashes: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``group_by_hash(hashes)`` a part at a time: ``(order, hashes[order])`` of the postings whose
    hashes share their top bits, part by part in ascending order of those bits, so the parts put
    together are the whole order (each part's positions ascend, as the stable sort keeps them).

    A part holds at most ~``PART_POSTINGS`` postings: at full size sorting the largest family at
    once held its hashes, the sort keys and their arange, and the ordered hashes together (~30
    bytes a posting with the formulae and tfs: ~4 GiB of the step's own peak at 1.4M answers)."""
    n = len(hashes)
    bits = min(8, (max(n - 1, 0) // PART_POSTINGS).bit_length())
    if bits == 0:
        yield group_by_hash(np.asarray(hashes))
        return
    top = hashes.view(np.uint8)[7 if sys.byteorder == "little" else 0 :: 8] >> np.uint8(8 - bits)
    for part in range(1 << bits):
        where = np.flatnonzero(top == part)
        order, ordered = group_by_hash(hashes[where])
        where = where[order]
        del order
        yield where, ordered
        del where, ordered


def _instance_arrays(store: Store, inst: dict[str, np.ndarray], n_groups: int) -> dict[str, np.ndarray]:
    """Instances in CSR order over visual formulae, and what Task 1 and Task 2 need of them."""
    group = inst["group"]
    inst_order = np.argsort(group, kind="stable")
    inst_ptr = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=n_groups), out=inst_ptr[1:])
    inst_kind = inst["kind"][inst_order]
    inst_post = inst["post"][inst_order]
    answers = np.fromiter((post for post, _ in store.iter_post_ids(2)), dtype=np.int64)
    arrays: dict[str, np.ndarray] = {
        "inst_ptr": inst_ptr,
        "inst_formula": inst["formula"][inst_order],
        "inst_post": inst_post,
        "inst_thread": inst["thread"][inst_order],
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
    arrays.update(zip(("answer_post", "answer_doc"), answer_pairs(inst_ptr, inst_post, arrays["inst_answer"]), strict=True))
    return arrays


def answer_pairs(inst_ptr: np.ndarray, inst_post: np.ndarray, inst_answer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(answer ids ascending, visual formula of each)``: every formula in an answer (its comments
    included), answer by answer, so that the formulae of given answers are one binary search away
    (Task 1's formula signal re-scores candidate answers with them)."""
    doc = np.repeat(np.arange(len(inst_ptr) - 1, dtype=np.int32), np.diff(inst_ptr))
    keep = np.flatnonzero(np.asarray(inst_answer))
    posts, docs = np.asarray(inst_post)[keep], doc[keep]
    order = np.lexsort((docs, posts))
    return posts[order], docs[order]


def build_formula_index(store: Store, index_dir: str | Path, progress: Progress | None = None,
                        workers: int | None = None) -> dict:
    """Write ``index_dir/formula`` from the store (into a sibling folder swapped in only when
    complete: a failed build leaves the old index alone); return the counts for
    ``mathsearch index --json``."""
    root = Path(index_dir) / FORMULA_DIR
    workers = workers or min(2, os.cpu_count() or 1)
    with atomic_directory(root) as out:
        spill = _Spill(out / "scratch")
        grouping = _Grouping(store, progress)
        # A pool is not worth starting for a few chunks (the instances bound the visual formulae).
        workers = workers if grouping.total > 2 * CHUNK else 1
        n_nodes, vkey = _analyze_all(grouping.chunks(CHUNK), workers, progress, spill, lambda: grouping.n_groups)
        inst = grouping.inst.to_files(spill.folder)
        n_groups, keyed_here = grouping.n_groups, grouping.keyed_here
        arrays = _write_postings(out, spill, n_groups, progress)
        n_postings = sum(spill.postings.values())
        arrays.update(n_nodes=n_nodes, vkey=vkey)
        arrays.update(_instance_arrays(store, inst, n_groups))
        counts = {
            "formula_instances": int(len(inst["group"])),
            "formula_visual": int(n_groups),
            "formula_visual_retrievable": int(arrays["retrievable"].sum()),
            "formula_keyed_by_us": int(keyed_here),
            "formula_tokens": int(len(arrays["tok_hash"])),
            "formula_postings": int(n_postings),
        }
        del inst
        shutil.rmtree(spill.folder)
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

