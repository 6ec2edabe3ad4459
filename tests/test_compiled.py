"""The compiled core (setup.py, mathsearch._compiled): the same index and the same scores as the
pure-Python reference, and an install without a compiler that falls back to it with one warning."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mathsearch import _compiled

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "arqmath"
BUILD_HINT = "build the compiled core first: python setup.py build_ext --inplace (or pip install -e .)"

# One process per path: builds the sample's formula index beside the shared text index and store,
# then runs the Task 2 systems and Task 1's formula signal; prints which path ran.
CHILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from mathsearch import _compiled
    from mathsearch.indexes.formula import build_formula_index
    from mathsearch.readers.topics import read_topics
    from mathsearch.store import Store
    from mathsearch.systems import SearchContext, make_system, run_rankings
    from mathsearch.systems.formula import formula_config

    index, topics1, topics2, out = map(Path, sys.argv[1:5])
    with Store.open(index) as store:
        build_formula_index(store, index, workers=1)
    ctx = SearchContext(index)
    result = {"status": _compiled.status(), "runs": {}}
    for name in ("formula", "tangent-s-formula"):
        run = run_rankings(make_system(name), ctx, read_topics(topics2))
        # repr: a float's shortest round-trip text, so equal text means equal to the last bit
        result["runs"][name] = {q: [[d, repr(r[d])] for d in r.ordered()] for q, r in run.items()}
    ix, scoring = ctx.formula, formula_config().scoring
    result["task1"] = {t.topic_id: [[a, repr(s)] for a, s in
                                    ix.answers_by_best_formula(ix.query(t.formulas[0].latex), scoring, 200, 100).items()]
                       for t in read_topics(topics1)[:20] if t.formulas}
    # the text step's analysis (formula words, math tokens, prose terms) of every thread, as fed to tantivy
    import hashlib
    from mathsearch.indexes import text_index
    digest, docs = hashlib.sha256(), 0
    with Store.open(index) as store:
        for job in text_index._jobs(store):
            out_job = text_index._JOBS[job[0]](store, job[1])
            digest.update(repr(out_job).encode())
            docs += len(out_job)
    result["text"] = {"sha256": digest.hexdigest(), "threads": docs}
    # the store of the sample collection (the formula TSV's reader is compiled), every row of every table
    import tempfile
    from mathsearch.readers.collection import detect_collection
    from mathsearch.store import build_store
    with tempfile.TemporaryDirectory() as tmp:
        counts = build_store(detect_collection(Path(sys.argv[5])), Path(tmp))
        digest, rows = hashlib.sha256(), 0
        with Store.open(tmp) as store:
            for table in ("posts", "comments", "links", "formulas"):
                for row in store.db.execute(f"SELECT * FROM {table} ORDER BY rowid"):
                    digest.update(repr(row).encode())
                    rows += 1
        counts = {k: v for k, v in counts.as_json().items() if "seconds" not in k}  # all but the clock
        result["store"] = {"sha256": digest.hexdigest(), "rows": rows, "counts": counts}
    # a damaged formula TSV: the same rows, skips and reasons
    from mathsearch.readers.formula_tsv import iter_formula_tsv
    from mathsearch.records import ReadReport
    report = ReadReport(source=sys.argv[6])
    result["tsv"] = {"rows": [repr(r) for r in iter_formula_tsv(sys.argv[6], report)],
                     "skipped": report.skipped, "problems": report.problems, "n": report.rows}
    out.write_text(json.dumps(result))
""")

# Lines a formula TSV reader must read, skip or report: a header, quoting, blank and quote-only
# lines, a wrong column count, a bad number, an unknown type, no id, CRLF, a stray quote.
DAMAGED_TSV = (
    "id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n"
    "1\t10\t10\tquestion\t5\tx^2\n"
    '2\t10\t10\tanswer\t\t"a ""quoted"" b"\n'
    "\n"
    '"\n'
    "3\t10\t10\tanswer\t6\n"
    "4\tten\t10\tanswer\t6\ty\n"
    "5\t11\t10\tfootnote\t7\tz\n"
    " \t11\t10\tcomment\t7\tz\n"
    "6\t11\t10\t Title \t8\t\\frac{a}{b}\r\n"
    '7\t12\t10\tanswer\t9\t"unclosed\n'
    "x8\t12\t10\tanswer\t9\tw\n"
)


def _run_path(sample_index: Path, work: Path, pure: bool) -> tuple[dict, Path]:
    """The sample's index with its formula part rebuilt by one path, and what that path returned."""
    index = work / "index"
    index.mkdir(parents=True)
    for entry in sample_index.iterdir():  # the store and text index are shared, read-only
        if entry.name != "formula":
            (index / entry.name).symlink_to(entry)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop(_compiled.ENV, None)
    if pure:
        env[_compiled.ENV] = "1"
    out = work / "result.json"
    damaged = work.parent / "damaged.tsv"  # one path for both, as the reports name it
    damaged.write_text(DAMAGED_TSV, encoding="utf-8", newline="")
    subprocess.run([sys.executable, "-c", CHILD, str(index), str(DATA / "topics" / "task1-2020.xml"),
                    str(DATA / "topics" / "task2-2020.xml"), str(out), str(DATA / "collection"), str(damaged)],
                   env=env, check=True, timeout=1800)
    return json.loads(out.read_text()), index / "formula"


@pytest.fixture(scope="module")
def both_paths(sample_index: Path, tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("compiled")
    return _run_path(sample_index, work / "pure", pure=True), _run_path(sample_index, work / "compiled", pure=False)


def test_each_path_runs_what_it_says(both_paths):
    (pure, _), (compiled, _) = both_paths
    assert set(pure["status"].values()) == {"python"}, pure["status"]
    assert set(compiled["status"].values()) == {"compiled"}, f"{compiled['status']}: {BUILD_HINT}"


def test_the_formula_index_is_byte_identical(both_paths):
    (_, pure_dir), (_, compiled_dir) = both_paths
    names = sorted(p.name for p in pure_dir.iterdir())
    assert names == sorted(p.name for p in compiled_dir.iterdir())
    assert "post_doc.npy" in names and "tok_hash.npy" in names
    for name in names:
        assert (pure_dir / name).read_bytes() == (compiled_dir / name).read_bytes(), name
    assert len(np.load(pure_dir / "tok_hash.npy")) > 10_000  # the sample's vocabulary, not an empty index


def test_query_results_are_equal_to_the_last_digit(both_paths):
    (pure, _), (compiled, _) = both_paths
    for name in ("formula", "tangent-s-formula"):
        assert pure["runs"][name] == compiled["runs"][name], name
        assert sum(len(r) for r in pure["runs"][name].values()) > 1000
    assert pure["task1"] == compiled["task1"] and sum(len(r) for r in pure["task1"].values()) > 100


def test_the_text_analysis_is_the_same_both_ways(both_paths):
    (pure, _), (compiled, _) = both_paths
    assert pure["text"] == compiled["text"]
    assert pure["text"]["threads"] > 2000  # every thread of the sample, not an empty walk


def test_the_store_is_the_same_both_ways(both_paths):
    (pure, _), (compiled, _) = both_paths
    assert pure["store"] == compiled["store"]
    assert pure["store"]["rows"] > 76_968  # the sample's formulae alone are 76,968 rows


def test_a_damaged_formula_tsv_reads_the_same_both_ways(both_paths):
    (pure, _), (compiled, _) = both_paths
    assert pure["tsv"] == compiled["tsv"]
    assert pure["tsv"]["n"] == 5 and len(pure["tsv"]["skipped"]) >= 4, pure["tsv"]


def test_an_install_without_a_compiler_falls_back_with_one_warning(tmp_path):
    """The build step in a copy of the project with a C compiler that always fails."""
    copy = tmp_path / "project"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "node_modules", "build", "site", "*.so", "__pycache__", ".*_cache", "static"))
    env = {**os.environ, "CC": "/bin/false", "LDSHARED": "/bin/false -shared"}
    env.pop(_compiled.ENV, None)
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if "mathsearch: WARNING" in line]
    assert len(warnings) == 1 and "pure-Python path" in warnings[0], done.stdout + done.stderr
    assert not list((copy / "src").rglob("*.so"))
    # ...and the package runs from there, on the pure-Python path, and parses and scores formulae.
    probe = ("from mathsearch import _compiled; from mathsearch.formula import FormulaAnalyzer, similarity;"
             "a = FormulaAnalyzer(); s = similarity(a.analyze('x^2+y^2'), a.analyze('a^2+b^2'));"
             "print(_compiled.is_compiled(), round(s, 6), len(a.analyze('x^2+y^2').opt_tokens))")
    ran = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                         env={**env, "PYTHONPATH": str(copy / "src")}, timeout=300, check=True)
    flag, score, n_tokens = ran.stdout.split()
    assert flag == "False" and 0.2 < float(score) < 1.0 and int(n_tokens) > 4


def test_a_stale_extension_is_not_run(tmp_path):
    """A source edited (or checked out) after the build runs as its .py, never as the old build."""
    source = tmp_path / "slt.py"
    source.write_text("x = 1\n")
    built = tmp_path / "slt.cpython-311-x86_64-linux-gnu.so"
    built.write_bytes(b"")
    now = source.stat().st_mtime
    os.utime(built, (now, now))
    assert not _compiled._stale(source)  # built with this source
    os.utime(source, (now + 2, now + 2))
    assert not _compiled._stale(source)  # an install writes the two a moment apart
    os.utime(source, (now + _compiled.STALE_AFTER_S + 60, now + _compiled.STALE_AFTER_S + 60))
    assert _compiled._stale(source)  # edited after the build
    built.unlink()
    assert not _compiled._stale(source)  # no build at all: the normal import finds the .py


def test_the_benchmarks_json_never_replaces_a_file_it_did_not_write(sample_index, tmp_path):
    """``bench/bench_compiled.py --json``: someone else's file stays as it was (exit 2, one line);
    the script's own figures may be written again."""
    script = REPO / "bench" / "bench_compiled.py"
    theirs = tmp_path / "notes.json"
    theirs.write_text('{"mine": 1}')
    base = [sys.executable, str(script), "--index", str(sample_index), "--skip", "analyse,build,text,query"]
    done = subprocess.run([*base, "--json", str(theirs)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "not this script's JSON" in done.stderr and "Traceback" not in done.stderr
    assert theirs.read_text() == '{"mine": 1}'
    ours = tmp_path / "figures.json"
    for _ in range(2):
        done = subprocess.run([*base, "--json", str(ours)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert json.loads(ours.read_text()) == {}
