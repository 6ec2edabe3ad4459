"""Snippets cut only between formulae, on the stored post's own math spans (issue 41, item 1).

Real posts of the sample that garbled before: 32894 (``$$..$$`` spans, a snippet cut inside one
set prose as maths), 81240 (LaTeXML's eqnarray holds ``$`` and ``amp;``), 416787 (prose between
two mis-paired dollars typeset as glued italic words), 438 (``\\begin{align}`` outside the spans,
``&amp;=``), 158595 (``%`` continuations and ``&\\displaystyle amp;`` cells); then every answer of
the sample, and a Hypothesis property over made-up posts: a snippet's formulae, read back as the
page and the CLI read them, are each one of the post's formulae, whole."""

from __future__ import annotations

import json
import re

from cli_support import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathsearch.readers.snippets import (
    ELLIPSIS,
    NO_TEXT,
    formula_text,
    formulae_of,
    post_atoms,
    post_snippet,
    snippet_of,
    tex_shown,
)
from mathsearch.searcher import Searcher
from mathsearch.text.dollar_math import find_math
from mathsearch.web.render import math_in_text, text_html


def store_of(sample_index):
    return Searcher(sample_index).ctx.store


def prose_of(snippet: str) -> str:
    """The snippet without its formulae (what the page shows as text)."""
    pos, rest = 0, []
    for start, end, _ in find_math(snippet, is_html=False):
        rest.append(snippet[pos:start])
        pos = end
    return "".join(rest) + snippet[pos:]


def assert_whole(snippet: str, body: str) -> None:
    """Each formula of ``snippet`` is one of the post's formulae as shown; the prose holds no
    delimiter; the snippet is more than an ellipsis."""
    shown = {tex_shown(a.text) for a in post_atoms(body) if a.formula}
    for latex in formulae_of(snippet):
        assert latex in shown, (latex, snippet)
    prose = prose_of(snippet).replace("\\$", "")
    assert "$" not in prose, snippet
    assert snippet.strip(". ") and snippet != ELLIPSIS


def test_32894_display_spans_stay_whole(sample_index):
    body = store_of(sample_index).post(32894).body
    s = post_snippet(body, {"gcd", "prime"})
    assert_whole(s, body)
    assert "\\rm\\>gcd(x,y)=1\\>" in formulae_of(s)  # the formula the old snippet cut
    assert "$$$" not in s and "we conclude that" in prose_of(s)  # prose stays prose
    # the spans delimited by $$ are display formulae, the others inline (the plain text lost that)
    atoms = [a for a in post_atoms(body) if a.formula]
    assert [a.display for a in atoms].count(True) == 1 and atoms[4].text.startswith("\\begin{align}")


def test_81240_eqnarray_holding_dollars_reads_back_whole(sample_index):
    body = store_of(sample_index).post(81240).body
    eqn = next(a for a in post_atoms(body) if a.formula and a.text.startswith("\\@@eqnarray"))
    assert "$" in eqn.text
    s = post_snippet(body, (), anchor_id=eqn.formula_id)
    assert_whole(s, body)
    [latex] = [f for f in formulae_of(s) if f.startswith("\\@@eqnarray")]
    assert "\\(" + latex + "\\)" in s  # $ inside: written with \( \)
    assert "amp;" not in latex and "% " not in latex and "1849\\equiv 31" in latex
    assert "amp;" not in prose_of(s)


def test_416787_prose_is_never_typeset(sample_index):
    body = store_of(sample_index).post(416787).body
    s = post_snippet(body, {"decreasing"})
    assert_whole(s, body)
    assert "but because of the too slowly decreasing factor" in prose_of(s)
    assert "\\frac{1}{x}" in formulae_of(s)


def test_438_environment_outside_the_spans_is_one_display_formula(sample_index):
    body = store_of(sample_index).post(438).body
    s = post_snippet(body, {"unmathematical"})
    assert_whole(s, body)
    [align] = [f for f in formulae_of(s) if f.startswith("\\begin{align}")]
    assert "\\sqrt{-1} &= i" in align and "amp;" not in align  # the entity decoded
    assert "$$\\begin{align}" in s  # display: as on the thread page
    assert "I know there must be something unmathematical" in s


def test_158595_latexml_leftovers_are_gone(sample_index):
    body = store_of(sample_index).post(158595).body
    aligned = next(a for a in post_atoms(body) if a.formula and a.text.startswith("\\begin{aligned}"))
    assert "% " in aligned.text and "amp;" in aligned.text  # as stored
    s = post_snippet(body, (), anchor_id=aligned.formula_id)
    assert_whole(s, body)
    [latex] = [f for f in formulae_of(s) if f.startswith("\\begin{aligned}")]
    assert "%" not in latex and "amp;" not in latex
    assert "3=1+1+1&\\displaystyle \\Longrightarrow 1\\times 1" in latex


def test_2269455_macros_the_post_defines_come_along(sample_index):
    """A formula using \\pars, which the post's first span defines: the definitions come first in
    the snippet (they typeset as nothing; without them MathJax refuses the formula)."""
    body = store_of(sample_index).post(2269455).body
    atoms = post_atoms(body)
    defs = next(a for a in atoms if a.formula and "\\newcommand{\\pars}" in a.text)
    used = [a for a in atoms if a.formula and "\\pars" in a.text and a is not defs]
    assert len(defs.text) > 400 and used  # a definition longer than any formula a snippet shows
    for a in used[:3]:
        s = post_snippet(body, (), anchor=a.text)
        assert_whole(s, body)
        shown = formulae_of(s)
        assert shown[0] == tex_shown(defs.text) and tex_shown(a.text) in shown


def test_837594_latexml_debris_is_dropped(sample_index):
    body = store_of(sample_index).post(837594).body
    broken = next(a for a in post_atoms(body) if a.formula and "\\end{document}" in a.text)
    assert tex_shown(broken.text).endswith("\\cdot{3^{n-k}}")  # "$\\par\\end{document}}" dropped
    s = post_snippet(body, (), anchor_id=broken.formula_id)
    assert_whole(s, body)
    assert "\\end{document}" not in s


def test_every_answer_of_the_sample(sample_index):
    """A snippet of any answer, around any word or none, reads back as whole formulae of the post."""
    checked = 0
    for post in store_of(sample_index).iter_answers():
        atoms = post_atoms(post.body)
        for words in ({"the"}, {"prime"}, set()):
            for width in (60, 200):
                s = snippet_of(atoms, words, width)
                assert_whole(s, post.body)
        if any(a.formula for a in atoms):
            checked += 1
    assert checked > 2000


def test_tex_shown_mends_what_the_page_mends():
    assert tex_shown("\\frac{1}{2% ^{n}}") == "\\frac{1}{2^{n}}"
    assert tex_shown("\\left% (x\\right)") == "\\left (x\\right)"  # a control word keeps its end
    assert tex_shown("50\\% of x") == "50\\% of x"  # a percent sign
    assert tex_shown("a &amp;amp;= b &amp;lt; c") == "a &= b < c"  # escaped twice
    assert tex_shown("x &\\displaystyle amp;= y") == "x &\\displaystyle = y"  # LaTeXML's cell
    assert tex_shown("x\\hfil&\\displaystyle gt;0") == "x>0"


def test_words_keep_their_spaces():
    atoms = post_atoms("<table><tr><td>left</td><td>right</td></tr></table><p>one<br>two <b>bo</b><i>ld</i>"
                       " <span class=\"math-container\" id=\"1\">x</span>, costs $5</p>")
    assert [a.text for a in atoms] == ["left", "right", "one", "two", "bold", "x", ",", "costs", "$5"]
    s = snippet_of(atoms)
    assert s == "left right one two bold $x$, costs \\$5"
    assert str(text_html(s)).endswith("costs $5")  # the page shows the dollar sign


def test_never_empty_and_never_only_an_ellipsis():
    assert post_snippet("") == NO_TEXT
    assert post_snippet("<p> <br> </p>") == NO_TEXT
    huge = '<p><span class="math-container" id="9">' + "x+" * 500_000 + "1</span></p>"
    assert post_snippet(huge) == "[formula, 1,000,001 characters]"
    words = " ".join(f"w{i}" for i in range(300))
    s = post_snippet(f"<p>{words} target {words}</p>", {"target"}, width=60)
    assert s.startswith(ELLIPSIS) and s.endswith(ELLIPSIS) and "target" in s and len(s) <= 60 + 2 * len(ELLIPSIS)


def test_formula_text_reads_back():
    for latex, display in (("x^2", False), ("a\\$b", False), ("\\@@eqnarray$a$&$=$&$b$", False),
                           ("\\begin{align} a&=b \\end{align}", True), ("x\\\\", False), ("a$b", True)):
        written = formula_text(latex, display)
        assert written is not None and find_math(written, is_html=False) == [(0, len(written), latex)]
        assert math_in_text(written)[0][3] is display or written.startswith("\\(")
    assert formula_text("a$b\\)c$", False) is None  # nothing reads back: shown as [formula, N characters]


# -- property: made-up posts of spans, stray dollars, environments and tags ---------------------------
_LATEX = st.text(alphabet="x$\\{}()[]&%;^_ab =", min_size=1, max_size=12)
_PROSE = st.text(alphabet="ab $\\&;<>()[]%\n", min_size=0, max_size=12)


@st.composite
def bodies(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["span", "dspan", "prose", "env", "tag", "code"]))
        latex = draw(_LATEX).replace("<", "&lt;").replace(">", "&gt;")
        if kind == "span":
            parts.append(f'<span class="math-container" id="{len(parts)}">{latex}</span>')
        elif kind == "dspan":
            parts.append(f'<span class="math-container">$${latex}$$</span>')
        elif kind == "env":
            parts.append(f"\\begin{{align*}}{latex}\\end{{align*}}")
        elif kind == "tag":
            parts.append(draw(st.sampled_from(["<p>", "</p>", "<br>", "<b>", "</b>", "<td>"])))
        elif kind == "code":
            parts.append(f"<code>{latex}</code>")
        else:
            parts.append(draw(_PROSE).replace("<", "&lt;"))
    return "".join(parts)


@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(body=bodies(), width=st.integers(10, 120), word=st.sampled_from(["", "aab", "xx"]))
def test_a_snippet_never_splits_a_formula(body, width, word):
    atoms = post_atoms(body)
    s = snippet_of(atoms, {word} if word else (), width)
    assert s
    shown = {tex_shown(a.text) for a in atoms if a.formula}
    for latex in formulae_of(s):
        assert latex in shown, (latex, s)


def test_cli_shows_formulae_as_the_page_does(sample_index):
    """`mathsearch search` prints no LaTeXML "%" continuation (the JSON keeps the stored LaTeX)."""
    store = store_of(sample_index)
    aligned = next(f for f in store.formulas_of(158595) if "% " in f.latex)
    query = "$" + aligned.latex + "$"
    text = cli("search", "--index", sample_index, "--task", "2", query, "--top", "3")
    assert text.exit_code == 0, text.output
    shown = [line for line in text.stdout.splitlines() if line.startswith("     ")]  # snippets, matched formulae
    assert any("matched: $\\begin{aligned}" in line for line in shown), text.stdout
    assert not any(re.search(r"[^\\]%", line) for line in shown), text.stdout
    raw = cli("search", "--index", sample_index, "--task", "2", query, "--top", "3", "--json")
    hits = json.loads(raw.stdout)["hits"]
    assert aligned.latex[:200] in [m.removesuffix("...") for h in hits for m in h["matched_formulae"]]
    assert "% " in aligned.latex[:200]
