"""SLT and OPT shapes, equivalences (visual and commutative) and every derived representation."""

from __future__ import annotations

import json

import pytest
from lxml import etree

from mathsearch.formula import (
    FormulaAnalyzer,
    infix,
    latex_to_words,
    leaf_paths,
    node_count,
    opt_key,
    opt_to_cmathml,
    opt_tuples,
    parse_latex,
    prefix,
    similarity,
    slt_string,
    slt_to_pmathml,
    slt_tuples,
    subexpression_terms,
    tuple_token,
    visual_key,
)


def slt(latex: str) -> str:
    return slt_string(parse_latex(latex).slt)


def opt(latex: str) -> str:
    return opt_key(parse_latex(latex).opt)


# -- the seed's worked example (MIRMU, section 2.1, figures 3 and 4) ---------------------------
def test_seed_example_prefix_and_infix():
    p = parse_latex(r"x!! - y^2 = 0")
    assert prefix(p.opt) == "U!eq O!minus O!double-factorial V!x O!SUP V!y N!2 N!0"
    assert infix(p.opt) == "( ( O!double-factorial ( V!x ) O!minus O!SUP ( V!y , N!2 ) ) U!eq N!0 )"
    assert slt_string(p.slt) == "V!x ! ! − V!y[a:N!2] = N!0"


# -- SLT shapes -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("latex", "expected"), [
    (r"\frac{a+b}{c}", "FRAC[o:V!a + V!b,u:V!c]"),
    (r"\sqrt[3]{x}", "ROOT[w:V!x,c:N!3]"),
    (r"\sum_{i=1}^{n} i", "∑[b:V!i = N!1,a:V!n] V!i"),
    (r"\hat{x}", "^[w:V!x]"),
    (r"f'(x)", "V!f[a:′] ( V!x )"),
    (r"x'^2", "V!x[a:′ N!2]"),
    (r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", "( M!2x2[e:N!1,e:N!2,e:N!3,e:N!4] )"),
    (r"\begin{cases}1&x>0\\0&\text{else}\end{cases}", "{ M!2x2[e:N!1,e:V!x > N!0,e:N!0,e:T!else]"),
    (r"\binom{n}{k}", "( ATOP[o:V!n,u:V!k] )"),
    (r"\mathbb{R}^n", "V!ℝ[a:V!n]"),
    (r"\sin x", "F!sin V!x"),
    (r"\operatorname{rank} A", "F!rank V!A"),
    (r"{}_{n}C_{k}", "V!C[b:V!k,d:V!n]"),
    (r"{}^{14}_{6}C", "V!C[c:N!14,d:N!6]"),
    (r"\underbrace{a+b}_{2}", "⏟[w:V!a + V!b,b:N!2]"),
    (r"\stackrel{?}{=}", "=[o:?]"),
    (r"a \not= b", "V!a ≠ V!b"),
    (r"x &lt; y", "V!x < V!y"),
    (r"α ≤ β", "V!α ≤ V!β"),
    (r"\text{if } x", "T!if V!x"),
    (r"3.14", "N!3.14"),
])
def test_slt_shapes(latex, expected):
    assert slt(latex) == expected


def test_slt_to_json_and_node_count_skips_blanks():
    p = parse_latex(r"{}^{a}x + \frac{1}{2}")
    json.dumps(p.slt.to_json())
    assert node_count(p.slt) == 6  # a x + FRAC 1 2, the blank base not counted


# -- OPT shapes -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("latex", "expected"), [
    (r"2x+1", "U!plus(N!1,U!times(N!2,V!x))"),
    (r"a-b-c", "O!minus(O!minus(V!a,V!b),V!c)"),
    (r"-x^2", "O!minus(O!SUP(V!x,N!2))"),
    (r"\sin^2 x + \cos^2 x = 1", "U!eq(N!1,U!plus(O!apply(O!SUP(F!cos,N!2),V!x),O!apply(O!SUP(F!sin,N!2),V!x)))"),
    (r"f(x, y)", "O!apply(V!f,V!x,V!y)"),
    (r"x(y+z)", "U!times(U!plus(V!y,V!z),V!x)"),
    (r"\sum_{i=1}^n a_i b_i + c", "U!plus(O!sum(U!eq(N!1,V!i),V!n,U!times(O!SUB(V!a,V!i),O!SUB(V!b,V!i))),V!c)"),
    (r"\lim_{x\to 0}\frac{\sin x}{x}", "F!lim(O!to(V!x,N!0),O!divide(F!sin(V!x),V!x))"),
    (r"\int_0^1 f(x)\,dx", "O!int(N!0,N!1,U!times(O!apply(V!f,V!x),V!d,V!x))"),
    (r"|x|+|y|", "U!plus(O!abs(V!x),O!abs(V!y))"),
    (r"\|x\|", "O!norm(V!x)"),
    (r"p|n", "O!divides(V!p,V!n)"),
    (r"[0,1)", "O![)(N!0,N!1)"),
    (r"\{1,2\}", "O!set(N!1,N!2)"),
    (r"\binom{n}{k}", "O!binom(V!n,V!k)"),
    (r"n!", "O!factorial(V!n)"),
    (r"\forall x \in X", "O!forall(O!in(V!x,V!X))"),
    (r"\neg p \land q", "U!and(O!not(V!p),V!q)"),
    (r"f:A\to B", "O!colon(V!f,O!to(V!A,V!B))"),
    (r"a = b = c", "U!eq(V!a,V!b,V!c)"),
    (r"\sqrt{x}", "O!root(V!x)"),
    (r"\sqrt[n]{x}", "O!root(V!x,V!n)"),
    (r"\hat{x}", "O!hat(V!x)"),
    (r"x_1^2", "O!SUP(O!SUB(V!x,N!1),N!2)"),
    (r"f'(x)", "O!apply(O!prime(V!f),V!x)"),
    (r"\gcd(a,b)", "F!gcd(V!a,V!b)"),
    (r"\begin{pmatrix}a&b\\c&d\end{pmatrix}", "O!matrix(O!row(V!a,V!b),O!row(V!c,V!d))"),
    (r"x^*", "O!SUP(V!x,S!∗)"),
    (r"(a+b", "O!((U!plus(V!a,V!b))"),
])
def test_opt_shapes(latex, expected):
    assert opt(latex) == expected


@pytest.mark.parametrize(("a", "b"), [
    ("a+b", "b+a"), ("ab", "ba"), ("a=b", "b=a"), (r"a\cdot b", r"b \times a"),
    ("f(x)+g(x)", "g(x)+f(x)"), (r"A\cup B", r"B\cup A"), ("x+y+z", "z+(y+x)"),
    (r"p \land q", r"q \land p"), (r"x \neq 1", r"1 \neq x"),
])
def test_commutative_operators_give_equal_keys_and_tuples(a, b):
    pa, pb = parse_latex(a), parse_latex(b)
    assert opt_key(pa.opt) == opt_key(pb.opt)
    assert sorted(opt_tuples(pa.opt)) == sorted(opt_tuples(pb.opt))


@pytest.mark.parametrize(("a", "b"), [
    ("a-b", "b-a"), ("a/b", "b/a"), ("a<b", "b<a"), ("x^2", "2^x"), (r"A\setminus B", r"B\setminus A"),
    (r"f\circ g", r"g\circ f"), (r"\frac{a}{b}", r"\frac{b}{a}"), (r"a \in B", r"B \in a"),
])
def test_non_commutative_operators_keep_order(a, b):
    assert opt(a) != opt(b)


# -- visual keys ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("a", "b"), [
    ("x_1^2", "x^2_1"), (r"\frac12", r"\frac{1}{2}"), (r"\left( x \right)", "(x)"), (r"\dfrac{a}{b}", r"\frac{a}{b}"),
    (r"a\,b", "ab"), (r"\displaystyle x", "x"), (r"{n \choose k}", r"\binom{n}{k}"), (r"x\to y", r"x\rightarrow y"),
    (r"a_1,\ldots,a_n", "a_1,...,a_n"), (r"\mathcal{A}", r"\mathscr{A}"), (r"x^{2}", "x^2"), (r"\bf B", r"\mathbf{B}"),
    (r"\sum\limits_{i}", r"\sum_{i}"), ("1 0", "10"), ("{1}0", "10"), (r"\mathrm{d}x", "dx"), (r"p \not= q", r"p \neq q"), (r"{x}", "x"), (r"\pmod{n}", r"(\bmod n)"),
])
def test_visually_identical_formulae_share_a_key(a, b):
    assert visual_key(a) == visual_key(b)


@pytest.mark.parametrize(("a", "b"), [
    ("a+b", "b+a"), (r"\mathbb{R}", "R"), (r"\epsilon", r"\varepsilon"), (r"\color{red}{x}", "x"),
    ("x^2", "x_2"), (r"\frac{1}{2}", "1/2"), ("||x||", r"\|x\|"),
])
def test_visually_different_formulae_get_different_keys(a, b):
    assert visual_key(a) != visual_key(b)


def test_lab_visual_keys_treat_mathjax_only_macros_as_latexml_does():
    assert visual_key(r"x \gt 0", lab=False) == visual_key("x > 0", lab=False)
    assert visual_key(r"x \gt 0") != visual_key("x > 0")
    assert opt(r"x \gt 0") == opt("x > 0")  # the trees themselves read \gt as >


def test_empty_formulae_fall_back_to_their_latex():
    assert visual_key(r"\quad") != visual_key(r"\require{cancel}")
    assert visual_key("") == visual_key("  ")


# -- representations ------------------------------------------------------------------------------
def test_slt_tuples_with_window():
    p = parse_latex("x^2+1")
    t1 = set(slt_tuples(p.slt, window=1))
    assert ("V!x", "N!2", "a") in t1 and ("V!x", "+", "n") in t1 and ("+", "N!1", "n") in t1
    t2 = set(slt_tuples(p.slt, window=2))
    assert ("V!x", "N!1", "nn") in t2 and t1 < t2
    assert tuple_token(("V!x", "N!2", "a")) == "V!x\tN!2\ta"


def test_single_symbol_still_has_a_tuple():
    p = parse_latex("x")
    assert slt_tuples(p.slt) == [("V!x", "", "")]
    assert opt_tuples(p.opt) == [("V!x", "", "")]


def test_leaf_paths_and_math_terms():
    p = parse_latex("x^2+1")
    assert leaf_paths(p.opt) == ["V!x/O!SUP/U!plus", "N!2/O!SUP/U!plus", "N!1/U!plus"]
    terms = subexpression_terms(p.opt)
    assert "O!SUP V!x N!2" in terms and "O!SUP id1 const" in terms
    assert "U!plus N!1 O!SUP V!x N!2" in terms and "U!plus const O!SUP id1 const" in terms
    assert subexpression_terms(parse_latex("y^2+1").opt)[-1] == terms[-1]  # unified: same up to renaming


def test_mathml_is_well_formed_xml():
    for latex in [r"\frac{a}{b}^2 + \sqrt[3]{x}_1", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\hat{x} < \infty",
                  r"\sum_{i=1}^n i", "x &amp; y", r"\text{a<b}"]:
        p = parse_latex(latex)
        pm = etree.fromstring(slt_to_pmathml(p.slt).encode())
        cm = etree.fromstring(opt_to_cmathml(p.opt).encode())
        assert pm.tag.endswith("math") and cm.tag.endswith("math")
    pm = etree.fromstring(slt_to_pmathml(parse_latex("x^2").slt).encode())
    assert [e.tag.split("}")[1] for e in pm.iter()][:4] == ["math", "mrow", "msup", "mi"]


def test_latex_to_words():
    assert latex_to_words(r"x^2 \leq \frac{1}{2}") == "x sup 2 leq frac 1 2"
    assert latex_to_words(r"\begin{matrix} a \end{matrix}") == "matrix a matrix"
    assert latex_to_words(r"a+b=c") == "a plus b eq c"


# -- macros, unknown commands, recovery -----------------------------------------------------------
def test_newcommand_and_def_are_expanded():
    assert slt(r"\newcommand{\R}{\mathbb{R}} \R^2") == "V!ℝ[a:N!2]"
    assert slt(r"\newcommand{\abs}[1]{\left|#1\right|} \abs{x}") == "| V!x |"
    assert slt(r"\def\pair#1#2{(#1,#2)} \pair ab") == "( V!a , V!b )"
    assert slt(r"\DeclareMathOperator{\tr}{tr} \tr A") == "F!tr V!A"


def test_unknown_macros_are_kept_as_symbols_not_errors():
    p = parse_latex(r"\foo + 1")
    assert slt_string(p.slt) == "E!\\foo + N!1"
    assert not p.recovered and p.unknown_macros == ("\\foo",)


@pytest.mark.parametrize("latex", [r"\left( x", "x}", "x^", r"\frac{1}{", r"\begin{matrix}a&b", r"\right)", "x_1_2"])
def test_repairs_are_reported(latex):
    p = parse_latex(latex)
    assert p.recovered and p.errors
    assert node_count(p.slt) >= 1


def test_recursive_macro_stops():
    p = parse_latex(r"\newcommand{\a}{\a\a}\a")
    assert p.recovered and any("expansion" in e for e in p.errors)


# -- analyzer -------------------------------------------------------------------------------------
def test_analyzer_caches_and_scores_similarity():
    analyzer = FormulaAnalyzer(cache_size=10)
    a = analyzer.analyze("x^2+y^2=z^2")
    assert analyzer.analyze("x^2+y^2=z^2") is a
    assert analyzer.cache_info().hits == 1
    assert a.n_nodes == 8 and not a.recovered  # x 2 + y 2 = z 2
    assert a.slt_tokens and all(tok.count("\t") == 2 for tok in a.slt_tokens)
    assert a.opt_key == opt("z^2=y^2+x^2")
    same = analyzer.analyze("x^{2}+y^{2}=z^{2}")
    near = analyzer.analyze("a^2+b^2=c^2")
    far = analyzer.analyze("x^2-1")
    assert similarity(a, same) == 1.0
    assert 0.0 < similarity(a, far) < similarity(a, near) < 1.0
    assert a.parsed.opt is not None and a.prefix.startswith("U!eq")
