"""A sharded build of the real sample on a local Ray cluster (4 worker CPUs), one worker killed on
the way: nothing lost or duplicated, and Task 1 / Task 2 runs over the shards that match the
single index's (the one built by the ``sample_index`` fixture)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import COLLECTION, QRELS, RUNS, TOPICS

os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
import ray  # noqa: E402  (the ray extra, installed by scripts/setup.sh)

SHARDS = 4


@pytest.fixture(scope="module")
def cluster():
    """One local Ray cluster for this module: 4 CPUs, so up to 4 worker processes at once."""
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def sharded(cluster, tmp_path_factory):
    """The sample in 4 shards, built by Ray tasks; the text step of shard 1 kills its worker once."""
    from mathsearch.building import build_partitioned
    from mathsearch.building.engine import RayEngine

    root = tmp_path_factory.mktemp("sharded")
    marker = root / "killed.txt"
    engine = RayEngine("local", kill_once=("shard-001/text", str(marker)))
    counts = build_partitioned(COLLECTION, root / "index", shards=SHARDS, engine=engine)
    return root / "index", counts, marker


def test_the_cluster_has_several_workers(cluster):
    assert cluster.cluster_resources().get("CPU") == 4

    @cluster.remote
    def pid(_):
        import time

        time.sleep(0.5)
        return os.getpid()

    assert len(set(cluster.get([pid.remote(i) for i in range(4)]))) >= 2


def test_a_killed_worker_is_retried_without_losing_or_duplicating_posts(sharded, sample_index):
    from mathsearch.indexes.directory import read_manifest
    from mathsearch.indexes.shards import shard_of
    from mathsearch.indexes.text_index import TextIndex
    from mathsearch.store import Store

    index_dir, counts, marker = sharded
    assert marker.read_text().startswith("shard-001/text killed in process")  # the worker did die
    manifest = read_manifest(index_dir)
    assert manifest["shards"]["count"] == SHARDS and len(manifest["shards"]["dirs"]) == SHARDS
    with Store.open(sample_index) as single:
        all_posts = single.post_ids()
        answers = single.answer_ids()
    seen: list[str] = []
    for i, name in enumerate(manifest["shards"]["dirs"]):
        with Store.open(index_dir / name) as store:
            ids = store.post_ids()
            seen += ids
            # a thread never spans shards
            assert all(shard_of(t, SHARDS) == i for _, t in store.iter_post_ids(1))
            assert all(shard_of(t, SHARDS) == i for _, t in store.iter_post_ids(2))
            n_answers = len(store.answer_ids())
        text = TextIndex.open(index_dir / name)
        padding = json.loads((index_dir / name / "global" / "stats.json").read_text())["text"]["answers"]
        assert padding["documents"] == n_answers and padding["padding"] >= 2
        assert text.num_answers == n_answers + padding["padding"]  # the retried text step added no post twice
    assert len(seen) == len(set(seen)) == len(all_posts) and set(seen) == all_posts
    assert counts.indexes["text_answers"] == len(answers)
    assert counts.indexes["formula_visual_collection"] == read_manifest(sample_index)["counts"]["formula_visual"]
    assert counts.indexes["text_answers_padding"] >= 2 * SHARDS  # the documents that even the field lengths
    # each step's CPU, measured in the Ray worker that ran it (the build process never sees it)
    assert counts.indexes["formula_cpu_seconds"] > 1.0  # the sample's formula analysis: ~20-40 CPU s
    assert counts.indexes["text_cpu_seconds"] > 0 and counts.indexes["split_cpu_seconds"] >= 0


def _runs(ctx_a, ctx_b, system: str, topics):
    from mathsearch.systems import make_system, run_rankings

    s = make_system(system)
    return run_rankings(s, ctx_a, topics), run_rankings(s, ctx_b, topics)


def _scored_topics(task: int, year: int, index: Path) -> set[str]:
    """The topics ``eval --collection-only`` scores (those left with an H+M relevant document)."""
    from mathsearch.evaluation import from_index
    from mathsearch.evaluation.evaluate import prepare_judgements
    from mathsearch.evaluation.subcollection import restrict_qrels
    from mathsearch.readers.qrels import qrels_to_dict, read_qrels

    facts = from_index(index)
    judgements = prepare_judgements(task, qrels_to_dict(read_qrels(QRELS / f"task{task}-{year}.tsv")), facts.visual_of)
    return set(restrict_qrels(judgements.qrels, facts.present(task)).qrels)


def _ndcg_prime(task: int, year: int, run, index: Path, tmp: Path, name: str) -> float:
    from mathsearch.evaluation import evaluate_runs, from_index
    from mathsearch.records import FormulaHit, ScoredDoc
    from mathsearch.runs import write_formula_run, write_trec_run

    path = tmp / f"{name}.tsv"
    if task == 1:
        write_trec_run(path, [ScoredDoc(q, d, s, 0, "x") for q, r in run.items() for d, s in r.items()])
    else:
        write_formula_run(path, [FormulaHit(q, f, r.post_of(f), s, 0, "x") for q, r in run.items() for f, s in r.items()])
    report = evaluate_runs(task, QRELS / f"task{task}-{year}.tsv", [path], facts=from_index(index), collection_only=True)
    return report.runs[0].means["nDCG'"]


@pytest.mark.parametrize(("task", "system"), [(1, "ours:dense=False"), (2, "formula"), (2, "tangent-s-formula")])
def test_sharded_runs_match_the_single_index(sharded, sample_index, tmp_path, task, system):
    """With the collection's statistics (BM25 document frequencies at query time, average field
    lengths by padding, formula vocabulary and idf at build time) the top 10 is the single index's
    on every topic; the lists differ deeper only where scores tie at a cut or differ in the last
    float32 digits: nDCG' within 0.005 (2020 topics, sample, ``eval --collection-only``)."""
    from mathsearch.readers.topics import read_topics
    from mathsearch.systems import SearchContext

    index_dir, _, _ = sharded
    scored = _scored_topics(task, 2020, sample_index)
    topics = [t for t in read_topics(TOPICS / f"task{task}-2020.xml", TOPICS / "formulas" / "formulas-2020-latex.tsv")
              if t.topic_id in scored]  # the topics nDCG' is the mean of (runs of the others would not count)
    single, shards = _runs(SearchContext(sample_index), SearchContext(index_dir), system, topics)
    assert len(single) == len(shards) == len(topics) == len(scored) > 20
    overlaps = []
    for t in topics:
        a, b = single[t.topic_id].ordered()[:10], shards[t.topic_id].ordered()[:10]
        assert a == b, t.topic_id
        if a or b:
            overlaps.append(len(set(a) & set(b)) / max(len(a), len(b)))
    assert sum(overlaps) / len(overlaps) == 1.0
    nd_single = _ndcg_prime(task, 2020, single, sample_index, tmp_path, "single")
    nd_shards = _ndcg_prime(task, 2020, shards, sample_index, tmp_path, "sharded")
    assert nd_single > 0.5
    assert abs(nd_single - nd_shards) <= 0.005, (nd_single, nd_shards)


def test_search_and_batch_runs_on_ray_over_a_sharded_index(sharded, cluster):
    from mathsearch.building.engine import RayEngine
    from mathsearch.distributed.batch import run_system_on_ray
    from mathsearch.readers.topics import read_topics
    from mathsearch.searcher import Searcher
    from mathsearch.systems import SearchContext, make_system, run_system

    index_dir, _, _ = sharded
    result = Searcher(index_dir).search("prove that $\\sqrt{2}$ is irrational", task=1, k=5)
    assert len(result.hits) == 5 and all(h.thread_title for h in result.hits)
    topics = read_topics(TOPICS / "task1-2020.xml")[:12]
    system = make_system("bm25-thread")
    here = run_system(system, SearchContext(index_dir), topics, 100)
    there = run_system_on_ray(RayEngine("local"), system, str(index_dir), topics, 100)
    assert len(here) == len(there) > 1000
    assert here == there


def test_eval_check_and_pool_read_a_sharded_index_as_the_single_one(sharded, sample_index, tmp_path):
    """``eval``, ``check`` and ``pool`` with ``--index`` on a sharded parent (which holds no store of
    its own: each shard has one) read the shards' stores as one: the same facts, scores, problems."""
    from typer.testing import CliRunner

    from mathsearch.cli import app
    from mathsearch.evaluation import from_index

    index_dir, _, _ = sharded
    single, shards = from_index(sample_index), from_index(index_dir)
    assert shards.visual_of == single.visual_of and len(single.visual_of) > 70_000
    assert shards.answers_present == single.answers_present and len(single.answers_present) == 3395
    assert shards.present(2) == single.present(2)
    assert shards.text_of("9253") == single.text_of("9253")
    # a Task 2 run: the first question/answer instance of every judged visual id the sample holds
    judged: dict[str, list[str]] = {}
    for line in (QRELS / "task2-2020.tsv").read_text().splitlines():
        t, _, vid, _ = line.split()
        judged.setdefault(t, []).append(vid)
    instance: dict[str, str] = {}
    for fid, vid in sorted(single.visual_of.items(), key=lambda kv: int(kv[0])):
        if single.lookup.formula_kind(fid) in ("question", "answer"):  # type: ignore[union-attr]
            instance.setdefault(vid, fid)
    lines = [f"{t}\t{instance[v]}\t{single.lookup.formula(instance[v]).post_id}\t{r}\t{50 - r}\tt"  # type: ignore[union-attr]
             for t, vids in judged.items() for r, v in enumerate([v for v in vids if v in instance][:20], 1)]
    run2 = tmp_path / "TeamX-task2-oracle-auto-math-A.tsv"
    run2.write_text("\n".join(lines) + "\n")
    run1 = RUNS / "prim_MathDowsers-task1-alpha05noReRank-auto-both-A.tsv"

    def cli(*args):
        return CliRunner().invoke(app, [str(a) for a in args])

    for task, qrels, run in ((1, QRELS / "task1-2020.tsv", run1), (2, QRELS / "task2-2020.tsv", run2)):
        a = cli("eval", "-t", task, "-q", qrels, run, "--index", sample_index, "--collection-only", "--json")
        b = cli("eval", "-t", task, "-q", qrels, run, "--index", index_dir, "--collection-only", "--json")
        assert a.exit_code == 0 and b.exit_code == 0, b.output
        assert json.loads(b.stdout) == json.loads(a.stdout)
        entry = json.loads(b.stdout)[run.name]
        assert entry["topics"] > 20 and 0 < entry["nDCG'"] <= 1, entry
        a = cli("check", run, "-t", task, "--index", sample_index, "--json")
        b = cli("check", run, "-t", task, "--index", index_dir, "--json")
        assert a.exit_code == b.exit_code and json.loads(b.stdout) == json.loads(a.stdout), b.output
    a = cli("pool", run2, "-t", 2, "--index", sample_index, "--out", tmp_path / "a.sqlite", "--json")
    b = cli("pool", run2, "-t", 2, "--index", index_dir, "--out", tmp_path / "b.sqlite", "--json")
    assert a.exit_code == b.exit_code == 0, b.output
    pooled_a, pooled_b = json.loads(a.stdout), json.loads(b.stdout)
    assert pooled_a.pop("out") != pooled_b.pop("out")
    assert pooled_b == pooled_a and pooled_b["items"] > 100, pooled_b


@pytest.fixture(scope="module")
def dense_pair(cluster, sample_index, tmp_path_factory):
    """The sample with vectors of one static encoder (trained in seconds): a copy of the single index
    given them here, and 2 shards built by Ray tasks, each shard's embedding a task, the one of shard
    1 killing its worker once."""
    import shutil

    from test_shards import train_tiny_encoder

    from mathsearch.building import build_partitioned
    from mathsearch.building.engine import RayEngine
    from mathsearch.indexes.dense import build_dense_index
    from mathsearch.store import Store

    root = tmp_path_factory.mktemp("dense")
    encoder = train_tiny_encoder(root)
    single = root / "single"
    shutil.copytree(sample_index, single)
    with Store.open(single) as store:
        build_dense_index(store, single, encoder=str(encoder))
    marker = root / "killed.txt"
    engine = RayEngine("local", kill_once=("shard-001/dense", str(marker)))
    counts = build_partitioned(COLLECTION, root / "sharded", shards=2, optional=("dense",), encoder=str(encoder),
                               engine=engine)
    return single, root / "sharded", counts, marker


def test_sharded_vectors_built_on_ray_with_a_killed_worker_match_the_single_index(dense_pair, tmp_path):
    """Each shard's embedding is a Ray task; the killed one is retried, and every answer has one vector.
    Dense-only runs over the 2 shards are the single index's (exact search, merged per-shard top k);
    ``ours`` with its dense signals too, up to the formula signal's ties at its cut (top-10 overlap
    >= 0.9, nDCG' within 0.005; 2020 topics that ``eval --collection-only`` scores)."""
    import numpy as np

    from mathsearch.indexes.dense import DENSE_DIR
    from mathsearch.readers.topics import read_topics
    from mathsearch.store import Store
    from mathsearch.systems import SearchContext

    single, sharded, counts, marker = dense_pair
    assert marker.read_text().startswith("shard-001/dense killed in process")  # the worker did die
    with Store.open(single) as store:
        answers = sorted(int(a) for a in store.answer_ids())
    seen = [a for name in ("shard-000", "shard-001")
            for a in np.load(sharded / name / DENSE_DIR / "answer_ids.npy").tolist()]
    assert sorted(seen) == answers and counts.indexes["dense_answers"] == len(answers) == 3395
    scored = _scored_topics(1, 2020, single)
    topics = [t for t in read_topics(TOPICS / "task1-2020.xml") if t.topic_id in scored]
    config = tmp_path / "dense.toml"
    config.write_text('[signals.d]\nkind = "dense"\nweight = 1.0\nlimit = 1000\n')
    a_ctx, b_ctx = SearchContext(single), SearchContext(sharded)
    for system, exact in ((f"ours:config={config}", True), ("ours", False)):
        a, b = _runs(a_ctx, b_ctx, system, topics)
        overlaps = [len(set(a[t.topic_id].ordered()[:10]) & set(b[t.topic_id].ordered()[:10])) / 10 for t in topics]
        if exact:
            assert all(a[t.topic_id].ordered()[:10] == b[t.topic_id].ordered()[:10] for t in topics)
        assert len(overlaps) == len(scored) > 20 and sum(overlaps) / len(overlaps) >= 0.9, (system, overlaps)
        nd_a = _ndcg_prime(1, 2020, a, single, tmp_path, "single")
        nd_b = _ndcg_prime(1, 2020, b, single, tmp_path, "sharded")
        assert nd_a > 0.2 and abs(nd_a - nd_b) <= 0.005, (system, nd_a, nd_b)


def test_a_sharded_index_is_replaceable_but_foreign_files_are_refused(sharded):
    from mathsearch.errors import InputError
    from mathsearch.indexes.directory import check_index_target, foreign_entries

    index_dir, _, _ = sharded
    assert foreign_entries(index_dir) == []
    check_index_target(index_dir, COLLECTION)  # a rebuild may replace what mathsearch made
    mine = index_dir / "notes.txt"
    mine.write_text("mine")
    try:
        with pytest.raises(InputError, match="notes.txt"):
            check_index_target(index_dir, COLLECTION)
    finally:
        mine.unlink()
