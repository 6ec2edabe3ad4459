"""No command overwrites a file it did not write (issue 41, item 3).

Every writer (``run --out``, ``fuse --out``, ``pool --out``, ``qrels export --out``) goes through
one check, :func:`mathsearch.runs.output.check_output`: an existing file that is not one of ours is
refused (exit 2, one sentence, the file byte for byte as it was) unless ``--force``; a run file we
wrote is replaced.  ``index`` without ``--dense`` over an index with vectors refuses unless
``--no-dense``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_support import cli, write
from conftest import TOPICS
from test_search_golden import make_dump

from mathsearch.building import build_index
from mathsearch.errors import InputError
from mathsearch.indexes.dense import DenseIndex
from mathsearch.runs.output import check_output, run_file_problem

NOTES = b"my notes\nrun 3 looked better with k1=0.9\n"
RUN = ["A.1\tQ0\t100\t1\t2.0\tr", "A.1\tQ0\t101\t2\t1.0\tr"]


def test_run_files_of_every_layout_are_ours_and_anything_else_is_not(tmp_path):
    task1 = write(tmp_path / "t1.tsv", RUN)
    task2 = write(tmp_path / "t2.tsv", ["B.1\t7\t100\t1\t0.5\tformula", "B.1\t8\t101\t2\t0.25\tformula"])
    task3 = write(tmp_path / "t3.tsv", ['A.1\t1\t1.0\textract\t100\t"The sum\tis\n$n^2$."'])
    for ours in (task1, task2, task3):
        assert run_file_problem(ours) is None, ours.read_text()
    notes = tmp_path / "notes.txt"
    notes.write_bytes(NOTES)
    assert "line 1" in run_file_problem(notes)
    spaced = write(tmp_path / "anserini.txt", ["A.1 Q0 100 1 2.0 r"])  # another tool's layout: not ours
    assert "line 1" in run_file_problem(spaced)
    mixed = write(tmp_path / "mixed.tsv", [*RUN, "", "# my comment"])
    assert "line 4" in run_file_problem(mixed)
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    assert "UTF-8" in run_file_problem(binary)
    topics = TOPICS / "task1-2020.xml"
    assert "line 1" in run_file_problem(topics)


def test_the_one_check_refuses_a_file_not_ours_unless_forced(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_bytes(NOTES)
    with pytest.raises(InputError, match=r"notes.txt exists and is not a run file .* --force"):
        check_output(notes)
    assert notes.read_bytes() == NOTES
    assert check_output(notes, force=True) == notes
    empty = tmp_path / "empty.tsv"
    empty.touch()  # nothing to lose
    assert check_output(empty) == empty
    ours = write(tmp_path / "run.tsv", RUN)
    assert check_output(ours) == ours
    with pytest.raises(InputError, match="also an input"):
        check_output(ours, [ours], force=True)  # --force never makes an input an output


@pytest.fixture(scope="module")
def a_run(tmp_path_factory) -> Path:
    return write(tmp_path_factory.mktemp("runs") / "a.tsv", RUN)


def test_fuse_refuses_notes_keeps_them_and_replaces_them_with_force(a_run, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_bytes(NOTES)
    result = cli("fuse", a_run, a_run, "--out", notes)
    assert result.exit_code == 2
    assert "notes.txt exists and is not a run file" in result.output and "--force" in result.output
    assert notes.read_bytes() == NOTES
    fused = tmp_path / "fused.tsv"
    assert cli("fuse", a_run, a_run, "--out", fused).exit_code == 0
    first = fused.read_text()
    assert cli("fuse", a_run, "--out", fused, "--tag", "again").exit_code == 0  # ours: replaced
    assert fused.read_text() != first and "again" in fused.read_text()
    assert cli("fuse", a_run, "--out", notes, "--force").exit_code == 0
    assert notes.read_text().startswith("A.1\tQ0\t")


def test_run_refuses_a_file_not_ours_before_the_search(sample_index, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_bytes(NOTES)
    topics = TOPICS / "task1-2020.xml"
    args = ("run", "--index", sample_index, "--system", "bm25-answer", "--topics", topics, "--depth", 5)
    result = cli(*args, "--out", notes)
    assert result.exit_code == 2 and "refusing to overwrite" in result.output
    assert notes.read_bytes() == NOTES
    out = tmp_path / "bm25.tsv"
    assert cli(*args, "--out", out).exit_code == 0
    assert cli(*args, "--out", out, "--tag", "second").exit_code == 0  # a run we wrote is replaced
    assert out.read_text().split("\n", 1)[0].endswith("\tsecond")
    assert cli(*args, "--out", notes, "--force").exit_code == 0
    assert run_file_problem(notes) is None


def test_pool_replaces_a_file_not_ours_only_with_force_and_never_judgements(a_run, tmp_path):
    from mathsearch.assess import AssessDB

    run = write(tmp_path / "g-task1-r-auto-both-P.tsv", RUN)
    notes = tmp_path / "notes.sqlite"
    notes.write_bytes(NOTES)
    result = cli("pool", "--task", 1, run, "--out", notes)
    assert result.exit_code == 2 and "--force" in result.output
    assert notes.read_bytes() == NOTES
    result = cli("pool", "--task", 1, run, "--out", notes, "--force")
    assert result.exit_code == 0, result.output
    with AssessDB(notes) as db:
        assert db.progress()["A.1"]["items"] == 2
        db.judge(db.items("A.1")[0].item_id, "ann", 3)
    result = cli("pool", "--task", 1, run, "--out", notes, "--force")
    assert result.exit_code == 2 and "judgement" in result.output
    with sqlite3.connect(notes) as db:
        assert db.execute("SELECT count(*) FROM history").fetchone()[0] == 1


def test_qrels_export_replaces_files_only_with_force(tmp_path):
    from mathsearch.assess import AssessDB

    run = write(tmp_path / "g-task1-r-auto-both-P.tsv", RUN)
    pool = tmp_path / "pool.sqlite"
    assert cli("pool", "--task", 1, run, "--out", pool).exit_code == 0
    with AssessDB(pool) as db:
        db.judge(db.items("A.1")[0].item_id, "ann", 3)
    out = tmp_path / "qrels"
    out.mkdir()
    mine = out / "qrels-task1.tsv"
    mine.write_bytes(NOTES)
    result = cli("qrels", "export", pool, "--out", out)
    assert result.exit_code == 2 and "--force" in result.output
    assert mine.read_bytes() == NOTES
    assert cli("qrels", "export", pool, "--out", out, "--force").exit_code == 0
    assert mine.read_text().startswith("A.1\t0\t")


@pytest.fixture(scope="module")
def dense_tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dense")
    build_index(make_dump(root / "dump"), root / "index", optional=("dense",))
    return root / "index"


def test_index_without_dense_over_vectors_refuses_and_no_dense_drops_them(dense_tiny):
    collection = dense_tiny.parent / "dump"
    before = (dense_tiny / "dense" / "manifest.json").read_bytes()
    result = cli("index", collection, "--index", dense_tiny)
    assert result.exit_code == 2
    assert "holds dense vectors (encoder minilm)" in result.output and "--no-dense" in result.output
    assert (dense_tiny / "dense" / "manifest.json").read_bytes() == before  # nothing changed
    result = cli("index", collection, "--index", dense_tiny, "--store-only")
    assert result.exit_code == 2 and DenseIndex.exists(dense_tiny)
    result = cli("index", collection, "--index", dense_tiny, "--no-dense", "--json")
    assert result.exit_code == 0, result.output
    assert not DenseIndex.exists(dense_tiny)
    assert json.loads(result.stdout)["answers"] == 7


def test_a_pool_and_its_qrels_get_the_mode_any_new_file_gets(tmp_path):
    import os
    import stat

    from mathsearch.assess import AssessDB

    old = os.umask(0o022)
    try:
        run = write(tmp_path / "g-task1-r-auto-both-P.tsv", RUN)
        pool = tmp_path / "pool.sqlite"
        assert cli("pool", "--task", 1, run, "--out", pool).exit_code == 0
        with AssessDB(pool) as db:
            db.judge(db.items("A.1")[0].item_id, "ann", 3)
        assert cli("qrels", "export", pool, "--out", tmp_path / "qrels").exit_code == 0
    finally:
        os.umask(old)
    # written through tempfile.mkstemp, they were 0600: a colleague could not read the qrels
    assert stat.S_IMODE(pool.stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "qrels" / "qrels-task1.tsv").stat().st_mode) == 0o644
