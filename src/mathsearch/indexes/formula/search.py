"""Searching the formula index: scoring visual formulae against a query formula, and the questions
systems ask of it (best instances for Task 2, answers by their best formula for Task 1)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..._compiled import load_kernel
from ...errors import InputError
from ...formula import FormulaAnalyzer
from ...ranking import Ranking, ranked
from .layout import COMMENT, FAMILIES, FORMULA_DIR, MANIFEST, VERSION
from .pruning import Bounds, Members
from .scoring import QueryTuples, Scoring
from .threads import halves, pool
from .tokens import QueryTokens, TokenHasher, query_tokens

ThreadBoosts = tuple[np.ndarray, np.ndarray]  # threads (ascending) and their boosts in [0, 1]
# The candidate loop compiled (_kernel.pyx), or None: the numpy code below, its reference.
_kernel = load_kernel("mathsearch.indexes.formula._kernel")


class FormulaIndex:
    """Search side of the formula index (arrays memory-mapped; safe to share across queries)."""

    SLOTS_UP_TO = 2_000_000  # formulae: the kernel's per-formula scratch (4 bytes each) up to 8 MB
    # Formulae past which a top-k search runs as two halves on two threads: 1.4-1.7x faster at 0.8M
    # and 6.4M formulae, 0.5-0.8 ms slower at the sample's 77k (docs/log/compiled.md).
    SPLIT_FROM = 250_000
    PRUNE_AFTER = 2 / 3  # see _prune_now

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
        self._answer_pairs: tuple[np.ndarray, np.ndarray] | None = None
        if (root / "answer_post.npy").is_file():
            self._answer_pairs = (load("answer_post"), load("answer_doc"))
        self.analyzer = FormulaAnalyzer(slt_window=meta["slt_window"], opt_window=meta["opt_window"], cache_size=4096,
                                       keep_trees=True)
        self.hasher = TokenHasher()
        self.kernel = _kernel if _kernel_fits(self.post_doc, self.post_tf, self.len_plain, self.len_idf) else None
        self._slots: list[np.ndarray] = []  # the kernel's scratch (one per query running at once)
        self._slots_lock = threading.Lock()

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
        """The best ``k`` visual formulae, score descending, ties by visual formula number ascending
        (the index's own order of formulae, not an id order); of several formulae tied at the k-th
        score, the lowest numbers are kept (as a sharded index cuts)."""
        docs, scores = self._search(q, scoring, k, self.retrievable if retrievable_only else None)
        if len(docs) > k:
            keep = best_k(scores, k)
            docs, scores = docs[keep], scores[keep]
        # Not ranking's order: visual formula numbers (not ids) in numpy; shards merge on this order.
        order = np.lexsort((docs, -scores))
        return docs[order], scores[order]

    def instances(self, doc: int) -> slice:
        return slice(int(self.inst_ptr[doc]), int(self.inst_ptr[doc + 1]))

    # -- the questions systems ask ------------------------------------------------------------
    def best_instances(self, q: QueryTokens, scoring: Scoring, depth: int, limit: int,
                       thread_boosts: ThreadBoosts | Callable[[], ThreadBoosts] | None = None,
                       boost: float = 0.0) -> Ranking:
        """Task 2: at most ``limit`` formula instances with the post holding each, one (the best)
        per visual formula among the best ``depth``, question and answer posts only.

        The best instance of a visual formula is its first question/answer instance, or, with
        ``thread_boosts`` (threads ascending, their boosts in [0, 1]), its instance in the
        best-boosted thread, whose boost times ``boost`` is added to the formula's score.
        Further instances of the same formulae fill the free slots (they add nothing to Task 2
        scores, but let callers that map formulae to posts see every occurrence).
        ``thread_boosts`` may be a callable that gives them, called once the formulae are scored
        (the boosts' text search then runs on another thread meanwhile).
        """
        docs, scores = self.top(q, scoring, depth, retrievable_only=True)
        if callable(thread_boosts):
            thread_boosts = thread_boosts()
        fids, posts, final = self.best_instance_of(docs, scores, thread_boosts, boost)
        # The cut takes the run's order: scores rounded as the run shows them, ties by id compared
        # as text (as trec_eval and Ranking do, not as numbers), so the best k of a search are the
        # first k of a deeper one (a server's kept ranking pages as a new search would).
        score_of = {fid: round(s, 6) for fid, s in zip(fids.tolist(), final.tolist(), strict=True)}
        score_of.pop(-1, None)  # a formula without a question/answer instance (never retrievable)
        post_at = dict(zip(fids.tolist(), posts.tolist(), strict=True))
        best = [int(f) for f in ranked({str(fid): s for fid, s in score_of.items()})[:limit]]
        scored = {fid: score_of[fid] for fid in best}
        post_of = {fid: post_at[fid] for fid in best}
        if len(scored) < limit:
            for d, s in zip(docs.tolist(), scores.tolist(), strict=True):
                sl = self.instances(d)
                kinds = np.asarray(self.inst_kind[sl])
                keep = kinds != COMMENT
                for fid, post in zip(np.asarray(self.inst_formula[sl])[keep].tolist(),
                                     np.asarray(self.inst_post[sl])[keep].tolist(), strict=True):
                    if fid not in scored:
                        scored[fid] = round(s, 6)
                        post_of[fid] = post
                        if len(scored) >= limit:
                            return Ranking(scored, post_of)
        return Ranking(scored, post_of)

    def answers_by_best_formula(self, q: QueryTokens, scoring: Scoring, depth: int, limit: int,
                                max_instances: int = 500_000) -> dict[int, float]:
        """Task 1: ``{answer id: score}``, each answer scored by its best-matching formula among
        the best ``depth`` visual formulae (instances in the answer itself, its comments included),
        at most ``limit`` answers.  Very common formulae (``x``) have huge instance lists: the
        walk stops after about ``max_instances`` instances."""
        docs, scores = self.top(q, scoring, depth)
        uniq, best = self.best_of_answers(docs, scores, max_instances)
        # The cut keeps the lowest answer ids among ties at ``limit`` (answers come sorted by id):
        # ranking's order would keep the highest and change runs; the order of hits is ranking's later.
        order = np.argsort(-best, kind="stable")[:limit]
        return dict(zip(uniq[order].tolist(), best[order].tolist(), strict=True))

    def answers_best_formula_among(self, q: QueryTokens, scoring: Scoring, answers: np.ndarray) -> dict[int, float]:
        """Task 1 re-scoring: ``{answer id: score}`` of the given answers that hold a formula sharing
        a tuple with the query, each scored (exactly, no postings budget) by its best formula."""
        return self.answers_best_formula_among_all([q], scoring, answers)[0]

    def answers_best_formula_among_all(self, qs: Sequence[QueryTokens], scoring: Scoring,
                                       answers: np.ndarray) -> list[dict[int, float]]:
        """:meth:`answers_best_formula_among` for each query of ``qs``, the answers' formulae found
        once for all of them; each dict in ascending answer order (answers whose best score is 0 left out)."""
        owners, docs = self.answer_formulae(answers)
        if not len(docs):
            return [{} for _ in qs]
        uniq, inverse = np.unique(docs, return_inverse=True)
        out: list[dict[int, float]] = []
        for q in qs:
            scores = self.score_docs(q, scoring, uniq)[inverse]
            hit = scores > 0
            who, got = owners[hit], scores[hit]
            if not len(who):
                out.append({})
                continue
            # owners ascend, one run per answer: the best of each run (a max: any order gives its bits)
            starts = np.flatnonzero(np.r_[True, who[1:] != who[:-1]])
            out.append(dict(zip(who[starts].tolist(), np.maximum.reduceat(got, starts).tolist(), strict=True)))
        return out

    def answer_formulae(self, answers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(answer, visual formula)`` pairs of the formulae in ``answers`` (their comments included)."""
        post, doc = self._by_answer()
        answers = np.unique(np.asarray(answers, dtype=np.int64))
        lo = np.searchsorted(post, answers, side="left")
        lens = np.searchsorted(post, answers, side="right") - lo
        starts = np.cumsum(lens) - lens
        idx = np.repeat(lo, lens) + (np.arange(int(lens.sum())) - np.repeat(starts, lens))
        return np.repeat(answers, lens), np.asarray(doc[idx]).astype(np.int64)

    def _by_answer(self) -> tuple[np.ndarray, np.ndarray]:
        """``answer_post``/``answer_doc`` of the index, or (an index built before they were written)
        the same computed once from the instance arrays."""
        if self._answer_pairs is None:
            from .build import answer_pairs

            self._answer_pairs = answer_pairs(self.inst_ptr, self.inst_post, self.inst_answer)
        return self._answer_pairs

    def score_docs(self, q: QueryTokens, scoring: Scoring, docs: np.ndarray) -> np.ndarray:
        """Exact scores of the visual formulae ``docs`` (ascending, distinct) against the query: every
        query tuple looked up for them alone, so the cost follows ``len(docs)``, not the postings."""
        docs = np.asarray(docs, dtype=np.int64)
        tuples = self._tuples(q, scoring)
        ov = np.zeros((len(FAMILIES), len(docs)))
        if self.kernel is not None and len(docs):
            # The kernel's galloping merge, one pass a tuple, in place of a binary search per formula
            # from the block's start: the same sums, in the same order.
            # Every tuple in one call without the GIL (Task 1's re-scoring runs beside other signals).
            cands = self.kernel.Candidates(docs.astype(np.int32), ov)
            cands.read_frequent(self.post_doc, self.post_tf, tuples.lo, tuples.hi, tuples.fam, tuples.qtf,
                                tuples.idf, np.zeros(0, dtype=np.uint8), np.zeros((0, len(FAMILIES))), 0)
            return self._combine(docs, cands.result()[1], tuples, scoring, q)
        docs_as_block = docs.astype(self.post_doc.dtype)
        for j in range(len(tuples.fam)):
            lo, hi = int(tuples.lo[j]), int(tuples.hi[j])
            if hi - lo < len(docs):  # short block: find its postings among the docs
                block = np.asarray(self.post_doc[lo:hi])
                at = np.minimum(np.searchsorted(docs, block), len(docs) - 1)
                hit = docs[at] == block
                rows, tf = at[hit], np.asarray(self.post_tf[lo:hi])[hit]
            else:  # long block: binary-search each doc in it
                block = self.post_doc[lo:hi]
                # docs in the block's dtype: an int64 needle makes numpy copy the whole block to int64
                at = np.minimum(np.searchsorted(block, docs_as_block), hi - lo - 1)
                hit = np.asarray(block[at]) == docs
                rows, tf = np.flatnonzero(hit), np.asarray(self.post_tf[lo + at[hit]])
            ov[int(tuples.fam[j]), rows] += np.minimum(tf.astype(np.float64), tuples.qtf[j]) * tuples.idf[j]
        return self._combine(docs, ov, tuples, scoring, q)

    def best_of_answers(self, docs: np.ndarray, scores: np.ndarray,
                        max_instances: int) -> tuple[np.ndarray, np.ndarray]:
        """The answers holding visual formulae ``docs`` (best first, scored ``scores``), ascending,
        and each one's best formula score; the walk stops after about ``max_instances`` instances."""
        lo = self.inst_ptr[docs]
        lens = self.inst_ptr[docs + 1] - lo
        keep = int(np.searchsorted(np.cumsum(lens), max_instances, side="right")) + 1
        lo, lens, scores = lo[:keep], lens[:keep], scores[:keep]
        starts = np.cumsum(lens) - lens
        idx = np.repeat(lo, lens) + (np.arange(int(lens.sum())) - np.repeat(starts, lens))
        in_answer = np.asarray(self.inst_answer[idx])
        posts = np.asarray(self.inst_post[idx])[in_answer]
        post_scores = np.repeat(scores, lens)[in_answer]
        # docs come best first, so a post's first occurrence carries its best-matching formula
        uniq, first = np.unique(posts, return_index=True)
        return uniq, post_scores[first]

    def best_instance_of(self, docs: np.ndarray, scores: np.ndarray,
                         thread_boosts: tuple[np.ndarray, np.ndarray] | None = None,
                         boost: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per visual formula of ``docs`` (scored ``scores``): the formula id and post of its best
        question/answer instance (-1 where it has none) and its final score (see
        :meth:`best_instances`; a sharded index picks each shard's the same way)."""
        picks = self._first_hit_positions(docs)
        final = scores.copy()
        if thread_boosts is not None and boost > 0 and len(thread_boosts[0]):
            pick_b, bonus = self._boosted_positions(docs, *thread_boosts)
            picks = np.where(bonus > 0, pick_b, picks)
            final = final + boost * bonus
        fids = np.where(picks >= 0, self.inst_formula[np.maximum(picks, 0)], -1)
        posts = np.where(picks >= 0, self.inst_post[np.maximum(picks, 0)], -1)
        return fids, posts, final

    def _first_hit_positions(self, docs: np.ndarray) -> np.ndarray:
        """Per visual formula, the position of its first question/answer instance (-1 if none)."""
        fids = np.asarray(self.first_hit[docs])
        lo = np.asarray(self.inst_ptr[docs])
        has = fids >= 0
        out = np.full(len(docs), -1, dtype=np.int64)
        first = np.zeros(len(docs), dtype=bool)  # nearly always the first instance: one gather
        first[has] = np.asarray(self.inst_formula[lo[has]]) == fids[has]
        out[first] = lo[first]
        for i in np.flatnonzero(has & ~first).tolist():  # a comment came first: look in the slice
            d = int(docs[i])
            hit = np.flatnonzero(np.asarray(self.inst_formula[self.instances(d)]) == fids[i])
            out[i] = int(lo[i]) + int(hit[0]) if len(hit) else -1
        return out

    def _boosted_positions(self, docs: np.ndarray, threads: np.ndarray, boosts: np.ndarray,
                           cap: int = 256) -> tuple[np.ndarray, np.ndarray]:
        """Per visual formula, the position of its question/answer instance in the best-boosted
        thread (among its first ``cap`` instances) and that boost; boost 0 where none of them is in
        a boosted thread."""
        lo = self.inst_ptr[docs]
        lens = np.minimum(self.inst_ptr[docs + 1] - lo, cap)
        seg = np.repeat(np.arange(len(docs)), lens)
        starts = np.cumsum(lens) - lens
        idx = np.repeat(lo, lens) + (np.arange(int(lens.sum())) - np.repeat(starts, lens))
        th = np.asarray(self.inst_thread[idx])
        pos = np.minimum(np.searchsorted(threads, th), len(threads) - 1)
        val = np.where((threads[pos] == th) & (np.asarray(self.inst_kind[idx]) != COMMENT), boosts[pos], 0.0)
        order = np.lexsort((-val, seg))  # per visual formula, its most boosted instance first: not a ranking
        first = order[np.flatnonzero(np.r_[True, seg[order][1:] != seg[order][:-1]])] if len(order) else order
        pick = np.full(len(docs), -1, dtype=np.int64)
        bonus = np.zeros(len(docs))
        pick[seg[first]] = idx[first]
        bonus[seg[first]] = val[first]
        return pick, bonus

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
        if self.kernel is not None:
            dense = int(df[rare].sum()) * 4 >= self.n  # where _accumulate takes _accumulate_dense
            if k is not None and self.n > self.SPLIT_FROM and halves() > 1:
                return self._search_halves(q, scoring, k, keep, tuples, rare, by_df[~within], dense)
            return self._search_compiled(q, scoring, k, keep, tuples, rare, by_df[~within], dense)
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
            bounds = Bounds(self, docs, tuples, scoring, q) if k is not None else None
            members = Members(self.n, docs)
            slack = np.inf  # what the unread tuples could add at the last pruning
            for j in frequent.tolist():
                if bounds is not None and k is not None and self._prune_now(len(docs), k, rest.sum(), slack):
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

    def _search_halves(self, q: QueryTokens, scoring: Scoring, k: int, keep: np.ndarray | None, tuples: QueryTuples,
                       rare: np.ndarray, frequent: np.ndarray, dense: bool) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_search_compiled` over each half of the formulae, the second on a worker thread (the
        kernel lets go of the GIL in its loops), the candidates of both in formula order.

        Each tuple's postings (ascending) are cut where the second half starts; the tuples read
        whole and the pruning schedule are those of the whole search.  A half prunes against its own
        k-th best, which is never above the whole search's, so every formula of the best k survives
        in its half with the same sums: :meth:`top` gives the same formulae and score bytes."""
        cut = self._cut(tuples, rare)
        at = np.array([cut], dtype=self.post_doc.dtype)  # the block's dtype: another makes numpy copy the block
        mid = tuples.lo + np.array([np.searchsorted(self.post_doc[lo:hi], at)[0] for lo, hi
                                    in zip(tuples.lo.tolist(), tuples.hi.tolist(), strict=True)], dtype=np.int64)
        second = pool().submit(self._search_compiled, q, scoring, k, keep, replace(tuples, lo=mid), rare,
                                frequent, dense, (cut, self.n))
        docs, scores = self._search_compiled(q, scoring, k, keep, replace(tuples, hi=mid), rare, frequent, dense,
                                             (0, cut))
        docs_2, scores_2 = second.result()
        return np.concatenate([docs, docs_2]), np.concatenate([scores, scores_2])

    def _cut(self, tuples: QueryTuples, rare: np.ndarray, points: int = 64) -> int:
        """The formula number that splits the rare tuples' postings (the candidates' source) most
        evenly, of ``points - 1`` evenly spaced ones: formulae are numbered in the order the
        collection first shows them, so the postings of a tuple are seldom spread evenly."""
        grid = np.linspace(0, self.n, points + 1)[1:-1].astype(np.int32)
        below = np.zeros(len(grid), dtype=np.int64)
        for lo, hi in zip(tuples.lo[rare].tolist(), tuples.hi[rare].tolist(), strict=True):
            below += np.searchsorted(self.post_doc[lo:hi], grid)
        return int(grid[np.argmin(np.abs(2 * below - int((tuples.hi[rare] - tuples.lo[rare]).sum())))])

    def _search_compiled(self, q: QueryTokens, scoring: Scoring, k: int | None, keep: np.ndarray | None,
                         tuples: QueryTuples, rare: np.ndarray, frequent: np.ndarray, dense: bool,
                         span: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_search` with the candidate loop compiled (``_kernel``): the same steps, sums
        and pruning as the numpy code, in one pass each instead of numpy's several; ``span``: the
        formulae the tuples' postings were cut to (see :meth:`_search_halves`)."""
        kernel = self.kernel
        assert kernel is not None
        j = np.flatnonzero(rare)
        early = keep if keep is not None and scoring.exact <= 0 else None  # else after the exact matches
        # Numbering the formulae in a scratch of one entry per formula is fastest while that scratch
        # stays in the CPU's cache; past it, every posting is a cache miss and sorting them is faster.
        slot = self._take_slot() if self.n <= self.SLOTS_UP_TO else None
        docs, ov = kernel.accumulate(self.post_doc, self.post_tf, tuples.lo[j], tuples.hi[j], tuples.fam[j],
                                     tuples.qtf[j], tuples.idf[j], len(FAMILIES), dense,
                                     None if early is None else early.view(np.uint8), slot)
        if slot is not None:
            self._give_slot(slot)
        if scoring.exact > 0:
            docs, ov = self._with_exact(docs, ov, q, span)
            if keep is not None:
                kept = keep[docs]
                docs, ov = docs[kept], ov[:, kept]
        if len(frequent):
            rest = np.zeros(len(FAMILIES))  # what the tuples not read yet may still add, per family
            np.add.at(rest, tuples.fam[frequent], tuples.qtf[frequent] * tuples.idf[frequent])
            cands = kernel.Candidates(docs, ov)
            if k is not None:
                fams = list(tuples.q_len)
                factor, bonus = Bounds.factor_and_bonus(self, docs, scoring, q)
                cands.bound(self.len_idf if scoring.idf else self.len_plain, fams,
                            np.array([tuples.q_len[fi] for fi in fams]),
                            np.array([scoring.weights[fi] for fi in fams], dtype=np.float64), factor, bonus)
            # The pruning schedule of _search, worked out before the loop: what is unread depends on
            # the tuples alone, and once k or fewer candidates are left none is ever pruned again
            # (the kernel checks that), so the whole loop runs in one call without the GIL.
            due = np.zeros(len(frequent), dtype=np.uint8)
            rests = np.empty((len(frequent), len(FAMILIES)))
            slack = np.inf
            for at, jf in enumerate(frequent.tolist()):
                # as in _search, as if more than k were left (the kernel skips a pruning when not)
                if k is not None and self._prune_now(k + 1, k, rest.sum(), slack):
                    slack = rest.sum()
                    due[at] = 1
                rests[at] = rest
                rest[int(tuples.fam[jf])] -= tuples.qtf[jf] * tuples.idf[jf]
            cands.read_frequent(self.post_doc, self.post_tf, tuples.lo[frequent], tuples.hi[frequent],
                                tuples.fam[frequent], tuples.qtf[frequent], tuples.idf[frequent], due, rests,
                                k if k is not None else 0)
            docs, ov = cands.result()
        return docs.astype(np.int64), self._combine(docs, ov, tuples, scoring, q)

    def _prune_now(self, m: int, k: int, unread: float, slack: float) -> bool:
        """Whether to prune the ``m`` candidates before the next frequent tuple: once the unread
        tuples' weight has dropped to ``PRUNE_AFTER`` of what it was at the last pruning (``slack``).
        A bound over all candidates per tuple would cost more than the lookups it saves; pruning
        sooner while the candidates are many was slower at 1.4M answers (docs/log/compiled.md).
        Both paths prune at the same steps."""
        return m > k and unread <= slack * self.PRUNE_AFTER

    def _take_slot(self) -> np.ndarray:
        with self._slots_lock:
            if self._slots:
                return self._slots.pop()
        return np.full(self.n, -1, dtype=np.int32)

    def _give_slot(self, slot: np.ndarray) -> None:
        """Back to the pool once the kernel has returned (it leaves the scratch all -1 again; a
        query that failed inside never gives its scratch back)."""
        with self._slots_lock:
            self._slots.append(slot)

    def _tuples(self, q: QueryTokens, scoring: Scoring) -> QueryTuples:
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
            return QueryTuples(empty, empty, empty, np.zeros(0), np.zeros(0), {})
        p = np.concatenate(pos)
        return QueryTuples(np.concatenate(fams), self.post_start[p], self.post_end[p], np.concatenate(qtfs),
                       np.concatenate(idfs), q_len)

    def _accumulate(self, tuples: QueryTuples, rare: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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

    def _accumulate_dense(self, tuples: QueryTuples, rare: np.ndarray, docs: list[np.ndarray],
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

    def _with_exact(self, docs: np.ndarray, ov: np.ndarray, q: QueryTokens,
                    span: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Add the formulae with the query's visual key (they may share no tuple with it), those
        numbered within ``span`` only where given."""
        same = np.flatnonzero(self.vkey == np.uint64(q.vkey)).astype(np.int32)
        if span is not None:
            same = same[(same >= span[0]) & (same < span[1])]
        at = np.minimum(np.searchsorted(docs, same), max(len(docs) - 1, 0))
        new = same[docs[at] != same] if len(docs) else same
        if not len(new):
            return docs, ov
        merged = np.sort(np.concatenate([docs, new]))
        out = np.zeros((ov.shape[0], len(merged)))
        out[:, np.searchsorted(merged, docs)] = ov
        return merged, out

    def _lookup(self, docs: np.ndarray, members: Members, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows of ``docs`` (ascending) found in the posting block ``lo:hi``, and their tf there."""
        if not len(docs):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint16)
        block = self.post_doc[lo:hi]
        if len(docs) * 32 < hi - lo:  # few candidates, long block: binary-search each candidate
            at = np.minimum(np.searchsorted(block, docs.astype(block.dtype, copy=False)), hi - lo - 1)  # no block copy
            hit = np.asarray(block[at]) == docs
            return np.flatnonzero(hit), np.asarray(self.post_tf[lo + at[hit]])
        block = np.asarray(block)  # else one pass over the block against the candidates' marks
        hit = members.mark[block]
        return members.row[block[hit]], np.asarray(self.post_tf[lo:hi])[hit]

    def _combine(self, docs: np.ndarray, ov: np.ndarray, tuples: QueryTuples, scoring: Scoring,
                 q: QueryTokens) -> np.ndarray:
        """Scores from per-family overlaps: weighted Dice, size factor, exact-match bonus."""
        lens = self.len_idf if scoring.idf else self.len_plain
        if self.kernel is not None and len(docs) and tuples.q_len:
            fams = list(tuples.q_len)
            # The numpy sums below, in one pass per family (w * 2.0 first, as Python evaluates it).
            scores = self.kernel.combine(docs.astype(np.int32, copy=False), ov, lens, np.array(fams, dtype=np.int64),
                                         np.array([tuples.q_len[fi] for fi in fams], dtype=np.float64),
                                         np.array([scoring.weights[fi] * 2.0 for fi in fams], dtype=np.float64))
        else:
            scores = np.zeros(len(docs), dtype=np.float64)
            for fi, q_len in tuples.q_len.items():
                # q_len + float32 lengths: numpy adds in float32 (the kernel does the same)
                scores += scoring.weights[fi] * 2.0 * ov[fi] / np.maximum(q_len + lens[fi][docs], 1e-9)
        if (scoring.size_power > 0 or scoring.exact > 0) and len(docs):
            factor, bonus = Bounds.factor_and_bonus(self, docs, scoring, q)  # 1 and 0 where off: the same bits
            scores = scores * factor + bonus
        return scores


def best_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest ``scores`` (``0 < k < len(scores)``), ascending; of those tied
    at the k-th score, the first (candidates come in formula order: the lowest numbers)."""
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    above = np.flatnonzero(scores > kth)
    tied = np.flatnonzero(scores == kth)[:k - len(above)]
    return np.sort(np.concatenate([above, tied]))


def _kernel_fits(post_doc: np.ndarray, post_tf: np.ndarray, *lens: np.ndarray) -> bool:
    """Whether the index's arrays have the types the kernel was compiled for (an index written
    otherwise runs the numpy code)."""
    return (post_doc.dtype == np.int32 and post_tf.dtype == np.uint16 and all(a.dtype == np.float32 for a in lens)
            and post_doc.flags.c_contiguous and post_tf.flags.c_contiguous)
