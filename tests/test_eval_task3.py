"""Task 3 measures: AR, P@1 (codes 5/6), Lexical Overlap, Contextual Similarity, Task 1 runs cut at 1."""

from __future__ import annotations

import numpy as np
import pytest

from mathsearch.evaluation import evaluate_runs, token_f1
from mathsearch.evaluation.similarity import ContextualSimilarity, greedy_f1
from mathsearch.evaluation.task3 import Task3Scores, overlap_scores, relevance_scores
from mathsearch.text.tokenize import MathRegexTokenizer, default_tokenizer

QRELS = {"A.1": {"d1": 3, "d2": 5, "d3": 2}, "A.2": {"e1": 6, "e2": 1}, "A.3": {"g1": 0}}


def test_ar_and_p1_with_failure_codes_and_missing_topic():
    out = Task3Scores()
    relevance_scores({"A.1": "d1", "A.2": "e1"}, QRELS, out)
    assert out.per_topic["AR"] == {"A.1": 3.0, "A.2": 0.0, "A.3": 0.0}  # 6 counts 0; A.3 unanswered
    assert out.per_topic["P@1"] == {"A.1": 1.0, "A.2": 0.0, "A.3": 0.0}
    assert out.unanswered == ["A.3"]


def test_unjudged_answer_left_out():
    out = Task3Scores()
    relevance_scores({"A.1": "zzz", "A.2": "e2", "A.3": "g1"}, QRELS, out)
    assert out.per_topic["AR"] == {"A.2": 1.0, "A.3": 0.0} and out.unjudged == ["A.1"]


def test_token_f1_worked_out():
    # common {a, b}: P = 2/4, R = 2/3, F1 = 2PR/(P+R) = 4/7
    assert token_f1(list("abcd"), list("abe")) == pytest.approx(4 / 7)
    assert token_f1(["x", "x"], ["x"]) == pytest.approx(2 * 0.5 * 1 / 1.5)  # multiset counts
    assert token_f1([], []) == 1.0 and token_f1(["a"], []) == 0.0


def test_math_regex_tokenizer():
    tok = MathRegexTokenizer()
    assert tok.tokenize(r"Let $x^2+\alpha = 3.5$ Hold") == ["let", "$", "x", "^", "2", "+", "\\alpha", "=", "3.5", "$", "hold"]


def test_default_tokenizer_is_local_and_named():
    tok = default_tokenizer()
    assert tok.name  # reported in the output
    tokens = tok.tokenize("The integral of x")
    assert "integral" in tokens


def test_lexical_overlap_max_over_references_and_mean():
    tok = MathRegexTokenizer()
    refs = {"A.1": ["a b e", "z z z"], "A.2": ["q"], "A.3": []}
    out = Task3Scores()
    overlap_scores({"A.1": "a b c d"}, refs, out, tok)
    assert out.per_topic["LO"] == {"A.1": pytest.approx(4 / 7), "A.2": 0.0}  # A.2 unanswered: 0
    assert out.no_reference == ["A.3"]


def test_greedy_f1_worked_out():
    cand = np.array([[1.0, 0.0], [0.0, 1.0]])
    ref = np.array([[1.0, 0.0]])
    # precision: rows' best matches 1 and 0 -> 0.5; recall: 1 -> F1 = 2/3
    assert greedy_f1(cand, ref) == pytest.approx(2 / 3)
    assert greedy_f1(cand, cand) == pytest.approx(1.0)


@pytest.fixture(scope="module")
def similarity():
    return ContextualSimilarity()


def test_contextual_similarity_with_local_minilm(similarity):
    text = "The derivative of $x^2$ is $2x$ by the power rule."
    assert similarity.f1(text, text) == pytest.approx(1.0, abs=1e-5)
    close = similarity.f1(text, "By the power rule, the derivative of $x^2$ equals $2x$.")
    far = similarity.f1(text, "Paris is the capital of France and has many museums.")
    assert 0 < far < close < 1
    assert similarity.best_f1(text, ["Paris is the capital of France.", text]) == pytest.approx(1.0, abs=1e-5)
    assert "MiniLM" in similarity.name or "MathBERTa" in similarity.name


def test_task3_run_and_task1_run_end_to_end(tmp_path, similarity):
    qrels = tmp_path / "q3.tsv"
    qrels.write_text("A.1\t0\t11\t3\nA.1\t0\t12\t0\nA.2\t0\t21\t2\nA.2\t0\t22\t5\n")
    answers = tmp_path / "answers.tsv"
    answers.write_text('11\t"Integrate by parts: $\\int u\\,dv = uv - \\int v\\,du$."\n21\t"Use induction on n."\n'
                       '12\tNo idea.\n22\tSomething.\n')
    task3 = tmp_path / "TeamB-task3-x-auto-both-extract-A.tsv"
    task3.write_text('A.1\t1\t1.0\tx\t11\t"Integrate by parts: $\\int u\\,dv = uv - \\int v\\,du$."\n'
                     'A.2\t1\t1.0\tx\tgen\t"Prove it for n = 1, then the step."\n')
    task1 = tmp_path / "TeamB-task1-x-auto-both-A.tsv"
    # 12 and 11 tie: id descending puts 12 first, so the Task 1 run's answer to A.1 is 12 (rel 0).
    task1.write_text("A.1\tQ0\t11\t1\t2.0\tx\nA.1\tQ0\t12\t2\t2.0\tx\nA.2\tQ0\t22\t1\t1.0\tx\n")
    from mathsearch.evaluation import read_answer_texts

    report = evaluate_runs(3, qrels, [task3, task1], answer_texts=read_answer_texts(answers))
    t3, t1 = report.runs
    # Task 3 run: A.1 names judged post 11 in Sources (rel 3); A.2 is generated, unjudged -> left out.
    assert t3.per_topic["AR"] == {"A.1": 3.0} and t3.means["P@1"] == 1.0
    assert t3.per_topic["LO"]["A.1"] == pytest.approx(1.0)
    assert 0 < t3.per_topic["LO"]["A.2"] < 1
    assert t3.per_topic["CS"]["A.1"] == pytest.approx(1.0, abs=1e-5)
    # Task 1 run cut at its first hit: A.1 -> 12 (0), A.2 -> 22 (code 5 -> 0)
    assert t1.per_topic["AR"] == {"A.1": 0.0, "A.2": 0.0}
    assert any("tokenizer" in n for n in report.notes) and any("CS model" in n for n in report.notes)


def test_answer_without_text_left_out_of_overlap():
    out = Task3Scores()
    refs = {"A.1": ["a b"], "A.2": ["c"]}
    overlap_scores({"A.1": "a b"}, refs, out, MathRegexTokenizer(), text_unknown={"A.2"})
    assert out.per_topic["LO"] == {"A.1": 1.0} and out.no_answer_text == ["A.2"]


def test_lab_answer_map_and_cli_json(tmp_path):
    import json

    from typer.testing import CliRunner

    from mathsearch.cli import app

    qrels = tmp_path / "q3.tsv"
    qrels.write_text("A.1\t0\td_1\t2\nA.2\t0\td_2\t6\nA.2\t0\td_3\t3\n")
    run = tmp_path / "TeamB-task3-gen-auto-both-generate-P.tsv"
    run.write_text('A.1\t1\t0.9\tgen\tGPT\t"An answer."\nA.2\t1\t0.8\tgen\tGPT\t"Another."\n')
    amap = tmp_path / "teams_document_id.tsv"  # the lab's layout: run name, topic, answer id
    amap.write_text(f"{run.stem}\tA.1\td_1\n{run.stem}\tA.2\td_2\n")
    texts = tmp_path / "texts.tsv"
    texts.write_text("d_1\tAn answer.\nd_3\tSomething else entirely.\n")
    result = CliRunner().invoke(
        app, ["eval", "-t", "3", "-q", str(qrels), str(run), "--answer-map", str(amap), "--answers", str(texts), "--no-cs", "--json"]
    )
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)[run.name]
    assert entry["AR"] == pytest.approx((2 + 0) / 2) and entry["P@1"] == pytest.approx(1 / 2)  # 6 = do not know -> 0
    assert entry["LO"] < 1 and entry["per_topic"]["A.1"]["LO"] == pytest.approx(1.0)
    assert "CS" not in entry and entry["topics"] == 2
