"""The search page's result list as a person reads it (issue 34, point 3), in process: a count,
one entry a thread with its other answers under it, no system name or score unless asked for, and
a bare Task 2 formula searched as the formula it is."""

from __future__ import annotations

import re

from mathsearch.searcher import Searcher, formula_query
from mathsearch.web.results import DEPTH, MORE_SHOWN, group_ids, results

HARMONIC = "harmonic series diverges $\\sum_{n=1}^{\\infty}\\frac{1}{n}$"


def test_group_ids_keeps_rank_order_and_lone_ids():
    assert group_ids(["a", "b", "c", "d", "e"], {"a": 1, "b": 2, "c": 1, "e": 2}) == [["a", "c"], ["b", "e"], ["d"]]


def test_answers_of_one_thread_are_one_entry_at_the_rank_of_the_best(searcher):
    system, ranking = searcher.rank(HARMONIC, 1, k=DEPTH)
    ids = ranking.ordered()
    thread_of = searcher.ctx.store.thread_ids(ids)
    seen_threads: set[int] = set()
    last_rank = 0
    several = 0
    for page in (1, 2, 3):
        found = results(searcher, HARMONIC, 1, page)
        assert found["system"] == system and found["found"] == len(ids)
        assert len(found["groups"]) == 10
        for g in found["groups"]:
            hits = g["hits"]
            threads = {thread_of[str(h.id)] for h in hits}
            assert len(threads) == 1  # one thread an entry ...
            (thread,) = threads
            assert thread not in seen_threads  # ... and a thread in one entry only, over the pages
            seen_threads.add(thread)
            in_thread = [i for i in ids if thread_of[i] == thread]
            assert [str(h.id) for h in hits] == in_thread[: 1 + MORE_SHOWN]  # the best first, in rank order
            assert g["count"] == len(in_thread)
            assert hits[0].rank == ids.index(in_thread[0]) + 1 > last_rank  # entries in the order of their best
            last_rank = hits[0].rank
            several += g["count"] > 1
    assert several >= 3  # the query finds threads with several answers (the fault seen on page 2)
    assert found["groups_found"] == len(set(thread_of.values()))


def test_the_page_counts_hits_and_keeps_system_and_scores_behind_details(client, searcher):
    plain = client.get("/", params={"q": HARMONIC, "page": 2})
    assert plain.status_code == 200
    (summary,) = re.findall(r'<p class="meta" id="summary">([^<]*)</p>', plain.text)
    found = results(searcher, HARMONIC, 1, 2)
    count = f"{found['found']:,}" + ("+" if found["capped"] else "")
    threads = f"{found['groups_found']:,} threads"
    assert summary.startswith(f"{count} answers; the best {found['found']:,} are in {threads}" if found["capped"]
                              else f"{count} answers in {threads}")
    assert summary.endswith(f"page 2 of {found['pages']}")
    assert plain.text.count('<li class="hit">') == 10
    labels = re.findall(r"<summary>(\d+) more answers? in this thread</summary>", plain.text)
    assert [int(n) for n in labels] == [g["count"] - 1 for g in found["groups"] if g["count"] > 1]
    assert found["system"] not in plain.text and "· score " not in plain.text and "research" not in plain.text
    assert 'href="/?q=' in plain.text and "details=1" in plain.text  # the toggle
    details = client.get("/", params={"q": HARMONIC, "page": 2, "details": 1})
    assert found["system"] in details.text
    best = found["groups"][0]["hits"][0]
    assert f"#{best.rank} · score {best.score:.3f} · answer {best.id}" in details.text
    assert 'name="details" value="1"' in details.text and "page=3&amp;details=1" in details.text


def test_a_bare_task2_formula_is_the_formula(client, sample_index):
    assert formula_query("x^2+y^2") == "$x^2+y^2$"
    assert formula_query("  x^2 ") == "$x^2$"
    for kept in ("$x^2$ and y", "\\(x\\)", "cost $5"):
        assert formula_query(kept) == kept
    bare = client.get("/api/search", params={"q": "x^2+y^2", "task": 2, "size": 20}).json()
    dollars = client.get("/api/search", params={"q": "$x^2+y^2$", "task": 2, "size": 20}).json()
    assert [(h["id"], h["score"]) for h in bare["hits"]] == [(h["id"], h["score"]) for h in dollars["hits"]]
    assert bare["query"] == "x^2+y^2"  # the query as typed is what is echoed
    s = Searcher(sample_index)
    assert [h.id for h in s.search("x^2+y^2", 2, k=5).hits] == [h.id for h in s.search("$x^2+y^2$", 2, k=5).hits]
    page = client.get("/", params={"q": "x^2+y^2", "task": 2})
    assert 'id="as-formula"' in page.text and '<span class="tex">x^2+y^2</span>' in page.text
    assert page.text.count('<li class="group">') == 10
    assert "hl" in page.text  # the hits' formulae marked as the query's
    assert 'id="as-formula"' not in client.get("/", params={"q": "$x^2+y^2$", "task": 2}).text


def test_decorating_part_of_a_ranking_gives_the_same_hits_at_the_same_ranks(searcher):
    whole = searcher.search(HARMONIC, 1, k=30).hits
    _, ranking = searcher.rank(HARMONIC, 1, k=30)
    assert searcher.decorate(ranking, 1, HARMONIC) == whole
    some = [str(whole[i].id) for i in (0, 7, 29)]
    assert searcher.decorate(ranking, 1, HARMONIC, some) == [whole[0], whole[7], whole[29]]
