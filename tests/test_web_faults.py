"""The faults of mathsearch serve found by trying it as a stranger would (issue 34, point 4), each
asserted: one status for what is missing, the id bound told truly, no path of the server's disk in
any answer, echoed inputs clipped, an HTML 404 page, a favicon, and an API page served from here
(its browser half is in test_web_results_browser.py)."""

from __future__ import annotations

import re

import pytest

from mathsearch.searcher import Searcher
from mathsearch.web.app import MAX_POST_ID
from mathsearch.web.site import MAX_ECHO, SWAGGER_FILES


@pytest.fixture(scope="module")
def missing_ids(sample_index) -> tuple[int, int]:
    """A post id and a formula id the sample does not hold."""
    store = Searcher(sample_index).ctx.store
    post = next(i for i in range(1, 100) if store.post(i) is None)
    formula = next(i for i in range(1, 100) if store.formula(i) is None)
    return post, formula


def test_a_missing_post_or_formula_is_a_404_on_every_face(client, missing_ids):
    post, formula = missing_ids
    for url in (f"/thread/{post}", f"/api/thread/{post}", f"/formula?id={formula}", f"/api/formula/{formula}"):
        r = client.get(url)
        assert r.status_code == 404, (url, r.status_code)
        assert "not in the collection" in r.text, url
        assert r.headers["content-type"].startswith("text/html" if not url.startswith("/api/") else "application/json")
    # A malformed id is the asker's error, not a missing thing; in a page's path it names no page.
    assert client.get("/formula?id=abc").status_code == 400
    assert client.get("/thread/abc").status_code == 404


def test_the_id_bound_is_2_53_minus_1_and_every_message_says_so(client, missing_ids):
    assert MAX_POST_ID == 2**53 - 1
    assert client.get(f"/api/thread/{2**53 - 1}").status_code == 404  # inside the bound: only missing
    over = client.get(f"/api/thread/{2**53}")
    assert over.status_code == 422 and "9007199254740991" in over.text
    for url in (f"/thread/{2**53}", f"/formula?id={2**53}"):
        r = client.get(url)
        assert r.status_code in (400, 404) and "2^53-1 (9007199254740991)" in r.text, url
    schema = client.get("/openapi.json").json()
    for path, name in (("/api/thread/{post_id}", "post_id"), ("/api/formula/{formula_id}", "formula_id")):
        (param,) = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == name]
        assert param["schema"]["maximum"] == 2**53 - 1
        assert "2^53-1" in param["description"]


def test_no_answer_shows_where_the_index_lies(client, sample_index, missing_ids):
    post, formula = missing_ids
    health = client.get("/health").json()
    assert health["index"] == sample_index.name
    secrets = {str(sample_index.parent), str(sample_index.resolve().parent)}
    urls = ["/health", f"/thread/{post}", f"/api/thread/{post}", f"/formula?id={formula}", f"/api/formula/{formula}",
            "/nope", "/api/nope", "/?q=prime", "/?q=prime&task=9", "/docs", "/openapi.json", f"/thread/{2**60}",
            "/api/search?q=%24%20%24"]
    for url in urls:
        body = client.get(url).text
        assert not [s for s in secrets if s in body], url
        assert not re.search(r"(/tmp|/home|/root|/work)/", body), url
    assert f"not in the collection of {sample_index.name}." in client.get(f"/api/thread/{post}").json()["detail"]


def test_echoed_inputs_are_clipped(client, sample_index):
    long_query = "prime " + "x" * 60_000
    api = client.get("/api/search", params={"q": long_query})
    assert api.status_code == 422 and "at most 1000 characters" in api.text
    (error,) = api.json()["detail"]
    assert len(error["input"]) < MAX_ECHO + 40 and error["input"].endswith("(60,006 characters)")
    assert len(api.text) < 2000
    page = client.get("/", params={"q": long_query})
    assert page.status_code == 400 and "60,006 characters; at most 1,000 are searched" in page.text
    assert "x" * (MAX_ECHO + 1) not in page.text  # neither in the box nor in the title
    formula = client.get("/formula", params={"latex": "x-" * 30_000})
    assert formula.status_code == 400 and "x-" * (MAX_ECHO // 2 + 1) not in formula.text
    api_formula = client.get("/api/formula", params={"latex": "x-" * 30_000})
    assert api_formula.status_code == 422 and len(api_formula.text) < 2000
    answer = Searcher(sample_index).ctx.store.iter_answers().__next__()
    thread = client.get(f"/thread/{answer.post_id}", params={"q": long_query})
    assert thread.status_code == 200 and "x" * (MAX_ECHO + 1) not in thread.text
    assert client.get(f"/thread/{answer.post_id}", params={"q": "prime"}).text.count("Back to the results") == 1


def test_an_unknown_page_is_an_html_404_and_the_api_stays_json(client):
    page = client.get("/nope")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "There is no page at /nope." in page.text and '<form class="search"' in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    api = client.get("/api/nope")
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}


def test_every_page_names_a_favicon_the_server_has(client):
    page = client.get("/").text
    (href,) = re.findall(r'<link rel="icon" href="([^"]+)"', page)
    icon = client.get(href)
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")
    ico = client.get("/favicon.ico", follow_redirects=False)
    assert ico.status_code == 301 and ico.headers["location"] == href


def test_the_api_page_is_swagger_ui_served_from_here(client):
    assert '<a href="/docs">API</a>' in client.get("/").text
    docs = client.get("/docs")
    assert docs.status_code == 200 and docs.headers["content-type"].startswith("text/html")
    sources = re.findall(r'(?:src|href)="([^"]+)"', docs.text)
    assert not [s for s in sources if s.startswith(("http:", "https:", "//"))]  # nothing from a CDN
    for name in SWAGGER_FILES:
        assert f"/static/swagger-ui/{name}" in sources
        assert client.get(f"/static/swagger-ui/{name}").status_code == 200
    assert "/static/apidocs.js" in sources and "<script>" not in docs.text  # no inline script (CSP)
