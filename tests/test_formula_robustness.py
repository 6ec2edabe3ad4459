"""Any string gives a tree, never an exception or a hang, in work linear in its length."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathsearch.formula import FormulaAnalyzer, opt_tuples, parse_latex, slt_tuples, tokenize, visual_key
from mathsearch.formula.view import representations

VOCAB = ["{", "}", "^", "_", "'", "&", "\\\\", "(", ")", "[", "]", "|", "\\|", "\\{", "\\}", "x", "2", "+", "-",
         "=", "<", ",", "!", "\\frac", "\\sqrt", "\\left", "\\right", "\\left.", "\\right)", "\\sum", "\\int",
         "\\lim", "\\sin", "\\begin{matrix}", "\\end{matrix}", "\\begin{cases}", "\\end{array}", "\\over",
         "\\choose", "\\mathbb", "\\text", "\\hat", "\\not", "\\newcommand", "\\def", "#1", "\\foo", "\\operatorname",
         "\\color", "\\big", "\\,", "\\mathrm", "\\overset", "\\xrightarrow", "\\pmod", "&lt;", "%", "$", "~",
         "\\root", "\\of", "[", "\\binom", "\\underbrace", "\\limits", "\\cdots", "...", ":=", "α", "≤", "\x00"]


def everything(latex: str) -> None:
    """Every public function on one input (the view ``mathsearch formula`` and serve show calls
    them all): none may raise, and the whole view is JSON-able."""
    r = representations(latex)
    json.dumps(r)
    assert isinstance(r["recovered"], bool)
    slt_tuples(parse_latex(latex).slt, window=3)
    assert len(visual_key(latex)) == 16
    assert r["node_count"] >= 0


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_any_text_gives_a_tree(latex):
    everything(latex)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(VOCAB), max_size=60).map("".join))
def test_latex_token_soup_gives_a_tree(latex):
    everything(latex)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_give_a_tree(data):
    everything(data.decode("utf-8", errors="replace"))


# Well-formed LaTeX from a small grammar: the parser must not report a repair.
_atom = st.sampled_from(["x", "y", "2", "10", "\\alpha", "\\infty", "\\mathbb{R}", "\\pi"])


def _extend(inner):
    return st.one_of(
        st.tuples(inner, inner).map(lambda t: t[0] + "+" + t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] + "=" + t[1]),
        st.tuples(inner, inner).map(lambda t: "\\frac{" + t[0] + "}{" + t[1] + "}"),
        st.tuples(inner, inner).map(lambda t: "{" + t[0] + "}^{" + t[1] + "}"),
        st.tuples(inner, inner).map(lambda t: "x_{" + t[0] + "}^{" + t[1] + "}"),
        inner.map(lambda t: "\\left(" + t + "\\right)"),
        inner.map(lambda t: "\\sqrt{" + t + "}"),
        inner.map(lambda t: "\\sum_{i=1}^{n}" + t),
        inner.map(lambda t: "\\sin(" + t + ")"),
        inner.map(lambda t: "|" + t + "|"),
        st.tuples(inner, inner).map(lambda t: "\\begin{pmatrix}" + t[0] + "&" + t[1] + "\\end{pmatrix}"),
    )


WELL_FORMED = st.recursive(_atom, _extend, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(WELL_FORMED)
def test_well_formed_latex_parses_without_recovery(latex):
    p = parse_latex(latex)
    assert not p.recovered, (latex, p.errors)
    assert visual_key(latex) == visual_key("  ".join(tokenize(latex)))  # spaces never matter


# -- work linear in the length: counted in Python calls, not in seconds --------------------------
def _steps(latex: str) -> int:
    """Python lines executed (and C functions called) while handling ``latex``: an operation
    count that, unlike a clock, does not depend on the machine or its load."""
    count = 0

    def tracer(frame, event, arg):  # noqa: ARG001
        nonlocal count
        count += 1
        return tracer

    def prof(frame, event, arg):  # noqa: ARG001
        nonlocal count
        if event == "c_call":
            count += 1

    sys.settrace(tracer)
    sys.setprofile(prof)
    try:
        everything(latex)
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return count


PATHOLOGICAL = ["{", "}", "\\left(", "\\right)", "x^{", "\\frac{", "(", ")", "|", "\\sqrt", "a", "\\sum", "-",
                "a-", "a+", "x'", "x^a", "\\sin", "&", "\\\\", "\\begin{matrix}", "\\end{matrix}", "\\over",
                "^", "_{", "\\text{", "\\not", "\\color{red}", "[", "\\|", "\\{", "\\mathbb{", "\\left.", "\\newcommand"]


@pytest.mark.parametrize("unit", PATHOLOGICAL)
def test_work_is_linear_in_input_length(unit):
    small = _steps(unit * 200)
    large = _steps(unit * 800)
    assert large <= 5 * small + 2000, (unit, small, large)


def test_huge_inputs_complete_with_a_tree():
    for latex in ["{" * 100_000, "\\left(" * 20_000, "x^{" * 30_000, "(" * 100_000, "a-" * 50_000, "x" + "'" * 50_000]:
        p = parse_latex(latex)
        assert p.slt is not None and p.opt is not None
        slt_tuples(p.slt)
        opt_tuples(p.opt)
    assert parse_latex("{" * 100_000).recovered


def test_macro_bomb_stops_and_is_linear():
    bomb = "\\newcommand{\\a}{\\a\\a\\a}\\a"
    p = parse_latex(bomb)
    assert p.recovered
    assert _steps(bomb) < 5_000_000


def test_analyzer_on_pathological_input():
    analyzer = FormulaAnalyzer(cache_size=4)
    for unit in PATHOLOGICAL:
        a = analyzer.analyze(unit * 500)
        assert a.visual_key and isinstance(a.recovered, bool)
