"""Qrels and run readers and writers: layouts, malformed lines, duplicates, Task 3 quoting."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathsearch.errors import FormatError, InputError
from mathsearch.readers.qrels import qrels_to_dict, read_qrels, task3_relevance
from mathsearch.readers.runs import read_formula_run, read_run_scores, read_task3_run, read_trec_run
from mathsearch.records import FormulaHit, ReadReport, ScoredDoc, Task3Answer
from mathsearch.runs import FormulaTsvLookup, write_formula_run, write_task3_run, write_trec_run

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_real_qrels_read_completely():
    report = ReadReport()
    qrels = read_qrels(DATA / "qrels" / "task1-2020.tsv", report)
    assert report.rows == 39124 and report.skipped_total == 0
    by_topic = qrels_to_dict(qrels)
    assert len(by_topic) == 77
    assert {q.relevance for q in qrels} == {0, 1, 2, 3}


def test_qrels_tab_or_space_malformed_lines_counted(tmp_path):
    path = write(tmp_path, "q.tsv", "A.1\t0\t10\t2\nA.1 0 11 3\nA.1\t0\t12\nA.2\t0\t13\thigh\nA.1\t0\t10\t1\n")
    report = ReadReport()
    qrels = read_qrels(path, report)
    assert [(q.doc_id, q.relevance) for q in qrels] == [("10", 2), ("11", 3)]
    assert report.skipped_total == 3
    assert any(p.startswith(f"{path}:3:") for p in report.problems)
    assert any(p.startswith(f"{path}:4:") for p in report.problems)
    assert any(p.startswith(f"{path}:5:") and "repeated" in p for p in report.problems)


def test_qrels_unknown_relevance_refused_with_line(tmp_path):
    path = write(tmp_path, "q.tsv", "A.1\t0\t10\t2\nA.1\t0\t11\t4\n")
    with pytest.raises(FormatError) as err:
        read_qrels(path)
    assert err.value.line == 2 and "unknown relevance value 4" in str(err.value)


def test_task3_codes_5_and_6():
    assert task3_relevance(5) == 0 and task3_relevance(6) == 0 and task3_relevance(3) == 3


def test_qrels_codes_5_6_unjudged_for_ranked_tasks(tmp_path):
    path = write(tmp_path, "q.tsv", "A.1\t0\t10\t5\nA.1\t0\t11\t6\nA.1\t0\t12\t1\n")
    qrels = read_qrels(path)
    assert qrels_to_dict(qrels) == {"A.1": {"12": 1}}
    assert qrels_to_dict(qrels, graded_only=False) == {"A.1": {"10": 5, "11": 6, "12": 1}}


def test_missing_qrels_is_input_error(tmp_path):
    with pytest.raises(InputError):
        read_qrels(tmp_path / "nope.tsv")


def test_trec_run_layouts_duplicates_and_bad_lines(tmp_path):
    text = (
        "A.1\tQ0\t10\t1\t2.5\ttag\n"
        "A.1 Q0 11 2 2.0 tag\n"
        "A.1\t12\t3\t1.5\ttag\n"  # ARQMath-2 layout without Q0
        "A.1\tQ0\t10\t4\t1.0\ttag\n"  # duplicate: first kept
        "A.1\tQ0\t13\tx\t1.0\ttag\n"  # bad rank
        "A.1\tQ0\t14\n"  # too short
    )
    path = write(tmp_path, "run.tsv", text)
    report = ReadReport()
    hits = read_trec_run(path, report)
    assert [(h.doc_id, h.score) for h in hits] == [("10", 2.5), ("11", 2.0), ("12", 1.5)]
    assert report.skipped_total == 3
    assert any(p.startswith(f"{path}:4:") and "duplicate" in p for p in report.problems)
    assert any(p.startswith(f"{path}:6:") for p in report.problems)
    fast = read_run_scores(path, 1, ReadReport())
    assert fast == {"A.1": {"10": 2.5, "11": 2.0, "12": 1.5}}


def test_official_run_reads_without_problems():
    report = ReadReport()
    run = read_run_scores(DATA / "runs" / "prim_MathDowsers-task1-alpha05noReRank-auto-both-A.tsv", 1, report)
    assert report.rows == 8421 and report.skipped_total == 0 and len(run) == 77


def test_formula_run_roundtrip_in_trec_order(tmp_path):
    hits = [
        FormulaHit("B.1", "100", "7", 0.5),
        FormulaHit("B.1", "101", "7", 0.9),
        FormulaHit("B.1", "102", "8", 0.9),  # tie with 101: id descending puts 102 first
        FormulaHit("B.1", "100", "7", 0.1),  # duplicate
    ]
    path = tmp_path / "TeamX-task2-test-auto-math-A.tsv"
    report = write_formula_run(path, hits, run_tag="t")
    assert report.counts["duplicate document"] == 1
    lines = path.read_text().splitlines()
    assert [line.split("\t")[:4] for line in lines] == [
        ["B.1", "102", "8", "1"],
        ["B.1", "101", "7", "2"],
        ["B.1", "100", "7", "3"],
    ]
    back = read_formula_run(path)
    assert [(h.formula_id, h.post_id, h.score) for h in back] == [("102", "8", 0.9), ("101", "7", 0.9), ("100", "7", 0.5)]


def test_trec_writer_cuts_at_1000_and_keeps_exact_scores(tmp_path):
    hits = [ScoredDoc("A.1", str(i), 1.0 / (i + 3)) for i in range(1200)]
    path = tmp_path / "run.tsv"
    report = write_trec_run(path, hits, run_tag="x")
    back = read_trec_run(path)
    assert report.hits == 1000 and len(back) == 1000
    assert back[0].doc_id == "0" and back[-1].rank == 1000
    assert back[5].score == 1.0 / 8  # repr round-trips the float


class _Lookup:
    def post_type(self, post_id):
        return {"1": 1, "2": 2}.get(str(post_id))

    def formula_kind(self, formula_id):
        return {"10": "answer", "11": "comment"}.get(str(formula_id))

    def visual_id(self, formula_id):
        return None


def test_writers_drop_or_refuse_invalid_hits(tmp_path):
    hits = [ScoredDoc("A.1", "1", 2.0), ScoredDoc("A.1", "2", 1.0)]
    report = write_trec_run(tmp_path / "r.tsv", hits, lookup=_Lookup())
    assert report.counts["not an answer post"] == 1
    assert [h.doc_id for h in read_trec_run(tmp_path / "r.tsv")] == ["2"]
    with pytest.raises(InputError, match="not an answer post"):
        write_trec_run(tmp_path / "r2.tsv", hits, lookup=_Lookup(), on_invalid="raise")
    fhits = [FormulaHit("B.1", "10", "5", 1.0), FormulaHit("B.1", "11", "5", 2.0)]
    report = write_formula_run(tmp_path / "f.tsv", fhits, lookup=_Lookup())
    assert report.counts["formula from a comment"] == 1
    assert [h.formula_id for h in read_formula_run(tmp_path / "f.tsv")] == ["10"]


def test_task3_roundtrip_quotes_tabs_newlines_and_length(tmp_path):
    tricky = 'He said "use $\\frac{1}{2}$",\tthen\nstop.'
    answers = [
        Task3Answer("A.1", tricky, 0.9, sources="arqmath:123"),
        Task3Answer("A.2", "x" * 1201, 0.8),  # too long: dropped
        Task3Answer("A.3", "é" * 1200, 0.7),  # 1,200 code points: fine
    ]
    path = tmp_path / "TeamB-task3-t-auto-both-extract-A.tsv"
    report = write_task3_run(path, answers, run_tag="run")
    assert report.counts["answer longer than 1,200 characters"] == 1
    back = read_task3_run(path)
    assert [a.query_id for a in back] == ["A.1", "A.3"]
    assert back[0].answer == tricky and back[0].sources == "arqmath:123" and back[0].rank == 1


def test_task3_reader_guidelines_example_and_bad_lines(tmp_path):
    path = write(
        tmp_path,
        "r.tsv",
        'A.1 1 0.95 Run_0 "Quora" "This can be solved by..."\n'
        'A.2\t1\t0.90\tRun_0\t"Generated"\t"Consider $x$ ..."\n'
        "A.3\t1\tzero\tRun_0\ts\ta\n"
        "A.2\t1\t0.5\tRun_0\ts\tagain\n",
    )
    report = ReadReport()
    back = read_task3_run(path, report)
    assert [(a.query_id, a.sources, a.answer) for a in back] == [
        ("A.1", "Quora", "This can be solved by..."),
        ("A.2", "Generated", "Consider $x$ ..."),
    ]
    assert report.skipped_total == 2
    assert any(p.startswith(f"{path}:3:") for p in report.problems)


def test_formula_tsv_lookup_on_real_sample():
    lookup = FormulaTsvLookup(DATA / "collection" / "formulas" / "latex_representation_v3.tsv")
    assert lookup.formula_kind("1552") == "answer" and lookup.visual_id("1552") == "695948"
    assert lookup.formula_post("1552") == "9253" and lookup.post_type("9253") == 2
    assert lookup.report.rows == 76968


def test_run_scores_read_in_a_fresh_interpreter(tmp_path):
    """`import pyarrow` does not load `pyarrow.compute`: the arrow reader imports it itself.  A core
    install (no pandas) crashed on `mathsearch eval` and `fuse`; in the full venv pyarrow's pandas
    shim loaded it, hiding the bug, so the fresh interpreter here runs as if pandas were missing."""
    import subprocess
    import sys

    run = DATA / "runs" / "prim_MathDowsers-task1-alpha05noReRank-auto-both-A.tsv"
    code = (
        "import sys\n"
        "class NoPandas:  # as in a core install\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'pandas': raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, NoPandas())\n"
        "from mathsearch.readers.runs import read_run_scores; from mathsearch.records import ReadReport\n"
        f"r = ReadReport(); s = read_run_scores({str(run)!r}, 1, r)\n"
        "print(len(s), sum(map(len, s.values())), r.skipped_total, 'pyarrow.compute' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    topics, hits, skipped, arrow_used = out.stdout.split()
    assert int(topics) > 0 and int(hits) >= int(topics) and skipped == "0"
    assert arrow_used == "True"  # the fast reader ran, not only the line-by-line fallback
