"""The part of a hit formula that matched a query formula (issue 42.7): which SLT nodes share a
symbol pair with the query, and the hit's LaTeX written back with those parts boxed."""

from __future__ import annotations

import pytest

from mathsearch.formula import parse_latex, visual_key
from mathsearch.formula.highlight import BOUND, MARK, MARK_WINDOW, marked_latex, matched_nodes, slt_latex
from mathsearch.formula.slt import iter_nodes


def marked_labels_window(query: str, hit: str, window: int) -> list[str]:
    """The labels of the hit's matched nodes, in the tree's depth-first order."""
    tree = parse_latex(hit).slt
    found = matched_nodes(parse_latex(query).slt, tree, window)
    return [n.label for n in iter_nodes(tree) if id(n) in found]


def marked_labels(query: str, hit: str) -> list[str]:
    return marked_labels_window(query, hit, MARK_WINDOW)


def test_a_repeated_symbol_is_marked_only_where_the_structure_matched():
    # x^2 + x: the first x carries the 2, the second does not; a label alone is no match
    assert marked_labels("x^2", "x^2+x") == ["V!x", "N!2"]
    assert marked_latex("x^2+x", ["x^2"]) == MARK + "{{x}^{2}}+x"
    # the repeated x^2 of the query is found twice in the hit
    assert marked_labels("x^2", "x^2+y+x^2") == ["V!x", "N!2", "V!x", "N!2"]


def test_the_same_symbols_in_another_layout_are_not_marked():
    # x and 2 are both in x^3 + 2, but not as x to the power 2
    assert marked_labels("x^2", "x^3+2") == []
    assert marked_latex("x^3+2", ["x^2"]) is None


def test_a_pair_across_a_symbol_is_not_a_match_on_the_page():
    # the query's n=1 holds the pair (n, 1) two steps apart; n<1 has it too, but nothing of
    # n=1 is there: the search's window of 2 finds it, the page's marks do not
    assert marked_labels("n=1", "k+n<1") == []
    assert [n for n in marked_labels_window("n=1", "k+n<1", 2)] == ["V!n", "N!1"]
    assert marked_latex("k+n<1", [r"\sum_{n=1}^{\infty}\frac{1}{n}"]) is None


def test_a_sub_formula_is_marked_where_it_stands():
    assert marked_latex(r"\frac{x^2+y^2}{2}+1", ["x^2+y^2"]) == r"\frac{" + MARK + "{{x}^{2}+{y}^{2}}}{2}+1"
    assert marked_latex(r"\int_0^1 x^2\,dx", ["x^2"]) == r"{\int }_{0}^{1}" + MARK + "{{x}^{2}}dx"
    # the right end of a line: a+b+c has b+c
    assert marked_latex("a+b+c", ["b+c"]) == "a+" + MARK + "{b+c}"


def test_a_symbol_marked_without_its_scripts_keeps_them_outside_the_box():
    # the query z^2 marks z and 2 of the hit's z^2, a^2 + z^2 = w marks the sum, not the w
    out = marked_latex("a^2+z^2=w", ["z^2=w"])
    assert out is not None and out.endswith("=w}") and out.startswith("{a}^{2}+")
    # x_i^2 against x_i: x and i matched, the 2 not: x and i are boxed apart, the 2 is not
    out = marked_latex("x_i^2+1", ["x_i"])
    assert out is not None and MARK + "{x}" in out and MARK + "{i}" in out and MARK + "{2}" not in out


def test_whole_or_no_match_leaves_the_formula_alone():
    assert marked_latex("x^2+y^2", ["x^2+y^2"]) is None  # equal: marked whole elsewhere (class hl)
    # y^2+x^2 has x^2, y^2 and "y^2 +", not "x^2 +": the first + is not boxed
    assert marked_latex("x^2+y^2+1", ["y^2+x^2"]) == MARK + "{{x}^{2}}+" + MARK + "{{y}^{2}+}1"
    # with the search's window of 2 every symbol of x^2+y^2 is in a pair y^2+x^2 has too
    assert marked_latex("x^2+y^2", ["y^2+x^2"], window=2) is None
    assert marked_latex(r"\sin x", ["e^{i\\pi}"]) is None


@pytest.mark.parametrize("latex", [
    "x^2+y^2=z^2", r"\frac{a+b}{c}", r"\sqrt[3]{x^2+1}", r"\sum_{k=1}^{n} k^2", r"\int_0^1 x \sin x\,dx",
    r"\mathbb{R}^n", r"\alpha \leq \beta", r"\begin{pmatrix}a&b\\c&d\end{pmatrix}", r"\binom{n}{k}",
    r"\hat{x}'", r"\lim_{x\to 0}\frac{\sin x}{x}=1", r"{}^{14}_{6}C", r"\operatorname{Var}(X)", r"a \neq b",
    r"\text{if } x>0", r"e^{i\pi}=-1", r"\overline{z}", r"\underbrace{a+b}_{2}", r"|x|", r"\{1,2\}",
])
def test_the_tree_written_back_is_the_same_formula(latex):
    out = slt_latex(parse_latex(latex).slt)
    assert out is not None and visual_key(out, lab=False) == visual_key(latex, lab=False)


def test_marked_latex_is_the_same_formula_or_nothing():
    for hit, query in [(r"\frac{1}{n^2}+\sum_{n=1}^{\infty}\frac{1}{n^2}", r"\frac{1}{n^2}"),
                       (r"\left(1+\frac{1}{n}\right)^n", r"\frac{1}{n}")]:
        out = marked_latex(hit, [query])
        assert out is not None and MARK in out
        assert visual_key(out, lab=False) == visual_key(hit, lab=False)  # \bbox adds no symbol
    # a colour the writer does not write back: no mark rather than another formula
    assert marked_latex(r"\color{red}{x^2}+1", ["x^2"]) is None


def _bracket_argument(latex: str, start: int) -> str:
    """The optional argument opened at ``latex[start] == "["``, read as MathJax reads it: up to the
    first "]" outside braces."""
    depth, i = 0, start + 1
    while latex[i] != "]" or depth:
        depth += {"{": 1, "}": -1}.get(latex[i], 0)
        i += 1
    return latex[start + 1:i]


@pytest.mark.parametrize("hit,query", [(r"\sqrt[a+b]{x}", "a+b"), (r"\sqrt[\frac{1}{2}]{-\frac{1}{2}}", r"\frac{1}{2}")])
def test_a_box_in_a_root_index_stays_inside_its_bracket(hit, query):
    # \bbox[#ffe27a,1px]{..} in \sqrt[..] closed the index at its own "]": MathJax showed raw LaTeX
    marked = marked_latex(hit, [query])
    assert marked is not None and MARK in marked
    index = _bracket_argument(marked, marked.index(r"\sqrt[") + len(r"\sqrt"))
    assert index.count("{") == index.count("}") and MARK in index, (marked, index)
    assert visual_key(marked) == visual_key(hit)


def test_bound_sub_formulae_of_query_variables_are_boxed_apart():
    out = marked_latex("(n+1)^2+m^2", [], bound=["n+1", "m"])
    assert out is not None and BOUND + "{n+1}" in out and BOUND + "{m}" in out


def test_the_page_element_keeps_the_stored_latex_for_search_and_escapes_it():
    from mathsearch.web.formula_marks import formula_parts_html
    from mathsearch.web.render import marks_of
    from mathsearch.web.results import bound_parts

    part = str(formula_parts_html("x^2+1<y", ["x^2"]))
    assert part.startswith('<span class="tex part-match" data-query-latex="x^2+1&lt;y"')
    assert "\\bbox[#ffe27a,1px]{{x}^{2}}+1&lt;y</span>" in part
    equal = str(formula_parts_html("x^{2}", ["x^2"], marks_of("$x^2$")))
    assert equal == '<span class="tex hl">x^{2}</span>'  # equal to the query: marked whole, as before
    assert str(formula_parts_html("a+b", ["x^2"])) == '<span class="tex">a+b</span>'
    # query variables: the hit's bindings (interface-42.md) are boxed in blue
    bound = bound_parts({"bindings": {"a": "n+1", "b": "m"}})
    assert bound == ["n+1", "m"] and bound_parts({"id": 3}) == []
    assert BOUND + "{n+1}" in str(formula_parts_html("(n+1)^2+m^2", [], bound=bound))


def test_a_snippet_marks_equal_formulae_whole_larger_ones_in_part_and_leaves_the_rest():
    from mathsearch.web.formula_marks import text_parts_html
    from mathsearch.web.render import marks_of

    query = "why $\\frac{1}{n}$"
    html = str(text_parts_html("Take $\\frac1n$, then $\\sum \\frac{1}{n} = \\infty$ and $a<b$.",
                               marks_of(query), ["\\frac{1}{n}"]))
    assert html.startswith('Take <span class="tex hl">\\frac1n</span>, then <span class="tex part-match"')
    assert MARK + "{\\frac{1}{n}}" in html
    assert html.endswith(' and <span class="tex">a&lt;b</span>.')
