"""The generative mode against a tiny local server speaking the OpenAI chat protocol (127.0.0.1 only,
bounded): what is sent, citations as sources, retries and cuts of over-long answers, and the
fallback to the extractive answer on timeouts, HTTP errors and empty answers (the run stays valid)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import TOPICS

from mathsearch.answers.generate import ChatEndpoint, GenerationError, citations, generate
from mathsearch.readers.topics import read_topics
from mathsearch.runs import write_task3_run
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.task3 import run_answers


class Chat:
    """The replies the server gives, in order (the last repeats), and the requests it saw."""

    def __init__(self):
        self.replies: list = []
        self.requests: list[dict] = []
        self.delay = 0.0
        self.status = 200


@pytest.fixture()
def server():
    chat = Chat()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server API
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            chat.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "json": json.loads(body)})
            if chat.delay:
                time.sleep(chat.delay)
            reply = chat.replies[min(len(chat.requests), len(chat.replies)) - 1] if chat.replies else ""
            if chat.status != 200:
                data = b'{"error": {"message": "overloaded"}}'
            elif isinstance(reply, bytes):
                data = reply
            else:
                data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": reply}}]}).encode()
            try:
                self.send_response(chat.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up (timeout test)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    chat.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield chat
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


PASSAGES = [("101", "Use the ratio test."), ("202", "Compare with $\\sum 1/n^2$.")]


def test_what_is_sent_and_citations_become_sources(server):
    server.replies = ["By comparison with $\\sum 1/n^2$ [answer:202], it converges [answer:101] [answer:999]."]
    endpoint = ChatEndpoint(server.url, "tiny-model", "sekret", timeout=5)
    made = generate(endpoint, "Does $\\sum 1/n^3$ converge?", "Asking for a friend.", PASSAGES)
    assert made.text == "By comparison with $\\sum 1/n^2$, it converges." and made.sources == ("202", "101")
    assert made.tries == 1 and not made.trimmed
    (req,) = server.requests
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sekret"
    sent = req["json"]
    assert sent["model"] == "tiny-model" and [m["role"] for m in sent["messages"]] == ["system", "user"]
    user = sent["messages"][1]["content"]
    assert "Does $\\sum 1/n^3$ converge?" in user and "[answer:101] Use the ratio test." in user and "[answer:202]" in user
    assert "1200" in sent["messages"][0]["content"]


def test_over_long_answers_are_asked_again_then_cut(server):
    long = "This sentence is about $x_1. Y$ and more. " * 60  # 2,500 characters
    server.replies = [long, "A short answer [answer:101]."]
    made = generate(ChatEndpoint(server.url, "m", None, 5), "q", "", PASSAGES, retries=2)
    assert made.text == "A short answer." and made.tries == 2 and made.sources == ("101",)
    again = server.requests[1]["json"]["messages"]
    assert again[-2]["role"] == "assistant" and "characters" in again[-1]["content"] and server.requests[1]["auth"] is None
    server.requests.clear()
    server.replies = [long]  # always too long: cut at a sentence boundary after the last try
    made = generate(ChatEndpoint(server.url, "m", None, 5), "q", "", PASSAGES, retries=1)
    assert made.trimmed and made.tries == 2 and len(server.requests) == 2
    assert len(made.text) <= 1200 and made.text.endswith("and more.") and made.text.count("$") % 2 == 0


def test_errors_timeouts_and_empty_answers_raise(server):
    endpoint = ChatEndpoint(server.url, "m", None, timeout=0.3)
    server.replies = ["  [answer:101]  "]  # nothing but a citation: empty
    with pytest.raises(GenerationError, match="empty"):
        generate(endpoint, "q", "", PASSAGES, retries=1)
    assert len(server.requests) == 2
    server.replies = [b"not json"]
    with pytest.raises(GenerationError, match="not a chat completion"):
        endpoint.complete([{"role": "user", "content": "x"}])
    server.status = 503
    with pytest.raises(GenerationError, match="HTTP 503"):
        endpoint.complete([{"role": "user", "content": "x"}])
    server.status, server.delay, server.replies = 200, 1.0, ["late"]
    started = time.monotonic()
    with pytest.raises(GenerationError, match="did not answer within"):
        endpoint.complete([{"role": "user", "content": "x"}])
    assert time.monotonic() - started < 0.9
    with pytest.raises(GenerationError, match="cannot reach"):
        ChatEndpoint("http://127.0.0.1:9/v1", "m", None, 1).complete([{"role": "user", "content": "x"}])


def test_endpoint_from_options_or_environment(monkeypatch):
    for name in ("MATHSEARCH_LLM_URL", "MATHSEARCH_LLM_MODEL", "MATHSEARCH_LLM_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(GenerationError, match="needs an OpenAI-compatible endpoint"):
        ChatEndpoint.from_env()
    monkeypatch.setenv("MATHSEARCH_LLM_URL", "http://127.0.0.1:1/v1/chat/completions")
    monkeypatch.setenv("MATHSEARCH_LLM_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", "k2")
    e = ChatEndpoint.from_env()
    assert (e.model, e.key, e.completions_url) == ("env-model", "k2", "http://127.0.0.1:1/v1/chat/completions")
    assert "k2" not in repr(e)  # the key is never shown
    assert ChatEndpoint.from_env(model="opt").model == "opt"
    with pytest.raises(GenerationError, match="http"):
        ChatEndpoint.from_env(url="file:///etc/passwd")
    assert citations("x [answer:7] y [3].", ["7"]) == ("x y.", ("7",))


def test_generate_system_run_stays_valid(server, sample_index, tmp_path, monkeypatch):
    monkeypatch.delenv("MATHSEARCH_LLM_URL", raising=False)
    topics = read_topics(TOPICS / "task1-2020.xml", TOPICS / "formulas" / "formulas-2020-latex.tsv")[:3]
    ctx = SearchContext(sample_index)
    server.replies = ["A generated answer citing [answer:1].", "", "x " * 700]
    system = make_system(f"generate:url={server.url},model=m,retries=0,timeout=5")
    extractive = make_system("extract")
    answers, notes = run_answers(system, ctx, topics)
    assert len(server.requests) == 3  # one request a topic (retries=0)
    first, second, third = answers
    # Topic 1: the generated text; no id it cites is one of the passages, so the passages are its sources.
    assert first.answer == "A generated answer citing." and first.sources.startswith("answer:")
    user = server.requests[0]["json"]["messages"][1]["content"]
    assert all(f"[answer:{s.removeprefix('answer:')}]" in user for s in first.sources.split(","))
    # Topic 2: empty answer -> the extractive answer; topic 3: cut ('x x ...' has no sentence end: words).
    assert second.answer == extractive.answer(ctx, SearchQuery.from_topic(topics[1])).text
    assert any("empty" in n for n in notes)
    assert len(third.answer) <= 1200 and third.answer.endswith("…")
    report = write_task3_run(tmp_path / "run.tsv", answers, on_invalid="raise")
    assert report.ok and report.hits == 3
    # No endpoint at all: every answer is the extractive one, the run still valid.
    answers, notes = run_answers(make_system("generate"), ctx, topics[:1])
    assert answers[0].answer == extractive.answer(ctx, SearchQuery.from_topic(topics[0])).text
    assert notes and "needs an OpenAI-compatible endpoint" in notes[0]
