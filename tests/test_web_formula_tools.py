"""The formula tools of the page in a real browser (issue 42, items 3, 5, 7): the MathLive formula
editor beside the search box, the menu on every formula ("search this formula", "add to query"),
and the part of a larger formula that matched the query, boxed inside it.  Debian's headless
Chromium through Playwright over the sample index, as tests/test_web_browser.py; pictures go to
MATHSEARCH_SCREENSHOTS=DIR when it is set (docs/screenshots/)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from mathsearch.web.render import STATIC_DIR

MATHLIVE = STATIC_DIR / "mathlive" / "mathlive.min.js"
# the colour of a matched part's box (formula.highlight.MARK), as the browser computes it
MARK_RGB = "rgb(255, 226, 122)"
# the typeset parts of a formula element in the box's colour (mjx-math: not the MathML for readers)
IN_BOXES = """el => Array.from(el.querySelectorAll('mjx-math *')).filter(
  k => getComputedStyle(k).backgroundColor === 'MARK_RGB')""".replace("MARK_RGB", MARK_RGB)
BOXES = f"el => ({IN_BOXES})(el).length"
# the characters MathJax drew in the boxes (CHTML draws each as an mjx-c whose class names its code point)
BOXED_CHARS = f"el => ({IN_BOXES})(el).flatMap(k => Array.from(k.querySelectorAll('mjx-c')).map(c => c.className))"
ITALIC_X, ITALIC_Y = "mjx-c1D465", "mjx-c1D466"  # MathJax's math italic x and y


def watch(page, site: str) -> dict[str, list[str]]:
    """Script errors, requests that left the server, and requests to it that failed, as they come
    (a post's image on another site fails offline: that is the post's, not the page's; a font
    still loading when the page moves on is cut short, which is no failure)."""
    seen: dict[str, list[str]] = {"errors": [], "elsewhere": [], "failed": []}
    page.on("console", lambda m: seen["errors"].append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.on("request", lambda r: seen["elsewhere"].append(r.url) if not r.url.startswith((site, "data:", "blob:")) else None)
    page.on("requestfailed", lambda r: seen["failed"].append(f"{r.failure} {r.url}")
            if r.url.startswith(site) and "ERR_ABORTED" not in (r.failure or "") else None)
    page.on("response", lambda r: seen["failed"].append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return seen


def snap(page, name: str) -> None:
    if os.environ.get("MATHSEARCH_SCREENSHOTS"):
        out = Path(os.environ["MATHSEARCH_SCREENSHOTS"])
        out.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out / f"{name}.png"))


def ready(page) -> None:
    page.wait_for_selector("html[data-math=ready]", timeout=15000)


def query_of(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_mathlive_is_served_from_this_server():
    assert MATHLIVE.is_file(), f"{MATHLIVE} is missing: run `bash scripts/setup_web.sh`"
    assert (STATIC_DIR / "mathlive" / "fonts" / "KaTeX_Main-Regular.woff2").is_file()


@pytest.mark.parametrize("width", [1000, 390])
def test_the_editor_inserts_a_formula_and_the_search_runs(site, browser, width):
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": 844})
    seen = watch(page, site)
    page.goto(site + "/")
    ready(page)
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("circle")
    page.keyboard.press("Alt+e")  # keyboard only: Alt+E opens the editor and goes into it
    page.wait_for_selector("#formula-editor[data-editor=ready] math-field")
    assert page.get_attribute("#editor-toggle", "aria-expanded") == "true"
    assert page.evaluate("document.activeElement.id") == "editor-field"
    page.keyboard.type("x^2+y^2=1")  # MathLive leaves a one-digit exponent by itself
    assert page.evaluate("document.getElementById('editor-field').getValue('latex')") == "x^2+y^2=1"
    if width == 390:  # a phone: the editor fits, nothing scrolls sideways
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box = page.locator("#formula-editor math-field").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        snap(page, "formula-editor-phone")
    page.keyboard.press("Enter")  # adds $x^2+y^2=1$ to the query and searches
    page.wait_for_url("**/?q=*")
    ready(page)
    assert query_of(page)["q"] == "circle $x^2+y^2=1$"
    assert page.input_value("#q") == "circle $x^2+y^2=1$"
    assert page.locator("li.hit").count() == 10
    assert not seen["elsewhere"], seen["elsewhere"]  # fonts and all from this server, no sounds
    assert not seen["failed"], seen["failed"]
    assert not seen["errors"], seen["errors"]
    if width == 390:
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()


def test_the_editor_adds_to_the_query_without_searching_and_escape_closes_it(site, browser):
    page = browser.new_page()
    page.goto(site + "/?task=1")
    ready(page)
    page.fill("#q", "sum of")
    page.click("#editor-toggle")
    page.wait_for_selector("#formula-editor[data-editor=ready] math-field")
    assert page.evaluate("document.activeElement.id") == "editor-field"  # a click goes into it too
    page.keyboard.type("1/n")  # "/" makes a fraction of what stands before it
    latex = page.evaluate("document.getElementById('editor-field').getValue('latex')")
    assert latex == "\\frac{1}{n}"
    page.keyboard.press("ArrowRight")
    page.keyboard.type("+\\alpha")  # a LaTeX command typed in the field: Enter ends it, not the editor
    page.keyboard.press("Enter")
    assert page.evaluate("document.getElementById('editor-field').getValue('latex')") == "\\frac{1}{n}+\\alpha"
    assert page.is_visible("#formula-editor") and urlparse(page.url).query == "task=1"
    latex = "\\frac{1}{n}+\\alpha"
    page.click("#editor-add")
    assert page.input_value("#q") == f"sum of ${latex}$"
    assert page.evaluate("document.activeElement.id") == "q"
    assert urlparse(page.url).query == "task=1"  # nothing searched yet
    page.wait_for_selector("#preview mjx-container")  # the query's preview shows the formula added
    assert page.is_visible("#formula-editor math-field")  # open for the next formula
    page.focus("#editor-field")
    page.keyboard.press("Escape")
    assert page.locator("#formula-editor").is_hidden()
    assert page.evaluate("document.activeElement.id") == "q"
    page.close()


def test_a_formula_in_a_thread_opens_its_task2_search(site, browser):
    page = browser.new_page()
    seen = watch(page, site)
    page.goto(site + "/?" + urlencode({"q": "harmonic series $\\sum_{n=1}^{\\infty}\\frac{1}{n}$", "task": 1}))
    ready(page)
    page.locator(".hit-link").first.click()
    page.wait_for_url("**/thread/*")
    ready(page)
    formula = page.locator("article .body .tex.has-tools[data-rendered]").first
    latex = formula.get_attribute("data-latex")
    assert formula.get_attribute("tabindex") == "0" and formula.get_attribute("role") == "button"
    assert page.locator(".formula-menu").count() == 0  # nothing in the way until asked for
    formula.click()
    menu = page.locator(".formula-menu[role=menu]")
    assert menu.locator("[role=menuitem]").all_inner_texts() == ["Search this formula", "Add to query", "Every representation"]
    assert page.evaluate("document.activeElement.textContent") == "Search this formula"
    page.keyboard.press("Escape")  # closes the menu, back on the formula
    assert page.locator(".formula-menu").count() == 0
    assert page.evaluate("document.activeElement.getAttribute('data-latex')") == latex
    page.keyboard.press("Enter")  # keyboard: the focused formula opens its menu
    assert page.evaluate("document.activeElement.textContent") == "Search this formula"
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.textContent") == "Add to query"
    add = page.evaluate("document.activeElement.getAttribute('href')")
    assert parse_qs(urlparse(add).query)["q"] == [f"harmonic series $\\sum_{{n=1}}^{{\\infty}}\\frac{{1}}{{n}}$ ${latex}$"]
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    page.wait_for_url("**/?q=*")
    ready(page)
    assert query_of(page) == {"q": f"${latex}$", "task": "2"}
    assert page.locator("li.group").count() >= 1
    assert not seen["errors"] and not seen["failed"], seen
    page.close()


def test_add_to_query_on_the_search_page_fills_the_box(site, browser):
    page = browser.new_page()
    page.goto(site + "/?" + urlencode({"q": "$x^2+y^2$", "task": 2}))
    ready(page)
    first = page.locator("li.group .group-formula .tex").first
    stored = first.get_attribute("data-query-latex") or first.get_attribute("data-latex")
    first.click()
    page.locator(".formula-menu").get_by_text("Add to query").click()
    assert page.input_value("#q") == f"$x^2+y^2$ ${stored}$"
    assert page.evaluate("document.activeElement.id") == "q"
    page.close()


def test_the_matched_part_of_a_larger_formula_is_boxed(site, browser):
    page = browser.new_page()
    seen = watch(page, site)
    page.goto(site + "/?" + urlencode({"q": "$x^2+y^2$", "task": 2}))
    ready(page)
    parts = page.locator("li.group .group-formula .tex.part-match")
    assert parts.count() >= 1
    part = parts.first
    stored = part.get_attribute("data-query-latex")
    assert "bbox" not in stored and len(stored) > len("x^2+y^2")  # larger than the query
    assert part.locator("mjx-container").count() == 1 and page.evaluate(
        "document.querySelectorAll('.tex-error').length") == 0
    assert part.evaluate(BOXES) >= 1  # the matched part is boxed in the typeset formula
    # the box holds the query's symbols (an x, a y), and the formula has more than the box
    inside = part.evaluate(BOXED_CHARS)
    whole = part.locator("mjx-math mjx-c").count()
    assert any(ITALIC_X in c for c in inside) and any(ITALIC_Y in c for c in inside) and len(inside) < whole
    # a formula equal to the query is not boxed in part
    for el in page.locator("li.group .group-formula .tex").all():
        if (el.get_attribute("data-latex") or "").replace(" ", "") == "x^2+y^2":
            assert "part-match" not in el.get_attribute("class")
    part.scroll_into_view_if_needed()
    snap(page, "formula-highlight")
    assert not seen["errors"] and not seen["failed"], seen
    page.close()


def test_task1_snippets_box_the_matched_part_of_their_formulae(site, browser):
    page = browser.new_page()
    page.goto(site + "/?" + urlencode({"q": "harmonic series $\\sum_{n=1}^{\\infty}\\frac{1}{n}$", "task": 1}))
    ready(page)
    parts = page.locator(".snippet .tex.part-match")
    assert parts.count() >= 1
    assert sum(p.evaluate(BOXES) for p in parts.all()) >= parts.count()
    assert page.evaluate("document.querySelectorAll('.tex-error').length") == 0
    page.close()
