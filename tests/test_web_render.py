"""What a page shows of the collection's text (issue 34): formulae the site typesets outside the
math spans, a comment's mini-Markdown through the same sanitiser as posts, and the compatibility
layer (static/texcompat.js, run in node) that lets MathJax typeset the collection's LaTeX as the
source site does, the stored LaTeX unchanged."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

from mathsearch.web import render
from mathsearch.web.render import comment_html, post_html, text_html

TEX = re.compile(r'<span class="tex( display)?"[^>]*>([^<]*)</span>')


def formulae(html: str) -> list[tuple[bool, str]]:
    return [(bool(d), latex) for d, latex in TEX.findall(str(html))]


def test_environments_and_dollars_outside_spans_become_formulae():
    body = ('<p>so \\begin{align*} x + y &amp; = \\frac{1}{2} \\tag{1}\\\\<br> xy &amp; = 1 \\end{align*} and '
            '<span class="math-container" id="5">y</span> then \\[a&lt;b\\] and \\(c\\) and $d&gt;0$ and '
            '$$e$$ but \\$5 stays.</p><pre><code>\\begin{x} $f$ \\end{x}</code></pre>'
            '<p><a href="http://x.org/$%7Bx$">l</a> and $\\Longrightarrow<span class="math-container">g</span></p>')
    html = str(post_html(body))
    assert formulae(html) == [
        (True, "\\begin{align*} x + y &amp; = \\frac{1}{2} \\tag{1}\\\\\n xy &amp; = 1 \\end{align*}"),
        (False, "y"), (True, "a&lt;b"), (False, "c"), (False, "d&gt;0"), (True, "e"),
        (False, "\\Longrightarrow"), (False, "g")]
    assert "\\$5 stays" in html  # an escaped dollar is a dollar
    assert "<code>\\begin{x} $f$ \\end{x}</code>" in html  # code is never math
    assert 'href="http://x.org/$%7Bx$"' in html  # nor is an attribute


def test_environments_in_plain_text():
    assert formulae(text_html("t \\begin{cases} a \\\\ b \\end{cases} $x$ \\begin{pmatrix}1\\end{pmatrix}")) == [
        (True, "\\begin{cases} a \\\\ b \\end{cases}"), (False, "x"), (True, "\\begin{pmatrix}1\\end{pmatrix}")]


def test_comment_markdown_links_code_bold_italic():
    html = str(comment_html(
        "See [*The Harmonic Series*](http://x.org/a_b_c.pdf \"T\") and https://en.wikipedia.org/wiki/A_(b)_c. "
        "**OR** $a_1*b_2*c$ __AND__ _it_ 2*3*4 a_b_c `x*y* $z$ <b>` [q](/q/12)"))
    assert ('<a href="http://x.org/a_b_c.pdf" title="T" rel="nofollow noopener noreferrer"><i>The Harmonic Series</i></a>'
            in html)
    assert ('<a href="https://en.wikipedia.org/wiki/A_(b)_c" rel="nofollow noopener noreferrer">'
            "https://en.wikipedia.org/wiki/A_(b)_c</a>.") in html
    assert "<b>OR</b>" in html and "<b>AND</b>" in html and "<i>it</i>" in html
    assert '<span class="tex">a_1*b_2*c</span>' in html  # a formula is not Markdown
    assert "2*3*4 a_b_c" in html  # nor are stars and underscores inside words
    assert "<code>x*y* $z$ &lt;b&gt;</code>" in html  # nor is code, nor math in it
    assert '<a href="https://math.stackexchange.com/q/12"' in html  # a site link leads to the site


def test_comment_html_goes_through_the_sanitiser():
    html = str(comment_html('[x](javascript:alert(1)) <script>alert(1)</script> <img src=x onerror="a()"> '
                            '[y](http://a.org/" onclick="b()) \x020\x03 ms0x0x'))
    assert "<script" not in html and "<img" not in html and not re.search(r"<[^>]*\son\w+=", html)
    assert "javascript" not in "".join(re.findall(r"<a [^>]*>", html))
    assert len(re.findall(r"<a ", html)) <= 1
    assert "ms0x0x" in html  # a placeholder typed in a comment stays text


def test_stored_latex_unchanged_on_the_page():
    latex = "\\left% (x\\right)&amp;% lt;0"  # mended by texcompat.js in the browser, not here
    assert [(d, html.unescape(t)) for d, t in formulae(text_html(f"${latex}$"))] == [(False, latex)]


COMPAT_CASES = {
    "\\frac{1}{2% }": "\\frac{1}{2}",  # a "%" whose line break was lost
    "\\left% (x\\right)": "\\left (x\\right)",
    "\\alpha% x": "\\alpha x",  # a control word ends at the "%"
    "50\\% off": "50\\% off",  # an escaped percent is a percent
    "\\right)&amp;% lt;0": "\\right)<0",  # entities, also cut by a "%"
    "a&amp;lt;b": "a<b",
    "x&\\displaystyle amp;=1": "x&\\displaystyle =1",  # LaTeXML's cells
    "u\\hfil&\\displaystyle gt;0,0&\\displaystyle lt% ;v": "u>0,0<v",
    "(\\qvar@construct{)}\\,x\\qvar@construct{&}amp;y": "()\\,x&y",
    "T=p\\qvar@construct{": "T=p",
    "\\@@eqnarray$a$&$\\displaystyle amp;=$&$b$\\\\ $c$": "\\begin{eqnarray}a&\\displaystyle =&b\\\\ c\\end{eqnarray}",
    "x\\par": "x\\\\",
    "\\lx@sectionsign 3 \\require{cancel}\\cancel{x}": "\\S 3 \\cancel{x}",
}


def test_texcompat_prepares_the_collections_latex():
    assert shutil.which("node"), "node is missing: run `bash scripts/setup_web.sh`"
    script = ("const t = require('./src/mathsearch/web/static/texcompat.js');"
              "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(cases.map(c => t.prepareTex(c))));"
              "console.log(JSON.stringify([t.repairGroups('\\\\begin{pmatrix}{a&b\\\\\\\\ c&d\\\\end{pmatrix}}'),"
              " t.repairGroups('{H={\\\\begin{cases}b&{\\\\text{if }n>3\\\\end{cases}}}}'), t.repairGroups('a}b{c}')]));")
    done = subprocess.run(["node", "-e", script], input=json.dumps(list(COMPAT_CASES)), capture_output=True, text=True,
                          cwd=render.STATIC_DIR.parents[3], check=True)
    prepared, repaired = (json.loads(line) for line in done.stdout.splitlines())
    assert dict(zip(COMPAT_CASES, prepared, strict=True)) == COMPAT_CASES
    assert repaired == ["\\begin{pmatrix}a&b\\\\ c&d\\end{pmatrix}",
                        "{H={\\begin{cases}b&\\text{if }n>3\\end{cases}}}", "a}b{c}"]
