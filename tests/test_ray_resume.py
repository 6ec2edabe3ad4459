"""A Ray embedding task killed after its vectors were made is retried without embedding them again:
its chunks, beside the target, are read back (``indexes/resume.py``)."""

from __future__ import annotations

import json
import os

from test_search_golden import make_dump
from test_shards import train_tiny_encoder

os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
import ray  # noqa: E402  (the ray extra, installed by scripts/setup.sh)


def test_a_killed_embedding_task_resumes_from_its_chunks(tmp_path):
    from mathsearch.distributed import RayEngine
    from mathsearch.distributed.engine import wants_gpu
    from mathsearch.indexes.build import build_partitioned
    from mathsearch.indexes.resume import resume_root
    from mathsearch.indexes.steps import StepTask
    from mathsearch.store import Store

    encoder = train_tiny_encoder(tmp_path / "enc")
    dump = make_dump(tmp_path / "dump")
    marker = tmp_path / "killed.txt"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        engine = RayEngine("local", kill_once=("shard-001/dense", str(marker)))
        counts = build_partitioned(dump, tmp_path / "index", shards=2, engine=engine, optional=("dense",),
                                   encoder=str(encoder))
    finally:
        ray.shutdown()
    assert marker.read_text().startswith("shard-001/dense killed in process")  # the worker did die
    with Store.open(tmp_path / "index" / "shard-001") as store:
        second = len(store.post_ids())
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
