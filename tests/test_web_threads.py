"""Every formula of the threads a searcher opens typeset as the source site shows it (issue 34).

In Debian's Chromium (Playwright, tests/web_support.py), over the sample index: the thread of the
top hit of each ARQMath 2020 Task 1 topic, the thread the issue names (environments standing
outside dollars: ``\\begin{align*}`` in /thread/1707908) and two whose posts define macros.  On each page no formula is left
untypeset, MathJax fails on none (no ``.tex-error``), and the text outside code and typeset math
holds no raw ``\\begin{``, ``\\frac`` or ``\\left``.  A macro that no formula of the page
defines is shown by name in red, as the source site shows it (``.tex-undefined``): allowed only
where no formula of the page defines it (a page's ``\\newcommand`` must reach its later formulae).  With MATHSCREENSHOTS=DIR the thread with
environments and comments is photographed into DIR (how docs/screenshots/thread-environments.png
is made)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from web_support import chromium, serve

from mathsearch.indexes.documents import topic_text
from mathsearch.readers.topics import read_topics
from mathsearch.searcher import Searcher
from mathsearch.web.app import create_app

TOPICS = Path(__file__).resolve().parents[2] / "shared" / "data" / "arqmath" / "topics" / "task1-2020.xml"
# the thread with \begin{align*} outside dollars, and two whose question defines macros
# (\newcommand{\pars}.., \newcommand{\abs}..) that its answers use
NAMED = (1707908, 1646035, 1579998)
RAW = ("\\begin{", "\\frac", "\\left")

# The page's text with code, typeset math and formulae too long to typeset taken out.
LEFT_OVER = """() => {
  const c = document.querySelector('main').cloneNode(true);
  c.querySelectorAll('code, pre, mjx-container, .tex-long').forEach(k => k.remove());
  return c.textContent;
}"""
COUNTS = """() => ({
  typeset: document.querySelectorAll('main mjx-container').length,
  errors: Array.from(document.querySelectorAll('.tex-error')).map(e => e.getAttribute('data-latex') + ' :: ' + e.title),
  untypeset: document.querySelectorAll('.tex:not([data-rendered])').length,
  merror: document.querySelectorAll('mjx-merror').length,
  undefined: Array.from(document.querySelectorAll('.tex-undefined')).map(e => e.title.split(': ')[1]).join(' '),
  latex: Array.from(document.querySelectorAll('[data-latex]')).map(e => e.getAttribute('data-latex')).join(' '),
})"""
DEFINES = ("\\newcommand", "\\renewcommand", "\\def", "\\DeclareMathOperator", "\\let")


@pytest.fixture(scope="module")
def threads(sample_index) -> list[int]:
    searcher = Searcher(sample_index)
    top = []
    for topic in read_topics(TOPICS):
        hits = searcher.search(" ".join(topic_text(topic)[0].split())[:900], task=1, k=1).hits
        if hits and hits[0].post_id not in top + list(NAMED):
            top.append(hits[0].post_id)
    return list(NAMED) + top


def test_threads_typeset_whole(sample_index, threads):
    assert len(threads) >= 40
    failures = {}
    typeset = 0
    with serve(create_app(sample_index)) as base, chromium(viewport={"width": 1000, "height": 900}) as ctx:
        page = ctx.new_page()
        for post_id in threads:
            response = page.goto(f"{base}/thread/{post_id}")
            assert response.status == 200
            page.wait_for_selector("html[data-math=ready]", timeout=60000)
            seen = page.evaluate(COUNTS)
            text = page.evaluate(LEFT_OVER)
            raw = [r for r in RAW if r in text]
            defined = [m for m in seen["undefined"].split() for d in DEFINES
                       if d + "{" + m + "}" in seen["latex"] or d + m in seen["latex"]]
            typeset += seen["typeset"]
            if seen["errors"] or seen["untypeset"] or seen["merror"] or raw or defined:
                failures[post_id] = {**seen, "raw": raw, "defined yet undefined": defined, "latex": None}
            if post_id == NAMED[1]:  # its answers' \pars, \dd, .. typeset with the question's definitions
                assert seen["typeset"] >= 14 and seen["undefined"] == ""
            if post_id == NAMED[0]:
                assert seen["typeset"] >= 30 and "\\begin{align" not in text
                assert page.locator("mjx-container[display=true] mjx-mtable").count() >= 3  # the align* blocks
                assert page.locator("ul.comments a[href^=http]").count() >= 1  # a comment's Markdown link
                if os.environ.get("MATHSEARCH_SCREENSHOTS"):
                    out = Path(os.environ["MATHSEARCH_SCREENSHOTS"])
                    out.mkdir(parents=True, exist_ok=True)
                    height = min(1800, page.evaluate("document.documentElement.scrollHeight"))
                    page.screenshot(path=str(out / "thread-environments.png"), full_page=True,
                                    clip={"x": 0, "y": 0, "width": 1000, "height": height})
        page.close()
    assert failures == {}
    assert typeset > 20 * len(threads)
