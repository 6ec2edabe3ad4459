"""The text analysis' compiled loops (text/_terms.pyx) against the Python they replace, function by
function: formula math tokens, LaTeX words, prose words, raw terms and the prose/formula split, on
every text and formula of the real sample and on random text (tests/test_compiled.py compares the
whole text step's output of the two paths)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathsearch import _compiled
from mathsearch.store import Store
from mathsearch.text import analysis as ta

HINT = "the kernel is not built: python setup.py build_ext --inplace (or pip install -e .)"


@pytest.fixture(scope="module")
def kernel():
    if _compiled.pure_python_requested():
        pytest.fail("MATHSEARCH_PURE_PYTHON is set: this test compares the compiled text terms with Python")
    assert ta._KERNEL is not None and ta._TERMS is not None and ta._WORDS is not None, HINT
    return ta._KERNEL


def _assert_text(kernel, text: str) -> None:
    assert kernel.split_math(text) == ta._split_math_py(text), text
    assert ta._WORDS.words(text) == ta._words_py(text), text
    assert ta._WORDS.raw(text) == ta._raw_latex_terms_py(text), text


def _assert_formula(latex: str) -> tuple[bool, bool]:
    """Same terms where the kernel takes the formula; whether it took each function's."""
    got_m, got_w = ta._TERMS.math_tokens(latex), ta._TERMS.formula_words(latex)
    if got_m is not None:
        assert got_m == ta._math_tokens_py(latex), latex
    if got_w is not None:
        assert got_w == ta._formula_words_py(latex), latex
    return got_m is not None, got_w is not None


def _sample_texts(index) -> list[str]:
    with Store.open(index) as store:
        texts = [x for kind in (1, 2) for pid, _ in store.iter_post_ids(kind)
                 for p in [store.posts([pid])[pid]] for x in (p.title, p.text) if x]
    return texts


def test_every_sample_text_and_formula_is_analysed_as_the_reference_does(kernel, sample_index):
    texts = _sample_texts(sample_index)
    assert len(texts) > 5_000
    formulae: set[str] = set()
    for text in texts:
        _assert_text(kernel, text)
        formulae.update(ta._split_math_py(text)[1])
    assert len(formulae) > 20_000
    taken = [_assert_formula(latex) for latex in sorted(formulae)]
    # The kernel takes nearly all of them: a decline is the exception (non-ASCII LaTeX, entities).
    assert sum(m for m, _ in taken) > 0.95 * len(taken)
    assert sum(w for _, w in taken) > 0.95 * len(taken)


# Each a branch of the kernels: delimiters unclosed, escaped or empty, code spans, a backslash at
# the end, numbers with and without decimals, commands inside environment names, a bare %, an
# entity (declined), non-ASCII (declined by the formula kernels, read by the text ones), words
# over 40 characters, a character that lowers to two, white space of every ASCII kind.
EDGE_TEXTS = [
    "", "$", "$$", "$$$", "$$$$", "$$$$$", "$ $", "$x$", "$$x$$", "a$x$b", "a $x$ and $y$", "\\$5 and $x$",
    "$a\\$b$", "$a\\", "\\(x\\)", "\\(\\)", "\\[x\\]", "\\[ \\]", "\\(x", "`$x$` then $y$", "`unclosed $x$",
    "$$ x $ y $$", "$x$$y$", "\\", "x\\", "$\\\\$", "\u00e9t\u00e9 $x$ \u0130stanbul", "\x1c$x\x1f$\x0b",
    "a" * 41 + " " + "b" * 40, "Caf\u00e9 CAF\u00c9 na\u00efve_word", "x\u00b2 and \u2160",
]
EDGE_FORMULAE = [
    "x", "", " ", "\\", "x\\", "\\\n", "3.14", "3.", ".5", "12.3.4", "1" * 50, "x_{10}^{2.5}",
    "\\begin{align*}a&=b\\end{align*}", "\\begin{\\alpha x}", "\\left(x\\right)", "50\\%", "a % b", "&amp;",
    "a & b", "a;b", "\\{x\\}", "\\|x\\|", "\\,\\;\\!", "...", "a...b", ":=", "x:=y", "\u00e9", "\\alpha\u00b2",
    "\\frac{a}{b}\\dfrac{c}{d}", "\\to\\gets\\le\\ge", "\\x01", "x\ty\rz\x0c",
]


@pytest.mark.parametrize("text", EDGE_TEXTS)
def test_edge_texts(kernel, text):
    _assert_text(kernel, text)


@pytest.mark.parametrize("latex", EDGE_FORMULAE)
def test_edge_formulae(kernel, latex):
    _assert_formula(latex)


def test_what_the_formula_kernels_decline_is_what_they_cannot_read_exactly(kernel):
    assert ta._TERMS.math_tokens("\u00e9") is None
    assert ta._TERMS.formula_words("a &amp; b") is None
    assert ta._TERMS.formula_words("a & b") is not None
    assert ta._TERMS.math_tokens("\\alpha") == ta._math_tokens_py("\\alpha")


_LATEX = st.lists(st.sampled_from(["\\", "\\frac", "{", "}", "$", "$$", "\\(", "\\)", "\\[", "\\]", "`", "x",
                                   "Y", "1", "2.5", ".", ":", "=", "%", "&", ";", "\n", " ", "\t", "_", "^",
                                   "\\begin", "\\end", "\\left", "\\{", "\\|", "\u00e9", "\u0130"]),
                  max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_LATEX, st.text(max_size=200)))
def test_random_text(text):
    assert ta._KERNEL is not None, HINT
    _assert_text(ta._KERNEL, text)
    _assert_formula(text)
