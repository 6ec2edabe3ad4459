"""Evaluation and run checks against the collection store built from the real sample."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mathsearch.cli import app
from mathsearch.evaluation import evaluate_runs, from_index

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
QRELS1 = DATA / "qrels" / "task1-2020.tsv"
RUN = DATA / "runs" / "prim_MathDowsers-task1-alpha05noReRank-auto-both-A.tsv"


def test_facts_from_store(sample_index):
    facts = from_index(sample_index)
    assert facts.answers_present is not None and len(facts.answers_present) == 3395
    assert facts.visual_of["1552"] == "695948"
    assert facts.lookup.post_type("9253") == 2  # type: ignore[union-attr]
    text = facts.text_of("9253")  # type: ignore[misc]
    assert text and "$" in text


def test_collection_only_with_index_cli(sample_index):
    result = CliRunner().invoke(
        app, ["eval", "-t", "1", "-q", str(QRELS1), str(RUN), "--index", str(sample_index), "--collection-only", "--json"]
    )
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)[RUN.name]
    full = evaluate_runs(1, QRELS1, [RUN]).runs[0]
    assert 0 < entry["topics"] < 77
    # Only judgements of answers in the sample remain: the official run scores differently.
    assert entry["nDCG'"] != round(full.means["nDCG'"], 4)
    text = CliRunner().invoke(
        app, ["eval", "-t", "1", "-q", str(QRELS1), str(RUN), "--index", str(sample_index), "--collection-only"]
    )
    assert "sub-collection protocol" in text.stdout and "dropped" in text.stdout


def test_task2_with_index_and_check(sample_index, tmp_path):
    facts = from_index(sample_index)
    # Topic B.201 of 2021: judged visual ids that the sample holds, one question/answer instance each.
    qrels = DATA / "qrels" / "task2-2021.tsv"
    judged = {}
    for line in qrels.read_text().splitlines():
        t, _, vid, rel = line.split()
        judged.setdefault(t, {})[vid] = int(rel)
    instance = {}
    for fid, vid in facts.visual_of.items():
        if facts.lookup.formula_kind(fid) in ("question", "answer"):  # type: ignore[union-attr]
            instance.setdefault(vid, fid)
    lines = []
    for topic, docs in judged.items():
        score = 50.0
        for vid in docs:
            if vid in instance:
                lines.append(f"{topic}\t{instance[vid]}\t0\t1\t{score}\tt")
                score -= 0.5
    run = tmp_path / "TeamX-task2-oracle-auto-math-A.tsv"
    run.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["eval", "-t", "2", "-q", str(qrels), str(run), "--index", str(sample_index), "--json"])
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)[run.name]
    assert entry["topics"] == 58 and 0 < entry["nDCG'"] < 1 and entry["judged_at"]["1"] == 1.0
    # Post id 0 is not where those formulae occur: the checker says so.
    check = CliRunner().invoke(app, ["check", str(run), "-t", "2", "--index", str(sample_index), "--json"])
    assert check.exit_code == 1
    problems = json.loads(check.stdout)[run.name]["problems"]
    assert problems.get("formula not in the given post", 0) == len(lines)


def test_check_task1_against_store(sample_index, tmp_path):
    run = tmp_path / "TeamX-task1-mixed-auto-both-A.tsv"
    run.write_text("A.1\tQ0\t9253\t1\t2.0\tt\nA.1\tQ0\t154\t2\t1.0\tt\n")  # 154 is a question (thread id)
    result = CliRunner().invoke(app, ["check", str(run), "-t", "1", "--index", str(sample_index)])
    assert result.exit_code == 1 and "1 x not an answer post" in result.output
