"""Plain-words maths in queries (issue 42, item 1): what a person types without LaTeX is read as the
formula it spells, feeds the same formula signals and math fields as ``$LaTeX$``, and what is not
maths (English, unbalanced brackets) stays words without an error."""

from __future__ import annotations

import hypothesis
import hypothesis.strategies
import pytest

from mathsearch.formula.analysis import FormulaAnalyzer
from mathsearch.searcher import Searcher, formula_query, searched_as
from mathsearch.systems import SearchQuery
from mathsearch.text.analysis import formula_key
from mathsearch.text.plainmath import annotate, find_plain_math, to_latex

ANALYZER = FormulaAnalyzer()

# typed -> the LaTeX a person means: the plain reading must have the same visual key
SPANS = [
    ("sqrt 2", r"\sqrt{2}"),
    ("sqrt(2)", r"\sqrt{2}"),
    ("√2", r"\sqrt{2}"),
    ("x sin x", r"x\sin x"),
    ("1/n^2", r"\frac{1}{n^2}"),
    ("(1)/(n^2)", r"\frac{1}{n^2}"),
    ("e^(i pi)", r"e^{i\pi}"),
    ("a_n", "a_n"),
    ("a_(n+1)", "a_{n+1}"),
    ("n!", "n!"),
    ("x^2+y^2=1", "x^2+y^2=1"),
    ("x^2 + y^2 = 1", "x^2+y^2=1"),
    ("integral of x sin x dx", r"\int x\sin x\,dx"),
    ("integral from 0 to 1 of x^2 dx", r"\int_0^1 x^2\,dx"),
    ("int_0^1 x^2 dx", r"\int_0^1 x^2 dx"),
    ("sum 1/n^2 from n=1 to infinity", r"\sum_{n=1}^{\infty}\frac{1}{n^2}"),
    ("sum from k=1 to n of k", r"\sum_{k=1}^{n} k"),
    # bounds after a letter said alone: that letter runs over them
    ("sum k from 1 to n", r"\sum_{k=1}^{n} k"),
    ("product of j from 1 to m", r"\prod_{j=1}^{m} j"),
    ("integral x from 0 to 1", r"\int_0^1 x"),
    # derivatives said in words, with the variable said
    ("derivative of f with respect to x", r"\frac{df}{dx}"),
    ("derivative of sin(x) with respect to x", r"\frac{d}{dx}\sin(x)"),
    ("partial derivative of u with respect to t", r"\frac{\partial u}{\partial t}"),
    ("partial f / partial x = 0", r"\frac{\partial f}{\partial x}=0"),
    ("sum_(k=1)^n k = n(n+1)/2", r"\sum_{k=1}^n k=\frac{n(n+1)}{2}"),
    ("lim x->0 sin(x)/x", r"\lim_{x\to 0}\frac{\sin(x)}{x}"),
    ("limit of (1+1/n)^n as n->infinity", r"\lim_{n\to\infty}\left(1+\frac{1}{n}\right)^n"),
    ("alpha + beta = gamma", r"\alpha+\beta=\gamma"),
    ("|x| <= 1", r"|x|\leq 1"),
    ("x ≤ √2", r"x\le\sqrt{2}"),
    ("n choose k", r"\binom{n}{k}"),
    ("a equiv b (mod n)", r"a\equiv b\pmod{n}"),
    ("dy/dx = xy", r"\frac{dy}{dx}=xy"),
    ("f(x) = ln(x)/x", r"f(x)=\frac{\ln(x)}{x}"),
    ("sin^2 x + cos^2 x = 1", r"\sin^2 x+\cos^2 x=1"),
    # said in words
    ("square root of 2", r"\sqrt{2}"),
    ("cube root of x", r"\sqrt[3]{x}"),
    ("square root of (x squared+1)", r"\sqrt{x^2+1}"),
    ("x squared plus y squared equals 1", "x^2+y^2=1"),
    ("n cubed minus 1", "n^3-1"),
    ("log base 2 of 8", r"\log_2 8"),
    ("log base 10 of(x+1)", r"\log_{10}(x+1)"),
    ("2 to the power of n", "2^n"),
    ("x raised to the power of 3", "x^3"),
    ("x divided by 2", r"\frac{x}{2}"),
    ("A inverse", "A^{-1}"),
    ("A transpose A", "A^T A"),
    ("n factorial", "n!"),
    ("absolute value of (x-1) < 2", "|x-1|<2"),
    # a tower of scripts nests to the right; what is said after "to the power of" up to an operator is the exponent
    ("e^-x^2", "e^{-x^2}"),
    ("x^2^3", "x^{2^3}"),
    ("a_n_k", "a_{n_k}"),
    ("x^2 squared", "{x^2}^2"),
    ("A^T inverse", "{A^T}^{-1}"),
    ("x²^3", "{x^2}^3"),
    ("e to the power of i pi", r"e^{i\pi}"),
    ("e to the power of -x squared", "e^{-x^2}"),
    ("2 to the power of n minus 1", "2^n-1"),
    # after "of", a sum typed without spaces is the argument; spaced, the root ends at its factor
    ("square root of x^2+1", r"\sqrt{x^2+1}"),
    ("sqrt of 1-x^2", r"\sqrt{1-x^2}"),
    ("square root of 2x", r"\sqrt{2x}"),
    ("square root of x^2+1=0", r"\sqrt{x^2+1}=0"),
    ("square root of x^2 + 1", r"\sqrt{x^2}+1"),
    ("sqrt x+1", r"\sqrt{x}+1"),
    ("absolute value of x-1", "|x-1|"),
    # "to the" without "power", ordinals, a function squared, roots of other indices
    ("e to the x", "e^x"),
    ("2 to the n", "2^n"),
    ("e to the i pi", r"e^{i\pi}"),
    ("e to the minus x", "e^{-x}"),
    ("e to the sin x", r"e^{\sin x}"),
    ("x to the nth power", "x^n"),
    ("x to the 3rd power", "x^3"),
    ("x to the 10th", "x^{10}"),
    ("sin squared x + cos squared x = 1", r"\sin^2 x+\cos^2 x=1"),
    ("fourth root of 16", r"\sqrt[4]{16}"),
    ("nth root of x", r"\sqrt[n]{x}"),
    # two arguments said with "and", a norm, nabla
    ("gcd of 12 and 18", r"\gcd(12, 18)"),
    ("max of x and y", r"\max(x, y)"),
    ("1 over n squared", r"\frac{1}{n^2}"),
    ("n factorial over k factorial", r"\frac{n!}{k!}"),
    ("pi over 4", r"\frac{\pi}{4}"),
    ("||x - y|| <= ||x|| + ||y||", r"\|x-y\|\leq\|x\|+\|y\|"),
    ("nabla times F = 0", r"\nabla\times F=0"),
    # the calculator's binomial, a binomial named as a function, accents said after their letter
    ("nCk", r"\binom{n}{k}"),
    ("10C3", r"\binom{10}{3}"),
    ("binomial(n, k)", r"\binom{n}{k}"),
    ("choose(n+1,2)", r"\binom{n+1}{2}"),
    ("x bar", r"\bar{x}"),
    ("theta hat", r"\hat{\theta}"),
    # a function name typed against its variable; a sum's bounds without "from"
    ("sinx", r"\sin x"),
    ("cosx + sinx", r"\cos x+\sin x"),
    ("lnx", r"\ln x"),
    ("sum n=1 to infinity 1/n^2", r"\sum_{n=1}^{\infty}\frac{1}{n^2}"),
    # Unicode scripts and fractions
    ("a₁ + a₂ = 3", "a_1+a_2=3"),
    ("a₁₂", "a_{12}"),
    ("x⁻¹", "x^{-1}"),
    ("10²³", "10^{23}"),
    ("∫₀¹ x dx", r"\int_0^1 x\,dx"),
    ("∑ᵢ xᵢ", r"\sum_i x_i"),
    ("½ + ⅓", r"\frac{1}{2}+\frac{1}{3}"),
]


@pytest.mark.parametrize("typed,latex", SPANS)
def test_a_typed_span_is_the_formula_it_spells(typed, latex):
    found = find_plain_math(typed)
    assert len(found) == 1 and found[0].typed == typed, found
    assert ANALYZER.analyze(found[0].latex).visual_key == ANALYZER.analyze(latex).visual_key, found[0].latex


@pytest.mark.parametrize("typed", ["e^-x^2", "x^2^3", "a_n_k", "x^2 squared", "A^T inverse", "x²^3", "x^2²",
                                   "e to the power of -x squared", "x^2 to the power of 3", "a_n_k_j^2^3",
                                   "sin ^ e^-x^2", "sin^2_x^3 y"])
def test_no_reading_puts_two_scripts_of_a_kind_on_one_base(typed):
    from fuzz_properties import double_script

    assert double_script("x^{2}^{3}") and double_script("a_n_k") and not double_script("x_{i}^{2}")
    (span,) = find_plain_math(typed)
    assert not double_script(span.latex), span.latex


@pytest.mark.parametrize("text,expected", [
    ("prove sqrt 2 is irrational", r"prove $\sqrt{2}$ is irrational"),
    ("a_n converges", "$a_{n}$ converges"),
    ("is a group", "is a group"),
    ("I am comfortable when I am asked", "I am comfortable when I am asked"),
    ("eigenvalues of a symmetric matrix are real", "eigenvalues of a symmetric matrix are real"),
    ("for a > 0 and matrix A", "for $a>0$ and matrix $A$"),
    ("the sum of the series", "the sum of the series"),
    ("the cross product of vectors", "the cross product of vectors"),
    ("e.g. this, i.e. that", "e.g. this, i.e. that"),
    ("(see below)", "(see below)"),
    ("let x be real", "let $x$ be real"),
    ("the square root of 2 is irrational", r"the $\sqrt{2}$ is irrational"),
    ("prove that n squared is even", "prove that $n^{2}$ is even"),
    ("the square root function", "the square root function"),
    ("square root of a matrix", "square root of a matrix"),
    ("sin of a triangle", "sin of a triangle"),
    ("the log of the data", "the log of the data"),
    ("plus one more", "plus one more"),
    ("the power of prayer", "the power of prayer"),
    ("the cost of it, a cosy room, mint condition", "the cost of it, a cosy room, mint condition"),
    ("the inverse function of a matrix inverse", "the inverse function of a matrix inverse"),
    ("the absolute value of a number", "the absolute value of a number"),
    ("over a factorial that is greater", "over a factorial that is greater"),
    ("a bar of chocolate, a hat", "a bar of chocolate, a hat"),
    ("shift it to the left", "shift it to the left"),
    ("x to the right of y", "$x$ to the right of $y$"),
    ("the nth root of unity", "the nth root of unity"),
    ("gcd of the numbers", "gcd of the numbers"),
    ("a polynomial over a field", "a polynomial over a field"),
    ("Galois group of L over K", "Galois group of $L$ over $K$"),
    ("the binomial distribution", "the binomial distribution"),
    ("ABC and Ck", "ABC and Ck"),
    ("we sum k from the list", "we sum $k$ from the list"),
    ("the derivative of a function with respect to time", "the derivative of a function with respect to time"),
    ("partial sums and a partial order", "partial sums and a partial order"),
    ("the sum of two numbers from 1 to 9", "the sum of two numbers from 1 to 9"),
])
def test_english_stays_words_and_maths_becomes_formulae(text, expected):
    assert annotate(text)[0] == expected


@pytest.mark.parametrize("text", ["sqrt(2", "((x+1)", "x^", "integral of", "lim x->", "1/", "sum from k=1 to",
                                  "x^2+y^2=1)", "|x", "a_", "[0, 1", "\x00\x01", "∫∑√", "(((((((((((((((("])
def test_unbalanced_or_unknown_maths_falls_back_to_words_without_error(text):
    out, spans = annotate(text)
    for s in spans:  # whatever is read is a whole formula with balanced brackets
        assert s.latex.count("{") == s.latex.count("}")
    assert out.replace("$", "").strip() or not text.strip()


def test_dollar_formulae_and_latex_are_left_as_typed():
    text = r"prove $\sqrt{2}$ is irrational and sqrt 3 too"
    out, spans = annotate(text)
    assert out == r"prove $\sqrt{2}$ is irrational and $\sqrt{3}$ too"
    assert [s.typed for s in spans] == ["sqrt 3"]
    # a text that delimits formulae keeps its other LaTeX as typed (topics copied with unpaired dollars)
    assert annotate(r"show $a$ and \beta x^2 = 1")[0] == r"show $a$ and \beta x^2 = 1"


@pytest.mark.parametrize("text,expected", [
    (r"prove that \sqrt{2} is irrational", r"prove that $\sqrt{2}$ is irrational"),
    (r"find \int_0^1 x^2 dx please", r"find $\int_0^1 x^2 dx$ please"),
    (r"why is \frac{1}{2} + \frac{1}{3} = \frac{5}{6}?", r"why is $\frac{1}{2} + \frac{1}{3} = \frac{5}{6}$?"),
    (r"\lim_{x \to 0} \frac{\sin x}{x}", r"$\lim_{x \to 0} \frac{\sin x}{x}$"),
    (r"\text{for all } x > 0 holds", r"$\text{for all } x > 0$ holds"),  # a brace opened is closed inside
    (r"if \alpha is a root of x^2+1 then", r"if $\alpha$ is a root of $x^{2}+1$ then"),  # and plain maths beside
    (r"\frac{1}{2} plus \alpha", r"$\frac{1}{2}$ plus $\alpha$"),
])
def test_latex_typed_without_dollars_is_read_as_the_formula_it_is(text, expected):
    out, spans = annotate(text)
    assert out == expected
    bare = [s for s in spans if s.typed == s.latex]
    assert bare and all(text[s.start:s.end] == s.typed for s in spans)


def test_bare_latex_has_the_formula_signals_of_its_dollar_twin():
    bare = SearchQuery.from_text(r"prove that \sqrt{2} is irrational")
    dollars = SearchQuery.from_text(r"prove that $\sqrt{2}$ is irrational")
    assert bare.bags.title_math == dollars.bags.title_math and bare.bags.title_math
    assert bare.bags.title_words == dollars.bags.title_words


def test_a_plain_query_has_the_formula_signals_of_its_latex_twin():
    plain = SearchQuery.from_text("integral from 0 to 1 of x^2 dx")
    latex = SearchQuery.from_text(r"$\int_{0}^{1} x^{2} dx$")
    assert plain.bags.title_math == latex.bags.title_math
    assert [formula_key(f) for f in plain.bags.formulae] == [formula_key(f) for f in latex.bags.formulae]
    assert plain.bags.title_words == latex.bags.title_words == []
    assert [s.typed for s in plain.understood] == ["integral from 0 to 1 of x^2 dx"]
    off = SearchQuery.from_text("integral from 0 to 1 of x^2 dx", plain_math=False)
    assert off.bags.formulae == [] and off.understood == ()


def test_task2_query_typed_plain_is_one_formula():
    assert formula_query("sqrt(x^2+1)") == r"$\sqrt{x^{2}+1}$"
    assert formula_query("x^2+y^2") == "$x^2+y^2$"  # valid LaTeX as typed stays as typed
    assert formula_query(r"\frac ab") == r"$\frac ab$"
    assert to_latex("hello world") is None
    assert searched_as("e^(i pi)", 2) == [{"typed": "e^(i pi)", "latex": r"e^{i \pi}"}]
    assert searched_as("x^2+y^2", 2) == []
    assert searched_as("prove sqrt 2 irrational", 1) == [{"typed": "sqrt 2", "latex": r"\sqrt{2}"}]


def test_plain_query_ranks_as_its_latex_twin_on_the_sample(sample_index):
    searcher = Searcher(sample_index)
    plain = [h.id for h in searcher.search("prove sqrt 2 irrational", k=10).hits]
    latex = [h.id for h in searcher.search(r"prove $\sqrt{2}$ irrational", k=10).hits]
    assert plain == latex
    words_only = SearchQuery.from_text("prove sqrt 2 irrational", plain_math=False)
    assert words_only.bags.title_words != SearchQuery.from_text("prove sqrt 2 irrational").bags.title_words


_ALPHABET = "xyzanIi0123 +-*/^_=<>!()[]{}|,.'?$\\√∫∑π∞≤→" + "sincoslogsqrtintegralsumlimfromtoofdx "


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(hypothesis.strategies.text(alphabet=_ALPHABET, max_size=120))
def test_any_typed_text_is_read_without_error(text):
    out, spans = annotate(text)
    for s in spans:
        assert text[s.start:s.end] == s.typed
        assert s.latex.count("{") - s.latex.count(r"\{") == s.latex.count("}") - s.latex.count(r"\}")
    if not spans:
        assert out == text


@pytest.mark.parametrize("text", ["(" * 1000, "(x" * 500, "- " * 500, "|(" * 400, "sqrt(" * 300])
def test_deep_or_long_input_stays_words_quickly(text):
    out, spans = annotate(text)  # no RecursionError, no exponential backtracking
    assert isinstance(out, str)
