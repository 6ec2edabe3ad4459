"""A query is analysed once on its way down (issue 40): the CLI's ``mathsearch search`` and the web's
API and page each read the typed text once (:func:`mathsearch.searcher.parse_query`), and the
ranking, the decoration of hits, the notices and the page all read that one
:class:`~mathsearch.searcher.ParsedQuery`.  The next page of a kept query reads it from the cache.

Each analysis function is wrapped wherever a loaded module holds it, so a call through any import
counts."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator

import pytest
from cli_support import cli

import mathsearch.searcher as searcher_module
import mathsearch.systems.base as systems_base
import mathsearch.text.filters as filters_module
import mathsearch.text.plainmath as plainmath_module

# what reads a typed query: filters, plain-words maths, Task 2's one formula, the systems' query
ANALYSES = {
    "parse_query": (searcher_module, "parse_query"),
    "parse_filters": (filters_module, "parse_filters"),
    "annotate": (plainmath_module, "annotate"),
    "formula_query": (searcher_module, "formula_query"),
}


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter]:
    counted: Counter = Counter()
    for name, (module, attr) in ANALYSES.items():
        original = getattr(module, attr)

        def wrapped(*args, _original=original, _name=name, **kwargs):
            counted[_name] += 1
            return _original(*args, **kwargs)

        for loaded in list(sys.modules.values()):  # every module that imported it by name
            if getattr(loaded, "__name__", "").startswith("mathsearch") and getattr(loaded, attr, None) is original:
                monkeypatch.setattr(loaded, attr, wrapped)
    from_text = systems_base.SearchQuery.__dict__["from_text"].__func__

    def counted_from_text(cls, *args, **kwargs):
        counted["SearchQuery.from_text"] += 1
        return from_text(cls, *args, **kwargs)

    monkeypatch.setattr(systems_base.SearchQuery, "from_text", classmethod(counted_from_text))
    yield counted


ONCE_TASK1 = {"parse_query": 1, "parse_filters": 1, "annotate": 1, "SearchQuery.from_text": 1}
ONCE_TASK2 = {**ONCE_TASK1, "formula_query": 1}


@pytest.mark.parametrize(("task", "query", "once"), [
    (1, "prove sqrt 2 irrational [number-theory]", ONCE_TASK1),
    (2, "x^2+y^2=1", ONCE_TASK2),
    (2, "?a^2+?b^2", ONCE_TASK2),
])
def test_the_cli_reads_a_query_once(sample_index, calls, task, query, once):
    result = cli("search", "--index", sample_index, "--task", task, "--top", 5, query)
    assert result.exit_code == 0, result.output
    assert "hits" in result.output
    assert dict(calls) == once


def test_the_web_reads_a_query_once_and_its_next_page_not_again(sample_index, calls):
    from fastapi.testclient import TestClient

    from mathsearch.web.app import create_app

    with TestClient(create_app(sample_index)) as client:
        calls.clear()  # (the server's warm-up search)
        r = client.get("/api/search", params={"q": "integral of x sin x", "task": 1})
        assert r.status_code == 200 and r.json()["searched_as"], r.text
        assert dict(calls) == ONCE_TASK1
        calls.clear()
        r = client.get("/api/search", params={"q": "integral of x sin x", "task": 1, "page": 2})
        assert r.status_code == 200 and r.json()["page"] == 2
        assert dict(calls) == {}  # the kept ranking's query, as parsed
        calls.clear()
        page = client.get("/", params={"q": "sum of 1/n^2 [sequences-and-series]", "task": 1})
        assert page.status_code == 200 and "Searched as" in page.text
        assert dict(calls) == ONCE_TASK1
        calls.clear()
        page = client.get("/", params={"q": "sum of 1/n^2 [sequences-and-series]", "task": 1, "page": 2})
        assert page.status_code == 200
        assert dict(calls) == {}
        calls.clear()
        page = client.get("/", params={"q": "x^2+y^2=1", "task": 2})
        assert page.status_code == 200 and "formula" in page.text
        assert dict(calls) == ONCE_TASK2
        calls.clear()
        answer = client.get("/api/search", params={"q": "why is sqrt 2 irrational", "task": 3})
        assert answer.status_code == 200 and answer.json()["answer"] is not None
        assert calls["parse_query"] == 1 and calls["annotate"] == 1 and calls["parse_filters"] == 1
