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


@pytest.mark.parametrize("name", sorted(SCORINGS))
def test_scoring_given_formulae_matches_the_definition(index, queries, name):
    """score_docs (Task 1's re-scoring of candidates) is exact for any formulae, whatever they share
    with the query, and needs no postings budget: some of them share no tuple at all (score 0)."""
    scoring = dataclasses.replace(SCORINGS[name], postings_budget=10)
    rng = np.random.default_rng(7)
    for q in queries:
        ref = dense_scores(index, q, scoring)
        docs = np.unique(np.concatenate([rng.choice(np.flatnonzero(ref > 0), 40), rng.choice(index.n, 40)]))
        np.testing.assert_allclose(index.score_docs(q, scoring, docs), ref[docs], rtol=1e-6)
        assert (ref[docs] == 0).any() and (ref[docs] > 0).any()


def test_answer_formulae_are_every_formula_in_the_answer(index):
    """The per-answer pairs written at build time hold exactly the instances in answers (and their
    comments), and equal what an index built without them computes on first use."""
    in_answer = np.flatnonzero(np.asarray(index.inst_answer))
    doc_of = np.repeat(np.arange(index.n), np.diff(index.inst_ptr))[in_answer]
    post_of = np.asarray(index.inst_post)[in_answer]
    answers = np.unique(post_of)[::7]
    owners, docs = index.answer_formulae(answers)
    want = sorted(zip(post_of[np.isin(post_of, answers)].tolist(), doc_of[np.isin(post_of, answers)].tolist(), strict=True))
    assert sorted(zip(owners.tolist(), docs.tolist(), strict=True)) == want
    stored = index._by_answer()
    index._answer_pairs = None  # as on an index built before the pairs were written
    try:
        again = index.answer_formulae(answers)
    finally:
        index._answer_pairs = stored
    assert np.array_equal(again[0], owners) and np.array_equal(again[1], docs)
    assert index.answer_formulae(np.array([-5], dtype=np.int64))[1].size == 0  # not an answer: nothing


def test_each_answers_best_formula_is_found_for_every_query_at_once(index, queries):
    """``answers_best_formula_among_all`` (the answers' formulae found once, each answer's best by a
    reduction) against the definition, a loop over each formula: the same answers, in the same
    (ascending) order, and the same score bits, for each query formula."""
    in_answer = np.flatnonzero(np.asarray(index.inst_answer))
    answers = np.unique(np.asarray(index.inst_post)[in_answer])[::5]
    scoring = SCORINGS[sorted(SCORINGS)[0]]
    got = index.answers_best_formula_among_all(queries, scoring, answers)
    assert len(got) == len(queries) and sum(len(g) for g in got) > 100
    owners, docs = index.answer_formulae(answers)
    for q, found in zip(queries, got, strict=True):
        scores = index.score_docs(q, scoring, np.unique(docs))[np.searchsorted(np.unique(docs), docs)]
        want: dict[int, float] = {}
        for a, s in zip(owners.tolist(), scores.tolist(), strict=True):
            if s > 0 and s > want.get(a, 0.0):
                want[a] = s
        assert list(found.items()) == list(want.items())
        assert found == index.answers_best_formula_among(q, scoring, answers)
    assert index.answers_best_formula_among_all(queries[:2], scoring, np.array([-5])) == [{}, {}]


def test_rescoring_answers_equals_the_whole_index_search(sample_index):
    """Task 1's formula signal: an answer's score among candidates is its score in the search of
    the whole formula index (depth and limit unbounded), for every candidate answer."""
    from mathsearch.systems import SearchContext, SearchQuery
    from mathsearch.systems.formula import answer_scores, answer_scores_among, largest_formulae

    ctx = SearchContext(sample_index)
    checked = 0
    for topic in read_topics(TOPICS / "task1-2021.xml")[:15]:
        formulae = largest_formulae([f for f in SearchQuery.from_topic(topic).bags.formulae if f.strip()], 5)
        full = answer_scores(ctx, formulae, TANGENT_S, depth=10**9, limit=10**9)
        candidates = sorted(full)[::3] + [-1]
        among = answer_scores_among(ctx, formulae, candidates)
        assert set(among) == set(candidates) & set(full)
        for answer, score in among.items():
            assert score == pytest.approx(full[answer], rel=1e-9)
        checked += len(among)
    assert checked > 100


def test_the_formula_signal_rescores_only_the_earlier_signals_best(sample_index):
    from mathsearch.systems import SearchContext, SearchQuery
    from mathsearch.systems.signals import FormulaSignal

    ctx = SearchContext(sample_index)
    query = next(SearchQuery.from_topic(t) for t in read_topics(TOPICS / "task1-2021.xml") if len(t.formulas) > 2)
    whole = FormulaSignal(weight=1.0).scores(ctx, query, dict)
    best = sorted(whole, key=whole.__getitem__, reverse=True)
    earlier = {"answer": {a: 1.0 / (i + 1) for i, a in enumerate(best[:40])}, "other": {best[-1]: 9.0}}
    signal = FormulaSignal(weight=1.0, rerank=10, candidates=("answer", "dense"))
    got = signal.scores(ctx, query, dict, earlier)
    assert set(got) == set(best[:10])  # the answer signal's best 10; "dense" did not run; "other" is not named
    assert signal.scores(ctx, query, dict, {"questions": {best[0]: 1.0}}) == whole  # no candidates ran: whole index
