"""MIRMU's systems (seed 002) on the real sample: each built by its artifacts' code, each returning
valid Task 1 / Task 2 runs; Formula2Vec keeps an alpha-renamed formula close; and CompuBERT built
through ``mathsearch index --with`` on a tiny collection, its encoder usable by the dense index."""

from __future__ import annotations

import json
import shutil
import statistics
import time

import numpy as np
import pytest
from conftest import TOPICS
from test_search_golden import make_dump
from typer.testing import CliRunner

from mathsearch.building import build_artifacts
from mathsearch.cli import app
from mathsearch.encoders import load_encoder, resolve
from mathsearch.indexes.dense import DenseIndex, build_dense_index
from mathsearch.readers.topics import read_topics
from mathsearch.runs.writer import write_formula_run, write_trec_run
from mathsearch.store import Store
from mathsearch.systems import SearchContext, SearchQuery, make_system, run_system, spec

runner = CliRunner()
# Small enough for a test on a busy 2-core machine; the full-quality values are in the TOMLs.
SCM_SMALL = """
[build]
vector_size = 50
bucket = 50000
epochs = 1
nonzero_limit = 20
"""


@pytest.fixture(scope="module")
def mirmu_sample(sample_index, tmp_path_factory):
    """A copy of the session's sample index (never written into: other tests read it) with the
    mias, scm (small) and formula2vec (packaged config) artifacts."""
    root = tmp_path_factory.mktemp("mirmu")
    index = root / "index"
    shutil.copytree(sample_index, index)
    counts = build_artifacts(index, ("mias", "formula2vec"))
    assert counts["mias_answers"] == 3395 and counts["formula2vec_formulae"] > 10_000
    (root / "scm.toml").write_text(SCM_SMALL)
    from mathsearch.indexes.mirmu.scm import build_scm

    with Store.open(index) as store:
        counts = build_scm(store, index, config=str(root / "scm.toml"))
    assert counts["scm_answers"] == 3395 and counts["scm_similarity_nonzero"] > counts["scm_terms"]
    return index


@pytest.fixture(scope="module")
def topics():
    formulas = TOPICS / "formulas" / "formulas-2020-latex.tsv"
    return {1: read_topics(TOPICS / "task1-2020.xml", formulas)[:4], 2: read_topics(TOPICS / "task2-2020.xml", formulas)[:4]}


@pytest.mark.parametrize("name", ["mias", "scm", "formula2vec", "formula2vec-formula", "scm-formula"])
def test_each_system_returns_a_valid_run_on_the_sample(name, mirmu_sample, topics, tmp_path):
    system = make_system(name)
    ctx = SearchContext(mirmu_sample)
    hits = run_system(system, ctx, topics[system.TASK], 1000)
    per_topic = {h.query_id for h in hits}
    assert len(per_topic) == 4, f"{name} found nothing for some of 4 topics of 2020"
    writer = write_trec_run if system.TASK == 1 else write_formula_run
    report = writer(tmp_path / "run.tsv", hits, lookup=ctx.store, on_invalid="raise")
    assert report.ok and report.hits == len(hits) <= 4000
    assert all(line.endswith("\t" + spec(system)) for line in (tmp_path / "run.tsv").read_text().splitlines())


def test_scm_reranks_well_under_a_second_a_query(mirmu_sample, topics):
    ctx = SearchContext(mirmu_sample)
    system = make_system("scm")
    system.search(ctx, SearchQuery.from_topic(topics[1][0]), 1000)  # opens the artifacts
    took = []
    for topic in topics[1]:
        started = time.perf_counter()
        found = system.search(ctx, SearchQuery.from_topic(topic), 1000)
        took.append(time.perf_counter() - started)
        assert 0 < len(found) <= 1000 and all(-1e-6 <= s <= 1 + 1e-6 for s in found.values())
    assert statistics.median(took) < 0.5, took


def test_formula2vec_keeps_an_alpha_renamed_twin_closer_than_other_formulae(mirmu_sample):
    index = SearchContext(mirmu_sample).open("formula2vec")
    pairs = [("x^2+y^2=z^2", "a^2+b^2=c^2"), ("\\frac{n(n+1)}{2}", "\\frac{k(k+1)}{2}"),
             ("\\int_0^1 f(x)\\,dx", "\\int_0^1 g(t)\\,dt")]
    vectors = {latex: index.infer(latex, 10) for pair in pairs for latex in pair}
    for formula, twin in pairs:
        twin_cos = float(vectors[formula] @ vectors[twin])
        others = [float(vectors[formula] @ vectors[o]) for pair in pairs if formula not in pair for o in pair]
        assert twin_cos > max(others), (formula, twin_cos, others)
    again = index.infer("x^2+y^2=z^2", 10)
    assert np.allclose(again, vectors["x^2+y^2=z^2"])  # inference is repeatable


def test_formula2vec_ivf_index_finds_what_the_exact_search_finds(mirmu_sample, tmp_path):
    """Above ``ann_min`` formulae an IVF index answers; its hits are re-scored exactly, so they are
    (nearly all) the exact search's, with the exact cosines, best first; below, none is built."""
    from mathsearch.indexes.mirmu.common import artifact_dir
    from mathsearch.indexes.mirmu.formula2vec import ANN_FILE, Formula2VecIndex, build_formula2vec_ann

    shutil.copytree(artifact_dir(mirmu_sample, "formula2vec"), artifact_dir(tmp_path, "formula2vec"))
    n = np.load(artifact_dir(tmp_path, "formula2vec") / "vectors.npy", mmap_mode="r").shape[0]
    assert build_formula2vec_ann(tmp_path) == {}  # the packaged ann_min (200,000) is above the sample's
    assert not (artifact_dir(tmp_path, "formula2vec") / ANN_FILE).exists()
    counts = build_formula2vec_ann(tmp_path, ann_min=1000)
    assert counts["formula2vec_ann_lists"] == int(2 * np.sqrt(n)) and (artifact_dir(tmp_path, "formula2vec") / ANN_FILE).is_file()
    assert json.loads((artifact_dir(tmp_path, "formula2vec") / "manifest.json").read_text())["counts"]["formula2vec_ann_lists"] == counts["formula2vec_ann_lists"]
    assert build_formula2vec_ann(tmp_path, ann_min=1000) == {}  # built once
    index = Formula2VecIndex.open(tmp_path)
    assert index.ann is not None and index.ann.ntotal == n
    recalls = []
    for latex in ["x^2+y^2=z^2", "\\frac{n(n+1)}{2}", "\\int_0^1 f(x)\\,dx", "\\sum_{k=1}^n k^2", "e^{i\\pi}+1=0"]:
        vec = index.infer(latex, 10)
        exact_rows, exact_scores = index.nearest(vec, 100, nprobe=0)
        rows, scores = index.nearest(vec, 100, nprobe=64)
        assert len(rows) == 100 and np.all(np.diff(scores) <= 0)
        truth = dict(zip(exact_rows.tolist(), exact_scores.tolist(), strict=True))
        for r, s in zip(rows.tolist(), scores.tolist(), strict=True):
            assert s == pytest.approx(float(index.vectors[r].astype(np.float32) @ vec), abs=1e-5)
            if r in truth:
                assert s == pytest.approx(truth[r], abs=1e-5)
        recalls.append(len(set(rows.tolist()) & set(truth)) / 100)
        one_list, _ = index.nearest(vec, 100, nprobe=1)
        assert len(set(one_list.tolist()) & set(truth)) < 100  # one list of ~350 misses some
    assert statistics.mean(recalls) >= 0.9, recalls
    # the systems read the IVF index, and nprobe=0 is the exact search
    ctx = SearchContext(tmp_path)
    query = SearchQuery("q", "", formula_latex="x^2+y^2=z^2")
    exact = make_system("formula2vec-formula:nprobe=0").search(ctx, query, 50)
    approx = make_system("formula2vec-formula").search(ctx, query, 50)
    rows, scores = index.nearest(index.infer("x^2+y^2=z^2", 10), 50, nprobe=0)
    assert list(exact) == [str(index.instance_ids[r]) for r in rows]
    assert len(set(approx) & set(exact)) >= 40


def test_index_with_compubert_trains_a_named_encoder_the_dense_index_can_use(tmp_path):
    dump = make_dump(tmp_path / "dump")
    bad = runner.invoke(app, ["index", str(dump), "--index", str(tmp_path / "bad"), "--with", "mias,bogus"])
    assert bad.exit_code == 2 and "--with bogus" in bad.output and not (tmp_path / "bad").exists()
    done = runner.invoke(app, ["index", str(dump), "--index", str(tmp_path / "index"), "--with", "compubert", "--json"])
    assert done.exit_code == 0, done.output
    counts = json.loads(done.stdout)
    assert counts["compubert_answers"] == 7 and counts["compubert_steps"] >= 1
    root = tmp_path / "index" / "mirmu" / "compubert"
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["seed"] == 1 and manifest["config"]["max_seq_length"] == 128
    assert resolve(str(root / "encoder"))[0] == "compubert"
    index_manifest = json.loads((tmp_path / "index" / "mathsearch-index.json").read_text())
    assert "mirmu" in index_manifest["entries"]
    ctx = SearchContext(tmp_path / "index")
    found = make_system("compubert").search(ctx, SearchQuery("q", "Why are there infinitely many primes?"), 3)
    assert len(found) == 3 and set(found) <= {str(a) for a in (100, 101, 200, 300, 301, 400, 500)}
    assert found.ordered()[0] in ("300", "301", "500")  # the answers about infinitely many primes
    # the same encoder, by folder, makes the vectors of a dense index
    with Store.open(tmp_path / "index") as store:
        build_dense_index(store, tmp_path / "other", encoder=str(root / "encoder"))
    dense = DenseIndex.open(tmp_path / "other")
    assert dense.answers.shape == (7, 384) and dense.encoder_name == "compubert"
    vec = load_encoder(str(root / "encoder")).encode(["primes never end"])[0]
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-3
