"""docs/pyterrier.md runs as it stands on the sample: its Python blocks in order, then its
`mathsearch eval` blocks on the run files they wrote; the tables pt.Experiment prints equal, to 4
decimals, what `mathsearch eval` prints for the same runs (means and paired t-test p-values)."""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, REPO

PAGE = REPO / "docs" / "pyterrier.md"
MEASURES = ("nDCG'", "MAP'", "P'@10")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.S | re.M)


def _rows(lines: list[str], at: int) -> dict[str, dict[str, str]]:
    """The table whose header is ``lines[at]``: ``{first cell: {column: cell}}`` up to a blank line."""
    header = lines[at].split()
    out = {}
    for line in lines[at + 2:]:  # past the header's dashes
        if not line.strip():
            break
        cells = line.split()
        assert len(cells) == len(header), line
        out[cells[0]] = dict(zip(header[1:], cells[1:], strict=True))
    return out


def eval_table(text: str) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """``({run file: {measure: mean}}, {run file: {measure: p}})`` from `mathsearch eval`'s text."""
    lines = text.splitlines()
    means_at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["run"] and line.split()[-1] == "topics")
    p_at = next(i for i, line in enumerate(lines) if line.startswith("p-values against")) + 1
    return _rows(lines, means_at), _rows(lines, p_at)


@pytest.fixture(scope="module")
def page_run(sample_index: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, list[str]]:
    work = tmp_path_factory.mktemp("pyterrier-page")
    (work / "index").symlink_to(sample_index)
    env = {**os.environ, "ARQMATH_HOME": str(DATA), "PYTHONPATH": str(REPO / "src"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    old_cwd, old_home = Path.cwd(), os.environ.get("ARQMATH_HOME")
    os.chdir(work)
    os.environ["ARQMATH_HOME"] = str(DATA)
    namespace: dict = {}
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            for i, code in enumerate(blocks("python")):
                exec(compile(code, f"{PAGE}:python block {i + 1}", "exec"), namespace)  # noqa: S102 - the page's own code
        evals = []
        for code in blocks("bash"):
            if "mathsearch eval" not in code:
                continue
            done = subprocess.run(["bash", "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=1200)
            assert done.returncode == 0, done.stderr
            evals.append(done.stdout)
    finally:
        os.chdir(old_cwd)
        if old_home is None:
            os.environ.pop("ARQMATH_HOME", None)
        else:
            os.environ["ARQMATH_HOME"] = old_home
    return namespace, printed.getvalue(), evals


def _same(experiment, eval_text: str, files: list[str]) -> None:
    means, p_values = eval_table(eval_text)
    assert list(means) == files, (list(means), files)
    assert len(experiment) == len(files)
    for i, (row, file) in enumerate(zip(experiment.to_dict("records"), files, strict=True)):
        for m in MEASURES:
            assert f"{row[m]:.4f}" == means[file][m], (file, m, row[m], means[file][m])
            if i == 0:
                continue
            p = row[f"{m} p-value"]
            shown = p_values[file][m]
            if math.isnan(p):  # PyTerrier's t-test on identical scores; eval says 1.0
                assert shown == "1.0000", (file, m, shown)
            elif p >= 1e-4:
                assert f"{p:.4f}" == shown, (file, m, p, shown)
            else:
                assert f"{p:.1e}" == shown, (file, m, p, shown)


def test_page_runs_and_its_task1_table_is_mathsearch_evals(page_run) -> None:
    namespace, printed, evals = page_run
    assert len(evals) == 2, "the page has one eval block per task"
    table = namespace["table"]
    assert table.to_string(index=False) in printed  # the table the page prints is the one compared
    files = [f"mathsearch-task1-{n}-auto-both-A.tsv" for n in ("bm25_thread", "ours", "tfidf_words", "tangent_s",
                                                               "rrf_bm25_thread_ours", "bm25_thread_formula")]
    assert list(table.name) == list(namespace["results"])
    _same(table, evals[0], files)
    assert "47 judged on this collection" in printed  # the sub-collection protocol's topics, as eval's header
    assert "Task 1, qrels" in evals[0] and ": 47 topics" in evals[0]
    assert "bad file name" not in "".join(evals)  # the page's runs are named as the lab named them


def test_page_task2_table_is_mathsearch_evals(page_run) -> None:
    namespace, printed, evals = page_run
    table2 = namespace["table2"]
    assert table2.to_string(index=False) in printed
    _same(table2, evals[1], [f"mathsearch-task2-{n}-auto-both-A.tsv" for n in ("formula", "tangent_s_formula")])
    results = namespace["results2"]["formula"]
    assert {"post_id", "thread_id", "visual_id"} <= set(results.columns)
    assert (results.visual_id != "").mean() > 0.99
