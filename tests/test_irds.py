"""ARQMath in ir_datasets (mathsearch.irds): the arqmath/... datasets of the sample yield what the
project's readers yield, and a wrong name or a missing folder is one clear line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ir_datasets  # the pyterrier extra (scripts/setup.sh installs it)
import pytest
from conftest import COLLECTION, DATA, QRELS, REPO, TOPICS

import mathsearch.irds  # noqa: F401 - registers arqmath/...
from mathsearch.irds import ArqmathDataError, build, names
from mathsearch.readers.arqmath import iter_comments, iter_posts
from mathsearch.readers.collection import detect_collection
from mathsearch.readers.formula_tsv import iter_formula_tsv
from mathsearch.readers.qrels import read_qrels
from mathsearch.readers.topics import read_topics


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARQMATH_HOME", str(DATA))


def _posts(kind: int) -> list:
    files = detect_collection(COLLECTION)
    return [p for p in iter_posts(files.posts) if int(p.post_type) == kind]


def test_task1_2020_yields_what_the_readers_yield() -> None:
    ds = ir_datasets.load("arqmath/task1/2020")
    answers = _posts(2)
    docs = list(ds.docs_iter())
    assert len(answers) == 3395
    assert ds.docs_count() == len(docs) == len(answers)
    assert [d.doc_id for d in docs] == [str(p.post_id) for p in answers]
    assert docs[0].thread_id == str(answers[0].thread_id) and docs[0].body == answers[0].body
    assert "$" in "".join(d.text for d in docs[:50]), "answer text keeps formulae as $LaTeX$"

    topics = read_topics(TOPICS / "task1-2020.xml", TOPICS / "formulas" / "formulas-2020-latex.tsv")
    queries = list(ds.queries_iter())
    assert len(queries) == len(topics) == ds.queries_count() == 98
    assert [q.query_id for q in queries] == [t.topic_id for t in topics]
    assert queries[0].tags == topics[0].tags
    assert queries[0].formula_ids == tuple(f.formula_id for f in topics[0].formulas)

    judged = read_qrels(QRELS / "task1-2020.tsv")
    qrels = list(ds.qrels_iter())
    assert len(qrels) == len(judged) == ds.qrels_count() == 39124
    assert [(q.query_id, q.doc_id, q.relevance) for q in qrels] == [(j.query_id, j.doc_id, j.relevance) for j in judged]
    assert ds.qrels_defs()[2] == "medium"


def test_queries_give_the_text_a_system_is_given() -> None:
    """title/question are the topic as written (plain text, $LaTeX$), as SearchQuery.from_topic takes
    it before a system reads its plain-words maths (retrievers read it: test_pyterrier)."""
    from mathsearch.systems import SearchQuery

    topics = read_topics(TOPICS / "task2-2021.xml", TOPICS / "formulas" / "formulas-2021-latex.tsv")
    queries = list(ir_datasets.load("arqmath/task2/2021").queries_iter())
    assert len(queries) == len(topics) == 100
    for q, t in zip(queries, topics, strict=True):
        sq = SearchQuery.from_topic(t, plain_math=False)
        assert (q.query_id, q.title, q.question, q.tags, q.formula_id, q.latex) == (
            sq.query_id, sq.title, sq.question, sq.tags, sq.formula_id, sq.formula_latex)
        assert q.query == q.latex  # Task 2: the formula searched for


def test_collections_count_as_the_readers() -> None:
    files = detect_collection(COLLECTION)
    questions = list(ir_datasets.load("arqmath/questions").docs_iter())
    assert len(questions) == len(_posts(1)) == 2769
    assert questions[0].title and questions[0].tags
    comments = list(ir_datasets.load("arqmath/comments").docs_iter())
    assert len(comments) == sum(1 for _ in iter_comments(files.comments)) == 16712
    formulae = ir_datasets.load("arqmath/task2/2020").docs_iter()
    latex = iter_formula_tsv(files.formulas_tsv)
    slt = iter_formula_tsv(files.formulas_tsv.with_name("slt_representation_v3.tsv"))
    n = 0
    for f, a, b in zip(formulae, latex, slt, strict=True):
        assert (f.doc_id, f.latex, f.slt, f.visual_id) == (a.formula_id, a.formula, b.formula, a.visual_id or "")
        n += 1
    assert n == 76968
    assert ir_datasets.load("arqmath").docs_count() == 3395


def test_2022_has_topics_and_no_judgements() -> None:
    for name in ("arqmath/task1/2022", "arqmath/task2/2022", "arqmath/task3/2022"):
        ds = ir_datasets.load(name)
        assert ds.has_queries() and not ds.has_qrels(), name
        assert sum(1 for _ in ds.queries_iter()) == 100
    assert "arqmath/task3/2022" in names() and "arqmath/task3/2020" not in names()


@pytest.mark.parametrize(("name", "message"), [
    ("arqmath/task1/2019", "arqmath/task1/2019: ARQMath Task 1 has no year '2019' (its years: 2020, 2021, 2022)"),
    ("arqmath/task3/2021", "arqmath/task3/2021: ARQMath Task 3 has no year '2021' (its years: 2022)"),
    ("arqmath/task4/2020", "arqmath/task4/2020: no such ARQMath dataset"),
])
def test_unknown_names_are_one_line(name: str, message: str) -> None:
    with pytest.raises(ArqmathDataError) as err:
        ir_datasets.load(name)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert isinstance(err.value, KeyError)  # as ir_datasets' own unknown names


def test_missing_files_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARQMATH_HOME")
    with pytest.raises(ArqmathDataError, match="ARQMATH_HOME is not set"):
        build("arqmath/task1/2020")
    monkeypatch.setenv("ARQMATH_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(ArqmathDataError, match=r"ARQMATH_HOME=.*nowhere: no such folder"):
        build("arqmath/task1/2020")
    monkeypatch.setenv("ARQMATH_HOME", str(tmp_path))
    with pytest.raises(ArqmathDataError, match=r"arqmath/task1/2021: the topic file .*task1-2021.xml is missing"):
        build("arqmath/task1/2021")
    with pytest.raises(ArqmathDataError, match=r"arqmath/answers: the collection folder .*collection is missing"):
        build("arqmath/answers")
    (tmp_path / "collection").mkdir()
    with pytest.raises(ArqmathDataError, match=r"arqmath/formulae: .*neither an ARQMath collection"):
        build("arqmath/formulae")


def test_command_line_says_one_line_without_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "ARQMATH_HOME": str(tmp_path / "absent")}
    done = subprocess.run([sys.executable, "-m", "mathsearch.irds", "arqmath/task1/2020", "arqmath/task1/2019"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines == [f"error: arqmath/task1/2020: ARQMATH_HOME={tmp_path / 'absent'}: no such folder",
                     "error: arqmath/task1/2019: ARQMath Task 1 has no year '2019' (its years: 2020, 2021, 2022)"]
    assert "Traceback" not in done.stderr and done.stdout == ""
