"""Issue 15, defects 5, 7, 8 and 10: outputs checked before the work, capped search output, wrong or
empty inputs refused with a clear message, and output fit for pipes and logs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import TOPICS
from typer.testing import CliRunner

from mathsearch.cli import app
from mathsearch.errors import FormatError, InputError
from mathsearch.readers.topics import read_topics
from mathsearch.runs import make as making
from mathsearch.systems import make_system

TOPICS_2020 = TOPICS / "task1-2020.xml"


@pytest.fixture(autouse=True)
def _not_a_terminal(monkeypatch):
    # What a user piping into a log sees: no forced colours, rich's default width.
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def run_args(index: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--index", str(index), "--system", "bm25-thread", "--topics", str(TOPICS_2020),
            "--out", str(out), "--depth", "3", *extra]


@pytest.fixture(scope="module")
def a_run(sample_index: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "bm25.tsv"
    result = invoke(*run_args(sample_index, out))
    assert result.exit_code == 0, result.output
    return out


# Defect 5: output paths are checked before any work, and nothing the user did not name is touched.


def test_run_out_folder_refused_before_the_search(sample_index, tmp_path, monkeypatch):
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "keep.tsv").write_bytes(b"precious\n")

    def searched(*_a, **_k):
        raise AssertionError("the search ran before --out was checked")

    monkeypatch.setattr(making, "run_system", searched)  # what make_run searches with
    result = invoke(*run_args(sample_index, folder))
    assert result.exit_code == 2, result.output
    assert "is a folder" in result.stderr and str(folder) in result.stderr
    assert isinstance(result.exception, SystemExit)  # a clean exit, not an IsADirectoryError
    assert [p.name for p in folder.iterdir()] == ["keep.tsv"]
    assert (folder / "keep.tsv").read_bytes() == b"precious\n"


def test_fuse_out_folder_refused(a_run, tmp_path):
    result = invoke("fuse", a_run, "--out", tmp_path)
    assert result.exit_code == 2, result.output
    assert "is a folder" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_run_out_missing_parent_folders_are_created(sample_index, tmp_path):
    out = tmp_path / "missing" / "dir" / "x.tsv"
    result = invoke(*run_args(sample_index, out))
    assert result.exit_code == 0, result.output
    assert out.is_file() and out.read_text().count("\n") == 3 * 98
    assert "missing parent folders are created" in " ".join(invoke("run", "--help").output.replace("│", " ").split())


def test_fuse_refuses_to_overwrite_its_input(a_run):
    before = a_run.read_bytes()
    result = invoke("fuse", a_run, a_run, "--out", a_run)
    assert result.exit_code == 2, result.output
    assert "also an input" in result.stderr
    assert a_run.read_bytes() == before


def test_out_inside_a_file_refused(a_run, tmp_path):
    result = invoke("fuse", a_run, "--out", a_run / "x.tsv")
    assert result.exit_code == 2, result.output
    assert "is a file, not a folder" in result.stderr


# Defect 7: search prints at most a snippet's worth of a matched formula (and of a title).


def test_search_caps_huge_formulae(sample_index, monkeypatch):
    from mathsearch.store import Store

    huge = "x^{2}+" + "a" * 1_000_000
    original = Store.formula

    def formula(self, formula_id):
        f = original(self, formula_id)
        return dataclasses.replace(f, latex=huge) if f is not None else None

    monkeypatch.setattr(Store, "formula", formula)
    text = invoke("search", "--index", sample_index, "--task", "2", "$x^2$", "--top", "2")
    assert text.exit_code == 0, text.output
    assert "matched: $x^{2}+aaa" in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) < 1000
    as_json = invoke("search", "--index", sample_index, "--task", "2", "$x^2$", "--top", "2", "--json")
    assert as_json.exit_code == 0, as_json.output
    hits = json.loads(as_json.stdout)["hits"]
    assert len(hits) == 2
    for hit in hits:
        assert all(len(m) <= 210 for m in hit["matched_formulae"])
        assert "matched_formulae" in hit["cut"]
        assert hit["matched_total"] == 1


# Defect 10: search --json gives every id as a number, as post_id always was.


@pytest.mark.parametrize("task, query", [(1, "prime numbers $p$"), (2, "$x^2$")])
def test_search_json_ids_are_numbers(sample_index, task, query):
    shown = invoke("search", "--index", sample_index, "--task", str(task), query, "--top", "3", "--json")
    assert shown.exit_code == 0, shown.output
    hits = json.loads(shown.stdout)["hits"]
    assert len(hits) == 3
    assert all(type(h["id"]) is int and type(h["post_id"]) is int for h in hits)
    if task == 1:
        assert all(h["id"] == h["post_id"] for h in hits)  # an answer is its own post


# Defect 8: wrong or empty input gets a clear message; exit 2 where the output would mean nothing.


def test_topic_file_without_topics(sample_index, tmp_path):
    empty = tmp_path / "topics.xml"
    empty.write_text("<Topics></Topics>\n")
    with pytest.raises(InputError, match="no <Topic>"):
        read_topics(empty)
    out = tmp_path / "run.tsv"
    result = invoke("run", "--index", sample_index, "--system", "bm25-thread", "--topics", empty, "--out", out)
    assert result.exit_code == 2, result.output
    assert "topics.xml" in result.stderr and "no <Topic>" in result.stderr
    assert not out.exists()


def test_duplicate_topic_ids(sample_index, tmp_path):
    dup = tmp_path / "dup.xml"
    dup.write_text('<Topics>\n<Topic number="A.1"><Title>x</Title></Topic>\n'
                   '<Topic number="A.1"><Title>y</Title></Topic>\n</Topics>\n')
    out = tmp_path / "run.tsv"
    result = invoke("run", "--index", sample_index, "--system", "bm25-thread", "--topics", dup, "--out", out)
    assert result.exit_code == 2, result.output
    assert "dup.xml, line 3: topic A.1 appears twice (first at line 2)" in result.stderr
    assert not out.exists()


def test_empty_query_refused(sample_index):
    for query in ("", "   ", "$$"):
        result = invoke("search", "--index", sample_index, "--system", "bm25-thread", query)
        assert result.exit_code == 2, (query, result.output)
        assert "query is empty" in result.stderr


def test_a_query_of_punctuation_only_is_refused_and_a_symbol_is_searched(sample_index):
    # "?" found the vectors' nearest posts to a question mark (noise); "π" is maths typed plain
    for query in ("?", "...", "= ?", "? [algebra]"):
        result = invoke("search", "--index", sample_index, "--system", "bm25-thread", query)
        assert result.exit_code == 2, (query, result.output)
        assert "has no word, number or formula to search for" in result.stderr, result.stderr
    result = invoke("search", "--index", sample_index, "--system", "ours", "π")
    assert result.exit_code == 0 and "searched as: $\\pi$" in result.stdout, result.output
    # Task 2 the same (as the API's pattern): "+" is refused with how to ask for it, "$+$" is searched
    result = invoke("search", "--index", sample_index, "--task", "2", "+")
    assert result.exit_code == 2 and "e.g. $+$" in result.stderr, result.output
    result = invoke("search", "--index", sample_index, "--task", "2", "--top", "1", "$+$")
    assert result.exit_code == 0 and "formula: 1 hits" in result.stdout, result.output


@pytest.mark.parametrize("value", ["0", "-3"])
def test_depth_and_top_must_be_positive(sample_index, a_run, tmp_path, value):
    out = tmp_path / "r.tsv"
    for args in (run_args(sample_index, out)[:-2] + ["--depth", value],
                 ["fuse", str(a_run), "--out", str(out), "--depth", value],
                 ["search", "--index", str(sample_index), "--system", "bm25-thread", "x", "--top", value]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "--depth" in result.output or "--top" in result.output
        assert not out.exists()


def test_fuse_negative_rrf_constant_refused(a_run, tmp_path):
    result = invoke("fuse", a_run, "--out", tmp_path / "f.tsv", "--k", "-1")
    assert result.exit_code == 2, result.output  # was a ZeroDivisionError traceback
    assert "--k" in result.output
    assert not (tmp_path / "f.tsv").exists()


def test_fuse_warns_about_an_empty_run(a_run, tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    out = tmp_path / "fused.tsv"
    result = invoke("fuse", a_run, empty, "--out", out)
    assert result.exit_code == 1, result.output
    assert f"{empty} has no hits" in result.stderr
    assert out.is_file()
    only_empty = invoke("fuse", empty, "--out", tmp_path / "nothing.tsv")
    assert only_empty.exit_code == 2, only_empty.output
    assert "nothing to fuse" in only_empty.stderr
    assert not (tmp_path / "nothing.tsv").exists()


def test_bad_topic_formula_lines_reported(sample_index, tmp_path):
    tsv = tmp_path / "formulas.tsv"
    tsv.write_text("id\ttopic_id\tthread_id\ttype\tformula\n"
                   "q_1\tA.1\t3062860\ttitle\tc\n"
                   "q_2\tA.1\tnot-a-number\ttitle\tx\n"
                   "q_3\tA.1\n"
                   "q_4\tA.1\t3062860\tweird\ty\n")
    out = tmp_path / "run.tsv"
    result = invoke(*run_args(sample_index, out), "--formulas", tsv)
    assert result.exit_code == 1, result.output
    for line in (3, 4, 5):
        assert f"formulas.tsv:{line}" in result.stderr
    assert out.is_file()


# Defect 10: output fit for pipes, help without <bool>, clear parameter errors.


def test_piped_output_is_not_wrapped(a_run, tmp_path):
    out = tmp_path / ("a-long-folder-name-" * 4) / "fused-run-with-a-long-name.tsv"
    out.parent.mkdir()
    result = invoke("fuse", a_run, "--out", out)
    assert result.exit_code == 0, result.output
    assert f"into {out}: " in result.stderr  # one line, not cut at 80 columns


@pytest.mark.parametrize("command", ["search", "run", "fuse", "eval", "check", "formula", "index"])
def test_help_shows_flags_without_bool(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0
    assert "--json" in result.output and "--help" in result.output
    assert "<bool>" not in result.output


def test_bad_parameter_value_names_parameter_and_type(sample_index):
    with pytest.raises(InputError, match=r"'abc' is not a valid value for parameter math, which takes a number \(float\)"):
        make_system("bm25-thread:math=abc")
    result = invoke("search", "--index", sample_index, "--system", "bm25-thread:k1=abc", "x")
    assert result.exit_code == 2
    assert "unknown parameter 'k1'" in result.stderr and "math (float, default 1.0)" in result.stderr
    result = invoke("search", "--index", sample_index, "--system", "linked-posts:neighbours=2.5", "x")
    assert result.exit_code == 2
    assert "'2.5' is not a valid value for parameter neighbours, which takes a whole number (int)" in result.stderr


def test_search_help_shows_the_tag_filters_it_names():
    # rich reads "[tag]" as markup and dropped it: the help read "filters , -, score:N"
    result = invoke("search", "--help")
    assert result.exit_code == 0
    assert "filters [tag], -[tag], score:N" in " ".join(result.stdout.replace("│", " ").split())


def test_search_task_is_1_or_2_and_the_library_refuses_another(sample_index):
    # --task 7 ran Task 1 and said nothing
    for task in ("3", "7", "0"):
        result = invoke("search", "--index", sample_index, "--system", "bm25-thread", "--task", task, "x")
        assert result.exit_code == 2 and "--task" in result.output, result.output
    from mathsearch.searcher import Searcher
    with pytest.raises(InputError, match="not 7"):
        Searcher(sample_index).search("x", task=7)


def test_eval_refuses_a_run_of_another_task_or_year(tmp_path):
    # both printed a table of zeros (exit 0) with warnings a newcomer took for the scores
    from conftest import DATA

    run = tmp_path / "r.tsv"
    run.write_text("A.201\tQ0\t1\t1\t2.0\tr\nA.202\tQ0\t2\t1\t1.0\tr\n")
    result = invoke("eval", run, "--task", "2", "--qrels", DATA / "qrels" / "task2-2021.tsv", "--formulas", run)
    assert result.exit_code == 2 and "second field is Q0, the layout of a Task 1 run" in result.stderr, result.output
    result = invoke("eval", run, "--task", "1", "--qrels", DATA / "qrels" / "task1-2020.tsv")
    assert result.exit_code == 2, result.output
    assert "none of its 2 topics (A.201 ... A.202) is judged in the qrels (A.1 ... A.99, 77 topics)" in result.stderr
    result = invoke("eval", run, "--task", "1", "--qrels", DATA / "qrels" / "task1-2021.tsv")
    assert result.exit_code == 0 and "r.tsv" in result.stdout, result.output


def test_a_task2_run_over_topics_without_formulae_is_refused(sample_index, tmp_path):
    # it wrote "0 hits for 0 of 98 topics", exit 0
    out = tmp_path / "r.tsv"
    result = invoke("run", "--index", sample_index, "--task", "2", "--topics", TOPICS_2020, "--out", out)
    assert result.exit_code == 2 and "holds no Task 2 topic" in result.stderr, result.output
    assert not out.exists()


def test_a_terminal_sees_searching_while_it_works_and_a_pipe_does_not(sample_index):
    """A first search over an index with vectors loads MiniLM for ~10 s: on a terminal a line says
    it is searching (cleared when the hits print); piped output stays exactly the hits."""
    import os
    import pty
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "mathsearch", "search", "--index", str(sample_index), "-k", "1", "harmonic series"]
    piped = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and "Searching" not in piped.stdout + piped.stderr
    leader, follower = pty.openpty()
    child = subprocess.Popen(cmd, stdin=follower, stdout=follower, stderr=follower,
                             env={**os.environ, "TERM": "xterm", "COLUMNS": "100"})
    os.close(follower)
    seen = b""
    while True:  # read while it runs: a full terminal buffer would stop the child
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert child.wait(timeout=300) == 0 and b"Searching..." in seen and b"1 hits" in seen


def test_answer_with_nothing_to_draw_from_prints_no_empty_answer_and_says_why(sample_index):
    result = CliRunner().invoke(app, ["answer", "--index", str(sample_index), "limit of sin x / x [no-such-tag-here]"])
    assert result.exit_code == 0, result.output
    assert "warning: No thread has the tag [no-such-tag-here]: nothing can match it." in result.stderr
    assert result.stdout.splitlines()[0] == (
        "Sources: the answer is not written: no answer of the collection to draw from (system extract).")


def test_fuse_and_check_refuse_a_run_of_another_task_and_write_nothing(a_run, tmp_path):
    out = tmp_path / "fused.tsv"
    result = invoke("fuse", a_run, a_run, "--task", "2", "--out", out)
    assert result.exit_code == 2 and "its second field is Q0, the layout of a Task 1 run: --task 1?" in result.output
    assert not out.exists()
    result = invoke("check", "--task", "2", a_run)
    assert result.exit_code == 2 and "is not a Task 2 run" in result.output
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    result = invoke("fuse", notes, a_run, "--out", out)
    assert result.exit_code == 2 and f"{notes} is not a Task 1 run" in result.output and not out.exists()


def test_check_and_eval_name_two_runs_of_one_file_name_by_their_paths(a_run, tmp_path):
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    good, broken = tmp_path / "d1" / a_run.name, tmp_path / "d2" / a_run.name
    good.write_bytes(a_run.read_bytes())
    broken.write_text("A.1\tQ0\t1\t1\t1\tx\nA.1\tQ0\t1\t2\t1\tx\n", encoding="utf-8")
    result = invoke("check", "--task", "1", "--json", good, broken)
    assert result.exit_code == 1
    checked = json.loads(result.stdout)
    assert set(checked) == {str(good), str(broken)}
    assert "duplicate document" not in checked[str(good)]["problems"] and checked[str(good)]["hits"] > 2
    assert checked[str(broken)]["problems"]["duplicate document"] == 1


@pytest.mark.parametrize("tag", ["my tag", "my\ttag", ""])
def test_a_run_tag_a_run_line_cannot_carry_is_refused_before_the_search(sample_index, tmp_path, tag):
    out = tmp_path / "run.tsv"
    result = invoke(*run_args(sample_index, out, "--tag", tag))
    assert result.exit_code == 2 and "--tag" in result.output and "whitespace" in result.output
    assert not out.exists()


def test_a_topic_number_with_whitespace_is_refused_naming_its_line(tmp_path):
    topics = tmp_path / "topics.xml"
    topics.write_text('<Topics>\n<Topic number="A.1"><Title>a</Title></Topic>\n'
                      '<Topic number="A 2"><Title>b</Title></Topic>\n</Topics>\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"topics.xml, line 3: .*'A 2' holds whitespace"):
        read_topics(topics)


def test_a_query_that_starts_with_an_excluded_tag_is_a_query_not_options(sample_index):
    result = invoke("search", "--index", sample_index, "--json", "-[calculus] limit")
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)["hits"]
    assert hits and hits == json.loads(invoke("search", "--index", sample_index, "--json", "--", "-[calculus] limit").stdout)["hits"]
    assert invoke("search", "--index", sample_index, "--bogus", "limit").exit_code == 2  # a real unknown option still is one


def test_formula_reads_a_topic_formula_tsv_and_refuses_options_that_do_not_go_together(tmp_path):
    topic_tsv = TOPICS / "formulas" / "formulas-2020-latex.tsv"
    result = invoke("formula", "--tsv", topic_tsv, "--jsonl")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) > 500 and rows[0]["id"] == "q_1" and rows[0]["visual_key"]
    for args, words in [(("x", "--jsonl"), "--jsonl reads --tsv"), (("--tsv", tmp_path), "is a folder"),
                        (("",), "the formula is empty"), (("--tsv", topic_tsv, "--json"), "use --jsonl")]:
        result = invoke("formula", *args)
        assert result.exit_code == 2 and words in result.output, (args, result.output)


def test_formula_refuses_an_empty_tsv_but_reads_a_header_only_one(tmp_path):
    blank, header = tmp_path / "blank.tsv", tmp_path / "header.tsv"
    blank.write_text("\n  \n", encoding="utf-8")
    header.write_text("id\tpost_id\tthread_id\ttype\tcomment_id\told_visual_id\tvisual_id\tissue\tformula\n", encoding="utf-8")
    result = invoke("formula", "--tsv", blank)
    assert result.exit_code == 2 and "is empty" in result.output and str(blank) in result.output, result.output
    result = invoke("formula", "--tsv", header)
    assert result.exit_code == 0 and "0 formulae" in result.output, result.output


def test_an_empty_or_cut_topic_file_is_said_once_with_its_position(tmp_path):
    empty, cut = tmp_path / "empty.xml", tmp_path / "cut.xml"
    empty.write_text("", encoding="utf-8")
    cut.write_text('<Topics><Topic number="A.1"><Title>x', encoding="utf-8")
    with pytest.raises(InputError, match=r"empty\.xml is empty: an ARQMath topic file holds"):
        read_topics(empty)
    with pytest.raises(InputError) as cut_error:
        read_topics(cut)
    # the position once, as lxml gives it (it was followed by "(line 1)" again)
    assert "line 1, column 37" in str(cut_error.value) and "(line" not in str(cut_error.value)


def test_a_write_the_system_refuses_is_one_line_naming_the_file(a_run):
    # /dev/full: every write fails with "no space left", as a full disk does
    result = invoke("fuse", a_run, a_run, "--out", "/dev/full")
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == "error: /dev/full: writing the run failed: No space left on device"
    assert "Traceback" not in result.output


@pytest.mark.parametrize("weights", ["1,-1", "0,0", "nan,1"])
def test_fuse_weights_that_rank_nothing_sensibly_are_refused(a_run, tmp_path, weights):
    out = tmp_path / "fused.tsv"
    result = invoke("fuse", a_run, a_run, "--weights", weights, "--out", out)
    assert result.exit_code == 2 and "each weight is 0 or more, and one is above 0" in result.output
    assert not out.exists()
