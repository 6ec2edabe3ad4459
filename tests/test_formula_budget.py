"""Formula search under a postings budget, on the real sample: the exact path against a dense
reference, and the pruned path (rarer tuples for candidates, frequent ones only to complete them)
keeping the exact path's best hits."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import TOPICS

from mathsearch.indexes.formula import FAMILIES, FormulaIndex, Scoring
from mathsearch.readers.topics import read_topics
from mathsearch.systems.formula import TANGENT_S, load_config, scoring_from

OURS = scoring_from(load_config()["scoring"])
SCORINGS = {"formula": OURS, "tangent-s": TANGENT_S, "exact+size": dataclasses.replace(OURS, exact=0.5, size_power=1.0)}


@pytest.fixture(scope="module")
def index(sample_index) -> FormulaIndex:
    return FormulaIndex.open(sample_index)


@pytest.fixture(scope="module")
def queries(index):
    """The 2021 Task 2 topics' formulae with the most postings (where a budget bites)."""
    qs = [index.query(f.latex) for t in read_topics(TOPICS / "task2-2021.xml") for f in t.formulas[:1]]
    return sorted(qs, key=lambda q: -postings(index, q, OURS))[:6]


def postings(ix: FormulaIndex, q, scoring: Scoring) -> int:
    total = 0
    for fi, fam in enumerate(FAMILIES):
        if scoring.weights[fi] > 0 and len(q.hashes[fam]):
            pos = np.minimum(np.searchsorted(ix.tok_hash, q.hashes[fam]), len(ix.tok_hash) - 1)
            found = pos[ix.tok_hash[pos] == q.hashes[fam]]
            total += int((ix.post_end[found] - ix.post_start[found]).sum())
    return total


def dense_scores(ix: FormulaIndex, q, scoring: Scoring) -> np.ndarray:
    """The definition, over all N formulae at once: sum_f w_f Dice_f, size factor, exact bonus
    (in float64 throughout, where the index adds float32 lengths: equal to about 1e-7)."""
    scores = np.zeros(ix.n)
    lens = ix.len_idf if scoring.idf else ix.len_plain
    for fi, fam in enumerate(FAMILIES):
        if scoring.weights[fi] <= 0 or not len(q.hashes[fam]):
            continue
        pos = np.minimum(np.searchsorted(ix.tok_hash, q.hashes[fam]), len(ix.tok_hash) - 1)
        found = ix.tok_hash[pos] == q.hashes[fam]
        idf = ix.tok_idf[pos].astype(np.float64) if scoring.idf else np.ones(len(pos))
        ov = np.zeros(ix.n)
        for p, t, w in zip(pos[found], q.tfs[fam][found], idf[found], strict=True):
            sl = slice(int(ix.post_start[p]), int(ix.post_end[p]))
            ov[np.asarray(ix.post_doc[sl])] += np.minimum(np.asarray(ix.post_tf[sl], dtype=np.float64), t) * w
        scores += scoring.weights[fi] * 2 * ov / np.maximum((q.tfs[fam] * idf).sum() + lens[fi], 1e-9)
    m = ix.n_nodes.astype(np.float64)
    scores *= (np.minimum(m, q.n_nodes) / np.maximum(np.maximum(m, q.n_nodes), 1)) ** scoring.size_power
    return scores + scoring.exact * (ix.vkey == np.uint64(q.vkey))


@pytest.mark.parametrize("name", sorted(SCORINGS))
def test_within_budget_scores_match_the_definition(index, queries, name):
    scoring = SCORINGS[name]
    for q in queries:
        assert postings(index, q, scoring) <= scoring.postings_budget
        ref = dense_scores(index, q, scoring)
        docs, scores = index.score(q, scoring)
        assert np.array_equal(docs, np.flatnonzero(ref > 0))  # every formula sharing a tuple, nothing else
        np.testing.assert_allclose(scores, ref[docs], rtol=1e-6)
        top, top_scores = index.top(q, scoring, 50, retrievable_only=True)
        best = np.flatnonzero(index.retrievable & (ref > 0))
        best = best[np.lexsort((best, -ref[best]))][:50]
        np.testing.assert_allclose(top_scores, ref[best], rtol=1e-6)
        assert set(top[top_scores > top_scores[-1]].tolist()) <= set(best.tolist())


@pytest.mark.parametrize("name", ["formula", "tangent-s"])
def test_pruned_path_keeps_the_best_hits(index, queries, name):
    exact = SCORINGS[name]
    tiny = dataclasses.replace(exact, postings_budget=2000)
    for q in queries:
        assert postings(index, q, exact) > 20 * tiny.postings_budget  # the frequent tuples are skipped
        ref = dense_scores(index, q, exact)
        want, want_scores = index.top(q, exact, 10, retrievable_only=True)
        got, got_scores = index.top(q, tiny, 10, retrievable_only=True)
        assert got.tolist()[:5] == want.tolist()[:5]
        np.testing.assert_allclose(got_scores, ref[got], rtol=1e-6)  # candidates are scored exactly
        # score(): fewer formulae (only the candidates), each with its exact score
        docs, scores = index.score(q, tiny)
        assert 0 < len(docs) < int((ref > 0).sum())
        np.testing.assert_allclose(scores, ref[docs], rtol=1e-6)
