"""Issue 42 on the page in a real browser (Debian's Chromium through Playwright, the sample index):
maths typed plainly shows "searched as" typeset, a [tag] filter narrows the results, a query
variable search lists only matching formulae, and a query with no close match shows the notice
before the nearest results."""

from __future__ import annotations

from urllib.parse import urlencode

from mathsearch.searcher import Searcher
from mathsearch.systems.closeness import NO_CLOSE_MATCH


def open_search(browser, site, **params):
    page = browser.new_page()
    page.goto(site + "/?" + urlencode(params))
    page.wait_for_selector("html[data-math=ready]", timeout=15000)
    return page


def test_plain_maths_is_searched_as_typeset_formulae(browser, site):
    page = open_search(browser, site, q="prove sqrt 2 irrational")
    line = page.locator("#searched-as")
    assert line.count() == 1 and line.locator("mjx-container").count() == 1
    assert page.locator(".hit").count() > 0 or page.locator("ol.hits li").count() > 0


def test_a_tag_filter_narrows_the_results(browser, site, sample_index):
    wide = open_search(browser, site, q="harmonic series diverges").locator("#summary").inner_text()
    page = open_search(browser, site, q="harmonic series diverges [calculus]")
    narrow = page.locator("#summary").inner_text()
    count = int(narrow.split()[0].replace(",", "").rstrip("+"))
    assert count < int(wide.split()[0].replace(",", "").rstrip("+"))
    links = page.locator("ol.hits a.hit-link").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    ids = [int(h.split("/thread/")[1].split("?")[0].split("#")[0]) for h in links if "/thread/" in h]
    facts = Searcher(sample_index).ctx.store.filter_facts(ids)
    assert ids and all("calculus" in facts[i][2] for i in ids)
    unknown = open_search(browser, site, q="harmonic series [no-such-tag-here]")
    assert "No thread has the tag [no-such-tag-here]" in unknown.locator(".notice").inner_text()


def test_query_variables_list_only_matching_formulae(browser, site):
    page = open_search(browser, site, q="?a^2+?b^2", task=2)
    assert page.locator(".notice").count() == 0
    assert page.locator("#summary").inner_text().split()[0] != "No"


def test_no_close_match_is_said_before_the_nearest_results(browser, site):
    page = open_search(browser, site, q="quaternion rotation gimbal lock")
    notice = page.locator(".notice")  # the words the sample lacks, then how close the best hit is
    assert notice.all_inner_texts() == ['No post of this collection holds "gimbal" or "lock".', NO_CLOSE_MATCH]
    order = page.evaluate("""() => { const n = document.querySelector('.notice'), s = document.querySelector('#summary');
        return !!(n.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_FOLLOWING); }""")
    assert order
    answer = open_search(browser, site, q="quaternion rotation gimbal lock", task=3)
    assert NO_CLOSE_MATCH in answer.locator(".notice").all_inner_texts()
    assert "No answer" in answer.locator("#answer").inner_text()


def test_query_variables_box_their_bound_parts(browser, site):
    """The parts a query variable bound are boxed in blue in the typeset hits (highlight.BOUND)."""
    from mathsearch.formula.highlight import BOUND

    page = open_search(browser, site, q="?a^2+?b^2", task=2)
    colour = BOUND.split("[")[1].split(",")[0]  # "#c8e6ff"
    rgb = "rgb({}, {}, {})".format(*(int(colour[i:i + 2], 16) for i in (1, 3, 5)))
    boxed = page.evaluate("""(rgb) => [...document.querySelectorAll('mjx-container *')]
        .filter(e => getComputedStyle(e).backgroundColor === rgb).length""", rgb)
    assert boxed >= 2  # ?a and ?b each bound in the first hits
