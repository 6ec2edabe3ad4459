"""The compiled candidate loop of a formula search (indexes/formula/_kernel.pyx) against the numpy
code it replaces, in one process: the same formulae and scores to the last bit, on the real
sample's topics, with the postings budget small enough that the frequent tuples, the bounds and
the pruning all run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathsearch import _compiled
from mathsearch.indexes.formula import search as search_module
from mathsearch.indexes.formula.search import FormulaIndex, Scoring, best_k
from mathsearch.readers.topics import read_topics

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arqmath"
HINT = "the kernel is not built: python setup.py build_ext --inplace (or pip install -e .)"


def _kernel():
    kernel = _compiled.load_kernel("mathsearch.indexes.formula._kernel")
    if _compiled.pure_python_requested():
        pytest.fail("MATHSEARCH_PURE_PYTHON is set: this test compares the compiled kernel with numpy")
    assert kernel is not None, HINT
    return kernel


@pytest.fixture(scope="module")
def index(sample_index: Path) -> FormulaIndex:
    ix = FormulaIndex.open(sample_index)
    assert ix.kernel is not None, HINT
    return ix


SCORINGS = [
    Scoring(0.5, 0.5, 0.3, 0.2, postings_budget=500_000),  # the packaged weights: no frequent tuple here
    Scoring(0.5, 0.5, 0.3, 0.2, postings_budget=3_000),
    Scoring(0.5, 0.5, 0.0, 0.0, idf=True, exact=0.2, size_power=0.5, postings_budget=1_000),
    Scoring(0.0, 1.0, 0.0, 0.4, postings_budget=300),
]


@pytest.mark.parametrize("gather", ["slots", "packed", "fallback"])
@pytest.mark.parametrize("scoring", SCORINGS, ids=lambda s: f"budget{s.postings_budget}-idf{s.idf}-exact{s.exact}")
def test_the_kernel_finds_and_scores_as_numpy_does(index: FormulaIndex, scoring: Scoring, gather: str,
                                                   monkeypatch: pytest.MonkeyPatch):
    """Every way of gathering the candidates (a per-formula scratch on small indexes; on large ones
    a sort of packed keys, or, where they would not fit in 63 bits, a scratch of the kernel's own)
    against numpy."""
    monkeypatch.setattr(index, "SLOTS_UP_TO", index.n if gather == "slots" else 0)
    if gather == "fallback":
        monkeypatch.setattr(index.kernel, "PACKED_BITS", 0)
    topics = [t for year in (2020, 2021) for t in read_topics(DATA / "topics" / f"task2-{year}.xml")]
    kernel, compared, pruned = index.kernel, 0, 0
    try:
        for topic in topics:
            q = index.query(topic.formulas[0].latex)
            for k, keep in ((1000, index.retrievable), (50, None), (None, None)):
                index.kernel = None
                want = index._search(q, scoring, k, keep)
                index.kernel = kernel
                got = index._search(q, scoring, k, keep)
                assert np.array_equal(want[0], got[0]), (topic.topic_id, k)
                assert want[1].tobytes() == got[1].tobytes(), (topic.topic_id, k)  # to the last bit
                compared += 1
                if k is not None:
                    unbounded = index._search(q, scoring, None, keep)[0]
                    pruned += len(got[0]) < len(unbounded)
    finally:
        index.kernel = kernel
    assert compared == 3 * len(topics) > 200
    if scoring.postings_budget <= 3_000:
        assert pruned > 20, pruned  # the bounds dropped candidates: the pruning was compared too


def _top_queries(index: FormulaIndex):
    """``(topic id, query, k, retrievable only)`` for every Task 2 topic of 2020 and 2021 and three cuts."""
    for year in (2020, 2021):
        for topic in read_topics(DATA / "topics" / f"task2-{year}.xml"):
            q = index.query(topic.formulas[0].latex)
            for k, retrievable in ((1000, True), (20, False), (3, True)):
                yield topic.topic_id, q, k, retrievable


def _numpy_top(index: FormulaIndex, q, scoring: Scoring, k: int, retrievable: bool):  # noqa: ANN001, ANN202
    """``index.top`` on the numpy path (the kernel's reference), the kernel put back after."""
    kernel, index.kernel = index.kernel, None
    try:
        return index.top(q, scoring, k, retrievable)
    finally:
        index.kernel = kernel


@pytest.mark.parametrize("scoring", SCORINGS[1:3], ids=lambda s: f"budget{s.postings_budget}-idf{s.idf}")
def test_the_kernel_cuts_the_best_k_as_numpy_does(index: FormulaIndex, scoring: Scoring):
    """``top``: the kernel's scores (its own Dice sums) and the cut at k, ties at the k-th score
    included, give the numpy path's formulae and scores."""
    cut = 0
    for topic_id, q, k, retrievable in _top_queries(index):
        want = _numpy_top(index, q, scoring, k, retrievable)
        got = index.top(q, scoring, k, retrievable)
        assert np.array_equal(want[0], got[0]) and want[1].tobytes() == got[1].tobytes(), (topic_id, k)
        cut += len(index._search(q, scoring, k, None)[0]) > k
    assert cut > 50, cut  # the cut itself ran, not only searches with fewer than k candidates


@pytest.mark.parametrize("scoring", SCORINGS, ids=lambda s: f"budget{s.postings_budget}-idf{s.idf}-exact{s.exact}")
def test_a_search_in_two_halves_cuts_the_best_k_as_one_search_does(index: FormulaIndex, scoring: Scoring,
                                                                    monkeypatch: pytest.MonkeyPatch):
    """A large index's top-k search runs over each half of the formulae on its own thread, each
    half pruned against its own k-th best: ``top`` gives the whole search's formulae and score
    bytes (and numpy's), exact matches and the retrievable filter included."""
    monkeypatch.setattr(search_module, "halves", lambda: 2)  # on any machine, however many cores
    halves, cuts = [], []
    real_halves, real_cut = index._search_halves, index._cut

    def cut_at(*args, **kw):
        cuts.append(real_cut(*args, **kw))
        return cuts[-1]

    def counted(*args, **kw):
        docs, scores = real_halves(*args, **kw)
        halves.append((int((docs < cuts[-1]).sum()), int((docs >= cuts[-1]).sum())))  # the cut this search made
        return docs, scores

    monkeypatch.setattr(index, "_cut", cut_at)
    monkeypatch.setattr(index, "_search_halves", counted)
    searched = 0
    for topic_id, q, k, retrievable in _top_queries(index):
        want = _numpy_top(index, q, scoring, k, retrievable)
        monkeypatch.setattr(index, "SPLIT_FROM", index.n)
        whole = index.top(q, scoring, k, retrievable)
        monkeypatch.setattr(index, "SPLIT_FROM", 0)
        got = index.top(q, scoring, k, retrievable)
        for other in (want, whole):
            assert np.array_equal(other[0], got[0]) and other[1].tobytes() == got[1].tobytes(), (topic_id, k)
        searched += 1
    assert len(halves) == searched > 500
    assert sum(1 for a, b in halves if a and b) > 100  # both halves held candidates, most of the time


def _halves_in_child(index: FormulaIndex, latex: str, out) -> None:  # noqa: ANN001 - a multiprocessing pipe end
    out.send(index.top(index.query(latex), SCORINGS[1], 50, True)[0].tolist())


def test_a_forked_child_searches_in_halves_on_threads_of_its_own(index: FormulaIndex, monkeypatch: pytest.MonkeyPatch):
    """The worker threads are made in the parent by its first large search; a child forked after it
    (a build's or a run's workers) has none of them, and must not wait on them forever."""
    import multiprocessing

    monkeypatch.setattr(search_module, "halves", lambda: 2)
    monkeypatch.setattr(index, "SPLIT_FROM", 0)
    latex = "x^2+y^2=z^2"
    want = index.top(index.query(latex), SCORINGS[1], 50, True)[0].tolist()  # the parent's pool is made here
    ours, theirs = multiprocessing.get_context("fork").Pipe()
    child = multiprocessing.get_context("fork").Process(target=_halves_in_child, args=(index, latex, theirs))
    child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child's search in halves hung: it waited on its parent's worker threads")
    assert child.exitcode == 0 and ours.poll(1) and ours.recv() == want


@pytest.mark.parametrize("scoring", SCORINGS[:3], ids=lambda s: f"idf{s.idf}-exact{s.exact}")
def test_the_kernel_rescores_answers_as_numpy_does(index: FormulaIndex, scoring: Scoring):
    """Task 1's re-scoring (``score_docs`` over the formulae of given answers, every query tuple,
    long blocks and short): the kernel's merge gives numpy's scores to the last bit."""
    topics = [t for year in (2020, 2021) for t in read_topics(DATA / "topics" / f"task2-{year}.xml")]
    rng = np.random.default_rng(7)
    answers = np.unique(index._by_answer()[0])
    kernel, scored = index.kernel, 0
    try:
        for topic in topics:
            q = index.query(topic.formulas[0].latex)
            for size in (5, 200):
                docs = np.unique(index.answer_formulae(rng.choice(answers, size))[1])
                index.kernel = None
                want = index.score_docs(q, scoring, docs)
                index.kernel = kernel
                got = index.score_docs(q, scoring, docs)
                assert want.tobytes() == got.tobytes(), (topic.topic_id, size)
                scored += int((got > 0).sum())
    finally:
        index.kernel = kernel
    assert scored > 1000, scored  # most topics share tuples with some of the drawn answers' formulae


@settings(max_examples=300, deadline=None)
@given(scores=st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 0.3333333333333333]), min_size=2, max_size=80),
       data=st.data())
def test_best_k_keeps_the_highest_and_the_first_of_the_tied(scores, data):
    """The cut of ``top``: the k highest scores; of those tied at the k-th, the first positions
    (the lowest formula numbers), so a deeper search's best k are the shallow search's."""
    k = data.draw(st.integers(1, len(scores) - 1))
    arr = np.array(scores)
    want = np.sort(np.lexsort((np.arange(len(arr)), -arr))[:k])  # a full sort, ties by position
    got = best_k(arr, k)
    assert got.tolist() == want.tolist()


@settings(max_examples=200, deadline=None)
@given(docs=st.sets(st.integers(0, 400), max_size=60), block=st.sets(st.integers(0, 400), max_size=300),
       data=st.data())
def test_the_galloping_lookup_finds_every_shared_formula(docs, block, data):
    kernel = _kernel()
    cand = np.array(sorted(docs), dtype=np.int32)
    post = np.array(sorted(block), dtype=np.int32)
    tf = np.array(data.draw(st.lists(st.integers(1, 5), min_size=len(post), max_size=len(post))), dtype=np.uint16)
    pad = data.draw(st.integers(0, 3))  # the block sits inside a longer postings array
    post_doc = np.concatenate([np.full(pad, -1, np.int32), post, np.full(pad, 10**6, np.int32)])
    post_tf = np.concatenate([np.ones(pad, np.uint16), tf, np.ones(pad, np.uint16)])
    c = kernel.Candidates(cand, np.zeros((4, len(cand))))
    c.lookup_add(post_doc, post_tf, pad, pad + len(post), 2, 3.0, 0.5)
    _, ov = c.result()
    want = np.zeros(len(cand))
    at = {int(d): i for i, d in enumerate(post)}
    for i, d in enumerate(cand.tolist()):
        if d in at:
            want[i] = min(float(tf[at[d]]), 3.0) * 0.5
    assert ov[2].tolist() == want.tolist() and not ov[[0, 1, 3]].any()


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]) | st.floats(-1e6, 1e6), min_size=1, max_size=80),
       data=st.data())
def test_the_kernels_selection_finds_what_numpy_partition_finds(values, data):
    """Pruning's floor (the k-th best bound) is found without numpy, so the loop runs without the GIL:
    the same value at every place, ties and repeats included."""
    kernel = _kernel()
    arr = np.array(values)
    kth = data.draw(st.integers(0, len(arr) - 1))
    assert kernel.select(arr, kth) == np.partition(arr, kth)[kth]
    assert arr.tolist() == values  # a copy is reordered, not the caller's array


def test_reading_the_frequent_tuples_in_one_call_prunes_as_one_call_a_tuple_did(index: FormulaIndex):
    """``read_frequent`` against ``prune`` and ``lookup_add`` called from Python tuple by tuple, on a
    sample query's frequent tuples with a small budget: the same candidates and overlaps, bit for bit."""
    kernel = _kernel()
    scoring = Scoring(0.5, 0.5, 0.3, 0.2, postings_budget=200)
    q = index.query("\\sum_{n=1}^{\\infty} \\frac{1}{n^2}")
    tuples = index._tuples(q, scoring)
    by_df = np.argsort(tuples.df, kind="stable")
    within = np.cumsum(tuples.df[by_df]) <= scoring.postings_budget
    within[:1] = True
    rare = np.zeros(len(tuples.df), dtype=bool)
    rare[by_df[within]] = True
    frequent = by_df[~within]
    assert len(frequent) >= 5
    j = np.flatnonzero(rare)
    docs, ov = kernel.accumulate(index.post_doc, index.post_tf, tuples.lo[j], tuples.hi[j], tuples.fam[j],
                                 tuples.qtf[j], tuples.idf[j], 4, False, None, None)
    k, fams = 3, list(tuples.q_len)

    def bounded():
        c = kernel.Candidates(docs.copy(), ov.copy())  # it compacts its arrays in place
        c.bound(index.len_plain, fams, np.array([tuples.q_len[f] for f in fams]),
                np.array([scoring.weights[f] for f in fams], dtype=np.float64), np.ones(len(docs)), np.zeros(len(docs)))
        return c

    rest = np.zeros(4)
    np.add.at(rest, tuples.fam[frequent], tuples.qtf[frequent] * tuples.idf[frequent])
    due, rests = np.zeros(len(frequent), dtype=np.uint8), np.empty((len(frequent), 4))
    one_by_one = bounded()
    for at, jf in enumerate(frequent.tolist()):
        due[at] = at % 2 == 0  # prune often, so that pruning meets the lookups
        rests[at] = rest
        if due[at] and one_by_one.m > k:
            one_by_one.prune(rest, k)
        one_by_one.lookup_add(index.post_doc, index.post_tf, int(tuples.lo[jf]), int(tuples.hi[jf]),
                              int(tuples.fam[jf]), float(tuples.qtf[jf]), float(tuples.idf[jf]))
        rest[int(tuples.fam[jf])] -= tuples.qtf[jf] * tuples.idf[jf]
    in_one = bounded()
    in_one.read_frequent(index.post_doc, index.post_tf, tuples.lo[frequent], tuples.hi[frequent], tuples.fam[frequent],
                         tuples.qtf[frequent], tuples.idf[frequent], due, rests, k)
    (d1, o1), (d2, o2) = one_by_one.result(), in_one.result()
    assert len(d2) < len(docs) / 4  # candidates were pruned, step after step
    assert d1.tolist() == d2.tolist() and o1.tobytes() == o2.tobytes()
    with pytest.raises(RuntimeError, match="before Candidates.bound"):
        kernel.Candidates(docs, ov).read_frequent(index.post_doc, index.post_tf, tuples.lo[frequent],
                                                  tuples.hi[frequent], tuples.fam[frequent], tuples.qtf[frequent],
                                                  tuples.idf[frequent], due, rests, k)


def test_the_kernel_leaves_its_scratch_clean_and_the_index_reuses_it(index: FormulaIndex):
    assert index.n <= index.SLOTS_UP_TO  # the sample takes the scratch
    q = index.query("x^2+y^2=z^2")
    index._search(q, Scoring(), 100, None)
    made = len(index._slots)  # one per search that ran at once (two halves made two, earlier in this module)
    assert made >= 1 and all((slot == -1).all() for slot in index._slots)
    index._search(q, Scoring(), 100, None)
    assert len(index._slots) == made  # taken from the pool, not made anew


def test_a_stale_kernel_is_not_loaded(tmp_path, monkeypatch, capsys):
    """A .pyx edited after its build: the numpy path runs, with one warning line."""
    kernel = _kernel()
    source = Path(kernel.__file__).with_name("_kernel.pyx")
    monkeypatch.setattr(_compiled, "_stale", lambda path: path == source)
    monkeypatch.setattr(_compiled, "_warned", set())
    assert _compiled.load_kernel("mathsearch.indexes.formula._kernel") is None
    assert _compiled.load_kernel("mathsearch.indexes.formula._kernel") is None
    assert capsys.readouterr().err.count("older than its source") == 1
    monkeypatch.setenv(_compiled.ENV, "1")
    monkeypatch.setattr(_compiled, "_stale", lambda path: False)
    assert _compiled.load_kernel("mathsearch.indexes.formula._kernel") is None  # the pure path asked for
