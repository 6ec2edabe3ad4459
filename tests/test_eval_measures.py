"""Prime measures on small hand-made cases, worked out here; ties; unjudged removal; missing topics."""

from __future__ import annotations

import math

import pytest

from mathsearch.evaluation import (
    NDCG_10,
    RANKED_MEASURES,
    cut_depth,
    evaluate_ranked,
    judged_fractions,
    score_topics,
    trec_order,
)

# q1 judged: a=3, b=0, c=2, d=1; q2 judged but never retrieved.
QRELS = {"q1": {"a": 3, "b": 0, "c": 2, "d": 1}, "q2": {"e": 2}}
# x and y are unjudged; a and c tie at 3.0 (trec_eval: id descending, so c before a).
# The rank column is deliberately contradicting: scores decide, not ranks.
RUN = {"q1": {"x": 5.0, "b": 4.0, "a": 3.0, "c": 3.0, "y": 2.0, "d": 1.0}}


def log2(i: int) -> float:
    return math.log2(i)


IDCG = 3 / log2(2) + 2 / log2(3) + 1 / log2(4)  # ideal order 3, 2, 1, 0


def test_trec_order_ties_by_id_descending():
    assert trec_order(RUN["q1"]) == ["x", "b", "c", "a", "y", "d"]
    assert trec_order({"10": 1.0, "9": 1.0, "100": 1.0}) == ["9", "100", "10"]  # string comparison


def test_prime_measures_worked_out():
    scores = score_topics(RUN, QRELS, RANKED_MEASURES)
    # Unjudged x and y removed: b(0) c(2) a(3) d(1) at ranks 1-4.
    dcg = 0 / log2(2) + 2 / log2(3) + 3 / log2(4) + 1 / log2(5)
    assert scores["nDCG'"]["q1"] == pytest.approx(dcg / IDCG, abs=1e-12)
    # H+M relevant: c (rank 2) and a (rank 3): AP = (1/2 + 2/3) / 2
    assert scores["MAP'"]["q1"] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-12)
    assert scores["P'@10"]["q1"] == pytest.approx(2 / 10, abs=1e-12)
    # nDCG@10 keeps unjudged as non-relevant: x b c a y d -> gains 0 0 2 3 0 1
    dcg10 = 2 / log2(4) + 3 / log2(5) + 1 / log2(7)
    assert scores["nDCG@10"]["q1"] == pytest.approx(dcg10 / IDCG, abs=1e-12)
    # A qrels topic the run misses scores 0, and is part of the mean.
    assert all(scores[m.name]["q2"] == 0.0 for m in RANKED_MEASURES)


def test_mean_is_over_every_qrels_topic():
    (result,) = evaluate_ranked(1, QRELS, [("run", RUN)])
    assert result.topics == 2
    assert result.means["P'@10"] == pytest.approx(0.2 / 2)
    assert result.means["MAP'"] == pytest.approx((1 / 2 + 2 / 3) / 2 / 2)


def test_tie_order_changes_the_score():
    # With d renamed to z (> c), the tie now breaks the other way: the value must change.
    qrels = {"q": {"a": 3, "z": 0}}
    first = score_topics({"q": {"a": 1.0, "z": 1.0}}, qrels, [RANKED_MEASURES[0]])["nDCG'"]["q"]
    assert first == pytest.approx((3 / log2(3)) / 3)  # z first, a second
    qrels2 = {"q": {"a": 3, "Z": 0}}  # "Z" < "a": a first
    second = score_topics({"q": {"a": 1.0, "Z": 1.0}}, qrels2, [RANKED_MEASURES[0]])["nDCG'"]["q"]
    assert second == pytest.approx(1.0)


def test_unjudged_removal_is_what_makes_prime_differ():
    run = {"q": {"u1": 3.0, "u2": 2.0, "r": 1.0}}
    qrels = {"q": {"r": 1}}
    scores = score_topics(run, qrels, RANKED_MEASURES)
    assert scores["nDCG'"]["q"] == pytest.approx(1.0)  # r is first once u1, u2 are gone
    assert scores["nDCG@10"]["q"] == pytest.approx(1 / log2(4))  # r third among unjudged


def test_all_unjudged_topic_scores_zero():
    scores = score_topics({"q": {"u": 1.0}}, {"q": {"r": 2}}, RANKED_MEASURES)
    assert scores["nDCG'"]["q"] == 0.0 and scores["MAP'"]["q"] == 0.0


def test_depth_cut_at_1000_in_trec_order():
    run = {"q": {f"d{i:04d}": float(i % 7) for i in range(1500)}}
    cut = cut_depth(run)
    assert len(cut["q"]) == 1000
    assert set(cut["q"]) == set(trec_order(run["q"])[:1000])


def test_judged_fractions_pooled_over_topics():
    run = {"q1": {"a": 3.0, "u": 2.0, "c": 1.0}, "q2": {"v": 1.0}}
    qrels = {"q1": {"a": 1, "c": 0}, "q2": {"e": 1}}
    fr = judged_fractions(run, qrels, (1, 2, 10))
    assert fr[1] == pytest.approx(1 / 2)  # q1: a judged; q2: v not
    assert fr[2] == pytest.approx(1 / 3)  # q1 top 2: a, u -> 1; q2 top 1: 0 -> 1/3
    assert fr[10] == pytest.approx(2 / 4)


def test_ndcg10_measure_is_named_as_in_json():
    assert NDCG_10.name == "nDCG@10" and not NDCG_10.judged_only
    assert [m.name for m in RANKED_MEASURES] == ["nDCG'", "MAP'", "P'@10", "nDCG@10"]


def test_trimmed_scoring_equals_plain_pytrec_eval_on_random_runs():
    """Our shortcuts (one sort, judged-only and top-10 views) against pytrec_eval fed the plain way."""
    import random

    import ir_measures

    rng = random.Random(3)
    qrels = {f"T{t}": {f"d{i}": rng.choice((0, 0, 0, 1, 2, 3)) for i in rng.sample(range(400), 120)} for t in range(12)}
    run = {
        f"T{t}": {f"d{i}": float(rng.randrange(20)) for i in rng.sample(range(400), rng.randrange(1, 300))}  # many ties
        for t in range(10)
    }
    (result,) = evaluate_ranked(1, qrels, [("r", run)])
    judged = {t: {d: s for d, s in docs.items() if d in qrels[t]} for t, docs in run.items()}
    judged = {t: d for t, d in judged.items() if d}
    plain = {}
    for m in ir_measures.pytrec_eval.iter_calc([RANKED_MEASURES[0].measure, RANKED_MEASURES[1].measure,
                                                RANKED_MEASURES[2].measure], qrels, judged):
        plain.setdefault(m.measure, {})[m.query_id] = m.value
    for m in ir_measures.pytrec_eval.iter_calc([NDCG_10.measure], qrels, run):
        plain.setdefault(m.measure, {})[m.query_id] = m.value
    for measure in RANKED_MEASURES:
        for topic in qrels:
            expected = plain[measure.measure].get(topic, 0.0)
            assert result.per_topic[measure.name][topic] == pytest.approx(expected, abs=1e-12), (measure.name, topic)
