"""mathsearch serve under many people at once, on the real sample: searches in worker processes,
pages from the result cache (the same hits as a new search), a query past its budget stopped, a
full queue answered 503 with Retry-After, a slow client holding no worker, and a person paging
forward and back in Chromium through kept results."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from dataclasses import asdict

import httpx
import pytest
from fastapi.testclient import TestClient
from web_support import chromium, serve

from mathsearch.searcher import Searcher
from mathsearch.web.app import create_app
from mathsearch.web.cache import ResultCache
from mathsearch.web.serving import GRACE
from mathsearch.web.workers import memory_of

QUESTION = "harmonic series diverges $\\sum_{n=1}^{\\infty}\\frac{1}{n}$"
FORMULA = "$x^2+y^2$"


def cache_of(client) -> dict:
    return client.get("/health").json()["cache"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_cache_keeps_the_most_recently_used():
    cache = ResultCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent: b goes first
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("c") == 3 and len(cache) == 2
    assert cache.stats() == {"entries": 2, "capacity": 2, "hits": 2, "misses": 1, "hit_rate": round(2 / 3, 4)}
    assert cache.get("a", count=False) == 1 and cache.stats()["hits"] == 2  # an uncounted look
    none = ResultCache(0)
    none.put("a", 1)
    assert none.get("a") is None and len(none) == 0
    with pytest.raises(ValueError):
        ResultCache(-1)


@pytest.mark.parametrize(("task", "q"), [(1, QUESTION), (2, FORMULA)])
def test_pages_from_the_cache_are_the_new_search_pages(client, sample_index, task, q):
    """Page 1 searches and keeps the ranking; pages 2 and 3 and a reload come from it, hit for hit
    what a new search 30 deep gives (ranks, scores, snippets, Task 2's groups)."""
    fresh = Searcher(sample_index).search(q, task, k=30).hits
    before = cache_of(client)
    pages = [client.get("/api/search", params={"q": q, "task": task, "page": n}).json() for n in (1, 2, 3, 1)]
    after = cache_of(client)
    assert (after["misses"] - before["misses"], after["hits"] - before["hits"]) == (1, 3)
    assert [h for p in pages[:3] for h in p["hits"]] == [asdict(h) for h in fresh]
    assert pages[3] == pages[0]  # a reload
    assert [p["next_page"] for p in pages[:3]] == [2, 3, 4]
    if task == 2:
        assert [x["id"] for g in pages[1]["groups"] for x in g["hits"]] == [h["id"] for h in pages[1]["hits"]]


def test_the_task3_answer_is_drawn_from_the_kept_ranking(client, sample_index):
    q = "Why does $\\sum 1/n$ diverge?"
    made = Searcher(sample_index).answer(q)
    client.get("/api/search", params={"q": q, "task": 1})  # the question's ranking is kept ...
    before = cache_of(client)
    got = client.get("/api/search", params={"q": q, "task": 3}).json()["answer"]  # ... and the answer drawn from it
    assert cache_of(client)["hits"] == before["hits"] + 1
    assert got["text"] == made.text and [s["post_id"] for s in got["sources"]] == [s.post_id for s in made.sources]


def test_worker_processes_answer_as_the_server_does(sample_index, client):
    app = create_app(sample_index, workers=2, cache_entries=0)
    with TestClient(app) as c:
        searches = c.get("/health").json()["searches"]
        assert searches["workers"] == searches["alive"] == 2 and searches["busy"] == 0
        pids = app.state.service.lane.pids()
        assert len(set(pids)) == 2 and os.getpid() not in pids and all(alive(p) for p in pids)
        # the indexes are not copied per worker: most of a worker's resident pages are shared
        # (memory-mapped index files, the interpreter), and /health says what they hold
        assert searches["memory"]["worker_rss"] > 0
        for task, q in ((1, QUESTION), (2, FORMULA), (3, QUESTION)):
            for page in (1, 2) if task != 3 else (1,):
                params = {"q": q, "task": task, "page": page}
                assert c.get("/api/search", params=params).json() == client.get("/api/search", params=params).json()
        # side by side: six searches at once, every one answered, by both workers
        results: list[int] = []
        threads = [threading.Thread(target=lambda n=n: results.append(
            c.get("/api/search", params={"q": f"$x^{n}+1$", "task": 2}).status_code)) for n in range(6)]
        [t.start() for t in threads]
        [t.join(60) for t in threads]
        assert results == [200] * 6
        assert c.get("/health").json()["searches"]["calls"] >= 11
        assert c.get("/api/search", params={"q": "  $ $ ", "task": 3}).status_code == 422  # refused before a worker
    app.state.service.close()
    deadline = time.monotonic() + 10
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in pids)  # closing the server ends its workers


def test_a_query_past_its_budget_is_stopped_not_left_running(sample_index):
    app = create_app(sample_index, workers=1, budget=1.0, cache_entries=0)
    service = app.state.service
    (first,) = service.lane.pids()
    try:
        with TestClient(app) as c:
            assert c.get("/api/search", params={"q": FORMULA, "task": 2}).status_code == 200
            os.kill(first, signal.SIGSTOP)  # the worker stuck in its search (as a search that runs on)
            started = time.monotonic()
            r = c.get("/api/search", params={"q": QUESTION, "task": 1})
            assert r.status_code == 503 and "took longer than its 1 s budget" in r.json()["detail"]
            assert time.monotonic() - started < 1.0 + GRACE  # answered at the budget, not after the search
            searches = c.get("/health").json()["searches"]
            assert searches["stopped"] == 1 and searches["overruns"] == 1
            assert not alive(first)  # the search was killed with its worker, not left running
            deadline = time.monotonic() + 60
            while service.lane.stats()["replaced"] < 1 and time.monotonic() < deadline:
                time.sleep(0.1)
            (fresh,) = service.lane.pids()  # and a fresh worker took its place
            assert fresh != first and alive(fresh)
            assert c.get("/api/search", params={"q": FORMULA, "task": 2}).status_code == 200
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(first, signal.SIGCONT)
        service.close()


def test_a_full_queue_is_answered_503_with_retry_after(sample_index):
    app = create_app(sample_index, workers=1, queue=1, cache_entries=0)
    service = app.state.service
    (worker,) = service.lane.pids()
    try:
        with serve(app) as base:
            os.kill(worker, signal.SIGSTOP)  # the only worker busy (as with a long search)
            waiting: list[httpx.Response] = []
            threads = [threading.Thread(target=lambda q=q: waiting.append(
                httpx.get(base + "/api/search", params={"q": q}, timeout=60))) for q in (QUESTION, "prime numbers")]
            [t.start() for t in threads]  # admitted: the one the worker would run and the one queued
            deadline = time.monotonic() + 10
            while httpx.get(base + "/health").json()["searches"]["in_flight"] < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            over = httpx.get(base + "/api/search", params={"q": FORMULA, "task": 2}, timeout=10)
            assert over.status_code == 503 and int(over.headers["Retry-After"]) >= 1
            assert "busy" in over.json()["detail"]
            page = httpx.get(base + "/", params={"q": FORMULA, "task": 2}, timeout=10)  # the page says so too
            assert page.status_code == 503 and "busy" in page.text and int(page.headers["Retry-After"]) >= 1
            os.kill(worker, signal.SIGCONT)  # the worker is free: the waiting searches are answered
            [t.join(60) for t in threads]
            assert [r.status_code for r in waiting] == [200, 200]
            assert httpx.get(base + "/health").json()["searches"]["refused"] == 2
    finally:
        os.kill(worker, signal.SIGCONT)
        service.close()


def test_a_slow_client_holds_no_worker(sample_index):
    """With one worker: a client that sends half a request and stops, and one that asks for a big
    page and never reads it, while ten others search one after another and are all answered."""
    app = create_app(sample_index, workers=1, cache_entries=0)
    try:
        with serve(app) as base:
            port = int(base.rsplit(":", 1)[1])
            half = socket.create_connection(("127.0.0.1", port))
            half.sendall(b"GET /api/search?q=prime&task=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no end of headers
            unread = socket.socket()
            unread.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            unread.connect(("127.0.0.1", port))
            unread.sendall(b"GET /api/search?q=prime+number&size=50 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 20)  # twenty big pages asked for, none read
            started = time.monotonic()
            codes = [httpx.get(base + "/api/search", params={"q": f"$x^{n}$ and prime {n}", "task": 1 + n % 2},
                               timeout=30).status_code for n in range(10)]
            assert codes == [200] * 10 and time.monotonic() - started < 60
            deadline = time.monotonic() + 5  # (a search of theirs just answered may be counted for an instant)
            while (searches := httpx.get(base + "/health").json()["searches"])["busy"] and time.monotonic() < deadline:
                time.sleep(0.05)
            assert searches["busy"] == 0 and searches["alive"] == 1  # the slow clients hold no worker
            half.close()
            unread.close()
    finally:
        app.state.service.close()


def test_memory_of_a_process_is_read_from_proc():
    mem = memory_of(os.getpid())
    assert mem is not None and mem["rss"] >= mem["pss"] > 0 and mem["rss"] >= mem["private"] > 0
    assert memory_of(2**22 + 12345) is None  # no such process


def test_paging_forward_and_back_in_chromium_comes_from_the_cache(sample_index):
    app = create_app(sample_index, workers=1)
    try:
        with serve(app) as base, chromium(viewport={"width": 1000, "height": 800}) as ctx:
            page = ctx.new_page()

            def cache() -> dict:
                return ctx.request.get(base + "/health").json()["cache"]

            def shown() -> tuple[str | None, list[str]]:
                page.wait_for_selector("html[data-math=ready]", timeout=15000)
                return page.locator("ol.hits").get_attribute("start"), page.locator(".hit-link").all_inner_texts()

            start = cache()
            page.goto(base + "/?task=1&q=" + "harmonic+series+%24%5Csum_%7Bn%3D1%7D%5E%7B%5Cinfty%7D%5Cfrac%7B1%7D%7Bn%7D%24")
            first = shown()
            seen = [first]
            for key, number in (("n", "2"), ("n", "3"), ("p", "2"), ("p", "1")):
                page.keyboard.press(key)  # next / previous page
                page.wait_for_url(f"**page={number}*")
                seen.append(shown())
            assert [s[0] for s in seen] == ["1", "11", "21", "11", "1"]
            assert seen[1] == seen[3] and seen[4] == first and seen[1][1] != first[1]
            page.go_back()  # the browser's own back: page 2 again
            page.wait_for_url("**page=2*")
            assert shown() == seen[1]
            now = cache()
            assert now["misses"] - start["misses"] == 1  # one search ...
            assert now["hits"] - start["hits"] >= 4  # ... and every page after it from the cache
            assert ctx.request.get(base + "/health").json()["searches"]["calls"] == 1
            page.close()
    finally:
        app.state.service.close()
