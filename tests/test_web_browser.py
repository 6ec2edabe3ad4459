"""The search page in a real browser: Debian's headless Chromium through Playwright, against
``mathsearch serve``'s app on loopback over the sample index.

A person's path: type a question with LaTeX (the preview typesets it), search, see KaTeX-rendered
snippets with the matched formulae marked, page forward with the keyboard, switch to Task 2, open
a thread and a formula.  Each page is photographed into a temporary folder (and, with
MATHSEARCH_SCREENSHOTS=DIR, into DIR too: that is how docs/screenshots/ is made)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from mathsearch.web.results import MORE_SHOWN

QUESTION = "Why does the harmonic series $\\sum_{n=1}^{\\infty}\\frac{1}{n}$ diverge?"

# Text of every snippet with its typeset formulae taken out: what is left must hold no "$".
RAW_DOLLARS = """() => Array.from(document.querySelectorAll('.snippet')).map(el => {
  const c = el.cloneNode(true); c.querySelectorAll('mjx-container, .tex-long').forEach(k => k.remove()); return c.textContent; })"""
UNRENDERED = "() => document.querySelectorAll('.tex:not([data-rendered]), .tex-error').length"


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


def snap(page, shots: Path, name: str) -> Path:
    path = shots / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 5000
    if os.environ.get("MATHSEARCH_SCREENSHOTS"):
        out = Path(os.environ["MATHSEARCH_SCREENSHOTS"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, out / path.name)
    return path


def ready(page) -> None:
    page.wait_for_selector("html[data-math=ready]", timeout=15000)


def query_of(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_type_search_page_forward(site, browser, shots):
    page = browser.new_page()
    page.goto(site + "/")
    ready(page)
    assert page.evaluate("document.activeElement.id") == "q"  # an empty page starts in the box
    page.keyboard.press("Escape")  # leaves it ...
    assert page.evaluate("document.activeElement.id") != "q"
    page.keyboard.press("/")  # ... and / comes back to it
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type(QUESTION)
    page.wait_for_selector("#preview mjx-container")  # the live preview typesets the formula typed
    assert page.locator("#preview mjx-container").count() == 1
    page.keyboard.press("Enter")
    page.wait_for_url("**/?q=*")
    ready(page)
    assert query_of(page) == {"q": QUESTION, "task": "1"}  # the query is in the URL, shareable
    hits = page.locator("li.hit")
    assert hits.count() == 10
    assert page.locator(".snippet mjx-container").count() > 0
    leftovers = page.evaluate(RAW_DOLLARS)
    assert len(leftovers) >= 10 and not [t for t in leftovers if "$" in t]  # the folded answers too
    assert page.evaluate(UNRENDERED) == 0
    assert page.locator(".matched .hl mjx-container, .snippet .hl mjx-container").count() > 0  # matched formulae marked
    first_page = page.locator(".hit-link").all_inner_texts()
    snap(page, shots, "search-task1")
    page.keyboard.press("j")  # hits by keyboard
    assert page.evaluate("document.activeElement.className") == "hit-link"
    page.keyboard.press("n")  # next page
    page.wait_for_url("**page=2*")
    ready(page)
    assert query_of(page)["page"] == "2"
    assert page.locator("ol.hits").get_attribute("start") == "11"
    assert page.locator(".hit-link").all_inner_texts() != first_page
    assert page.locator("a[rel=prev]").count() == 1
    page.goto(site + "/?" + urlparse(page.url).query)  # the shared URL gives the same page
    ready(page)
    assert page.locator("ol.hits").get_attribute("start") == "11"
    page.close()


def test_switch_to_task2_then_formula_page(site, browser, shots):
    page = browser.new_page()
    page.goto(site + "/?q=" + "%24x%5E2%2By%5E2%24")
    ready(page)
    page.check("input[name=task][value='2']")
    page.click("button[type=submit]")
    page.wait_for_url("**task=2*")
    ready(page)
    groups = page.locator("li.group")
    assert groups.count() >= 5
    assert page.locator("li.group .group-formula mjx-container").count() == groups.count()
    assert page.locator("li.group .snippet .hl mjx-container").count() > 0
    assert page.evaluate(UNRENDERED) == 0
    snap(page, shots, "search-task2")
    page.locator("li.group").first.get_by_text("every representation").click()
    page.wait_for_url("**/formula?id=*")
    ready(page)
    table = page.locator("table.reps").inner_text()
    for row in ("prefix", "slt", "opt", "pmathml", "slt_tuples"):
        assert row in table
    assert page.locator("#formula mjx-container").count() == 1
    assert page.locator("ul.instances li").count() >= 1
    snap(page, shots, "formula")
    page.close()


def test_open_a_thread_from_a_hit(site, browser, shots):
    page = browser.new_page()
    page.goto(site + "/?task=1&q=" + "harmonic+series+%24%5Csum_%7Bn%3D1%7D%5E%7B%5Cinfty%7D%5Cfrac%7B1%7D%7Bn%7D%24")
    ready(page)
    href = page.locator(".hit-link").first.get_attribute("href")
    target = href.split("#")[1]
    page.locator(".hit-link").first.click()
    page.wait_for_url("**/thread/*")
    ready(page)
    assert page.locator("article.question").count() == 1 and page.locator("article.answer").count() >= 1
    assert page.evaluate("location.hash") == "#" + target
    assert page.locator(f"article#{target}").count() == 1
    assert page.locator("article .body mjx-container").count() > 5 and page.evaluate(UNRENDERED) == 0
    assert page.locator("#title .hl mjx-container, article .hl mjx-container").count() > 0  # the query's formula marked
    assert page.locator("section.links a").count() >= 1  # duplicates and related threads
    assert "$" not in page.locator("#title").evaluate(
        "el => { const c = el.cloneNode(true); c.querySelectorAll('mjx-container').forEach(k => k.remove()); return c.textContent; }")
    snap(page, shots, "thread")
    page.get_by_text("Back to the results").click()
    page.wait_for_url("**/?q=*")
    assert page.locator("li.hit").count() == 10
    page.close()


def test_task3_answer_and_phone_width(site, browser, shots):
    page = browser.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(site + "/?task=3&q=" + "Why+does+%24%5Csum+1%2Fn%24+diverge%3F")
    ready(page)
    assert len(page.locator("#answer").inner_text()) > 50
    assert page.locator("ol.sources li").count() >= 1
    # readable on a phone: nothing wider than the screen makes the page scroll sideways
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.goto(site + "/?q=prime+numbers+%24p%24")
    ready(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.locator("li.hit").count() == 10
    snap(page, shots, "search-phone")
    page.close()


HARMONIC = "harmonic series diverges $\\sum_{n=1}^{\\infty}\\frac{1}{n}$"


def test_grouped_results_with_details_on_request(site, browser, shots):
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site + "/?" + urlencode({"q": HARMONIC, "task": 1, "page": 2}))
    ready(page)
    assert page.locator("li.hit").count() == 10
    assert " threads" in page.inner_text("#summary") and "page 2 of" in page.inner_text("#summary")
    more = page.locator("li.hit details.more")
    assert more.count() >= 1
    assert not page.locator("li.hit .more-hit").first.is_visible()  # folded until asked for
    label = more.first.locator("summary").inner_text()
    n = int(label.split()[0])
    more.first.locator("summary").click()
    assert page.locator("li.hit details.more").first.locator(".more-hit").count() == min(n, MORE_SHOWN)
    assert page.locator("li.hit details.more[open] .more-hit a").first.is_visible()
    assert page.locator(".research").count() == 0 and page.evaluate(UNRENDERED) == 0
    page.set_viewport_size({"width": 1000, "height": 1300})  # the count and the opened entry in one picture
    page.evaluate("window.scrollTo(0, 0)")
    snap(page, shots, "search-grouped")
    page.set_viewport_size({"width": 1000, "height": 800})
    page.click("#details-toggle")
    page.wait_for_url("**details=1*")
    ready(page)
    assert page.locator("#research code").inner_text().startswith("ours")
    assert page.locator("li.hit > .research").count() == 10
    page.keyboard.press("n")  # the pager keeps the details
    page.wait_for_url("**page=3*")
    assert query_of(page)["details"] == "1"
    assert not errors, errors
    page.close()


def test_a_bare_task2_formula_is_previewed_and_searched_as_one(site, browser):
    page = browser.new_page()
    page.goto(site + "/?task=2")
    ready(page)
    page.fill("#q", "x^2+y^2")
    page.wait_for_selector("#preview mjx-container")
    page.check("input[name=task][value='1']")  # in Task 1 words without dollars are words
    page.wait_for_selector("#preview", state="hidden")
    page.check("input[name=task][value='2']")
    page.wait_for_selector("#preview mjx-container")
    page.fill("#q", "x^2+y^2 [calculus] answers:2")  # the filters are no part of the formula previewed
    page.wait_for_function("document.querySelector('#preview .tex')?.getAttribute('data-latex') === 'x^2+y^2'")
    assert page.locator("#preview .tex").count() == 1
    page.fill("#q", "x^2+y^2")
    page.wait_for_selector("#preview mjx-container")
    page.keyboard.press("/")
    page.keyboard.press("Enter")
    page.wait_for_url("**task=2*")
    ready(page)
    assert page.locator("#as-formula mjx-container").count() == 1
    assert page.locator("li.group .snippet .hl mjx-container").count() > 0
    page.close()


def test_api_page_favicon_and_404_page_in_chromium(site, browser):
    page = browser.new_page()
    errors: list[str] = []
    elsewhere: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: elsewhere.append(r.url) if not r.url.startswith(site) else None)
    page.goto(site + "/")
    ready(page)
    page.click("header.top nav >> text=API")
    page.wait_for_url("**/docs")
    page.wait_for_selector("html[data-api=ready]", timeout=20000)
    paths = page.evaluate("fetch('/openapi.json').then(r => r.json()).then(s => Object.keys(s.paths))")
    shown = page.locator(".opblock-summary-path").all_inner_texts()
    assert sorted(p.replace("\u200b", "") for p in shown) == sorted(paths)
    icon = page.evaluate("fetch(document.querySelector('link[rel=icon]').href).then(r => [r.status, r.headers.get('content-type')])")
    assert icon[0] == 200 and icon[1].startswith("image/svg+xml")
    assert not errors, errors
    assert not elsewhere, elsewhere  # Swagger UI asks nothing of the network beyond this server
    page.goto(site + "/nope")
    assert page.locator("#not-found").inner_text() == "There is no page at /nope."
    page.fill("#q", "prime")
    page.keyboard.press("Enter")
    page.wait_for_url("**/?q=prime")
    assert page.locator("li.hit").count() == 10
    page.close()
