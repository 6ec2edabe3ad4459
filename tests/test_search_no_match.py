""""No close match" (issue 42, item 8): when the best hit shares little of the query (evidence
below the threshold calibrated by bench/no_match.py), the library, the API and the page say so
before the nearest hits, and Task 3 declines rather than answer from an unrelated post.  Also the
page and API side of plain-words maths ("searched as") and filters.  On the real sample."""

from __future__ import annotations

from mathsearch.systems.closeness import (
    COMMON_WORDS_ONLY,
    NO_CLOSE_MATCH,
    NO_CLOSE_MATCH_BELOW,
    NOTHING_TO_MATCH,
)

OFF_TOPIC = "quaternion rotation gimbal lock"
UNKNOWN = 'No post of this collection holds "gimbal" or "lock".'  # (tests/test_spelling.py)
ON_TOPIC = "harmonic series diverges"


def test_evidence_tells_an_off_topic_query_from_an_on_topic_one(searcher):
    off, on = searcher.search(OFF_TOPIC, k=3), searcher.search(ON_TOPIC, k=3)
    assert searcher.closeness(OFF_TOPIC, off.hits[0].id) < NO_CLOSE_MATCH_BELOW <= searcher.closeness(ON_TOPIC, on.hits[0].id)
    assert off.notices == [UNKNOWN, NO_CLOSE_MATCH] and off.hits  # said, and the nearest hits still shown
    assert on.notices == []


def test_a_query_of_common_words_only_says_so(searcher):
    # it found nothing and said nothing (or, with vectors, showed their nearest posts as matches:
    # evidence was 1.0, "nothing to miss")
    for query in ("why", "how to do this"):
        result = searcher.search(query, k=3)
        assert result.notices == [COMMON_WORDS_ONLY], (query, result.notices)
        assert searcher.closeness(query, 255) == 0.0
    assert searcher.search("why primes", k=3).notices != [COMMON_WORDS_ONLY]
    declined = searcher.answer("why")
    assert declined.mode == "declined" and declined.text == "" and declined.notes == [COMMON_WORDS_ONLY]


def test_a_query_of_symbols_alone_is_not_called_common_words(searcher):
    for query in ("😀", "\x00 ★"):
        assert searcher.search(query, k=3).notices == [NOTHING_TO_MATCH], query
    assert searcher.answer("😀").notes == [NOTHING_TO_MATCH]


def test_task3_declines_rather_than_answer_from_an_unrelated_post(searcher):
    declined = searcher.answer(OFF_TOPIC)
    assert declined.mode == "declined" and declined.text == "" and NO_CLOSE_MATCH in declined.notes
    answered = searcher.answer("why does the harmonic series diverge")
    assert answered.mode != "declined" and answered.text


def test_api_says_no_close_match_and_what_was_searched(client):
    body = client.get("/api/search", params={"q": OFF_TOPIC}).json()
    assert body["notices"] == [UNKNOWN, NO_CLOSE_MATCH] and body["hits"]
    body = client.get("/api/search", params={"q": "prove sqrt 2 irrational"}).json()
    assert body["searched_as"] == [{"typed": "sqrt 2", "latex": r"\sqrt{2}"}]
    body = client.get("/api/search", params={"q": OFF_TOPIC, "task": 3}).json()
    assert body["answer"]["mode"] == "declined" and NO_CLOSE_MATCH in body["notices"]


def test_api_filters_narrow_and_an_unknown_tag_is_named(client, searcher):
    body = client.get("/api/search", params={"q": ON_TOPIC + " [calculus]", "size": 5}).json()
    facts = searcher.ctx.store.filter_facts([h["post_id"] for h in body["hits"]])
    assert body["hits"] and all("calculus" in facts[h["post_id"]][2] for h in body["hits"])
    body = client.get("/api/search", params={"q": ON_TOPIC + " [no-such-tag-here]"}).json()
    assert body["hits"] == [] and body["notices"] == ["No thread has the tag [no-such-tag-here]: nothing can match it."]


def test_page_shows_the_notice_and_searched_as(client):
    html = client.get("/", params={"q": OFF_TOPIC}).text
    assert "No close match" in html and html.index("No close match") < html.index('id="summary"')
    html = client.get("/", params={"q": "prove sqrt 2 irrational"}).text
    assert 'id="searched-as"' in html and "\\sqrt{2}" in html
    html = client.get("/", params={"q": ON_TOPIC + " [nosuchtag]"}).text
    assert "No thread has the tag [nosuchtag]" in html


def test_api_and_page_task3_with_a_tag_no_thread_has_decline_from_no_post(client):
    body = client.get("/api/search", params={"q": ON_TOPIC + " [no-such-tag-here]", "task": 3}).json()
    assert (body["answer"]["text"], body["answer"]["mode"], body["answer"]["sources"]) == ("", "declined", [])
    assert body["notices"] == ["No thread has the tag [no-such-tag-here]: nothing can match it.",
                               "No answer to this question was found in the collection."]
    html = client.get("/", params={"q": ON_TOPIC + " [no-such-tag-here]", "task": 3}).text
    assert "No answer: no post of the collection to answer from." in html and "none close to the question" not in html
    # said once, in the answer's box: no notice repeating it, no empty Sources section
    assert "No answer to this question was found" not in html and "<h2>Sources</h2>" not in html
    html = client.get("/", params={"q": ON_TOPIC + " [no-such-tag-here]", "task": 1}).text
    assert "No answer found." in html and 'class="pager"' not in html  # nothing found: no "Page 1" alone
