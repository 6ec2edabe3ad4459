"""Models loaded once, before the server says it serves (issue 41, item 2), and the page's
"Searching..." note.

On a tiny index with MiniLM vectors: once ``create_app`` returns (``mathsearch serve`` prints its
banner only then) the query encoder is loaded, ``/health`` says ready and names it, and the first
search loads nothing more (one encoder in the process, shared by every index it opens).  Without
vectors no model is loaded at all.  In Chromium: a search slower than 300 ms shows "Searching...",
a quicker moment does not."""

from __future__ import annotations

import asyncio
import json

import pytest
from fastapi.testclient import TestClient
from test_search_golden import make_dump
from web_support import chromium, serve

from mathsearch import encoders
from mathsearch.building import build_index
from mathsearch.encoders import builtin
from mathsearch.searcher import Searcher
from mathsearch.web.app import create_app


@pytest.fixture(scope="module")
def dense_tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("dense-ready")
    build_index(make_dump(root / "dump"), root / "index", optional=("dense",))
    return root / "index"


def test_models_are_loaded_before_serving(dense_tiny, monkeypatch):
    loads: list[str] = []
    real_init = builtin.MiniLMQueryEncoder.__init__
    monkeypatch.setattr(builtin.MiniLMQueryEncoder, "__init__", lambda self: loads.append("minilm") or real_init(self))
    real = encoders.load_encoder
    monkeypatch.setattr(encoders, "load_encoder", lambda name, device=None: loads.append(name) or real(name, device))
    app = create_app(dense_tiny)
    service = app.state.service
    assert service.local.searcher.ctx.dense._model is not None  # loaded before the first request
    with TestClient(app) as client:
        health = client.get("/health").json()
        assert health["ready"] is True and health["models"] == ["minilm"]
        before = list(loads)
        hits = client.get("/api/search", params={"q": "prime numbers never end"}).json()["hits"]
        assert hits and hits[0]["snippet"]
        assert client.get("/", params={"q": "why is the harmonic series divergent"}).status_code == 200
    assert loads == before  # the searches loaded nothing
    # a second Searcher over the same index (a CLI search in a server's process) shares the encoder
    other = Searcher(dense_tiny)
    assert other.ctx.dense.query_encoder() is service.local.searcher.ctx.dense.query_encoder()
    # (other tests of the process may have loaded their own encoders: MiniLM is loaded once)
    assert loads == before and encoders.loaded_encoders().count("minilm") == 1


def test_the_query_encoder_makes_the_index_encoders_vectors():
    """MiniLM for queries without sentence-transformers' imports: in float32 the same vectors (to
    float32 rounding) as the sentence-transformers model that embeds the posts; the process's own
    (precision auto: bfloat16 where the CPU has it) within cosine 0.999 of them."""
    texts = ["Why does the harmonic series $\\sum_{n=1}^{\\infty}\\frac{1}{n}$ diverge?", "prove sqrt 2 irrational",
             "eigenvalues of a symmetric matrix are real", "x" * 3000, "$\\int x \\sin x \\, dx$", ""]
    query = encoders.shared_encoder("minilm")
    assert isinstance(query, builtin.MiniLMQueryEncoder) and query.info() == encoders.encoder_info("minilm")
    assert query.precision == builtin.resolve_precision("auto")
    exact = builtin.MiniLMQueryEncoder(precision="float32")
    full = encoders.load_encoder("minilm")
    for text in texts:
        a, b, shared = exact.encode_one(text), full.encode_one(text), query.encode_one(text)
        assert a.dtype == b.dtype == shared.dtype and a.shape == b.shape == shared.shape == (384,)
        assert abs(a - b).max() < 1e-6, text
        assert float(shared @ b) > 0.999, text


def test_no_model_without_vectors(sample_index):
    with TestClient(create_app(sample_index)) as client:
        health = client.get("/health").json()
    assert health["ready"] is True and health["models"] == []
    assert Searcher(sample_index).load_models() == []


def slowed(app, seconds: float):
    """``app`` answering each search (a request with ``q=``) ``seconds`` late."""
    async def wrapper(scope, receive, send):
        if scope["type"] == "http" and b"q=" in scope.get("query_string", b""):
            await asyncio.sleep(seconds)
        await app(scope, receive, send)

    return wrapper


def test_the_page_says_searching_after_300_ms(sample_index):
    with serve(slowed(create_app(sample_index), 3.0)) as base, chromium(viewport={"width": 1000, "height": 800}) as ctx:
        page = ctx.new_page()
        page.goto(base + "/")
        page.wait_for_selector("html[data-math=ready]", timeout=30000)
        note = page.locator("#searching")
        assert note.is_hidden()
        page.fill("#q", "harmonic series")
        # The page records when the note shows (Playwright's own waits would wait for the navigation);
        # the results page reads it back from the tab's sessionStorage.
        page.evaluate("""() => {
          const t0 = performance.now(), note = document.getElementById('searching');
          new MutationObserver(() => { if (!note.hidden) sessionStorage.setItem('shown',
            JSON.stringify({after: performance.now() - t0, busy: document.body.getAttribute('aria-busy')})); })
            .observe(note, {attributes: true});
          document.querySelector('form.search').requestSubmit();
        }""")
        page.wait_for_url("**/?q=*", timeout=30000)
        page.wait_for_selector("html[data-math=ready]", timeout=30000)
        shown = json.loads(page.evaluate("sessionStorage.getItem('shown')") or "null")
        assert shown is not None, "the note never showed during a 3 s search"
        assert shown["after"] >= 250 and shown["busy"] == "true"  # not at once: a quick search never flashes it
        assert page.locator("#searching").is_hidden() and page.locator(".snippet").count() >= 1
