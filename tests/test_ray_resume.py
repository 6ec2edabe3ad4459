"""A Ray embedding task killed half way through its embedding (``kill -9`` of its worker, two
chunks on disk) is retried and resumes from those chunks: nothing embedded twice, the same bytes as
a build that was never killed (``indexes/resume.py``)."""

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

    import mathsearch.indexes.resume as resume

    resume.FAST_CHUNK = CHUNK
    if Path(marker).exists():
        return
    save, saved = resume.ChunkedEmbedding._save, []

    def save_then_die(self, i, ids, texts, vectors):
        save(self, i, ids, texts, vectors)
        saved.append(len(ids))
        if len(saved) == 2:
            Path(marker).write_text(f"killed after {len(saved)} chunks, {sum(saved)} posts, in process {os.getpid()}\n")
            os.kill(os.getpid(), signal.SIGKILL)

    resume.ChunkedEmbedding._save = save_then_die


def test_an_embedding_task_killed_half_way_resumes_from_its_chunks(tmp_path, monkeypatch):
    import numpy as np

    from mathsearch.distributed import RayEngine
    from mathsearch.distributed.engine import wants_gpu
    from mathsearch.indexes import resume
    from mathsearch.indexes.build import build_partitioned
    from mathsearch.indexes.dense import DENSE_DIR
    from mathsearch.indexes.resume import resume_root
    from mathsearch.indexes.steps import StepTask
    from mathsearch.store import Store

    encoder = train_tiny_encoder(tmp_path / "enc")
    dump = make_dump(tmp_path / "dump")
    marker = tmp_path / "killed.txt"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        engine = RayEngine("local", kill_once=("shard-001/dense", str(marker)), kill_plan=_die_after_two_chunks)
        counts = build_partitioned(dump, tmp_path / "index", shards=2, engine=engine, optional=("dense",),
                                   encoder=str(encoder))
    finally:
        ray.shutdown()
    died = re.fullmatch(r"killed after 2 chunks, (\d+) posts, in process \d+\n", marker.read_text())
    assert died, marker.read_text()  # the worker did die, half way
    killed_posts = int(died.group(1))
    with Store.open(tmp_path / "index" / "shard-001") as store:
        second = len(store.post_ids())
    assert 0 < killed_posts < second  # half way: some of the shard's posts were on disk, not all
    posts = counts.questions + counts.answers
    # the retry read the two chunks back and embedded the rest of its shard: nothing twice
    assert counts.indexes["dense_resumed_posts"] == killed_posts
    assert counts.indexes["dense_encoded_posts"] == posts - killed_posts
    assert counts.indexes["dense_answers"] == counts.answers
    assert not resume_root(tmp_path / "index").exists()
    manifest = json.loads((tmp_path / "index" / "dense" / "manifest.json").read_text())
    assert manifest["encoder"]["name"] == "tiny"

    # the same bytes as a build that was never killed, in the same chunks
    monkeypatch.setattr(resume, "FAST_CHUNK", CHUNK)
    build_partitioned(dump, tmp_path / "whole", shards=2, optional=("dense",), encoder=str(encoder))
    for shard in ("shard-000", "shard-001"):
        for name in ("questions.npy", "question_ids.npy", "answers.npy", "answer_ids.npy"):
            a, b = (np.load(root / shard / DENSE_DIR / name) for root in (tmp_path / "index", tmp_path / "whole"))
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (shard, name)

    # an embedding task asks for a GPU only where the cluster has one and its device allows it
    task = StepTask("x", "dense", options={"device": "auto"})
    assert wants_gpu(task, {"CPU": 2, "GPU": 1}) and not wants_gpu(task, {"CPU": 2})
    assert not wants_gpu(StepTask("x", "dense", options={"device": "cpu"}), {"GPU": 1})
