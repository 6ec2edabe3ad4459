"""mathsearch serve's JSON API and server-side rendering, in process (no browser): the same library
calls as the CLI, bounded inputs refused with a clear 4xx, sanitised HTML, and schemathesis over
/openapi.json finding no server error."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import httpx
import hypothesis
import pytest
import schemathesis
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from web_support import free_port

from mathsearch.cli import app as cli
from mathsearch.errors import InputError
from mathsearch.readers.snippets import LONG_FORMULA, post_snippet
from mathsearch.searcher import Searcher
from mathsearch.text.dollar_math import find_math
from mathsearch.web import app as web_app
from mathsearch.web import render
from mathsearch.web.app import MAX_QUERY, MAX_SIZE, create_app


@pytest.fixture(scope="module")
def app(sample_index):
    return create_app(sample_index)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app) as c:
        yield c


def balanced(text: str) -> bool:
    """Every formula of ``text`` is whole: no ``$`` is left once the formulae are taken out."""
    pos, rest = 0, []
    for start, end, _ in find_math(text, is_html=False):
        rest.append(text[pos:start])
        pos = end
    rest.append(text[pos:])
    return "$" not in re.sub(r"\$\s*\$", "", "".join(rest).replace("\\$", ""))  # "$ $": an empty formula


def test_health_counts_the_store(client, sample_index):
    r = client.get("/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok"
    assert body["counts"]["answers"] == Searcher(sample_index).ctx.store.counts()["answers"] > 0


def test_search_is_the_library_search_paged(client, sample_index):
    q = "harmonic series diverges $\\sum_{n=1}^{\\infty}\\frac{1}{n}$"
    top20 = [h.id for h in Searcher(sample_index).search(q, 1, k=20).hits]
    assert len(top20) == 20
    one = client.get("/api/search", params={"q": q, "task": 1}).json()
    two = client.get("/api/search", params={"q": q, "task": 1, "page": 2}).json()
    assert [h["id"] for h in one["hits"]] == top20[:10]
    assert [h["id"] for h in two["hits"]] == top20[10:]
    assert one["next_page"] == 2 and one["system"].startswith("ours")
    assert [h["rank"] for h in two["hits"]] == list(range(11, 21))
    assert all(h["snippet"] and balanced(h["snippet"]) for h in one["hits"] + two["hits"])
    assert any(h["matched_formulae"] for h in one["hits"])  # the query's formula is in the collection


def test_task2_groups_hold_one_visual_id_each(client, sample_index):
    r = client.get("/api/search", params={"q": "$x^2+y^2$", "task": 2, "size": 30}).json()
    assert len(r["hits"]) == 30
    groups = r["groups"]
    assert sorted(h["id"] for g in groups for h in g["hits"]) == sorted(h["id"] for h in r["hits"])
    assert [g["rank"] for g in groups] == sorted(g["rank"] for g in groups)
    store = Searcher(sample_index).ctx.store
    for g in groups:
        assert {h["visual_id"] for h in g["hits"]} == {g["visual_id"]}
        assert g["latex"] == g["hits"][0]["matched_formulae"][0]
        assert 1 <= len(g["posts"]) <= 5  # the posts holding it: the hit's own formula is one instance
        assert {store.visual_id(p["formula_id"]) for p in g["posts"]} == {g["visual_id"]}
    assert any(len(g["posts"]) > 1 for g in groups)  # formulae that several posts hold


def test_the_apis_hits_and_groups_are_the_librarys_records(app, client):
    """One hit model from the library to JSON: the schema's hit, group and source are the library's
    dataclasses, and a response's hits carry exactly their fields (a field added to one shows in both)."""
    from dataclasses import fields

    from mathsearch.searcher import AnswerSource, FormulaGroup, SearchHit

    schemas = app.openapi()["components"]["schemas"]
    for record in (SearchHit, FormulaGroup, AnswerSource):
        assert set(schemas[record.__name__]["properties"]) == {f.name for f in fields(record)}, record
    assert not {"Hit", "Group", "Source"} & set(schemas)  # no second model beside them
    r = client.get("/api/search", params={"q": "$x^2+y^2$", "task": 2, "size": 5}).json()
    assert r["hits"] and all(set(h) == {f.name for f in fields(SearchHit)} for h in r["hits"])
    assert all(set(g) == {f.name for f in fields(FormulaGroup)} for g in r["groups"])


def test_task3_answers_with_sources(client):
    r = client.get("/api/search", params={"q": "Why does the harmonic series $\\sum 1/n$ diverge?", "task": 3}).json()
    a = r["answer"]
    assert 0 < len(a["text"]) <= 1200
    assert a["sources"] and all(s["thread_id"] for s in a["sources"])
    assert r["hits"] == [] and r["next_page"] is None


@pytest.mark.parametrize("params, status, words", [
    ({"q": "x" * (MAX_QUERY + 1)}, 422, "at most 1000 characters"),
    ({"q": ""}, 422, "at least 1 character"),
    ({"q": "$ $"}, 422, "has no word, number or formula to search for"),
    ({"q": "?"}, 422, "has no word, number or formula to search for"),  # nothing to search for (searcher.SEARCHABLE)
    ({"q": "... = ?", "task": 2}, 422, "has no word, number or formula to search for"),
    ({"q": "prime", "page": 0}, 422, "greater than or equal to 1"),
    ({"q": "prime", "page": 21}, 422, "less than or equal to 20"),
    ({"q": "prime", "size": MAX_SIZE + 1}, 422, "less than or equal to 50"),
    ({"q": "prime", "task": 4}, 422, "less than or equal to 3"),
])
def test_bounded_inputs_are_refused_clearly(client, params, status, words):
    r = client.get("/api/search", params=params)
    assert r.status_code == status, r.text
    assert words in r.text


def test_the_page_says_why_a_query_of_punctuation_is_refused_and_searches_a_symbol(client):
    r = client.get("/", params={"q": "?"})
    assert r.status_code == 400 and "has no word, number or formula to search for" in r.text
    r = client.get("/api/search", params={"q": "∞", "size": 3})
    assert r.status_code == 200 and r.json()["hits"] and r.json()["searched_as"][0]["latex"] == "\\infty"
    # the API says the same sentence, not its pattern's regex
    r = client.get("/api/search", params={"q": "?"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "q"]
    assert r.json()["detail"][0]["msg"] == "the query '?' has no word, number or formula to search for."
    assert "[^" not in r.text  # no regex


def test_thread_api_sanitises_and_links(client, sample_index):
    r = client.get("/api/thread/255").json()
    assert r["thread_id"] == 255 and "converge" in r["title"]
    answers = Searcher(sample_index).ctx.store.answers_of(255)
    assert sorted(a["post_id"] for a in r["answers"]) == sorted(a.post_id for a in answers)
    html = " ".join(p["body_html"] for p in [r["question"], *r["answers"]])
    assert '<span class="tex"' in html and "math-container" not in html
    assert r["duplicates"] or r["related"]
    # an answer id gives its thread
    assert client.get(f"/api/thread/{answers[0].post_id}").json()["thread_id"] == 255
    missing = client.get("/api/thread/999999999")
    assert missing.status_code == 404 and "not in the collection" in missing.json()["detail"]
    assert client.get(f"/api/thread/{2**63}").status_code == 422


def test_formula_api_finds_visually_identical_instances(client):
    r = client.get("/api/formula", params={"latex": "\\sum_{n=1}^{\\infty}\\frac{1}{n}"}).json()
    assert r["visual_id"] is not None and len(r["instances"]) >= 2
    assert {i["latex"].replace(" ", "") for i in r["instances"]} == {"\\sum_{n=1}^{\\infty}\\frac{1}{n}"}
    assert r["representations"]["prefix"] and "<math" in r["representations"]["pmathml"]
    by_id = client.get(f"/api/formula/{r['instances'][0]['formula_id']}").json()
    assert by_id["visual_id"] == r["visual_id"]
    assert client.get("/api/formula").status_code == 422
    assert client.get("/api/formula/999999999999").status_code == 404


def test_pages_render_server_side_with_security_headers(client):
    r = client.get("/", params={"q": "prime numbers $p$", "task": 1})
    assert r.status_code == 200
    assert r.headers["content-security-policy"].startswith("default-src 'self'; script-src 'self'")
    assert len(re.findall(r'<li class="hit">', r.text)) == 10
    assert 'rel="next"' in r.text and "/static/mathjax/tex-chtml-full.js" in r.text
    bad = client.get("/", params={"q": "prime", "page": "x"})
    assert bad.status_code == 400 and "page must be a whole number from 1 to 20" in bad.text
    assert client.get("/thread/999999999").status_code == 404
    assert client.get("/static/mathjax/tex-chtml-full.js").status_code == 200
    assert "/static/swagger-ui/swagger-ui-bundle.js" in client.get("/docs").text  # the API page, from here


def test_missing_mathjax_names_the_setup_command(sample_index, tmp_path, monkeypatch):
    monkeypatch.setattr(render, "MATHJAX_DIR", tmp_path)
    with pytest.raises(InputError, match=r"bash scripts/setup_web.sh"):
        web_app.create_app(sample_index)


def test_post_html_keeps_formulae_and_drops_everything_active():
    body = ('<p onclick="x()">a <span class="math-container" id="7">x^2 &lt; y</span></p><script>bad()</script>'
            '<a href="javascript:bad()">j</a><img src="x" onerror="bad()"><iframe src="/"></iframe>'
            '<span class="tex">forged</span> ms0x0x')
    out = str(render.post_html(body, render.marks_of("$x^2<y$")))
    assert '<span class="tex hl" data-fid="7">x^2 &lt; y</span>' in out
    for active in ("onclick", "<script", "bad()", "javascript:", "onerror", "<iframe", 'class="tex">forged'):
        assert active not in out
    assert "ms0x0x" in out  # a post's own text is never taken for a held formula
    huge = str(render.text_html("see $" + "x+" * 500_000 + "1$ here"))
    assert len(huge) < 2000 and 'class="tex-long"' in huge


def test_snippets_of_real_posts_never_cut_a_formula(sample_index):
    store = Searcher(sample_index).ctx.store
    checked = 0
    for post in store.iter_answers():
        if "$" not in post.text:
            continue
        for words in ({"the"}, {"prime"}, set()):
            s = post_snippet(post.body, words, 120)
            assert balanced(s), s
            assert len(s) <= 120 + 2 * LONG_FORMULA + 6  # (a formula counts half its LaTeX, at most 60 here)
        checked += 1
        if checked == 400:
            break
    assert checked == 400


def checker(check, label):
    def run(case) -> None:
        check(label, case)

    return run


def test_schemathesis_finds_no_server_error(app):
    """Every operation of /openapi.json, generated inputs (valid and not), each response checked:
    no 5xx, status codes and bodies as the schema says."""
    api = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    calls = 0
    def check(label: str, case) -> None:
        nonlocal calls
        calls += 1
        try:
            case.call_and_validate()
        except Exception as exc:  # noqa: BLE001  (collected, reported together below)
            failures.append(f"{label}: {exc}"[:800])

    for result in api.get_all_operations():
        operation = result.ok()
        settings = hypothesis.settings(max_examples=10, deadline=None, database=None, derandomize=True,
                                       suppress_health_check=list(hypothesis.HealthCheck))
        settings(hypothesis.given(case=operation.as_strategy())(checker(check, operation.label)))()
    assert calls >= 40
    assert not failures, "\n".join(failures[:5])


def test_serve_command_serves_and_refuses_clearly(sample_index, tmp_path):
    """``mathsearch serve`` as a person runs it: a real process on a free loopback port."""
    missing = CliRunner().invoke(cli, ["serve", "--index", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "is not an index folder" in missing.stderr
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mathsearch", "serve", "--index", str(sample_index), "--port", str(port)],
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10)
                break
            except httpx.HTTPError:
                assert server.poll() is None and time.monotonic() < deadline, "mathsearch serve did not start"
                time.sleep(0.3)
        assert health.status_code == 200 and health.json()["status"] == "ok"
        page = httpx.get(f"http://127.0.0.1:{port}/", params={"q": "prime $p$"}, timeout=60)
        assert page.status_code == 200 and page.text.count('<li class="hit">') == 10
    finally:
        server.terminate()
        server.wait(30)
    assert f"http://127.0.0.1:{port}/" in server.stderr.read()


def test_a_query_past_its_time_budget_is_told_so(sample_index):
    with TestClient(create_app(sample_index, budget=1e-6)) as slow:
        r = slow.get("/api/search", params={"q": "prime numbers $p$"})
        assert r.status_code == 503
        assert "took longer than its 1e-06 s budget" in r.json()["detail"]
        page = slow.get("/", params={"q": "prime numbers $p$"})
        assert page.status_code == 503 and "budget" in page.text


def test_a_thread_marks_the_formulae_a_plain_words_query_was_searched_as(client):
    plain = client.get("/thread/1984008", params={"q": "prove sqrt 2 is irrational", "task": 1}).text
    dollars = client.get("/thread/1984008", params={"q": "prove $\\sqrt{2}$ is irrational", "task": 1}).text
    assert plain.count(' hl"') == dollars.count(' hl"') > 0


def test_a_hit_opened_from_page_2_leads_back_to_page_2(client):
    import html as _html
    import re

    page = client.get("/", params={"q": "integral of x sin x", "task": 1, "page": 2, "details": 1}).text
    link = _html.unescape(re.findall(r'href="(/thread/[^"]+)"', page)[0])
    assert "page=2" in link and "details=1" in link
    thread = client.get(link).text
    assert 'href="/?q=integral+of+x+sin+x&amp;task=1&amp;page=2&amp;details=1"' in thread


def test_past_the_last_page_the_summary_does_not_count_a_page_that_is_not_there(client):
    import re

    page = client.get("/", params={"q": "integral [calculus] [real-analysis]", "task": 1, "page": 4}).text
    summary = re.findall(r'id="summary"[^>]*>([^<]*)', page)[0]
    assert "page 4 of" not in summary and "No result on page 4" in page


def test_task2_the_formula_equal_to_the_query_is_marked_whole(client):
    page = client.get("/", params={"q": "$x^2+y^2=z^2$", "task": 2}).text
    first = page[page.index('class="group-formula"'):]
    assert first.index('<span class="tex hl">') < first.index("</div>")  # the best group's heading, boxed whole


def test_the_query_hints_stand_open_on_the_front_page_and_fold_on_a_results_page(client):
    front = client.get("/").text
    results = client.get("/", params={"q": "harmonic series"}).text
    assert 'id="syntax"' in front and '<details class="hints">' not in front
    assert results.index('<details class="hints">') < results.index('id="syntax"') < results.index("</details>")


def test_query_variables_mark_what_they_bound_and_no_letter_that_shares_their_name(client):
    import re

    page = client.get("/", params={"q": "?a^2+?b^2", "task": 2}).text
    heads = re.findall(r'class="group-formula">(.*?)</div>', page, re.S)
    named = [h for h in heads if 'data-query-latex="a^{2}+b^{2}"' in h]
    assert named and "#c8e6ff" in named[0]  # a and b bound to ?a and ?b: blue
    assert "#ffe27a" not in named[0]  # and not also yellow, as if the query held the letters a and b
