"""The assessment page's layout in headless Chromium at 1366x768 (issue 34, point 5): the topic list
typesets its formulae, the candidate and the question it answers sit in the page (no inner scroll
box cuts them), the grade buttons stay in view however far the page is scrolled, and the progress
squares take their grade's colour, which a legend names."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from cli_support import cli

from mathsearch.web.app import create_app

sys.path.insert(0, str(Path(__file__).parent))
from web_support import chromium, serve, topics_file  # noqa: E402

TOPICS = ("A.201", "A.203")  # A.203's title holds a formula: "Why does the subtraction symbol go away? $-(-x)= x$"
WIDTH, HEIGHT = 1366, 768

# Elements from #candidate up whose overflow clips or scrolls what they hold.
CLIPPING = """() => { const out = [];
  for (let el = document.getElementById('candidate'); el && el !== document.documentElement; el = el.parentElement) {
    const s = getComputedStyle(el);
    if (s.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + 1) out.push(el.id || el.className);
    if (s.maxHeight !== 'none' && el.scrollHeight > el.clientHeight + 1) out.push(el.id || el.className);
  } return out; }"""
GRADES_IN_VIEW = """() => { const b = Array.from(document.querySelectorAll('#grade-buttons .grade'));
  return b.length > 0 && b.every(x => { const r = x.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth; }); }"""
TEXT_WITHOUT_MATH = """sel => { const c = document.querySelector(sel).cloneNode(true);
  c.querySelectorAll('mjx-container').forEach(k => k.remove()); return c.textContent; }"""


@pytest.fixture(scope="module")
def pool(sample_index: Path, data_dir: Path, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("assess-layout")
    topics = topics_file(data_dir, d, TOPICS)
    run = d / "mathsearch-task1-bm25_answer-auto-both-P.tsv"
    result = cli("run", "--index", sample_index, "--task", 1, "--system", "bm25-answer", "--topics", topics, "--out", run)
    assert result.exit_code == 0, result.output
    out = d / "pool.sqlite"
    result = cli("pool", "--task", 1, run, "--depth", 6, "--topics", topics, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["items"] == 12
    return out


def wait_ready(page, saves: int | None = None) -> None:
    if saves is not None:
        page.wait_for_selector(f"#assess[data-saves='{saves}']", timeout=30_000)
    page.wait_for_selector("#assess[data-state='ready'][data-pending='0']", timeout=30_000)


def test_assessment_layout_at_1366x768(sample_index, pool, tmp_path):
    with serve(create_app(sample_index, pool)) as base, chromium(viewport={"width": WIDTH, "height": HEIGHT}) as ctx:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/assess?assessor=lay#A.203/1")
        wait_ready(page)

        # The topic list typesets its titles' formulae (was raw "$-(-x)= x$" in a <select>).
        assert page.locator("#topic-current mjx-container").count() >= 1
        page.click("#topics > summary")
        assert page.locator("#topic-list button[data-topic='A.203'] mjx-container").count() >= 1
        assert "$" not in page.evaluate(TEXT_WITHOUT_MATH, "#topic-list")
        assert page.locator("#topic-list button").count() == len(TOPICS)
        page.click("#topic-list button[data-topic='A.201']")  # the list opens a topic ...
        wait_ready(page)
        assert page.inner_text("#topic-id") == "A.201" and not page.locator("#topic-list").is_visible()
        page.keyboard.press("]")  # ... and the keys still work after it
        wait_ready(page)
        assert page.inner_text("#topic-id") == "A.203"

        # An answer whose question is in the collection: both are in the page, open, never in a scroll box.
        for _ in range(6):
            if page.locator("#candidate details.context").count():
                break
            page.keyboard.press("j")
            wait_ready(page)
        question = page.locator("#candidate details.context")
        assert question.count() == 1 and question.get_attribute("open") is not None
        assert page.evaluate(CLIPPING) == []
        assert page.locator("#candidate").bounding_box()["y"] < HEIGHT / 2  # the candidate starts in view
        assert page.evaluate(GRADES_IN_VIEW)
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")  # to the question's end
        end = question.bounding_box()
        assert end["y"] + end["height"] <= HEIGHT + 1 and end["y"] + end["height"] > 0
        assert page.evaluate(GRADES_IN_VIEW)  # the grade buttons followed
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        page.evaluate("window.scrollTo(0, 0)")

        # Progress squares coloured by grade, the colours named by the legend.
        page.keyboard.press("[")
        wait_ready(page)
        assert page.inner_text("#topic-id") == "A.201"
        for key in ("3", "1", "0", "5"):
            page.keyboard.press(key)
        wait_ready(page, saves=4)
        squares = page.locator("#strip button")
        colour = "el => getComputedStyle(el).backgroundColor"
        shown = [squares.nth(i).evaluate(colour) for i in range(5)]
        assert len(set(shown)) == 5  # four grades, four colours, and the unjudged fifth apart
        assert shown[4] == "rgb(255, 255, 255)"
        legend = {li.get_attribute("data-grade"): li.locator(".swatch").evaluate(colour)
                  for li in page.locator("#legend li").all()}
        assert set(legend) == {"g0", "g1", "g2", "g3", "g5", "g6", ""}
        assert [legend[g] for g in ("g3", "g1", "g0", "g5", "")] == shown
        assert "High" in page.inner_text("#legend li[data-grade='g3']")
        assert page.evaluate(GRADES_IN_VIEW)
        assert not errors, errors
        shot = tmp_path / "assess.png"  # with MATHSEARCH_SCREENSHOTS=DIR, docs/screenshots/ is made so
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 5000
        if os.environ.get("MATHSEARCH_SCREENSHOTS"):
            shutil.copy(shot, Path(os.environ["MATHSEARCH_SCREENSHOTS"]) / shot.name)
