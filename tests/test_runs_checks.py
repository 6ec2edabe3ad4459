"""Run validation and the run-file naming convention of the participant guidelines."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathsearch.cli import app
from mathsearch.records import FormulaHit, ScoredDoc
from mathsearch.runs import (
    check_run_file,
    check_run_name,
    check_task1_hits,
    check_task2_hits,
    parse_run_name,
    suggest_run_name,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
FORMULAS = DATA / "collection" / "formulas" / "latex_representation_v3.tsv"

GUIDELINE_EXAMPLES = [
    ("TeamX-task1-bertA-auto-both-P.tsv", 1),
    ("TeamX-task1-bm25v5-auto-text-A.tsv", 1),
    ("TeamA-task2-browser search-manual-both-P.tsv", 2),
    ("TeamB-task3-gpt3-auto-both-generate-P.tsv", 3),
    ("TeamB-task3-arqmath-auto-both-extract-A.tsv", 3),
    ("TeamZ-task3-mantest-manual-both-generate-A.tsv", 3),
]


@pytest.mark.parametrize(("name", "task"), GUIDELINE_EXAMPLES)
def test_guideline_examples_are_valid(name, task):
    assert check_run_name(name, task) == []


def test_parse_keeps_spaces_and_hyphens_in_id():
    parsed = parse_run_name("TeamA-task2-browser search-manual-both-P.tsv")
    assert parsed is not None and parsed.id == "browser search" and parsed.primary
    parsed = parse_run_name("prim_MathDowsers-task1-alpha05-no-rerank-auto-both-A.tsv")
    assert parsed is not None and parsed.id == "alpha05-no-rerank" and parsed.prime and not parsed.primary


@pytest.mark.parametrize(
    ("name", "task", "fragment"),
    [
        ("TeamX-task1-bm25-auto-both-P.txt", 1, "end in .tsv"),
        ("TeamX-bm25-auto-both-P.tsv", 1, "no task field"),
        ("TeamX-task1-bm25-automatic-both-P.tsv", 1, "run type"),
        ("TeamX-task1-bm25-auto-formula-P.tsv", 1, "data used"),
        ("TeamX-task1-bm25-auto-both-primary.tsv", 1, "evaluation field"),
        ("TeamB-task3-gpt3-auto-both-P.tsv", 3, "too few fields"),
        ("TeamB-task3-gpt3-auto-both-written-P.tsv", 3, "answer type"),
        ("TeamX-task1-bm25-auto-both-P.tsv", 2, "checked as task2"),
    ],
)
def test_bad_names_say_why(name, task, fragment):
    problems = check_run_name(name, task)
    assert any(fragment in p for p in problems), problems


@pytest.mark.parametrize(
    ("name", "task", "expected"),
    [
        ("bm25.tsv", 1, "team-task1-bm25-auto-both-A.tsv"),
        ("TeamB-task3-gpt3-auto-both-P.tsv", 3, "TeamB-task3-gpt3-auto-both-extract-P.tsv"),
        ("TeamX-bm25-text-P.tsv", 1, "TeamX-task1-bm25-auto-text-P.tsv"),
        ("prim_MathDowsers-task1-alpha05noReRank-auto-both-A.tsv", 1, "MathDowsers-task1-alpha05noReRank-auto-both-A.tsv"),
    ],
)
def test_suggested_names_are_valid(name, task, expected):
    suggestion = suggest_run_name(name, task=task)
    assert suggestion == expected
    assert check_run_name(suggestion, task) == []


def test_suggestion_takes_explicit_fields():
    name = suggest_run_name("x", task=2, group="Team-Z", run_id="tangent s", data_used="math", primary=True)
    assert name == "Team_Z-task2-tangent s-auto-math-P.tsv" and check_run_name(name, 2) == []


class _Lookup:
    def post_type(self, post_id):
        return {"1": 1, "2": 2}.get(str(post_id))

    def formula_kind(self, formula_id):
        return {"10": "answer", "11": "comment"}.get(str(formula_id))

    def visual_id(self, formula_id):
        return None


def test_task1_hit_checks():
    hits = [ScoredDoc("A.1", "1", 1.0), ScoredDoc("A.1", "2", 1.0), ScoredDoc("A.9", "3", 1.0)]
    kinds = [p.kind for p in check_task1_hits(hits, _Lookup(), topics={"A.1"})]
    assert sorted(kinds) == ["not an answer post", "unknown to the collection", "unknown topic"]
    many = [ScoredDoc("A.1", str(i), 1.0) for i in range(1001)]
    assert [p.kind for p in check_task1_hits(many)] == ["more than 1,000 hits"]


def test_task2_checks_against_real_formula_index(tmp_path):
    from mathsearch.runs import FormulaTsvLookup

    lookup = FormulaTsvLookup(FORMULAS)
    comment = next(f for f, k in lookup._kind.items() if k == "comment")
    hits = [
        FormulaHit("B.1", "1552", "9253", 1.0),  # answer formula in its own post: valid
        FormulaHit("B.1", "1552", "9999", 0.9),  # wrong post
        FormulaHit("B.1", comment, lookup.formula_post(comment), 0.8),
    ]
    kinds = sorted(p.kind for p in check_task2_hits(hits, lookup))
    assert kinds == ["formula from a comment", "formula not in the given post"]


def test_check_run_file_reports_everything(tmp_path):
    path = tmp_path / "myrun.tsv"
    path.write_text("A.1\tQ0\t1\t1\t1.0\tt\nA.1\tQ0\t2\t2\t0.5\tt\nA.1\tQ0\t2\t3\t0.4\tt\nbroken\n")
    report = check_run_file(path, 1, _Lookup(), topics={"A.1"})
    assert report.counts["not an answer post"] == 1
    assert report.counts["duplicate document"] == 1
    assert report.counts["malformed line"] == 1
    assert report.counts["bad file name"] >= 1
    assert not report.ok


def test_check_command(tmp_path):
    path = tmp_path / "myrun.tsv"
    path.write_text("A.1\tQ0\t1\t1\t1.0\tt\nA.1\tQ0\t1\t2\t0.5\tt\n")
    result = CliRunner().invoke(app, ["check", str(path), "--task", "1"])
    assert result.exit_code == 1
    assert "duplicate document" in result.output and "suggested name: team-task1-myrun-auto-both-A.tsv" in result.output
    good = tmp_path / "TeamX-task1-bm25-auto-both-P.tsv"
    good.write_text("A.1\tQ0\t1\t1\t1.0\tt\n")
    result = CliRunner().invoke(app, ["check", str(good), "--task", "1", "--json"])
    assert result.exit_code == 0 and '"ok": true' in result.output
