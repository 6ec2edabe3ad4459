"""mathsearch qrels export: the judgements of an assessment database as the lab's qrels files, which
our own `mathsearch eval` then reads (Task 1 answer ids, Task 2 visual and formula ids, Task 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import cli, write

from mathsearch.assess import AssessDB, build_pool, classify_runs, create_pool_db, export_qrels
from mathsearch.assess.pool import task3_answer_id


def eval_json(*args) -> dict:
    result = cli("eval", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def task1_pool(tmp_path) -> tuple[Path, Path]:
    run = write(tmp_path / "g-task1-r-auto-both-P.tsv", [
        f"A.{t}\tQ0\t{doc}\t{rank}\t{10 - rank}.0\tr" for t in (1, 2) for rank, doc in enumerate((101, 102, 103, 104), 1)])
    db = tmp_path / "pool.sqlite"
    create_pool_db(db, build_pool(1, classify_runs([run], 1), depth=4))
    return run, db


def grade_by_doc(db: AssessDB, assessor: str, grades: dict[tuple[str, str], int]) -> None:
    ids = {(i.topic_id, i.doc_id): i.item_id for i in db.items()}
    for key, grade in grades.items():
        db.judge(ids[key], assessor, grade)


def test_task1_export_takes_each_topics_first_assessor_and_eval_reads_it(task1_pool, tmp_path):
    run, path = task1_pool
    with AssessDB(path) as db:
        grade_by_doc(db, "ann", {("A.1", "101"): 3, ("A.1", "102"): 0, ("A.1", "103"): 2})
        grade_by_doc(db, "bob", {("A.1", "101"): 0, ("A.1", "104"): 1, ("A.2", "101"): 2, ("A.2", "103"): 6})
        grade_by_doc(db, "ann", {("A.2", "102"): 3})  # bob was first on A.2
    out = tmp_path / "qrels"
    result = cli("qrels", "export", path, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["lines"] == {"task1": 7} and summary["topics"] == 2
    lines = (out / "qrels-task1.tsv").read_text().splitlines()
    assert lines == ["A.1\t0\t101\t3", "A.1\t0\t102\t0", "A.1\t0\t103\t2", "A.1\t0\t104\t1",
                     "A.2\t0\t101\t2", "A.2\t0\t102\t3", "A.2\t0\t103\t6"]
    scores = eval_json("--task", 1, "--qrels", out / "qrels-task1.tsv", run)[run.name]
    assert scores["topics"] == 2
    # A.1: relevant (H+M) 101 and 103 of 4 judged; A.2: 101 and 102 (103 "do not know" is unjudged).
    assert scores["P'@10"] == pytest.approx((2 / 10 + 2 / 10) / 2)
    assert scores["per_topic"]["A.1"]["MAP'"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert scores["per_topic"]["A.2"]["MAP'"] == pytest.approx(1.0)
    # Preferring bob: his grade of A.1/101 wins; ann still fills what bob left.
    assert cli("qrels", "export", path, "--out", out, "--assessor", "bob").exit_code == 2  # files exist
    assert (out / "qrels-task1.tsv").read_text().splitlines() == lines
    result = cli("qrels", "export", path, "--out", out, "--assessor", "bob", "--overwrite")
    assert result.exit_code == 0, result.output
    assert "A.1\t0\t101\t0" in (out / "qrels-task1.tsv").read_text().splitlines()
    assert "A.1\t0\t102\t0" in (out / "qrels-task1.tsv").read_text().splitlines()
    assert cli("qrels", "export", path, "--out", tmp_path / "x", "--assessor", "nobody").exit_code == 2


def test_task2_export_gives_visual_id_and_formula_id_qrels_that_eval_reads(sample_index, data_dir, tmp_path):
    from mathsearch.store import Store

    store = Store.open(sample_index)
    # Two instances of one visual id (and one of another) from the sample, as a formula run would return them.
    vid = next(v for (v,) in store.db.execute(
        "SELECT visual_id FROM formulas WHERE kind IN ('question', 'answer') AND visual_id IS NOT NULL "
        "GROUP BY visual_id HAVING count(*) >= 3 LIMIT 1"))
    twins = store.formulas_with_visual_id(vid, 2)
    single = next(f for f in store.formulas_with_visual_id(next(v for (v,) in store.db.execute(
        "SELECT visual_id FROM formulas WHERE kind = 'answer' AND visual_id != ? LIMIT 1", (vid,))), 1))
    hits = [twins[0], single, twins[1]]
    run = write(tmp_path / "g-task2-r-auto-math-P.tsv",
                [f"B.1\t{f.formula_id}\t{f.post_id}\t{r}\t{5 - r}.0\tr" for r, f in enumerate(hits, 1)])
    path = tmp_path / "pool.sqlite"
    create_pool_db(path, build_pool(2, classify_runs([run], 2), depth=2, visual_ids=store.visual_ids))
    with AssessDB(path) as db:
        ids = {i.doc_id: i.item_id for i in db.items()}
        assert set(ids) == {str(f.formula_id) for f in hits}
        db.judge(ids[str(twins[0].formula_id)], "ann", 1)
        db.judge(ids[str(twins[1].formula_id)], "ann", 3)
        db.judge(ids[str(single.formula_id)], "ann", 5)
        result = export_qrels(db, tmp_path / "q")
    visual = (tmp_path / "q" / "qrels-task2-visual.tsv").read_text().splitlines()
    formula = (tmp_path / "q" / "qrels-task2-formula.tsv").read_text().splitlines()
    assert visual == sorted([f"B.1\t0\t{vid}\t3", f"B.1\t0\t{single.visual_id}\t5"],
                            key=lambda line: int(line.split("\t")[2]))
    assert sorted(formula) == sorted([f"B.1\t0\t{twins[0].formula_id}\t1", f"B.1\t0\t{twins[1].formula_id}\t3",
                                      f"B.1\t0\t{single.formula_id}\t5"])
    assert result.judgements == {"task2_visual": 2, "task2_formula": 3}
    by_visual = eval_json("--task", 2, "--qrels", tmp_path / "q" / "qrels-task2-visual.tsv", "--index", sample_index,
                          run)[run.name]
    by_formula = eval_json("--task", 2, "--qrels", tmp_path / "q" / "qrels-task2-formula.tsv", "--index",
                           sample_index, run)[run.name]
    # One judged visual id, relevant (3): it ranks first in both readings; the "system failure" is unjudged.
    for scores in (by_visual, by_formula):
        assert scores["topics"] == 1
        assert scores["nDCG'"] == pytest.approx(1.0)
        assert scores["P'@10"] == pytest.approx(0.1)


def test_task3_export_writes_the_answer_map_and_texts_eval_needs(tmp_path):
    a = write(tmp_path / "g-task3-a-auto-both-extract-P.tsv", ['A.1\t1\t1.0\ta\t100\t"Use $\\sum 1/n$, it diverges."',
                                                             'A.2\t1\t1.0\ta\t7\t"No idea"'])
    b = write(tmp_path / "g-task3-b-auto-both-generate-A.tsv", ['A.1\t1\t1.0\tb\t200\t"Compare with an integral."'])
    path = tmp_path / "pool.sqlite"
    create_pool_db(path, build_pool(3, classify_runs([a, b], 3)))
    first = task3_answer_id("Use $\\sum 1/n$, it diverges.")
    second = task3_answer_id("Compare with an integral.")
    with AssessDB(path) as db:
        grade_by_doc(db, "ann", {("A.1", first): 3, ("A.1", second): 1, ("A.2", task3_answer_id("No idea")): 5})
    out = tmp_path / "q"
    assert cli("qrels", "export", path, "--out", out).exit_code == 0
    amap = (out / "task3-answer-map.tsv").read_text().splitlines()
    assert sorted(amap) == sorted([f"{a.stem}\tA.1\t{first}", f"{a.stem}\tA.2\t{task3_answer_id('No idea')}",
                                   f"{b.stem}\tA.1\t{second}"])
    args = ["--task", 3, "--qrels", out / "qrels-task3.tsv", "--answer-map", out / "task3-answer-map.tsv",
            "--answers", out / "task3-answers.tsv", "--no-cs"]
    got = eval_json(*args, a, b)
    # AR is the grade (5, system failure, counts 0); P@1 is H+M.
    assert got[a.name]["per_topic"]["A.1"]["AR"] == 3.0
    assert got[a.name]["per_topic"]["A.2"]["AR"] == 0.0
    assert got[b.name]["per_topic"]["A.1"]["AR"] == 1.0
    assert got[a.name]["P@1"] == pytest.approx(0.5)
    # LO of b's answer against the relevant reference (a's answer text, read from task3-answers.tsv).
    assert 0.0 <= got[b.name]["per_topic"]["A.1"]["LO"] < 1.0
    assert got[a.name]["per_topic"]["A.1"]["LO"] == pytest.approx(1.0)
