"""The assessment page in headless Chromium, driven by the keyboard only: judge, reload (nothing lost),
switch assessor, export qrels that `mathsearch eval` reads; two browsers judging at once lose nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_support import cli

from mathsearch.assess import AssessDB
from mathsearch.web.app import create_app

sys.path.insert(0, str(Path(__file__).parent))
from web_support import CHROMIUM, CHROMIUM_FLAGS, chromium, serve, topics_file  # noqa: E402

TOPICS = ("A.201", "A.203")


@pytest.fixture(scope="module")
def pooled(sample_index: Path, data_dir: Path, tmp_path_factory) -> dict[str, Path]:
    """A Task 1 pool of two 2021 topics from runs of our systems (bm25-answer primary, first-hit Task 3)."""
    d = tmp_path_factory.mktemp("assess-page")
    topics = topics_file(data_dir, d, TOPICS)
    runs = {"t1": d / "mathsearch-task1-bm25_answer-auto-both-P.tsv",
            "t3": d / "mathsearch-task3-first_hit-auto-both-extract-A.tsv"}
    for task, system, out in ((1, "bm25-answer", runs["t1"]), (3, "first-hit", runs["t3"])):
        result = cli("run", "--index", sample_index, "--task", task, "--system", system, "--topics", topics, "--out", out)
        assert result.exit_code == 0, result.output
    pool = d / "pool.sqlite"
    result = cli("pool", "--task", 1, runs["t1"], runs["t3"], "--depth", 6, "--topics", topics, "--out", pool,
                 "--overlap-topics", "A.201", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["items"] >= 12
    return {"pool": pool, "topics": topics, **runs}


def wait_ready(page, saves: int | None = None) -> None:
    if saves is not None:
        page.wait_for_selector(f"#assess[data-saves='{saves}']", timeout=30_000)
    page.wait_for_selector("#assess[data-state='ready'][data-pending='0']", timeout=30_000)


def test_keyboard_judging_reload_switch_and_export(sample_index, pooled, tmp_path):
    pool = pooled["pool"]
    with AssessDB(pool) as db:
        first = [i.item_id for i in db.items("A.201")]
    with serve(create_app(sample_index, pool)) as base, chromium(viewport={"width": 1300, "height": 900}) as ctx:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base + "/assess")
        page.wait_for_selector("#assessor-name:focus")
        page.keyboard.type("ann")
        page.keyboard.press("Enter")
        page.wait_for_selector("#assess[data-state='ready']")
        assert page.get_attribute("#assess", "data-item") == str(first[0])
        assert page.is_visible("#topic-overlap")  # A.201 is in the shared overlap set
        assert page.locator("#topic-question mjx-container").count() >= 1  # the topic's formulae typeset
        # Keys only: High, Not relevant, back, Medium (a change of mind), forward, system failure.
        for key in ("3", "0", "k", "2", "5"):
            page.keyboard.press(key)
        wait_ready(page, saves=4)
        assert page.get_attribute("#assess", "data-item") == str(first[3])
        assert page.url.endswith("#A.201/4")
        with AssessDB(pool) as db:
            assert {j.item_id: j.grade for j in db.judgements("ann")} == {first[0]: 3, first[1]: 2, first[2]: 5}
        # Reload: the page resumes at the same item and shows the grades given.
        page.reload()
        wait_ready(page)
        assert page.get_attribute("#assess", "data-item") == str(first[3])
        assert page.get_attribute("#progress-topic", "data-judged") == "3"
        page.keyboard.press("ArrowLeft")
        wait_ready(page)
        assert page.get_attribute("#assess", "data-item") == str(first[2])
        assert page.get_attribute("#grade-buttons [data-grade='5']", "aria-pressed") == "true"
        assert page.get_attribute("#grade-buttons [data-grade='3']", "aria-pressed") == "false"
        # Switch assessor: bob starts on the first item he has not judged; ann's grades stay hers.
        page.keyboard.press("a")
        page.wait_for_selector("#assessor-name:focus")
        page.keyboard.type("bob")
        page.keyboard.press("Enter")
        wait_ready(page)
        assert page.get_attribute("#assess", "data-item") == str(first[0])
        assert page.inner_text("#who") == "bob"
        for key in ("1", "1", "6"):
            page.keyboard.press(key)
        wait_ready(page, saves=3)
        assert page.get_attribute("#progress-topic", "data-judged") == "3"
        assert not errors
    with AssessDB(pool) as db:
        assert {j.item_id: j.grade for j in db.judgements("bob")} == {first[0]: 1, first[1]: 1, first[2]: 6}
        assert {j.item_id: j.grade for j in db.judgements("ann")} == {first[0]: 3, first[1]: 2, first[2]: 5}
    out = tmp_path / "qrels"
    result = cli("qrels", "export", pool, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["by_assessor"] == {"ann": 3}  # ann judged A.201 first
    result = cli("eval", "--task", 1, "--qrels", out / "qrels-task1.tsv", pooled["t1"], "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)[pooled["t1"].name]
    assert scores["topics"] == 1 and 0.0 < scores["nDCG'"] <= 1.0  # a High answer among the judged ones
    result = cli("qrels", "agreement", pool, "--json")
    pair = json.loads(result.stdout)["pairs"][0]
    assert pair["assessors"] == ["ann", "bob"] and pair["items"] == 2  # 5 and 6 are no relevance degree


def test_two_browsers_judging_at_once_lose_no_judgement(sample_index, pooled):
    pool = pooled["pool"]
    with AssessDB(pool) as db:
        items = [i.item_id for i in db.items("A.203")]
    keys = {"cy": "321032", "dee": "012301"}
    from playwright.sync_api import sync_playwright

    with serve(create_app(sample_index, pool)) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_FLAGS))
        pages = {}
        for name in keys:  # two browser sessions: separate cookies and storage
            page = browser.new_context().new_page()
            page.goto(f"{base}/assess?assessor={name}#A.203/1")
            wait_ready(page)
            assert page.get_attribute("#assess", "data-item") == str(items[0])
            pages[name] = page
        for a, b in zip(keys["cy"], keys["dee"], strict=True):  # interleaved, without waiting for the saves
            pages["cy"].keyboard.press(a)
            pages["dee"].keyboard.press(b)
        for name, page in pages.items():
            wait_ready(page, saves=len(keys[name]))
        browser.close()
    with AssessDB(pool) as db:
        for name, grades in keys.items():
            assert {j.item_id: j.grade for j in db.judgements(name)} == {
                item: int(g) for item, g in zip(items, grades, strict=False)}
