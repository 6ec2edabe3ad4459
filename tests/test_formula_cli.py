"""The ``mathsearch formula`` command: one formula, or a formula TSV as JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mathsearch.cli import app

SAMPLE_TSV = Path(__file__).resolve().parents[1].parent / "shared/data/arqmath/collection/formulas/latex_representation_v3.tsv"
runner = CliRunner()


def test_one_formula_as_json_has_every_representation():
    result = runner.invoke(app, ["formula", r"x!! - y^2 = 0", "--json"])
    assert result.exit_code == 0, result.output
    rep = json.loads(result.stdout)
    assert rep["prefix"] == "U!eq O!minus O!double-factorial V!x O!SUP V!y N!2 N!0"
    assert rep["recovered"] is False
    for key in ("visual_key", "slt", "opt", "infix", "slt_tuples", "opt_tuples", "leaf_paths", "math_terms",
                "words", "pmathml", "cmathml", "slt_tree", "opt_tree"):
        assert rep[key], key


def test_one_formula_as_text():
    result = runner.invoke(app, ["formula", r"\frac12"])
    assert result.exit_code == 0
    assert "slt: FRAC[o:N!1,u:N!2]" in result.stdout


def test_tsv_to_jsonl(tmp_path):
    lines = SAMPLE_TSV.read_text(encoding="utf-8").splitlines()[:51]
    small = tmp_path / "f.tsv"
    small.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["formula", "--tsv", str(small), "--jsonl"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 50
    assert rows[0]["id"] == lines[1].split("\t")[0]
    assert set(rows[0]) == {"id", "visual_key", "recovered", "slt", "opt", "prefix"}


def test_broken_tsv_lines_are_reported_and_counted(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n1\t2\t3\tanswer\t9\tx^2\nbroken line\n2\tx\t3\tanswer\t9\ty\n",
                   encoding="utf-8")
    result = runner.invoke(app, ["formula", "--tsv", str(bad), "--jsonl"])
    assert result.exit_code == 1
    assert sum(1 for line in result.stdout.splitlines() if line.startswith("{")) == 1


def test_usage_errors_are_one_sentence():
    result = runner.invoke(app, ["formula"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    result = runner.invoke(app, ["formula", "--tsv", "/nonexistent.tsv"])
    assert result.exit_code == 2 and "no such formula TSV" in result.output
