"""Filters in the query (issue 42, item 6): ``[tag]`` keeps threads with the tag (several: all of
them), ``-[tag]`` drops them, ``answers:N`` counts a thread's answers, ``score:N`` and ``is:accepted``
say so where the collection does not record them; an unknown tag says no thread has it.  On the
real sample."""

from __future__ import annotations

import pytest

from mathsearch.errors import InputError
from mathsearch.text.filters import QueryFilters, parse_filters

QUERY = "harmonic series diverges"


def facts(searcher, result):
    found = searcher.ctx.store.filter_facts([h.post_id for h in result.hits])
    return [found[h.post_id] for h in result.hits]


@pytest.mark.parametrize("query,rest,filters", [
    ("limits [calculus]", "limits", QueryFilters(tags=("calculus",))),
    ("[Calculus] [real-analysis] limits -[limits]", "limits", QueryFilters(("calculus", "real-analysis"), ("limits",))),
    ("x answers:2 score:-1 is:accepted", "x", QueryFilters(min_score=-1, min_answers=2, accepted=True)),
    ("x in [0, 1] and [a,b]", "x in [0, 1] and [a,b]", QueryFilters()),
    ("$[ab]$ and [x]", "$[ab]$ and [x]", QueryFilters()),
    ("is [c++] hard", "is hard", QueryFilters(tags=("c++",))),
])
def test_filters_are_taken_out_of_the_query(query, rest, filters):
    assert parse_filters(query) == (rest, filters)


def test_a_tag_narrows_to_threads_with_it(searcher):
    plain = searcher.search(QUERY, k=10)
    tagged = searcher.search(QUERY + " [calculus]", k=10)
    assert tagged.hits and all("calculus" in f[2] for f in facts(searcher, tagged))
    assert any("calculus" not in f[2] for f in facts(searcher, plain))  # the filter did something
    both = searcher.search(QUERY + " [calculus] [sequences-and-series]", k=10)
    assert both.hits and all({"calculus", "sequences-and-series"} <= set(f[2]) for f in facts(searcher, both))
    assert tagged.notices == []


def test_minus_tag_excludes(searcher):
    result = searcher.search(QUERY + " -[calculus]", k=10)
    assert result.hits and all("calculus" not in f[2] for f in facts(searcher, result))


def test_answers_counts_the_thread_answers(searcher):
    result = searcher.search(QUERY + " answers:4", k=10)
    assert result.hits and all(f[3] >= 4 for f in facts(searcher, result))


def test_unknown_tag_says_no_thread_has_it(searcher):
    result = searcher.search(QUERY + " [no-such-tag-here]", k=10)
    assert result.hits == []
    assert result.notices == ["No thread has the tag [no-such-tag-here]: nothing can match it."]


def test_fields_the_collection_lacks_are_said_not_applied(searcher):
    # the ARQMath sample records neither post scores nor accepted answers
    assert not searcher.ctx.store.holds_field("score")
    result = searcher.search(QUERY + " score:3 is:accepted", k=5)
    assert [h.id for h in result.hits] == [h.id for h in searcher.search(QUERY, k=5).hits]
    assert any("score:3 was not applied" in n for n in result.notices)
    assert any("is:accepted was not applied" in n for n in result.notices)


def test_task2_filters_apply_to_the_post_holding_the_formula(searcher):
    result = searcher.search("x^2+y^2 [geometry]", task=2, k=5)
    posts = searcher.ctx.store.filter_facts([h.post_id for h in result.hits])
    assert result.hits and all("geometry" in posts[h.post_id][2] for h in result.hits)


def test_filters_alone_are_no_query(searcher):
    with pytest.raises(InputError, match="only filters"):
        searcher.search("[calculus] -[limits]")


@pytest.mark.parametrize("query", ["x^2 [calculus]", "x^2 -[calculus]"])
def test_task2_a_filter_keeps_a_visual_id_whose_ranked_instance_it_drops(searcher, query):
    # Task 2 ranks one instance a visual id: a filter that drops that instance's thread must not drop
    # the formula where another of its instances is in a thread the filter keeps
    store = searcher.ctx.store
    best = searcher.search("x^2", task=2, k=1).hits[0]
    others = store.filter_facts([f.post_id for f in store.formulas_with_visual_id(best.visual_id, 1000)])
    assert any(("calculus" in f[2]) != ("calculus" in others[best.post_id][2]) for f in others.values())
    result = searcher.search(query, task=2, k=5)
    assert result.hits[0].visual_id == best.visual_id
    tags = store.filter_facts([h.post_id for h in result.hits])
    wanted = not query.endswith("-[calculus]")
    assert all(("calculus" in tags[h.post_id][2]) == wanted for h in result.hits)
    assert len({h.visual_id for h in result.hits}) == len(result.hits)  # still one instance a visual id


def test_task3_answers_from_the_threads_its_filters_allow(searcher):
    plain = searcher.answer("limit of sin x / x")
    store = searcher.ctx.store
    first = store.filter_facts([plain.sources[0].post_id])[plain.sources[0].post_id]
    assert "limits" not in first[2]  # unfiltered, the answer comes from a thread without the tag
    filtered = searcher.answer("limit of sin x / x [limits]")
    assert filtered.sources and filtered.mode == "extract"
    assert all("limits" in f[2] for f in store.filter_facts([x.post_id for x in filtered.sources]).values())


def test_task3_with_a_tag_no_thread_has_declines_and_says_why(searcher):
    result = searcher.answer("limit of sin x / x [no-such-tag-here]")
    assert (result.text, result.mode, result.sources) == ("", "declined", [])
    assert "No thread has the tag [no-such-tag-here]: nothing can match it." in result.notes


@pytest.mark.parametrize("query,said", [
    ("harmonic series score:abc", "score:abc is not a filter (score:N takes a whole number, as score:2 or score:-1); "
                                  "it was searched as words."),
    ("harmonic series is:closed", "is:closed is not a filter (of is: there is is:accepted); it was searched as words."),
])
def test_a_word_shaped_like_a_filter_is_searched_as_words_and_said(searcher, query, said):
    text, filters = parse_filters(query)
    assert text == query and not filters and filters.unread == (query.split()[-1],)
    result = searcher.search(query, k=3)
    assert result.hits and said in result.notices
    assert parse_filters("harmonic series score:2")[1].unread == ()
