"""Cohen's kappa between assessors: against a hand computation and scikit-learn, per topic and overall."""

from __future__ import annotations

import math
import random
import warnings
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from mathsearch.assess import (
    AssessDB,
    agreement,
    binarise,
    build_pool,
    classify_runs,
    cohen_kappa,
    create_pool_db,
)
from mathsearch.cli import app
from mathsearch.errors import InputError


def test_kappa_by_hand():
    a = [3, 2, 1, 0, 3, 2, 0, 1]
    b = [3, 2, 0, 0, 2, 2, 1, 1]
    # Agreement 5/8; marginals a: 2,2,2,2 and b: 2,2,3,1 (grades 0..3), so chance (4+4+6+2)/64 = 1/4;
    # kappa = (5/8 - 1/4) / (3/4) = 1/2.
    assert cohen_kappa(a, b) == pytest.approx(0.5)
    # H+M: a -> 1,1,0,0,1,1,0,0 and b -> 1,1,0,0,1,1,0,0: complete agreement.
    assert binarise(a) == [1, 1, 0, 0, 1, 1, 0, 0]
    assert cohen_kappa(binarise(a), binarise(b)) == pytest.approx(1.0)
    # One category for both: chance agreement is certain, kappa undefined (sklearn: NaN).
    assert cohen_kappa([2, 2, 2], [2, 2, 2]) is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns that the score is undefined
        assert math.isnan(cohen_kappa_score([2, 2, 2], [2, 2, 2]))
    with pytest.raises(ValueError):
        cohen_kappa([1, 2], [1])


@pytest.mark.parametrize("seed", range(6))
def test_kappa_agrees_with_sklearn(seed):
    rng = random.Random(seed)
    n = rng.randint(5, 80)
    a = [rng.choice([0, 1, 2, 3]) for _ in range(n)]
    b = [g if rng.random() < 0.6 else rng.choice([0, 1, 2, 3]) for g in a]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    ba, bb = binarise(a), binarise(b)
    if len(set(ba) | set(bb)) > 1:
        assert cohen_kappa(ba, bb) == pytest.approx(cohen_kappa_score(ba, bb))


def test_agreement_of_a_pool_per_topic_and_overall(tmp_path: Path):
    run = tmp_path / "g-task1-r-auto-both-P.tsv"
    run.write_text("".join(f"A.{t}\tQ0\t{d}\t{d}\t{100 - d}.0\tr\n" for t in (1, 2, 3) for d in range(1, 21)))
    path = tmp_path / "pool.sqlite"
    create_pool_db(path, build_pool(1, classify_runs([run], 1), depth=20), overlap=["A.1", "A.2"])
    rng = random.Random(3)
    expected: dict[str, tuple[list[int], list[int]]] = {}
    with AssessDB(path) as db:
        assert db.overlap() == ["A.1", "A.2"]
        for topic in ("A.1", "A.2", "A.3"):
            for item in db.items(topic):
                g = rng.choice([0, 1, 2, 3])
                db.judge(item.item_id, "ann", g)
                if topic == "A.3":
                    continue  # ann alone: no pair
                h = g if rng.random() < 0.5 else rng.choice([0, 1, 2, 3, 5, 6])
                db.judge(item.item_id, "bob", h)
                if h in (0, 1, 2, 3):
                    expected.setdefault(topic, ([], []))[0].append(g)
                    expected[topic][1].append(h)
        db.judge(db.items("A.3")[0].item_id, "cy", 6)  # cy shares one item with ann, answered "do not know"
        pairs = {p.assessors: p for p in agreement(db)}
    assert set(pairs) == {("ann", "bob"), ("ann", "cy")}
    assert pairs[("ann", "cy")].items == 0 and pairs[("ann", "cy")].graded is None
    p = pairs[("ann", "bob")]
    all_a = expected["A.1"][0] + expected["A.2"][0]
    all_b = expected["A.1"][1] + expected["A.2"][1]
    assert p.items == len(all_a) < 40  # codes 5 and 6 left out
    assert p.graded == pytest.approx(cohen_kappa_score(all_a, all_b))
    assert p.binary == pytest.approx(cohen_kappa_score(binarise(all_a), binarise(all_b)))
    assert list(p.per_topic) == ["A.1", "A.2"]
    for topic, (a, b) in expected.items():
        assert p.per_topic[topic]["items"] == len(a)
        assert p.per_topic[topic]["graded"] == pytest.approx(cohen_kappa_score(a, b))
        assert p.per_topic[topic]["binary"] == pytest.approx(cohen_kappa_score(binarise(a), binarise(b)))
    assert p.mean_topic_kappa("graded") == pytest.approx(
        (p.per_topic["A.1"]["graded"] + p.per_topic["A.2"]["graded"]) / 2)
    result = CliRunner().invoke(app, ["qrels", "agreement", str(path), "--per-topic"])
    assert result.exit_code == 0, result.output
    assert f"ann / bob\t{p.items}\t{p.graded:.3f}\t{p.binary:.3f}" in result.output


def test_an_overlap_larger_than_the_pool_is_refused_and_nothing_written(tmp_path: Path):
    run = tmp_path / "g-task1-r-auto-both-P.tsv"
    run.write_text("".join(f"A.{t}\tQ0\t{d}\t{d}\t{100 - d}.0\tr\n" for t in (1, 2, 3) for d in range(1, 6)))
    path = tmp_path / "pool.sqlite"
    pool = build_pool(1, classify_runs([run], 1), depth=5)
    with pytest.raises(InputError, match="--overlap 4 is more than the pool's 3 topics"):
        create_pool_db(path, pool, overlap=4)
    assert not path.exists()
    assert sorted(create_pool_db(path, pool, overlap=3)) == ["A.1", "A.2", "A.3"]  # every topic, asked for
