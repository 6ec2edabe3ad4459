"""The Task 3 development protocol: AR_src / P@1_src (the main source's Task 1 grade) and LO against
the other relevant answers of at most 1,200 characters; Task 1 runs read as their first hit cut."""

from __future__ import annotations

import json

import pytest
from conftest import QRELS
from typer.testing import CliRunner

from mathsearch.cli import app
from mathsearch.evaluation.task3 import ablated_references, evaluate_sources, parse_sources
from mathsearch.text.tokenize import MathRegexTokenizer

TEXTS = {
    "11": "Integrate by parts: $u\\,dv$ gives the result.",
    "12": "Integrate by parts twice and collect the terms.",
    "13": "parts " * 300,  # relevant but longer than 1,200 characters: never a reference
    "14": "Unrelated words only.",
    "21": "Use induction on n.",
    "22": "Prove the base case, then the step by induction on n.",
}
QRELS_TEXT = "A.1\t0\t11\t3\nA.1\t0\t12\t2\nA.1\t0\t13\t3\nA.1\t0\t14\t0\nA.2\t0\t21\t2\nA.2\t0\t22\t3\nA.3\t0\t31\t1\n"


def test_parse_sources():
    assert parse_sources("answer:12,answer:7") == ["12", "7"]
    assert parse_sources(" answer:12 , 7 ,answer:12") == ["12", "7"]  # bare ids, duplicates once
    assert parse_sources("Quora") == [] and parse_sources("GPT:3,answer:5") == ["5"] and parse_sources("") == []


def test_references_leave_out_the_sources_and_long_answers():
    qrels = {"A.1": {"11": 3, "12": 2, "13": 3, "14": 0}}
    refs = ablated_references(qrels, TEXTS, {"A.1": ["11"]})
    assert refs == {"A.1": [TEXTS["12"]]}  # 11 is the source, 13 too long, 14 not relevant
    assert ablated_references(qrels, TEXTS, {})["A.1"] == [TEXTS["11"], TEXTS["12"]]


def test_development_protocol_on_task3_and_task1_runs(tmp_path):
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(QRELS_TEXT)
    task3 = tmp_path / "team-task3-x-auto-both-extract-A.tsv"
    # A.1 cites 11 (grade 3) first, A.2 cites an unjudged post (0), A.3 is not answered (0).
    task3.write_text(f'A.1\t1\t1\tx\tanswer:11,answer:12\t"{TEXTS["11"]}"\n'
                     'A.2\t1\t1\tx\tanswer:99\t"Prove the base case, then the step by induction on n."\n')
    task1 = tmp_path / "team-task1-x-auto-both-A.tsv"
    # First hits in trec_eval order: A.1 -> 13 (tie at 2.0, id descending), A.2 -> 21.
    task1.write_text("A.1\tQ0\t12\t1\t2.0\tx\nA.1\tQ0\t13\t2\t2.0\tx\nA.2\tQ0\t21\t1\t1.0\tx\n")
    report = evaluate_sources(qrels, [task3, task1], TEXTS.get, tokenizer=MathRegexTokenizer())
    t3, t1 = report.runs
    assert t3.per_topic["AR_src"] == {"A.1": 3.0, "A.2": 0.0, "A.3": 0.0}
    assert t3.per_topic["P@1_src"] == {"A.1": 1.0, "A.2": 0.0, "A.3": 0.0}
    # LO: A.1's references exclude both its sources, leaving none (13 is too long): out of the mean.
    # A.2's answer equals post 22's text, which is not among its sources: LO 1.
    assert t3.per_topic["LO"] == {"A.2": pytest.approx(1.0)}
    assert t3.means["AR_src"] == pytest.approx(1.0)
    assert any("without a judgement" in n for n in t3.notes)
    # The Task 1 run: 13 (grade 3) and 21 (grade 2); the first hit cut to 1,200 characters.
    assert t1.per_topic["AR_src"] == {"A.1": 3.0, "A.2": 2.0, "A.3": 0.0}
    assert 0 < t1.per_topic["LO"]["A.1"] < 0.05  # 200 x "parts" (1,200 characters) against 11 and 12
    assert any("cut to 1,200" in n for n in t1.notes)
    # present: the sub-collection protocol drops A.3 (its only judged post is absent).
    sub = evaluate_sources(qrels, [task3], TEXTS.get, present=set(TEXTS), tokenizer=MathRegexTokenizer())
    assert sub.topics == 2 and sub.topics_dropped == ["A.3"]


def test_eval_sources_cli_on_the_sample(sample_index, tmp_path):
    store_ids = []
    from mathsearch.store import Store

    with Store.open(sample_index) as store:
        qrels = QRELS / "task1-2020.tsv"
        judged = [line.split("\t") for line in qrels.read_text().splitlines()]
        present = store.answer_ids()
        for topic, _, doc, rel in judged:
            if topic == "A.1" and doc in present:
                store_ids.append((doc, int(rel), store.post(doc).text))
    best = max(store_ids, key=lambda x: x[1])
    run = tmp_path / "team-task3-x-auto-both-extract-A.tsv"
    run.write_text(f"A.1\t1\t1\tx\tanswer:{best[0]}\tSome answer text.\n")
    result = CliRunner().invoke(app, ["eval", "--task", "3", "--sources", "--qrels", str(qrels), "--index", str(sample_index),
                                      "--collection-only", "--no-cs", "--tokenizer", "regex", "--json", str(run)])
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)[run.name]
    assert entry["per_topic"]["A.1"]["AR_src"] == best[1] and entry["topics"] > 1
    assert entry["AR_src"] == pytest.approx(best[1] / entry["topics"])  # other topics unanswered: 0
    bad = CliRunner().invoke(app, ["eval", "--task", "1", "--sources", "--qrels", str(qrels), str(run)])
    assert bad.exit_code != 0 and "--task 3" in bad.output
