"""Equal maths matches (issue 42, item 2): LaTeX spellings that render the same formula give the
same SLT and OPT tuples and the same visual key (so Task 2 counts them as one visual formula), and
spellings that render differently do not collapse."""

from __future__ import annotations

import pytest

from mathsearch.formula.analysis import FormulaAnalyzer

ANALYZER = FormulaAnalyzer()

SAME = [
    (r"\left(x+1\right)^2", r"(x+1)^2"),
    (r"\bigl(x+1\bigr)", r"(x+1)"),
    (r"\Bigl[x\Bigr]", r"[x]"),
    (r"\left\{x\right\}", r"\{x\}"),
    (r"\left| x\right|", r"|x|"),
    (r"\lvert x\rvert", r"|x|"),
    (r"\dfrac{a}{b}", r"\frac{a}{b}"),
    (r"\tfrac ab", r"\frac{a}{b}"),
    (r"\frac12", r"\frac{1}{2}"),
    (r"{x}^2", r"x^2"),
    (r"x^{2}", r"x^2"),
    (r"{{x}}", r"x"),
    (r"x_1^2", r"x^2_1"),
    (r"\operatorname{sin}x", r"\sin x"),
    (r"\operatorname{sin}(x)", r"\sin(x)"),
    (r"\mathrm{sin}\, x", r"\sin x"),
    (r"\operatorname{lcm}(a,b)", r"\mathrm{lcm}(a,b)"),
    (r"\mathrm{d}x", r"dx"),
    (r"\int f(x)\,\mathrm{d}x", r"\int f(x) dx"),
    (r"\dfrac{\mathrm dy}{\mathrm dx}", r"\frac{dy}{dx}"),
    (r"a + b", r"a+b"),
    (r"e^{i \pi}", r"e^{i\pi}"),
    (r"x\cdot y", r"x \cdot y"),
    (r"\,dx", r"dx"),
    (r"\displaystyle\sum_{k=1}^n k", r"\sum_{k=1}^{n}k"),
    (r"\sin^2 x", r"\sin^{2}x"),
]

DIFFERENT = [
    (r"\arcsin{\frac{a}{b}}", r"\arcsin{\left(\frac{a}{b}\right)}"),  # brackets are seen
    (r"\mathbb{R}", r"R"),
    (r"x^2", r"x_2"),
    (r"\frac{a}{b}", r"a/b"),
]


@pytest.mark.parametrize("a,b", SAME)
def test_same_rendering_same_tuples_and_visual_key(a, b):
    x, y = ANALYZER.analyze(a), ANALYZER.analyze(b)
    assert x.visual_key == y.visual_key
    assert x.slt_bag == y.slt_bag  # the same tuples (a bag: the order of subscript and superscript may differ)
    assert x.opt_bag == y.opt_bag


@pytest.mark.parametrize("a,b", DIFFERENT)
def test_different_rendering_stays_apart(a, b):
    assert ANALYZER.analyze(a).visual_key != ANALYZER.analyze(b).visual_key


def test_brackets_around_an_argument_keep_the_operator_tree():
    # \arcsin{\frac ab} and \arcsin(\frac ab) look different, but the operator tree is the same:
    # a formula search (OPT tuples) matches one with the other
    x, y = ANALYZER.analyze(r"\arcsin{\frac{a}{b}}"), ANALYZER.analyze(r"\arcsin{\left(\frac{a}{b}\right)}")
    assert x.opt_bag == y.opt_bag
