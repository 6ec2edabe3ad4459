"""``ours`` runs its independent signals side by side: the fused scores are those of running them
one by one in file order, and a re-scoring signal still sees every signal before it."""

from __future__ import annotations

import dataclasses
import threading

from conftest import TOPICS
from test_search_dense import dense_tiny  # noqa: F401  (the module fixture: a tiny index with vectors)

from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery, make_system, signals
from mathsearch.systems.ours import combine, ours_config


def one_by_one(ctx, query, config):
    """``combine`` through a ``scores_of`` hook: the sequential path, in file order."""
    order: list[str] = []

    def asked(name, sig, similar, earlier):
        order.append(name)
        return sig.scores(ctx, query, similar, earlier)

    return combine(ctx, query, config, asked), order


def test_side_by_side_equals_one_by_one_on_the_sample(sample_index, tmp_path):
    ctx = SearchContext(sample_index)
    lexical = tmp_path / "lexical.toml"  # the lexical part of ours_static.toml until 2026-11-30
    lexical.write_text(
        '[signals.answer]\nweight = 2.0\nfields = { "words->body" = 4.0, "math->body_math" = 2.0, '
        '"title_words->title" = 1.0, "words->question" = 0.5, "tags->tags" = 2.0, "math->q_math" = 0.5 }\n'
        '[signals.questions]\nweight = 0.5\nfields = { "title_words->title" = 1.0, "words->question" = 0.5 }\n'
        '[signals.linked]\nweight = 1.0\n'
        '[signals.formula]\nkind = "formula"\nweight = 0.5\nrerank = 100\ncandidates = ["answer"]\n')
    config = ours_config(str(lexical))  # answer, questions, linked, formula re-scoring
    assert any(sig.reads_earlier() for _, _, sig in config.signals)
    queries = [SearchQuery.from_topic(t) for t in read_topics(TOPICS / "task1-2021.xml")][:12]
    for query in queries:
        fused = combine(ctx, query, config)
        expected, order = one_by_one(ctx, query, config)
        assert fused == expected, query.query_id
        assert order == [name for name, _, sig in config.signals if sig.weight > 0]
    assert any(t.name.startswith("mathsearch-signal") for t in threading.enumerate())
    # the system's switch: ours:threads=False runs them one by one, with the same ranking
    for query in queries[:3]:
        side_by_side = make_system("ours").search(ctx, query, 1000)
        assert side_by_side and side_by_side == make_system("ours:threads=False").search(ctx, query, 1000)


def _all_signals_config(tmp_path):
    config = tmp_path / "all.toml"
    config.write_text(
        '[signals.answer]\nweight = 1.0\nfields = { "words->body" = 1.0, "words->question" = 0.5 }\n'
        '[signals.questions]\nweight = 0.5\nfields = { "words->question" = 1.0 }\n'
        '[signals.linked]\nweight = 0.5\n'
        '[signals.dense]\nkind = "dense"\nweight = 1.0\nlimit = 5\n'
        '[signals.dense_questions]\nkind = "dense_questions"\nweight = 1.0\nlimit = 5\n'
        '[signals.formula]\nkind = "formula"\nweight = 0.5\nrerank = 5\ncandidates = ["answer", "dense"]\n')
    return ours_config(str(config))


def test_re_scoring_signal_is_fed_each_candidate_as_it_is_done(dense_tiny, tmp_path):  # noqa: F811
    ctx = SearchContext(dense_tiny)
    query = SearchQuery.from_text("Do the prime numbers go on forever? $p_n$")
    cfg = _all_signals_config(tmp_path)
    threads: dict[str, str] = {}
    fed: list[tuple[str, list[int]]] = []
    first_batch = threading.Event()
    answer_waited: list[bool] = []
    real_of = {cls: cls.scores for cls in set(signals.SIGNAL_KINDS.values())}
    real_add = signals.CandidateRescorer.add

    def spying(cls):
        def scores(self, ctx, query, similar, earlier=signals._NO_SCORES):
            threads[type(self).__name__] = threading.current_thread().name
            if isinstance(self, signals.Bm25Signal):  # the slow one: done only after the dense batch was re-scored
                answer_waited.append(first_batch.wait(10))
            return real_of[cls](self, ctx, query, similar, earlier)
        return scores

    def add(self, found):
        fed.append((threading.current_thread().name, sorted(found)))
        real_add(self, found)
        first_batch.set()

    try:
        for cls in real_of:
            cls.scores = spying(cls)
        signals.CandidateRescorer.add = add
        fused = combine(ctx, query, cfg)
    finally:
        for cls, fn in real_of.items():
            cls.scores = fn
        signals.CandidateRescorer.add = real_add
    expected, _ = one_by_one(ctx, query, cfg)
    assert fused and fused == expected  # the same scores as re-scoring the union after every signal
    assert answer_waited == [True]  # the dense candidates were re-scored while the answer BM25 still ran
    # the dense batch waited on a signal thread behind the signals queued there (the answer BM25 still
    # ran: the caller would have made a third thread on two cores); the last batch on the caller's thread
    assert len(fed) == 2 and fed[0][0].startswith("mathsearch-signal")
    assert fed[1][0] == threading.current_thread().name
    assert "FormulaSignal" not in threads  # fed, not asked: its whole-index search never ran
    assert all(threads[n].startswith("mathsearch-signal") for n in ("Bm25Signal", "DenseSignal", "LinkedSignal"))
    assert not ctx.pending_vectors and len(ctx.query_vectors) == 1  # the two dense signals shared one encoding


def test_re_scoring_signal_without_candidates_waits_for_every_signal_before_it(dense_tiny, tmp_path):  # noqa: F811
    ctx = SearchContext(dense_tiny)
    query = SearchQuery.from_text("Do the prime numbers go on forever? $p_n$")
    cfg = _all_signals_config(tmp_path)
    formula = next(sig for name, _, sig in cfg.signals if name == "formula")
    cfg = dataclasses.replace(cfg, signals=tuple(
        (name, kind, dataclasses.replace(sig, candidates=("nothing",)) if sig is formula else sig)
        for name, kind, sig in cfg.signals))
    seen_by_formula: list[str] = []
    real = signals.FormulaSignal.scores

    def scores(self, ctx, query, similar, earlier=signals._NO_SCORES):
        seen_by_formula.extend(earlier)
        return real(self, ctx, query, similar, earlier)

    try:
        signals.FormulaSignal.scores = scores
        fused = combine(ctx, query, cfg)
    finally:
        signals.FormulaSignal.scores = real
    expected, _ = one_by_one(ctx, query, cfg)
    assert fused and fused == expected
    # none of its candidates ran, so it searched the whole index, after all five before it had finished
    assert seen_by_formula == ["answer", "questions", "linked", "dense", "dense_questions"]


def test_the_signals_start_with_the_first_lexical_one_then_those_that_wait_for_the_vector():
    """The order signals start in (their scores are read in file order whatever it is): the costliest
    lexical signal first, the vector signals next (they only wait for the encoding), the rest last;
    without both kinds, file order."""
    from mathsearch.systems.ours import _run_order

    named = [("dense", signals.DenseSignal()), ("answer", signals.Bm25Signal()), ("linked", signals.LinkedSignal()),
             ("dense_questions", signals.DenseQuestionsSignal()), ("questions", signals.QuestionsSignal())]
    assert [n for n, _ in _run_order(named)] == ["answer", "dense", "dense_questions", "linked", "questions"]
    lexical = [ns for ns in named if ns[0] in ("answer", "linked", "questions")]
    assert _run_order(lexical) == lexical
    assert _run_order(named[:1]) == named[:1] and _run_order([]) == []


def test_re_scoring_batches_from_two_threads_score_each_answer_once(sample_index):
    """Overlapping batches added from two threads at once: each answer scored by one batch, the
    totals those of one batch of the union (the formula signal's batches may run on two threads)."""
    from concurrent.futures import ThreadPoolExecutor

    from mathsearch.systems.formula_scores import Rescorer

    ctx = SearchContext(sample_index)
    query = next(q for q in map(SearchQuery.from_topic, read_topics(TOPICS / "task1-2021.xml")) if q.bags.formulae)
    latexes = list(query.bags.formulae)[:3]
    answers = sorted(ctx.store.answer_ids())[:600]
    whole = Rescorer(ctx, latexes)
    whole.add(answers)
    assert len(whole.total) > 5  # the topic's formulae match some of these answers
    for _ in range(5):
        both = Rescorer(ctx, latexes)
        with ThreadPoolExecutor(2) as pool:  # halves that overlap by a third
            list(pool.map(both.add, [answers[:400], answers[200:]]))
        assert both.total == whole.total and both.scored == set(answers)
