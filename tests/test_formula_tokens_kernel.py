"""The formula build's compiled token bags (indexes/formula/_tokens.pyx) against the Python code they
replace, in one process: per chunk of formulae the same SLT sizes, visual keys and, per family, the
same bag lengths, token hashes and counts, array for array (tests/test_compiled.py compares whole
indexes built by the two paths)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathsearch import _compiled
from mathsearch.formula import parse_latex
from mathsearch.formula.representations import visual_key_of_slt
from mathsearch.indexes.formula import build
from mathsearch.indexes.formula.layout import FAMILIES
from mathsearch.indexes.formula.tokens import _hash, vkey_int
from mathsearch.store import Store

HINT = "the kernel is not built: python setup.py build_ext --inplace (or pip install -e .)"


@pytest.fixture()
def tokens(monkeypatch: pytest.MonkeyPatch):
    """The kernel, with worker state of this test's own."""
    if _compiled.pure_python_requested():
        pytest.fail("MATHSEARCH_PURE_PYTHON is set: this test compares the compiled token bags with Python")
    kernel = _compiled.load_kernel("mathsearch.indexes.formula._tokens")
    assert kernel is not None and build._tokens is not None, HINT
    assert build._trees_compiled(), "the formula modules run from source: " + HINT
    monkeypatch.setattr(build, "_W", {})
    return kernel


def _reference(latexes: list[str]) -> tuple:
    kernel, build._tokens = build._tokens, None
    try:
        return build._analyze(latexes)
    finally:
        build._tokens = kernel


def _assert_same(ref: tuple, got: tuple) -> None:
    assert ref[0].dtype == got[0].dtype and np.array_equal(ref[0], got[0]), "SLT sizes"
    assert ref[1].dtype == got[1].dtype and np.array_equal(ref[1], got[1]), "visual keys"
    for family, fr, fg in zip(FAMILIES, ref[2], got[2], strict=True):
        for part, a, b in zip(("lengths", "hashes", "tfs"), fr, fg, strict=True):
            assert a.dtype == b.dtype, (family, part)
            assert np.array_equal(a, b), (family, part)


# Formulae that take the kernel's string path or its edges: a label with "/" (the leaf paths join
# labels by "/"), ancestors past the leaf paths' limit of 32, a lone symbol, nothing visible,
# commutative operators with more than ten arguments, repeated tuples (counts over 1), scripts
# and fractions inside scripts, a matrix, text.
EDGE_CASES = [
    "x", "", " ", "\\,", "http://x", "a/b", "S/2 + a/b", "\\{1,2\\}",
    "\\frac{" * 40 + "x" + "}{y}" * 40,
    "(" * 50 + "a" + ")" * 50,
    "a" + "^{b" * 36 + "}" * 36,
    "+".join(f"x_{i}" for i in range(14)),
    "a_1 a_2 a_3 + b_1 b_2 b_3 = c",
    "x^2 + x^2 + x^2 + y^2",
    "\\sum_{i=1}^{n} i^2 = \\frac{n(n+1)(2n+1)}{6}",
    "\\int_0^1 x \\sin x \\, dx",
    "\\begin{pmatrix} a & b \\\\ c & d \\end{pmatrix}",
    "\\text{if } x > 0",
    "f(x_1, x_2, \\ldots, x_{12}, x_{13})",
    "\\sqrt[3]{x^{y_{z^{w}}}}",
    "{}_2F_1(a,b;c;z)",
    "\\left\\lbrace x \\right.",
    "x'' + y''' = \\overline{z}",
]


def test_the_edge_cases_give_the_references_bags(tokens):
    _assert_same(_reference(EDGE_CASES), build._analyze(EDGE_CASES))


def test_a_formula_that_is_not_a_string_is_read_as_the_reference_reads_it(tokens):
    odd = [12, None, 3.5, "x"]
    _assert_same(_reference(odd), build._analyze(odd))  # type: ignore[arg-type]


def test_the_samples_formulae_give_the_references_bags_chunk_after_chunk(tokens, sample_index):
    """The sample's first 6,000 distinct formulae in chunks of 1,500 through one worker state, as a
    build's worker runs them (ids kept from chunk to chunk)."""
    latex: dict[str, None] = {}
    with Store.open(sample_index) as store:
        for f in store.iter_formulas():
            latex.setdefault(f.latex)
            if len(latex) >= 6000:
                break
    todo = list(latex)
    assert len(todo) == 6000
    postings = 0
    for i in range(0, len(todo), 1500):
        ref, got = _reference(todo[i:i + 1500]), build._analyze(todo[i:i + 1500])
        _assert_same(ref, got)
        postings += sum(len(f[1]) for f in got[2])
    assert postings > 100_000  # real bags, not empty ones


def test_tables_that_start_again_give_the_same_bags(tokens, monkeypatch):
    """Past its capacity the kernel forgets every id between two formulae: the hashes stay."""
    monkeypatch.setattr(tokens, "CAPACITY", 40)
    todo = EDGE_CASES * 3
    _assert_same(_reference(todo), build._analyze(todo))


_PIECES = ["x", "y", "2", "a_1", "^2", "_{n}", "+", "-", "=", "/", "\\frac{a}{b}", "\\sqrt{x}", "(", ")",
           "\\{", "\\}", "[", "]", ",", "\\sum_{i=1}^n", "\\int", "dx", "f(x)", "\\alpha", "\\cdot", "!",
           "'", "{", "}", "^", "_", "\\left(", "\\right)", "\\text{ok}", "&", "\\\\", "\\mathbb{R}", "<",
           "\\le", "|", "\\|", "\\to", "\\infty", "\\lim", "\\log", "\\sin", "e^{i\\pi}", " ", "\\,"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=25).map("".join), min_size=1, max_size=12))
def test_any_formulae_give_the_references_bags(tokens, latexes):
    """Fragments in any order, unbalanced ones included (the parser repairs them)."""
    build._W.clear()
    _assert_same(_reference(latexes), build._analyze(latexes))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_the_tokens_hash_is_blake2b_as_hashlib_gives_it(tokens, text):
    """Any text, 0 to 300 characters (so 0 to ~1,200 bytes: one block, several, exact multiples of
    128), non-ASCII and lone surrogates included."""
    assert tokens.hash_token(text) == _hash(text)


def test_the_hash_at_block_boundaries(tokens):
    for n in (0, 1, 127, 128, 129, 255, 256, 257, 1024):
        assert tokens.hash_token("x" * n) == _hash("x" * n), n
    assert tokens.hash_token("\u00e9" * 64) == _hash("\u00e9" * 64)  # 128 bytes of 64 characters


def test_the_visual_keys_integer_is_the_hex_keys(tokens):
    for latex in EDGE_CASES + ["x < y", "\\lt", ""]:
        p = parse_latex(latex)
        assert tokens.visual_key_int(p.slt, latex) == vkey_int(visual_key_of_slt(p.slt, latex)), latex
