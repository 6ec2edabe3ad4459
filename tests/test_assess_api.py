"""The assessment API in-process: candidates rendered with matched formulae marked (the judged Task 2
instance apart), nothing of a system's answer left active, refusals as one sentence with a 4xx."""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mathsearch.assess import build_pool, classify_runs, create_pool_db
from mathsearch.readers.topics import read_topics
from mathsearch.store import Store
from mathsearch.web.app import create_app


def topic_xml(path: Path, number: str, latex: str, formula_id: str | None = None) -> Path:
    span = escape(f'<span class="math-container" id="q_1">${latex}$</span>')
    extra = f"<Formula_Id>{formula_id}</Formula_Id><Latex>{escape(latex)}</Latex>" if formula_id else ""
    path.write_text(f'<?xml version="1.0"?><Topics><Topic number="{number}">{extra}<Title>About it</Title>'
                    f"<Question>{escape('<p>Why is ')}{span}{escape(' true?</p>')}</Question>"
                    "<Tags>algebra</Tags></Topic></Topics>", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sample_formula(sample_index: Path):
    """An answer formula of the sample of a few symbols, with its post."""
    store = Store.open(sample_index)
    for f in store.iter_formulas(["answer"]):
        if 5 <= len(f.latex) <= 30 and f.visual_id and "\\" in f.latex:
            return f
    raise AssertionError("no answer formula in the sample")


def test_answers_are_shown_in_their_thread_with_the_topics_formulae_marked(sample_index, sample_formula, tmp_path):
    topics = topic_xml(tmp_path / "t.xml", "A.1", sample_formula.latex)
    run = tmp_path / "g-task1-r-auto-both-P.tsv"
    run.write_text(f"A.1\tQ0\t{sample_formula.post_id}\t1\t1.0\tr\n")
    pool = tmp_path / "p.sqlite"
    create_pool_db(pool, build_pool(1, classify_runs([run], 1)), read_topics(topics))
    client = TestClient(create_app(sample_index, pool))
    topic = client.get("/api/assess/topics/A.1", params={"assessor": "ann"}).json()
    assert topic["tags"] == ["algebra"] and 'class="tex"' in topic["question_html"]
    (ref,) = topic["items"]
    assert ref["grade"] is None and ref["kind"] == "answer"
    item = client.get(f"/api/assess/items/{ref['item_id']}").json()
    assert item["matched"] >= 1
    assert f'class="tex hl" data-fid="{sample_formula.formula_id}"' in item["html"]
    assert "The question this answers" in item["html"] and f"/thread/{sample_formula.post_id}" in item["html"]
    saved = client.post("/api/assess/judgements", json={"item_id": ref["item_id"], "assessor": "ann", "grade": 2})
    assert saved.status_code == 200 and saved.json()["topic"]["judged"] == 1
    assert client.get("/api/assess/topics/A.1", params={"assessor": "ann"}).json()["items"][0]["grade"] == 2
    assert client.get("/api/assess/topics/A.1", params={"assessor": "bob"}).json()["items"][0]["grade"] is None
    cleared = client.delete(f"/api/assess/judgements/{ref['item_id']}", params={"assessor": "ann"}).json()
    assert cleared["cleared"] is True and cleared["topic"]["judged"] == 0
    missing = client.get("/api/assess/topics/A.9")
    assert missing.status_code == 404 and missing.json()["detail"] == "topic A.9 is not in the pool"
    assert client.post("/api/assess/judgements", json={"item_id": 99, "assessor": "ann", "grade": 1}).status_code == 404
    assert client.post("/api/assess/judgements", json={"item_id": 1, "assessor": "ann", "grade": 4}).status_code == 422
    for grade in (True, "2"):  # JSON true was saved as the grade 1 (2.0 is the number 2, as JSON Schema says)
        said = client.post("/api/assess/judgements", json={"item_id": 1, "assessor": "ann", "grade": grade})
        assert said.status_code == 422 and "grade" in said.text, grade
    assert client.post("/api/assess/judgements", json={"item_id": True, "assessor": "ann", "grade": 1}).status_code == 422
    page = client.get("/assess")
    assert page.status_code == 200 and "/static/assess.js" in page.text and "<script>" not in page.text


def test_the_judged_formula_instance_is_marked_apart_from_its_look_alikes(sample_index, sample_formula, tmp_path):
    topics = topic_xml(tmp_path / "t.xml", "B.1", sample_formula.latex, formula_id="q_1")
    f = sample_formula
    run = tmp_path / "g-task2-r-auto-math-P.tsv"
    run.write_text(f"B.1\t{f.formula_id}\t{f.post_id}\t1\t1.0\tr\n")
    pool = tmp_path / "p.sqlite"
    create_pool_db(pool, build_pool(2, classify_runs([run], 2), visual_ids=Store.open(sample_index).visual_ids),
                   read_topics(topics))
    client = TestClient(create_app(sample_index, pool))
    topic = client.get("/api/assess/topics/B.1").json()
    assert 'class="tex hl" data-fid="q_1"' in topic["question_html"]  # the query formula
    assert topic["items"][0]["group"] == f.visual_id
    item = client.get(f"/api/assess/items/{topic['items'][0]['item_id']}").json()
    assert f'class="tex hl target" data-fid="{f.formula_id}"' in item["html"]
    assert item["html"].count(" target\"") == 1
    state = client.get("/api/assess/state").json()
    assert state["task"] == 2 and state["grades"]["formula"][0]["definition"].startswith("Just as good as")
    assert [g["code"] for g in state["grades"]["formula"]] == [3, 2, 1, 0, 5, 6]


def test_a_systems_answer_is_text_never_markup(sample_index, tmp_path):
    run = tmp_path / "g-task3-r-auto-both-generate-P.tsv"
    run.write_text('A.1\t1\t1.0\tr\t<img src=x onerror=alert(1)>\t"<script>alert(1)</script> so $x^2$ <b>bold</b>"\n')
    pool = tmp_path / "p.sqlite"
    create_pool_db(pool, build_pool(3, classify_runs([run], 3)))
    client = TestClient(create_app(sample_index, pool))
    (ref,) = client.get("/api/assess/topics/A.1").json()["items"]
    html = client.get(f"/api/assess/items/{ref['item_id']}").json()["html"]
    assert "<script" not in html and "<b>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x" in html
    assert '<span class="tex">x^2</span>' in html
