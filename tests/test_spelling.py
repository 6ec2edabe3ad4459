"""A word no post holds ("irrationnal numbr") is named before the hits, and the query respelt with
the collection's nearest words is offered ("did you mean"): by the library, the CLI, the API and the
page.  On the real sample."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from mathsearch.cli import app
from mathsearch.systems.spelling import edits, kept, nearest_word

MISSPELT = "irrationnal numbr"


def test_edits_count_a_swap_as_one():
    assert edits("seires", "series") == 1 and edits("kitten", "sitting") == 3
    assert edits("numbr", "number") == 1 and edits("", "abc") == 3 and edits("abc", "abc") == 0


def test_of_words_as_near_the_one_that_keeps_every_typed_letter_is_offered(searcher):
    # "multiplier" (a dropped letter restored) and "multiples" (one replaced) are both one edit from
    # "multipler"; the answers about Lagrange hold "multiples" more (Lagrange's theorem): it was offered
    assert edits("multipler", "multiplier") == edits("multipler", "multiples") == 1
    assert (kept("multipler", "multiplier"), kept("multipler", "multiples")) == (9, 8)
    assert searcher.search("Lagrange multipler", k=1).suggestion == "Lagrange multiplier"


def test_misspelt_words_are_named_and_respelt(searcher):
    result = searcher.search(MISSPELT, k=3)
    assert result.hits == []  # nothing holds them: before, 0 hits and not a word why
    assert result.notices[0] == 'No post of this collection holds "irrationnal" or "numbr".'
    assert result.suggestion == "irrational number"
    again = searcher.search(result.suggestion, k=3)
    assert again.hits and again.suggestion is None and not any("holds" in n for n in again.notices)


def test_the_rest_of_the_query_is_kept_and_the_capital_too(searcher):
    spelt = searcher.spelling("[calculus] converjence of seires")
    assert spelt.unknown == ("converjence", "seires")
    assert spelt.suggestion == "[calculus] convergence of series"  # "series" is stemmed "sery": found anyway
    assert searcher.spelling("Fibonaci numbers").suggestion == "Fibonacci numbers"
    assert searcher.spelling("derivitive of x^2").suggestion == "derivative of x^2"  # the formula untouched


def test_known_words_short_words_and_far_words_are_not_respelt(searcher):
    assert searcher.spelling("harmonic series diverges").unknown == ()
    spelt = searcher.spelling("quaternion rotation gimbal lock")  # real words the sample lacks
    assert spelt.unknown == ("gimbal", "lock") and spelt.suggestion is None
    assert nearest_word(searcher.ctx, "zzzzqqq") is None
    assert searcher.spelling("irrationnal", task=2).unknown == ()  # a Task 2 query is one formula


def test_cli_prints_the_notice_and_the_suggestion(sample_index):
    shown = CliRunner().invoke(app, ["search", "--index", str(sample_index), MISSPELT])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == 'note: No post of this collection holds "irrationnal" or "numbr".'
    assert lines[1] == "did you mean: irrational number"
    shown = CliRunner().invoke(app, ["search", "--index", str(sample_index), "--json", MISSPELT])
    assert json.loads(shown.output)["suggestion"] == "irrational number"


def test_api_and_page_offer_the_suggestion(client):
    body = client.get("/api/search", params={"q": MISSPELT}).json()
    assert body["hits"] == [] and body["suggestion"] == "irrational number"
    assert body["notices"] == ['No post of this collection holds "irrationnal" or "numbr".']
    assert client.get("/api/search", params={"q": "harmonic series diverges"}).json()["suggestion"] is None
    html = client.get("/", params={"q": MISSPELT}).text
    assert 'Did you mean: <a href="/?q=irrational+number&amp;task=1">irrational number</a>?' in html
    html = client.get("/", params={"q": "derivitive of x^2", "task": "3"}).text
    assert "derivative+of+x%5E2&amp;task=3" in html


def test_an_answer_names_the_words_and_offers_the_question_respelt(searcher, sample_index):
    made = searcher.answer("why does the harmonic seires diverge")
    assert made.notes[0] == 'No post of this collection holds "seires".'
    assert made.suggestion == "why does the harmonic series diverge"
    assert searcher.answer("why does the harmonic series diverge").suggestion is None
    shown = CliRunner().invoke(app, ["answer", "--index", str(sample_index), "why does the harmonic seires diverge"])
    assert shown.exit_code == 0 and "did you mean: why does the harmonic series diverge" in shown.output


def test_a_query_is_respelt_once_for_its_notices_its_suggestion_and_its_answer(searcher, monkeypatch):
    import mathsearch.searcher as searcher_module

    calls = []
    real = searcher_module.spelling
    monkeypatch.setattr(searcher_module, "spelling", lambda *a: calls.append(a[2]) or real(*a))
    question = "why does the harmonic seiries diverge"
    result = searcher.search(question, k=3)
    made = searcher.answer(question)
    assert result.suggestion == made.suggestion == "why does the harmonic series diverge"
    assert calls == [question]  # the search's notices and suggestion, then the answer: one lookup
