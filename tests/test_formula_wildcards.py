"""Query variables in formula queries (issue 42, item 4): ``?a`` / ``\\qvar{a}`` match any
subexpression, one name one subexpression; built cases, and Task 2 on the real sample."""

from __future__ import annotations

import pytest

from mathsearch.formula.analysis import parse_latex
from mathsearch.formula.representations import opt_key
from mathsearch.formula.wildcards import has_variables, match, query_variables, to_latex
from mathsearch.searcher import Searcher
from mathsearch.systems import SearchQuery


def bound(query: str, formula: str) -> dict[str, str] | None:
    found = match(parse_latex(query_variables(query)[0]).opt, parse_latex(formula).opt)
    return None if found is None else {k: to_latex(v) for k, v in found.items()}


@pytest.mark.parametrize("query,formula,expected", [
    ("?a^2+?b^2", "x^2+y^2", {"a": "x", "b": "y"}),
    ("?a^2+?b^2", "(n+1)^2+m^2", {"a": "n + 1", "b": "m"}),
    ("?a^2+?b^2", "x^2+y^3", None),
    ("?a^2+?b^2", "x^2+y^2=1", {"a": "x", "b": "y"}),  # inside a larger formula
    ("?a^2+?b^2", "y^2+x^2", {"a": "y", "b": "x"}),
    (r"\qvar{a}^2+\qvar{b}^2", "x^2+y^2", {"a": "x", "b": "y"}),
    ("?a^2+?a^2", "x^2+x^2", {"a": "x"}),
    ("?a^2+?a^2", "x^2+y^2", None),  # one name binds one subexpression
    ("?a^2+?a^2", "(x+1)^2+(1+x)^2", {"a": "x + 1"}),  # the same up to the order of a sum
    (r"\frac{?f}{?g}", r"\int \frac{\sin x}{x+1}\,dx", {"f": r"\sin(x)", "g": "x + 1"}),
    (r"\sqrt{?x}", r"\sqrt{2}", {"x": "2"}),
    (r"\sqrt{?x}", r"\sqrt[3]{2}", None),
    ("e^{?z}", r"e^{i\pi}+1=0", {"z": r"i \cdot \pi"}),
])
def test_a_variable_matches_any_subexpression_the_same_each_time(query, formula, expected):
    got = bound(query, formula)
    if expected is None:
        assert got is None
    else:
        assert got is not None and set(got) == set(expected)
        # the bound LaTeX reads back as the same operator tree as the expected one
        for name, latex in expected.items():
            assert opt_key(parse_latex(got[name]).opt) == opt_key(parse_latex(latex).opt), (got[name], latex)


def test_syntax_is_recognised_only_as_variables():
    assert query_variables("?a^2+\\qvar{b}")[1] == ("a", "b")
    assert not has_variables("x^2+y^2") and not has_variables("what? x")


def test_a_wildcard_in_a_text_query_is_text():
    q = SearchQuery.from_text("what is ?a in a group")
    assert q.bags.formulae == [] or all("qvar" not in f for f in q.bags.formulae)


def test_task2_search_keeps_only_matches_and_says_what_bound(sample_index):
    searcher = Searcher(sample_index)
    result = searcher.search("?a^2+?b^2", task=2, k=10)
    assert result.hits
    for h in result.hits:
        assert h.bindings is not None and set(h.bindings) == {"a", "b"}
        assert bound("?a^2+?b^2", h.matched_formulae[0]) is not None
    plain = searcher.search("x^2+y^2", task=2, k=10)
    assert all(h.bindings is None for h in plain.hits)
    same = searcher.search("?a^2+?a^2", task=2, k=10)
    assert all(len(set(h.bindings)) == 1 for h in same.hits)
