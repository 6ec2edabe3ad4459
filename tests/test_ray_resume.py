"""A Ray embedding task whose worker is killed (``kill -9``), after its vectors were made or half way
through them (two chunks on disk), is retried and resumes from its chunks, beside the target:
nothing embedded twice, the same bytes as a build that was never killed (``indexes/dense_chunks.py``, ``building/resume.py``)."""

from __future__ import annotations

import json
import os
import re
import sys

from test_search_golden import make_dump
from test_shards import train_tiny_encoder

os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
import ray  # noqa: E402  (the ray extra, installed by scripts/setup.sh)
from ray import cloudpickle  # noqa: E402

# the kill plan below runs inside the Ray worker, which cannot import this test module: sent by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

CHUNK = 2  # posts a chunk: the small dump's shard holds a few chunks


def _die_after_two_chunks(marker: str) -> None:
    """In the worker, before every attempt: small chunks; on the first attempt (no marker yet),
    SIGKILL once the second chunk is on disk, the posts saved so far written to the marker."""
    import signal
    from pathlib import Path

    import mathsearch.indexes.dense_chunks as chunks

    chunks.FAST_CHUNK = CHUNK
    if Path(marker).exists():
        return
    save, saved = chunks.ChunkedEmbedding._save, []

    def save_then_die(self, i, ids, texts, vectors):
        save(self, i, ids, texts, vectors)
        saved.append(len(ids))
        if len(saved) == 2:
            Path(marker).write_text(f"killed after {len(saved)} chunks, {sum(saved)} posts, in process {os.getpid()}\n")
            os.kill(os.getpid(), signal.SIGKILL)

    chunks.ChunkedEmbedding._save = save_then_die


def _built_on_ray(tmp_path, **kill):
    """The small dump in 2 shards with a tiny static encoder's vectors, built by Ray tasks on a
    cluster of its own (a worker a kill plan changed is not reused by another test); ``kill``:
    RayEngine's ``kill_once`` / ``kill_plan``."""
    from mathsearch.building import build_partitioned
    from mathsearch.building.engine import RayEngine

    encoder = train_tiny_encoder(tmp_path / "enc")
    dump = make_dump(tmp_path / "dump")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        counts = build_partitioned(dump, tmp_path / "index", shards=2, engine=RayEngine("local", **kill),
                                   optional=("dense",), encoder=str(encoder))
    finally:
        ray.shutdown()
    return counts, dump, encoder


def _posts_of_shard(index, shard: str) -> int:
    from mathsearch.store import Store

    with Store.open(index / shard) as store:
        return len(store.post_ids())


def test_a_killed_embedding_task_resumes_from_its_chunks(tmp_path):
    from mathsearch.building.engine import wants_gpu
    from mathsearch.building.resume import resume_root
    from mathsearch.building.steps import StepTask

    marker = tmp_path / "killed.txt"
    counts, _, _ = _built_on_ray(tmp_path, kill_once=("shard-001/dense", str(marker)))
    assert marker.read_text().startswith("shard-001/dense killed in process")  # the worker did die
    second = _posts_of_shard(tmp_path / "index", "shard-001")
    posts = counts.questions + counts.answers
    # the retry read shard 1's vectors back; only shard 0's were embedded (once): nothing twice
    assert counts.indexes["dense_resumed_posts"] == second and counts.indexes["dense_encoded_posts"] == posts - second
    assert counts.indexes["dense_answers"] == counts.answers
    assert not resume_root(tmp_path / "index").exists()
    manifest = json.loads((tmp_path / "index" / "dense" / "manifest.json").read_text())
    assert manifest["encoder"]["name"] == "tiny"
    # an embedding task asks for a GPU only where the cluster has one and its device allows it
    task = StepTask("x", "dense", options={"device": "auto"})
    assert wants_gpu(task, {"CPU": 2, "GPU": 1}) and not wants_gpu(task, {"CPU": 2})
    assert not wants_gpu(StepTask("x", "dense", options={"device": "cpu"}), {"GPU": 1})


def test_an_embedding_task_killed_half_way_resumes_from_its_chunks(tmp_path, monkeypatch):
    from test_dense_resume import VECTOR_FILES

    from mathsearch.building import build_partitioned
    from mathsearch.building.resume import resume_root
    from mathsearch.indexes import dense_chunks
    from mathsearch.indexes.dense import DENSE_DIR

    marker = tmp_path / "killed.txt"
    counts, dump, encoder = _built_on_ray(tmp_path, kill_once=("shard-001/dense", str(marker)),
                                          kill_plan=_die_after_two_chunks)
    died = re.fullmatch(r"killed after 2 chunks, (\d+) posts, in process \d+\n", marker.read_text())
    assert died, marker.read_text()  # the worker did die, half way
    killed_posts = int(died.group(1))
    assert 0 < killed_posts < _posts_of_shard(tmp_path / "index", "shard-001")  # some of its posts on disk, not all
    posts = counts.questions + counts.answers
    # the retry read the two chunks back and embedded the rest of its shard: nothing twice
    assert counts.indexes["dense_resumed_posts"] == killed_posts
    assert counts.indexes["dense_encoded_posts"] == posts - killed_posts
    assert counts.indexes["dense_answers"] == counts.answers
    assert not resume_root(tmp_path / "index").exists()

    # the same bytes as a build that was never killed, in the same chunks
    monkeypatch.setattr(dense_chunks, "FAST_CHUNK", CHUNK)
    build_partitioned(dump, tmp_path / "whole", shards=2, optional=("dense",), encoder=str(encoder))
    for shard in ("shard-000", "shard-001"):
        for name in VECTOR_FILES:
            killed, whole = (root / shard / DENSE_DIR / name for root in (tmp_path / "index", tmp_path / "whole"))
            assert killed.read_bytes() == whole.read_bytes(), (shard, name)
