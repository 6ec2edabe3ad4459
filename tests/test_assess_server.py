"""The assessment database under load and under a crash: two assessors writing at once lose nothing;
a real server killed with SIGKILL loses at most the judgement in flight, and a new one resumes."""

from __future__ import annotations

import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from mathsearch.assess import AssessDB, build_pool, classify_runs, create_pool_db

sys.path.insert(0, str(Path(__file__).parent))
from web_support import free_port  # noqa: E402


@pytest.fixture
def pool_db(tmp_path: Path) -> Path:
    run = tmp_path / "g-task1-r-auto-both-P.tsv"
    run.write_text("".join(f"A.{t}\tQ0\t{d}\t{d}\t{1000 - d}.0\tr\n" for t in (1, 2) for d in range(1, 101)))
    path = tmp_path / "pool.sqlite"
    create_pool_db(path, build_pool(1, classify_runs([run], 1), depth=100))
    return path


def test_two_assessors_writing_at_once_lose_no_judgement(pool_db: Path):
    with AssessDB(pool_db) as db:
        items = [i.item_id for i in db.items()]
    assert len(items) == 200
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def assess(name: str, order: list[int], grade_of) -> None:
        try:
            with AssessDB(pool_db) as db:  # a connection of its own, as each request has
                start.wait()
                for k, item in enumerate(order):
                    db.judge(item, name, grade_of(k))
                    if k % 7 == 0:  # a change of mind: the newest grade is the one that counts
                        db.judge(item, name, (grade_of(k) + 1) % 4)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    ann = threading.Thread(target=assess, args=("ann", items, lambda k: k % 4))
    bob = threading.Thread(target=assess, args=("bob", items[::-1], lambda k: 3 - k % 4))
    ann.start()
    bob.start()
    ann.join(120)
    bob.join(120)
    assert not errors
    with AssessDB(pool_db) as db:
        got = {(j.assessor, j.item_id): j.grade for j in db.judgements()}
        assert db.history_count() == 2 * (200 + len(range(0, 200, 7)))
    expected = {}
    for name, order, grade_of in (("ann", items, lambda k: k % 4), ("bob", items[::-1], lambda k: 3 - k % 4)):
        for k, item in enumerate(order):
            expected[(name, item)] = (grade_of(k) + 1) % 4 if k % 7 == 0 else grade_of(k)
    assert got == expected


def start_server(index: Path, pool: Path, port: int) -> subprocess.Popen:
    code = ("import sys, uvicorn; from pathlib import Path; from mathsearch.web.app import create_app; "
            "uvicorn.run(create_app(Path(sys.argv[1]), Path(sys.argv[2])), host='127.0.0.1', "
            "port=int(sys.argv[3]), log_level='warning')")
    proc = subprocess.Popen([sys.executable, "-c", code, str(index), str(pool), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server stopped: {proc.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/assess/state", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("the server did not start in 90 s")


def test_a_server_killed_outright_loses_at_most_the_judgement_in_flight(sample_index: Path, pool_db: Path):
    port = free_port()
    server = start_server(sample_index, pool_db, port)
    base = f"http://127.0.0.1:{port}/api/assess"
    with AssessDB(pool_db) as db:
        items = [i.item_id for i in db.items()]
    acked: dict[str, dict[int, int]] = {"ann": {}, "bob": {}}
    in_flight: dict[str, tuple[int, int] | None] = {"ann": None, "bob": None}
    failures: dict[str, object] = {}

    def assess(name: str, order: list[int]) -> None:
        # Round after round over the pool (grades change each round) until the server is gone.
        with httpx.Client(timeout=10) as client:
            for k in itertools.count():
                item, grade = order[k % len(order)], (k + k // len(order) + len(name)) % 4
                in_flight[name] = (item, grade)
                try:
                    r = client.post(f"{base}/judgements", json={"item_id": item, "assessor": name, "grade": grade})
                except httpx.HTTPError as exc:
                    failures[name] = exc
                    return
                if r.status_code != 200:
                    failures[name] = f"{r.status_code} {r.text}"
                    return
                acked[name][item] = r.json()["saved"]["grade"]
                in_flight[name] = None

    threads = [threading.Thread(target=assess, args=("ann", items)),
               threading.Thread(target=assess, args=("bob", items[::-1]))]
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while min(len(a) for a in acked.values()) < 15 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(30)
        for t in threads:
            t.join(30)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == -signal.SIGKILL
    assert min(len(a) for a in acked.values()) >= 15
    assert set(failures) == {"ann", "bob"}, failures  # both were cut off mid-session by the kill
    assert all(isinstance(f, httpx.TransportError) for f in failures.values()), failures  # the kill, no 5xx
    with sqlite3.connect(pool_db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with AssessDB(pool_db) as db:
        for name in ("ann", "bob"):
            stored = {j.item_id: j.grade for j in db.judgements(name)}
            flying = in_flight[name]
            for item, grade in acked[name].items():  # every acknowledged grade is there (or the newer one in flight)
                assert stored.get(item) == grade or (flying is not None and (item, stored.get(item)) == flying)
            extra = set(stored) - set(acked[name])
            assert extra <= ({flying[0]} if flying else set())  # nothing else but, perhaps, the one in flight
        judged_ann = len(db.judgements("ann"))
    # A new server on the same database resumes where the assessors were.
    port = free_port()
    server = start_server(sample_index, pool_db, port)
    try:
        state = httpx.get(f"http://127.0.0.1:{port}/api/assess/state", params={"assessor": "ann"}, timeout=10).json()
        assert state["overall"]["judged"] == judged_ann >= len(acked["ann"]) >= 15
        assert "bob" in state["assessors"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)


def test_the_assessment_api_answers_every_generated_request_as_its_schema_says(sample_index: Path, pool_db: Path):
    """schemathesis over the /api/assess operations: no 5xx, no valid request refused, statuses and
    bodies as /openapi.json says."""
    import hypothesis
    import schemathesis

    from mathsearch.web.app import create_app

    api = schemathesis.openapi.from_asgi("/openapi.json", create_app(sample_index, pool_db))
    failures: list[str] = []
    labels: list[str] = []

    def check(case) -> None:
        labels.append(case.operation.label)
        try:
            case.call_and_validate()
        except Exception as exc:  # noqa: BLE001  (collected, reported together below)
            failures.append(f"{case.operation.label}: {exc}"[:800])

    for result in api.get_all_operations():
        operation = result.ok()
        if "/api/assess/" not in operation.label:
            continue
        settings = hypothesis.settings(max_examples=6, deadline=None, database=None, derandomize=True,
                                       suppress_health_check=list(hypothesis.HealthCheck))
        settings(hypothesis.given(case=operation.as_strategy())(check))()
    assert len(set(labels)) == 6 and len(labels) >= 20
    assert not failures, "\n".join(failures[:5])
