"""The collection store: exact counts on the sample, raw dumps, bad input, atomic rebuilds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import COLLECTION
from typer.testing import CliRunner

from mathsearch.building import build_index
from mathsearch.cli import app
from mathsearch.errors import InputError
from mathsearch.store import Store
from mathsearch.text.dollar_math import find_math

runner = CliRunner()


def test_sample_indexes_with_exact_counts(tmp_path):
    result = runner.invoke(app, ["index", str(COLLECTION), "--index", str(tmp_path / "idx"), "--json", "--store-only"])
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert {k: counts[k] for k in ("questions", "answers", "comments", "links", "formulas", "skipped")} == {
        "questions": 2769, "answers": 3395, "comments": 16712, "links": 6779, "formulas": 76968, "skipped": {},
    }
    assert counts["notes"] == []  # every file there, every answer's question too


def test_store_contents(sample_index):
    with Store.open(sample_index) as store:
        q = store.post(255)
        assert q.post_type == 1 and q.thread_id == 255
        assert q.title == "Why does the series $\\sum_{n=1}^{\\infty}\\frac{1}{n}$ not converge?"
        assert "harmonic-numbers" in q.tags and q.score is None
        assert "$\\sum_{n=1}^{\\infty}\\frac{1}{n}=\\frac{1}{1}+\\frac{1}{2}+\\frac{1}{3}+\\cdots$" in q.text
        assert "<span" not in q.text and "&lt;" not in q.text
        f = store.formula(1552)
        assert (f.post_id, f.thread_id, f.kind, f.visual_id) == (9253, 154, "answer", "695948")
        assert store.post_type(320) == 2 and store.post_type(999999999) is None
        assert store.formula_kind("1552") == "answer"
        assert store.visual_ids(["1552", "1553", "nonsense"]) == {"1552": "695948", "1553": "236740"}
        # every comment formula of the 6-column file gets its comment id back from Comments.V1.3.xml
        missing = store.db.execute("SELECT count(*) FROM formulas WHERE kind='comment' AND comment_id IS NULL").fetchone()[0]
        assert missing == 0
        assert len(store.answer_ids()) == 3395
        assert 19108 in store.linked(154)


RAW_POSTS = """<?xml version="1.0" encoding="utf-8"?>
<posts>
  <row Id="1" PostTypeId="1" Score="5" CreationDate="2010-07-20T19:09:27.200" Title="Why is $x^2 \\geq 0$?" Body="&lt;p&gt;Show that $$x^2+y^2 \\ge 0$$ for real \\(x\\), costs \\$5 and \\$6.&lt;/p&gt;&lt;pre&gt;&lt;code&gt;echo $HOME $PATH&lt;/code&gt;&lt;/pre&gt;" Tags="&lt;algebra&gt;" AnswerCount="1" />
  <row Id="2" PostTypeId="2" ParentId="1" Score="3" Body="&lt;p&gt;Because $a&amp;lt;b$ and \\[ \\sum_i a_i \\]&lt;/p&gt;" />
  <row Id="3" PostTypeId="4" Body="a tag wiki" />
  <row Id="4" PostTypeId="2" Body="no parent" />
  <row Id="5" PostTypeId="2" ParentId="1" Body="&lt;p&gt;broken" Score="x" />
  <row Id="6" PostTypeId="2" ParentId="1" Body="&lt;p&gt;unterminated attribute />
  <row Id="7" PostTypeId="2" ParentId="1" Body="&lt;p&gt;fine $y$&lt;/p&gt;" />
</posts>
"""
RAW_COMMENTS = """<?xml version="1.0" encoding="utf-8"?>
<comments>
  <row Id="10" PostId="2" Score="1" Text="Nice, but $b &gt; a$ too" CreationDate="2010-07-20T19:10:00.000" UserId="3" />
</comments>
"""
RAW_LINKS = """<?xml version="1.0" encoding="utf-8"?>
<postlinks>
  <row Id="19" CreationDate="2010-07-21T14:47:33.383" PostId="1" RelatedPostId="99" LinkTypeId="3" />
</postlinks>
"""


def _raw_dump(root: Path) -> Path:
    root.mkdir()
    (root / "Posts.xml").write_text(RAW_POSTS)
    (root / "Comments.xml").write_text(RAW_COMMENTS)
    (root / "PostLinks.xml").write_text(RAW_LINKS)
    return root


def test_batched_id_reads_agree_with_per_post_reads(sample_index):
    from mathsearch.records import LinkType

    with Store.open(sample_index) as store:
        questions = [p.post_id for p in store.iter_posts(1)][:400]
        answers = store.answer_ids_of_threads(questions)
        assert answers == {q: [a.post_id for a in store.answers_of(q)] for q in questions if store.answers_of(q)}
        assert sum(len(v) for v in answers.values()) > 300
        for link_type in (None, LinkType.DUPLICATE):
            linked = store.linked_many(questions, link_type)
            assert linked == {q: sorted(store.linked(q, link_type)) for q in questions if store.linked(q, link_type)}
        assert linked  # some duplicates among them
        # answer ids come from the index alone: no read of the posts' rows (their texts) at query time
        plan = store.db.execute("EXPLAIN QUERY PLAN SELECT thread_id, post_id FROM posts WHERE post_type=2 "
                                "AND thread_id IN (1, 2) ORDER BY thread_id, post_id").fetchall()
        assert "COVERING INDEX posts_thread" in str(plan)


def test_raw_dump_indexes_with_its_formulae(tmp_path):
    counts = build_index(_raw_dump(tmp_path / "dump"), tmp_path / "idx")
    assert (counts.questions, counts.answers, counts.comments, counts.links) == (1, 2, 1, 1)
    # every row is accounted for: 7 posts = 3 stored + tag wiki + no parent + bad score + broken XML
    assert counts.skipped == {
        "Posts.xml: other post type": 1,
        "Posts.xml: answer without ParentId": 1,
        "Posts.xml: post row with a non-numeric field": 1,
        "Posts.xml: malformed XML row": 1,
    }
    assert any("Posts.xml:8" in p for p in counts.problems)  # the broken row, by line
    with Store.open(tmp_path / "idx") as store:
        latex = {f.latex: f for f in store.iter_formulas()}
        assert set(latex) == {"x^2 \\geq 0", "x^2+y^2 \\ge 0", "x", "a<b", "\\sum_i a_i", "y", "b > a"}
        assert latex["x^2 \\geq 0"].kind == "title" and latex["a<b"].kind == "answer"
        assert latex["b > a"].kind == "comment" and latex["b > a"].comment_id == 10 and latex["b > a"].thread_id == 1
        ids = sorted(f.formula_id for f in latex.values())
        assert ids == list(range(1, 8))  # sequential, stable
        q = store.post(1)
        assert q.score == 5 and q.title == "Why is $x^2 \\geq 0$?"
        assert "$5" in q.text and "echo $HOME $PATH" in q.text  # escaped dollars and code are not math
        assert '<span class="math-container" id="' in q.body
    again = build_index(_raw_dump(tmp_path / "dump2"), tmp_path / "idx2")
    with Store.open(tmp_path / "idx2") as a, Store.open(tmp_path / "idx") as b:
        assert [(f.formula_id, f.latex) for f in a.iter_formulas()] == [(f.formula_id, f.latex) for f in b.iter_formulas()]
        # The build's plain rows, a few at a time, are the records' fields in the same order.
        rows = [row for batch in a.formula_rows(batch=3) for row in batch]
        assert rows == [(f.formula_id, f.post_id, f.thread_id, f.kind, f.comment_id, f.visual_id, f.latex)
                        for f in a.iter_formulas()]
        assert [r[0] for batch in a.formula_rows(['comment']) for r in batch] == [latex['b > a'].formula_id]
        assert [len(batch) for batch in a.formula_rows(batch=3)] == [3, 3, 1]
    assert again.formulas == 7


def test_a_dump_without_comments_and_with_answers_whose_question_is_absent_says_so(tmp_path):
    root = tmp_path / "dump"
    root.mkdir()
    (root / "Posts.xml").write_text(RAW_POSTS.replace('<row Id="7" PostTypeId="2" ParentId="1"',
                                                      '<row Id="7" PostTypeId="2" ParentId="99"'))
    counts = build_index(root, tmp_path / "idx")
    assert counts.answers == 2  # the answer of the absent question 99 is kept: a slice of a dump keeps them
    assert counts.notes == [f"no Comments file in {root}: no comments indexed",
                            f"no PostLinks file in {root}: no links indexed",
                            "1 answer whose question is not in the collection (or was skipped): indexed, "
                            "searchable, with no thread title"]


def test_find_math_delimiters():
    found = [m[2] for m in find_math("a $x$ b $$y$$ \\(z\\) \\[w\\] \\$ no <code>$c$</code>", is_html=True)]
    assert found == ["x", "y", "z", "w"]
    assert [m[2] for m in find_math("cost \\$3 or `$x$` but $k$", is_html=False)] == ["k"]


def test_not_xml_missing_and_wrong_folder(tmp_path):
    (tmp_path / "notxml").mkdir()
    (tmp_path / "notxml" / "Posts.xml").write_text("Id,Body\n1,hello\n")
    for args, fragment in [
        ([str(tmp_path / "notxml")], "is not an XML file"),
        ([str(tmp_path / "missing")], "does not exist"),
        ([str(tmp_path)], "holds neither an ARQMath collection"),
    ]:
        result = runner.invoke(app, ["index", *args, "--index", str(tmp_path / "idx")])
        assert result.exit_code == 2
        assert fragment in result.output
        assert "Traceback" not in result.output
    with pytest.raises(InputError):
        Store.open(tmp_path)


def test_bad_rows_give_exit_code_1_and_are_listed(tmp_path):
    result = runner.invoke(app, ["index", str(_raw_dump(tmp_path / "dump")), "--index", str(tmp_path / "idx")])
    assert result.exit_code == 1
    assert "malformed XML row" in result.output and "Posts.xml:8" in result.output


def test_interrupted_build_keeps_the_previous_index(tmp_path, monkeypatch):
    dump = _raw_dump(tmp_path / "dump")
    build_index(dump, tmp_path / "idx")
    import mathsearch.building.build as indexing

    def explode(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(indexing, "build_store", explode)
    with pytest.raises(KeyboardInterrupt):
        build_index(dump, tmp_path / "idx")
    with Store.open(tmp_path / "idx") as store:
        assert store.counts()["answers"] == 2
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_bad_file_read_by_the_second_process_stops_with_one_sentence(tmp_path):
    root = tmp_path / "coll"
    (root / "formulas").mkdir(parents=True)
    lines = (COLLECTION / "Posts.V1.3.xml").read_text().splitlines()[:40]
    (root / "Posts.V1.3.xml").write_text("\n".join(lines) + "\n</posts>\n")
    (root / "Comments.V1.3.xml").write_text("not xml at all\n")
    tsv = (COLLECTION / "formulas" / "latex_representation_v3.tsv").read_text().splitlines()[:50]
    (root / "formulas" / "latex_representation_v3.tsv").write_text("\n".join(tsv) + "\n")
    result = runner.invoke(app, ["index", str(root), "--index", str(tmp_path / "idx"), "--store-only"])
    assert result.exit_code == 2
    assert "Comments.V1.3.xml is not an XML file" in result.output
    assert not (tmp_path / "idx").exists()


def _boom_step(building, progress):
    raise InputError("formula step: the store is unreadable")


def _counting_step(building, progress):
    if progress:
        progress("child stage", 1, 1)
    return {"child_pid": os.getpid(), "saw_store": (building / "store.sqlite").is_file()}


def test_index_steps_run_side_by_side_and_report_back(tmp_path, monkeypatch):
    import mathsearch.building.build as indexing

    steps = [indexing.INDEX_STEPS[0], ("child", _counting_step)]
    monkeypatch.setattr(indexing, "INDEX_STEPS", steps)
    seen = []
    counts = build_index(_raw_dump(tmp_path / "dump"), tmp_path / "idx", lambda *a: seen.append(a))
    assert counts.indexes["child_pid"] != os.getpid()  # it ran in its own process
    assert counts.indexes["saw_store"] is True and "child_seconds" in counts.indexes
    assert counts.indexes["text_answers"] == 2 and "text_seconds" in counts.indexes
    assert ("child stage", 1, 1) in seen  # its progress reached the caller


def test_a_failing_side_step_fails_the_build_and_keeps_the_old_index(tmp_path, monkeypatch):
    dump = _raw_dump(tmp_path / "dump")
    build_index(dump, tmp_path / "idx")
    import mathsearch.building.build as indexing

    monkeypatch.setattr(indexing, "INDEX_STEPS", [indexing.INDEX_STEPS[0], ("formula", _boom_step)])
    with pytest.raises(InputError, match="the store is unreadable"):
        build_index(dump, tmp_path / "idx")
    with Store.open(tmp_path / "idx") as store:
        assert store.counts()["answers"] == 2
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
