"""What a new user met (issue 41, "Why" items 5 and 6), each fault mended and held by a test:
a port in use said in one line before the banner, no page wider than its viewport, an oversized
query and invalid UTF-8 answered by the app itself, ``eval`` refusing a file that is not a run,
build hints that only suggest commands that work, ``serve --pool`` naming /assess, and sources of
a Task 3 answer in words a reader understands."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest
from cli_support import cli, write
from conftest import QRELS, TOPICS
from test_search_golden import make_dump
from web_support import chromium, free_port, serve

from mathsearch.web.app import create_app

NESTED = "{" * 495 + "x" + "}" * 495  # the 495-level formula of the issue (991 characters)


def test_serve_on_a_port_in_use_says_so_in_one_line_before_the_banner(sample_index):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("serve", "--index", sample_index, "--port", port, "--workers", 0)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"port {port} on 127.0.0.1 is in use" in lines[0] and "--port" in lines[0]
    assert "serving" not in result.output


def test_serve_with_a_pool_names_assess_in_its_start_up_line(sample_index, tmp_path, monkeypatch):
    import uvicorn

    run = write(tmp_path / "g-task1-r-auto-both-P.tsv", ["A.1\tQ0\t100\t1\t2.0\tr"])
    pool = tmp_path / "pool.sqlite"
    assert cli("pool", "--task", 1, run, "--out", pool).exit_code == 0
    started = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: started.update(kw))
    port = free_port()
    result = cli("serve", "--index", sample_index, "--pool", pool, "--port", port, "--workers", 0)
    assert result.exit_code == 0, result.output
    assert f"http://127.0.0.1:{port}/assess" in result.output and "pool.sqlite" in result.output
    assert started["h11_max_incomplete_event_size"] >= 400_000  # a 200 KB query reaches the app


@pytest.mark.parametrize("width", [1280, 390])
def test_a_495_level_formula_never_makes_the_page_wider_than_its_viewport(sample_index, width):
    queries = [(NESTED, 2), (f"${NESTED}$", 1), ("$" + "(" * 495 + "x" + ")" * 495 + "$", 2)]
    with serve(create_app(sample_index)) as base, chromium(viewport={"width": width, "height": 800}) as ctx:
        page = ctx.new_page()
        for q, task in queries:
            page.goto(base + "/?" + urllib.parse.urlencode({"q": q, "task": task}))
            page.wait_for_function("() => !document.querySelector('.tex:not(.tex-error):not(:has(mjx-container))')",
                                   timeout=60_000)
            page.wait_for_timeout(300)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (q[:20], task)
            if NESTED in q:  # the raw fallback is the case that overflowed (495 parentheses may typeset)
                assert page.locator(".tex-error").count() >= 1, (q[:20], task)


def _serve(index: Path, port: int) -> subprocess.Popen:
    server = subprocess.Popen([sys.executable, "-m", "mathsearch", "serve", "--index", str(index), "--port", str(port),
                               "--workers", "0"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            assert server.poll() is None and time.monotonic() < deadline, "mathsearch serve did not start"
            time.sleep(0.3)


def _get(port: int, target: str) -> tuple[int, str, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.putrequest("GET", target, skip_accept_encoding=True)  # sent as given: no re-encoding
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.getheader("content-type") or "", r.read().decode("utf-8", errors="replace")
    finally:
        conn.close()


def test_a_200_kb_query_is_the_apps_own_422_on_the_api_and_the_page(sample_index):
    big = urllib.parse.quote("prime " * 34_000)  # 204,000 characters
    port = free_port()
    server = _serve(sample_index, port)
    try:
        status, kind, body = _get(port, "/api/search?q=" + big)
        assert status == 422 and kind.startswith("application/json"), (status, body[:200])
        detail = json.loads(body)["detail"]
        assert detail[0]["loc"] == ["query", "q"] and len(body) < 2_000  # the echo is clipped
        status, kind, body = _get(port, "/?q=" + big)
        assert status == 400 and kind.startswith("text/html")
        assert 'class="error"' in body and "204,000 characters" in body
        status, kind, body = _get(port, "/api/search?q=%ff%fe%c3%28")  # through a real server too
        assert status == 422 and json.loads(body)["detail"][0]["loc"] == ["query", "q"]
    finally:
        server.terminate()
        server.wait(30)


def test_invalid_utf8_in_a_parameter_is_refused_naming_it(client):
    r = client.get("/api/search?q=%ff%fe%c3%28")
    assert r.status_code == 422
    (error,) = r.json()["detail"]
    assert error["loc"] == ["query", "q"] and "UTF-8" in error["msg"]
    r = client.get("/api/formula?latex=x%c3")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "latex"]
    page = client.get("/?q=%ff%fe%c3%28&task=1")
    assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")
    assert "The parameter q is not valid UTF-8" in page.text and '<li class="hit">' not in page.text
    assert page.headers["x-content-type-options"] == "nosniff"  # the app's headers on its refusals too
    ok = client.get("/api/search?q=caf%C3%A9+%24x%5E2%24")  # valid UTF-8 is searched as before
    assert ok.status_code == 200


def test_eval_refuses_a_topics_file_given_as_a_run_in_one_line():
    result = cli("eval", "--task", 1, "--qrels", QRELS / "task1-2020.tsv", TOPICS / "task1-2020.xml")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "task1-2020.xml is not a Task 1 run: its first line is not a run line" in lines[0]
    result = cli("eval", "--task", 2, "--qrels", QRELS / "task2-2020.tsv", QRELS / "task1-2020.tsv")
    assert result.exit_code == 2 and "is not a Task 2 run" in result.output


def _hinted(output: str) -> list[str]:
    (command,) = re.findall(r"`(mathsearch index [^`]+)`", output)
    return command.split()[2:]


@pytest.mark.parametrize("kind", ["file", "folder of notes", "missing"])
def test_search_hints_only_a_build_command_that_works(tmp_path, kind):
    target = tmp_path / "userfile.txt"
    if kind == "file":
        target.write_text("my notes\n")
    elif kind == "folder of notes":
        target = tmp_path / "notes"
        target.mkdir()
        (target / "a.txt").write_text("mine\n")
    result = cli("search", "--index", target, "x")
    assert result.exit_code == 2
    args = _hinted(result.output)
    assert args[0] == "COLLECTION"
    built = cli("index", make_dump(tmp_path / "dump"), *args[1:])  # the hint, run as given
    assert built.exit_code == 0, built.output
    if kind != "missing":
        assert target.exists() and Path(args[args.index("--index") + 1]) != target  # the user's path untouched


def test_task3_sources_are_labelled_for_a_reader(sample_index, client):
    result = cli("answer", "--index", sample_index, "How do I prove that there are infinitely many primes?")
    assert result.exit_code == 0, result.output
    assert "Sources (extract, extract)" not in result.output
    assert re.search(r"Sources: the answer is extracted from \d+ answers? of the collection \(system extract\)",
                     result.output), result.output
    page = client.get("/", params={"q": "How do I prove that there are infinitely many primes?", "task": 3})
    assert page.status_code == 200
    assert re.search(r'id="sources-how">The answer above is extracted from \d+ answers? of the collection', page.text)
