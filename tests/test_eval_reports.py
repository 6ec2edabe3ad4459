"""Reports: intervals, significance tests, categories, the sub-collection protocol, bad input at the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathsearch.cli import app
from mathsearch.errors import InputError
from mathsearch.evaluation import (
    category_means,
    evaluate_runs,
    mean_ci,
    paired_t_test,
    randomisation_test,
    read_categories,
    restrict_qrels,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
QRELS = DATA / "qrels" / "task1-2020.tsv"
RUN = DATA / "runs" / "prim_MathDowsers-task1-alpha05noReRank-auto-both-A.tsv"


def test_mean_ci_worked_out():
    ci = mean_ci([1.0, 2.0, 3.0, 4.0])
    # sd = sqrt(5/3), sem = sd / 2, t(0.975, 3) = 3.182446305
    half = 3.182446305 * math.sqrt(5 / 3) / 2
    assert ci.mean == 2.5 and ci.n == 4
    assert ci.low == pytest.approx(2.5 - half, abs=1e-8) and ci.high == pytest.approx(2.5 + half, abs=1e-8)


def test_paired_t_test_worked_out():
    a = [0.5, 0.6, 0.7, 0.8]
    b = [0.4, 0.6, 0.5, 0.7]
    # d = 0.1, 0, 0.2, 0.1: mean 0.1, sd = sqrt(0.02/3), t = 0.1 / (sd / 2) = 2.449..., df 3 -> p = 0.0917
    assert paired_t_test(a, b) == pytest.approx(0.09172, abs=1e-4)
    assert paired_t_test(a, a) == 1.0


def test_randomisation_test_agrees_with_exact_enumeration():
    a = [0.9, 0.8, 0.7, 0.9, 0.6]
    b = [0.1, 0.2, 0.3, 0.1, 0.4]
    # all differences positive: only 2 of the 32 sign patterns reach |mean| -> exact p = 1/16
    p = randomisation_test(a, b, trials=20000)
    assert p == pytest.approx(1 / 16, abs=0.01)
    assert randomisation_test(a, a) == 1.0


def test_categories_file_and_means(tmp_path):
    path = tmp_path / "cats.csv"
    path.write_text("Topic,Category,Difficulty\nA.1,proof,easy\nA.2,proof,hard\nA.3,concept,easy\n")
    cats = read_categories(path)
    assert cats == {
        "Category": {"A.1": "proof", "A.2": "proof", "A.3": "concept"},
        "Difficulty": {"A.1": "easy", "A.2": "hard", "A.3": "easy"},
    }
    means = category_means({"A.1": 1.0, "A.2": 0.5, "A.3": 0.0}, cats)
    assert means["Category"] == {"concept": (0.0, 1), "proof": (0.75, 2)}
    plain = tmp_path / "cats.tsv"
    plain.write_text("A.1\tproof\nA.2\tconcept\n")
    assert read_categories(plain) == {"category": {"A.1": "proof", "A.2": "concept"}}
    notes = tmp_path / "notes.txt"  # one column: nothing to group by, said rather than ignored
    notes.write_text("my notes\nmore notes\n")
    with pytest.raises(InputError, match="has no category column"):
        read_categories(notes)
    header_only = tmp_path / "header.csv"
    header_only.write_text("Topic,Category\nA.1\n")
    with pytest.raises(InputError, match="no topic line with 2 fields"):
        read_categories(header_only)


def test_restrict_qrels():
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1, "d": 0}, "q3": {"e": 0}, "q4": {"f": 1, "g": 3}}
    r = restrict_qrels(qrels, {"a", "b", "d", "e", "f"})
    # q4 keeps only a low-relevance answer: not relevant under H+M, so it is dropped too
    assert r.qrels == {"q1": {"a": 2, "b": 0}}
    assert r.topics_dropped == ["q2", "q3", "q4"] and r.judgements_removed == 2 and r.judgements_kept == 5
    lenient = restrict_qrels(qrels, {"a", "b", "d", "e", "f"}, min_relevance=1)
    assert set(lenient.qrels) == {"q1", "q4"}


def test_collection_only_on_sample_posts():
    from mathsearch.evaluation import from_posts_xml

    facts = from_posts_xml(DATA / "collection" / "Posts.V1.3.xml")
    report = evaluate_runs(1, QRELS, [RUN], facts=facts, collection_only=True)
    assert 0 < report.topics < 77 and len(report.topics_dropped) == 77 - report.topics
    (result,) = report.runs
    # Fewer judgements: the measures change but stay valid.
    assert 0 <= result.means["nDCG'"] <= 1 and result.topics == report.topics


def test_categories_and_two_runs_in_json(tmp_path):
    cats = tmp_path / "cats.tsv"
    cats.write_text("topic\tkind\n" + "".join(f"A.{i}\t{'odd' if i % 2 else 'even'}\n" for i in range(1, 99)))
    other = tmp_path / "TeamX-task1-top5-auto-both-A.tsv"
    kept: dict[str, int] = {}
    out_lines = []
    for line in RUN.read_text().splitlines():
        topic = line.split("\t")[0]
        kept[topic] = kept.get(topic, 0) + 1
        if kept[topic] <= 5:
            out_lines.append(line)
    other.write_text("\n".join(out_lines) + "\n")
    result = CliRunner().invoke(
        app, ["eval", "-t", "1", "-q", str(QRELS), str(RUN), str(other), "--categories", str(cats), "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    second = out[other.name]
    assert 0 <= second["p_values"]["nDCG'"] < 0.05  # five hits a topic: much worse, significantly
    assert set(second["categories"]["nDCG'"]["kind"]) == {"odd", "even"}
    assert second["judged_at"]["1"] == 1.0
    text = CliRunner().invoke(app, ["eval", "-t", "1", "-q", str(QRELS), str(RUN), str(other), "--test", "randomisation"])
    assert "p-values against" in text.stdout and "randomisation" in text.stdout


def test_bad_qrels_refused_with_line_no_traceback(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("A.1\t0\t1\t2\nA.1\t0\t2\t9\n")
    result = CliRunner().invoke(app, ["eval", "-t", "1", "-q", str(bad), str(RUN)])
    assert result.exit_code == 2
    assert "line 2" in result.output and "unknown relevance value 9" in result.output
    assert "Traceback" not in result.output


def test_malformed_run_line_named_and_exit_1(tmp_path):
    run = tmp_path / "TeamX-task1-bad-auto-both-A.tsv"
    run.write_text("A.1\tQ0\t1005820\t1\t1.0\tt\nA.1\tQ0\t1005832\n")
    result = CliRunner().invoke(app, ["eval", "-t", "1", "-q", str(QRELS), str(run)])
    assert result.exit_code == 1
    assert f"{run}:2" in result.output.replace("\n", "")


def test_missing_run_and_task2_without_formulas(tmp_path):
    result = CliRunner().invoke(app, ["eval", "-t", "1", "-q", str(QRELS), str(tmp_path / "none.tsv")])
    assert result.exit_code == 2 and "does not exist" in result.output and "Traceback" not in result.output
    task2_run = tmp_path / "t2.tsv"
    task2_run.write_text("B.201\t123\t456\t1\t1.0\tr\n")
    result = CliRunner().invoke(app, ["eval", "-t", "2", "-q", str(DATA / "qrels" / "task2-2021.tsv"), str(task2_run)])
    assert result.exit_code == 2 and "--formulas" in result.output
    # a Task 1 run given as Task 2 is told by its layout first
    result = CliRunner().invoke(app, ["eval", "-t", "2", "-q", str(DATA / "qrels" / "task2-2021.tsv"), str(RUN)])
    assert result.exit_code == 2 and "the layout of a Task 1 run" in result.output


def test_an_empty_run_is_refused_naming_the_file(tmp_path):
    """An empty run file (a write that failed, the wrong file) printed a table of zeros and exit 0."""
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    for task in ("1", "3"):
        result = CliRunner().invoke(app, ["eval", "-t", task, "-q", str(QRELS), str(empty)])
        assert result.exit_code == 2, result.output
        assert "empty.tsv: holds no" in result.output and "nothing to score" in result.output
        assert "nDCG" not in result.output and "Traceback" not in result.output
    assert empty.read_text() == ""  # read, never written
