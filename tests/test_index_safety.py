"""`mathsearch index` never destroys what it did not make, and never leaves half-built folders behind.

Each test here failed on the code before the fix (issue 15, defects 1, 3, 4 and 6): the data-loss
cases check that the user's files are still there, byte for byte.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import COLLECTION
from test_store import _raw_dump
from typer.testing import CliRunner

from mathsearch.building import build_index
from mathsearch.cli import app
from mathsearch.indexes.directory import MANIFEST
from mathsearch.store import Store
from mathsearch.store.atomic import LOCK_FILE, _lock, _unlock, clean_stale_builds

runner = CliRunner()


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (hidden ones included)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _index(collection: Path, target: Path | str, *extra: str):
    return runner.invoke(app, ["index", str(collection), "--index", str(target), *extra])


def test_a_folder_of_user_files_is_refused_and_kept_byte_for_byte(tmp_path):
    dump = _raw_dump(tmp_path / "dump")
    target = tmp_path / "p"
    target.mkdir()
    (target / "thesis.tex").write_bytes(b"\\section{Results}\n")
    (target / "sub").mkdir()
    (target / "sub" / "data.bin").write_bytes(bytes(range(256)))
    before = _snapshot(tmp_path)
    result = _index(dump, target)
    assert result.exit_code == 2, result.output
    assert "not a mathsearch index" in result.output and "Traceback" not in result.output
    assert _snapshot(tmp_path) == before  # nothing added, nothing removed, nothing changed


def test_the_working_directory_is_refused(tmp_path, monkeypatch):
    dump = _raw_dump(tmp_path / "dump")
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.md").write_text("mine")
    monkeypatch.chdir(work)
    before = _snapshot(tmp_path)
    result = _index(dump, ".")
    assert result.exit_code == 2, result.output
    assert _snapshot(tmp_path) == before


def test_a_file_is_refused_and_not_renamed(tmp_path):
    dump = _raw_dump(tmp_path / "dump")
    (tmp_path / "afile.txt").write_text("keep me")
    before = _snapshot(tmp_path)
    result = _index(dump, tmp_path / "afile.txt")
    assert result.exit_code == 2 and "is a file" in result.output
    assert _snapshot(tmp_path) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("where", ["itself", "parent", "inside"])
def test_the_collection_is_never_a_target(tmp_path, where):
    parent = tmp_path / "parent"
    parent.mkdir()
    dump = _raw_dump(parent / "coll")
    target = {"itself": dump, "parent": parent, "inside": dump / "idx"}[where]
    before = _snapshot(tmp_path)
    result = _index(dump, target)
    assert result.exit_code == 2, result.output
    assert "collection" in result.output
    assert _snapshot(tmp_path) == before


def test_an_index_is_replaced_but_not_the_user_files_put_in_it(tmp_path):
    dump = _raw_dump(tmp_path / "dump")
    idx = tmp_path / "idx"
    assert _index(dump, idx).exit_code == 1  # the dump has one bad row on purpose
    manifest = json.loads((idx / MANIFEST).read_text())
    assert manifest["format"] == "mathsearch-index" and manifest["counts"]["answers"] == 2
    assert set(manifest["entries"]) == {p.name for p in idx.iterdir()} and LOCK_FILE not in manifest["entries"]
    assert _index(dump, idx).exit_code == 1  # an index is ours to replace
    (idx / "my-notes.txt").write_text("mine")
    before = _snapshot(tmp_path)
    result = _index(dump, idx)
    assert result.exit_code == 2 and "my-notes.txt" in result.output
    assert _snapshot(tmp_path) == before



def test_a_user_file_beside_mirmu_artifacts_is_refused_not_deleted(tmp_path):
    dump = _raw_dump(tmp_path / "dump")
    idx = tmp_path / "idx"
    assert _index(dump, idx, "--with", "mias").exit_code == 1  # the dump has one bad row on purpose
    (idx / "mirmu" / "my-notes.txt").write_text("mine")
    before = _snapshot(tmp_path)
    result = _index(dump, idx, "--with", "mias")
    assert result.exit_code == 2 and "mirmu/my-notes.txt" in result.output
    assert _snapshot(tmp_path) == before

def test_an_index_made_before_manifests_is_still_replaced(tmp_path):
    dump = _raw_dump(tmp_path / "dump")
    idx = tmp_path / "idx"
    build_index(dump, idx)
    (idx / MANIFEST).unlink()  # what earlier versions wrote: the store names its schema instead
    assert _index(dump, idx).exit_code == 1
    assert (idx / MANIFEST).is_file()


def test_an_empty_collection_is_an_error_and_the_old_index_stays(tmp_path):
    dump = _raw_dump(tmp_path / "dump")
    idx = tmp_path / "idx"
    build_index(dump, idx)
    before = _snapshot(idx)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "Posts.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<posts>\n</posts>\n')
    result = _index(empty, idx)
    assert result.exit_code == 2 and "no readable posts" in result.output
    assert _snapshot(idx) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_dense_without_its_extras_fails_before_any_work(tmp_path, monkeypatch):
    import importlib.util

    import mathsearch.encoders

    real = importlib.util.find_spec  # the extras look missing: as in a core install
    monkeypatch.setattr(mathsearch.encoders, "find_spec", lambda name, *a: None if name == "sentence_transformers" else real(name, *a))
    started = time.perf_counter()
    result = _index(COLLECTION, tmp_path / "idx", "--dense")
    assert result.exit_code == 2 and "dense" in result.output and "sentence_transformers" in result.output
    assert time.perf_counter() - started < 5  # the sample's store alone takes longer: nothing was built
    assert list(tmp_path.iterdir()) == []
    unknown = _index(COLLECTION, tmp_path / "idx", "--encoder", "no-such-encoder")
    assert unknown.exit_code == 2 and "unknown encoder 'no-such-encoder'" in unknown.output
    assert list(tmp_path.iterdir()) == []
    empty = _index(COLLECTION, tmp_path / "idx", "--encoder", "")  # not silently "no vectors"
    assert empty.exit_code == 2 and "encoder name is empty" in empty.output
    assert list(tmp_path.iterdir()) == []


def _start_build(target: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "mathsearch", "index", str(COLLECTION), "--index", str(target)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )


def _wait_for_building(parent: Path, name: str, timeout: float = 60) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [p for p in parent.glob(f".{name}.building-*") if (p / "store.sqlite").exists()]
        if found:
            return found[0]
        time.sleep(0.05)
    raise AssertionError(f"no building folder of {name} appeared in {timeout} s")


def test_sigterm_removes_the_half_built_folder_and_keeps_the_old_index(tmp_path):
    idx = tmp_path / "idx"
    build_index(_raw_dump(tmp_path / "dump"), idx)
    before = _snapshot(idx)
    proc = _start_build(idx)
    _wait_for_building(tmp_path, "idx")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    assert "Traceback" not in err.decode()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert _snapshot(idx) == before


def test_a_killed_build_is_cleaned_by_the_next_one_and_a_live_one_is_not(tmp_path):
    idx = tmp_path / "idx"
    proc = _start_build(idx)
    dead = _wait_for_building(tmp_path, "idx")
    proc.kill()
    proc.wait(timeout=30)
    assert dead.is_dir() and (dead / LOCK_FILE).is_file()  # kill -9: nothing could clean up
    alive = tmp_path / ".idx.building-alive"
    alive.mkdir()
    fd = _lock(alive)  # a build still running holds its lock
    unknown = tmp_path / ".idx.building-unknown"
    unknown.mkdir()  # no lock file: not made by a build of ours, so never removed
    (unknown / "x").write_text("x")
    try:
        removed = clean_stale_builds(idx)
        assert [p for p, _ in removed] == [dead] and not dead.exists()
        assert alive.is_dir() and unknown.is_dir()
        # The next build says what it removed.
        dead2 = tmp_path / ".idx.building-dead2"
        dead2.mkdir()
        os.close(os.open(dead2 / LOCK_FILE, os.O_CREAT | os.O_RDWR))
        result = _index(_raw_dump(tmp_path / "dump"), idx)
        assert result.exit_code == 1, result.output
        assert f"removed {dead2}" in result.output.replace("\n", "")
        assert not dead2.exists() and alive.is_dir() and unknown.is_dir()
    finally:
        _unlock(fd)
    with Store.open(idx) as store:
        assert store.counts()["answers"] == 2
