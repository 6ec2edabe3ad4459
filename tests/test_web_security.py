"""A hostile collection, built by the test as a raw Stack Exchange dump and indexed, shown in a real
browser: posts, titles and comments carrying ``<script>``, ``onerror=``, ``javascript:`` links,
LaTeX ``\\href{javascript:...}`` and a 1 MB formula.  Asserted in Chromium on every page: no script
of theirs runs (each would set ``window.__pwned`` or open a dialog), nothing was left for the
Content-Security-Policy to block (the sanitiser removed it first), and the pages still work."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from web_support import chromium, serve

from mathsearch.building import build_index
from mathsearch.searcher import Searcher
from mathsearch.web.app import create_app

PWN = "window.__pwned='{}'"
# A 1 MB formula: a number, as "x+x+...+x" of that size costs the indexer ~40 s of parsing and analysis.
HUGE = "x^{2}+" + "1" * 1_000_000

TITLE = ("<script>" + PWN.format("title") + "</script>Hostile sums $x^2$ "
         "<img src=x onerror=\"" + PWN.format("title-img") + "\">")
QUESTION = (
    "<p>Why is the hostile square $x^2$ positive?</p>"
    "<script>" + PWN.format("body-script") + "</script>"
    "<img src=\"x\" onerror=\"" + PWN.format("img") + "\">"
    "<a href=\"javascript:" + PWN.format("link") + "\">click me</a> "
    "<a href=\"JaVaScRiPt:" + PWN.format("link-case") + "\">and me</a> "
    "<a href=\"data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;\">data link</a>"
    "<svg onload=\"" + PWN.format("svg") + "\"></svg>"
    "<iframe src=\"javascript:parent." + PWN.format("iframe") + "\"></iframe>"
    "<object data=\"javascript:" + PWN.format("object") + "\"></object>"
    "<form action=\"javascript:" + PWN.format("form") + "\"><button>go</button></form>"
    "<p style=\"position:fixed;top:0;left:0;width:100%;height:100%;background:red\" onmouseover=\""
    + PWN.format("hover") + "\">an overlay</p>"
    "<p>a formula breaking out: $x</span><script>" + PWN.format("span") + "</script>$ done</p>"
)
ANSWER_HREF = (
    "<p>The hostile square: $\\href{javascript:" + PWN.format("katex-href") + "}{click}$ and "
    "$\\url{javascript:alert(1)}$ and $\\htmlId{pwn}{x}$ and $x^2 \\geq 0$.</p>"
)
ANSWER_HUGE = "<p>A hostile square sum, huge: $" + HUGE + "$ and then $x^2+y^2$ small.</p>"
COMMENT = ("<img src=x onerror=\"" + PWN.format("comment") + "\"> hostile comment "
           "$\\href{javascript:" + PWN.format("comment-href") + "}{c}$")

CHECK = """() => {
  const main = document.querySelector('main');
  const all = Array.from(main.querySelectorAll('*'));
  const outsideMath = all.filter(el => !el.closest('mjx-container'));
  return {
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    csp: window.__csp,
    scripts: main.querySelectorAll('script').length,
    handlers: all.filter(el => Array.from(el.attributes).some(a => a.name.toLowerCase().startsWith('on'))).length,
    badLinks: Array.from(document.querySelectorAll('[href],[src],[action],[data]')).filter(el =>
      /^\\s*(javascript|data|vbscript):/i.test(el.getAttribute('href') || el.getAttribute('src') ||
                                               el.getAttribute('action') || el.getAttribute('data') || '')).length,
    active: main.querySelectorAll('iframe, object, embed, svg:not(mjx-container svg), form:not(.search), style').length,
    styled: outsideMath.filter(el => el.hasAttribute('style')).length,
    mathLinks: main.querySelectorAll('mjx-container a, mjx-container [id=pwn], [id=pwn]').length,
    typeset: main.querySelectorAll('mjx-container').length,
    long: main.querySelectorAll('.tex-long').length,
    size: document.documentElement.outerHTML.length,
    wide: document.documentElement.scrollWidth,
  };
}"""
WATCH = "window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective));"


def row(**attrs: str) -> str:
    return "  <row " + " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items()) + " />\n"


def write_dump(folder: Path) -> None:
    folder.mkdir(parents=True)
    posts = [row(Id="1", PostTypeId="1", Title=TITLE, Body=QUESTION, Tags="<algebra>", Score="1"),
             row(Id="2", PostTypeId="2", ParentId="1", Body=ANSWER_HREF, Score="5"),
             row(Id="3", PostTypeId="2", ParentId="1", Body=ANSWER_HUGE, Score="2"),
             row(Id="4", PostTypeId="1", Title="A calm question on $x^2+y^2$", Tags="<algebra>", Score="0",
                 Body="<p>Is $x^2+y^2 \\geq 2xy$ for every hostile real pair?</p>"),
             row(Id="5", PostTypeId="2", ParentId="4", Score="3", Body="<p>Yes: $(x-y)^2 \\geq 0$ gives $x^2+y^2 \\geq 2xy$.</p>")]
    (folder / "Posts.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<posts>\n' + "".join(posts) + "</posts>\n")
    comments = [row(Id="10", PostId="1", Text=COMMENT), row(Id="11", PostId="2", Text="<script>" + PWN.format("c2") + "</script>ok")]
    (folder / "Comments.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<comments>\n' + "".join(comments) + "</comments>\n")
    (folder / "PostLinks.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<postlinks>\n'
                                          + row(Id="1", PostId="1", RelatedPostId="4", LinkTypeId="1") + "</postlinks>\n")


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    write_dump(root / "dump")
    build_index(root / "dump", root / "index")
    return root / "index"


@pytest.fixture(scope="module")
def hostile_app(hostile_index):
    return create_app(hostile_index)


@pytest.fixture(scope="module")
def hostile_site(hostile_app):
    with serve(hostile_app) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with chromium(viewport={"width": 800, "height": 700}) as ctx:
        yield ctx


def test_the_collection_holds_the_hostile_posts(hostile_index):
    store = Searcher(hostile_index).ctx.store
    assert "<script>" in store.post(1).body and "onerror" in store.post(1).body
    assert max(len(f.latex) for f in store.formulas_of(3)) >= 1_000_000
    assert any("javascript:" in f.latex for f in store.formulas_of(2))


def test_api_gives_sanitised_html(hostile_app):
    with TestClient(hostile_app) as client:
        thread = client.get("/api/thread/3").json()
        bodies = " ".join(p["body_html"] for p in [thread["question"], *thread["answers"]])
        markup = re.sub(r'<span class="tex"[^>]*>[^<]*</span>', "", bodies)  # formulae, as text, may say anything
        assert markup.count('<span class="tex') == 0 and bodies.count('<span class="tex"') >= 5
        for bad in ("<script", "onerror", "javascript:", "<iframe", "<svg", "<object", "<form", "style="):
            assert bad not in markup
        assert len(bodies) < 20_000  # the 1 MB formula is not sent
        hits = client.get("/api/search", params={"q": "hostile square $x^2$"}).json()["hits"]
        assert {h["post_id"] for h in hits} >= {2, 3}
        assert all(len(h["snippet"]) < 1000 for h in hits)


@pytest.mark.parametrize("path", [
    "/?q=" + quote("hostile square $x^2$"),
    "/?task=2&q=" + quote("$x^2$"),
    "/?task=3&q=" + quote("Why is the hostile square $x^2$ positive?"),
    "/thread/1",
    "/thread/3?q=" + quote("$x^2+y^2$"),
    "/formula?id=",  # filled below: the \href formula's page
    "/formula?latex=" + quote("\\href{javascript:alert(1)}{x}"),
])
def test_hostile_pages_run_no_script_and_still_work(hostile_site, browser, hostile_index, path, tmp_path):
    if path == "/formula?id=":
        store = Searcher(hostile_index).ctx.store
        path += str(next(f.formula_id for f in store.formulas_of(2) if "javascript:" in f.latex))
    dialogs: list[str] = []
    page = browser.new_page()
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.add_init_script(WATCH)
    response = page.goto(hostile_site + path)
    assert response.status == 200
    page.wait_for_selector("html[data-math=ready]", timeout=15000)
    page.mouse.move(400, 350)  # over any overlay
    page.wait_for_timeout(300)
    seen = page.evaluate(CHECK)
    page.screenshot(path=str(tmp_path / "hostile.png"))
    page.close()
    assert dialogs == []
    assert seen["pwned"] is None
    assert seen["csp"] == []  # nothing reached the page for the policy to block
    assert seen["scripts"] == seen["handlers"] == seen["badLinks"] == seen["active"] == seen["styled"] == 0
    assert seen["mathLinks"] == 0  # \href{javascript:..}, \url and \htmlId never links or ids
    assert seen["typeset"] > 0  # the page still typesets its formulae
    assert seen["size"] < 300_000  # the 1 MB formula is not in the page
    assert seen["wide"] <= 800  # and does not stretch it
    if path.startswith("/thread/3"):
        assert seen["long"] == 1
