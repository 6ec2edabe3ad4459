"""The scale generator (bench/make_collection.py): a small generated collection must be a
consistent ARQMath collection that our readers take as they take the real sample."""

from __future__ import annotations

import csv
import html
import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import COLLECTION, REPO

from mathsearch.readers.arqmath import iter_comments, iter_post_links, iter_posts
from mathsearch.readers.formula_tsv import iter_formula_tsv
from mathsearch.readers.html import body_text, plain_text
from mathsearch.records import PostType, ReadReport

SCRIPT = REPO / "bench" / "make_collection.py"
FILES = (
    "Posts.V1.3.xml",
    "Comments.V1.3.xml",
    "PostLinks.V1.3.xml",
    "formulas/latex_representation_v3.tsv",
)


def generate(out: Path, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), "--sample", str(COLLECTION), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("gen") / "c300"
    # Small chunks and two workers: ids must still run on across chunks.
    return out, generate(out, "--answers", "300", "--seed", "7", "--chunk", "40", "--workers", "2")


def test_counts_match_the_summary_and_threads_are_consistent(small):
    out, summary = small
    reports = {name: ReadReport() for name in FILES}
    posts = list(iter_posts(out / FILES[0], reports[FILES[0]]))
    comments = list(iter_comments(out / FILES[1], reports[FILES[1]]))
    links = list(iter_post_links(out / FILES[2], reports[FILES[2]]))
    formulas = list(iter_formula_tsv(out / FILES[3], reports[FILES[3]]))
    assert all(r.skipped == {} for r in reports.values())
    questions = {p.post_id: p for p in posts if p.post_type == PostType.QUESTION}
    answers = [p for p in posts if p.post_type == PostType.ANSWER]
    assert len(answers) == summary["answers"] == 300
    assert len(questions) == summary["questions"] == round(300 / 1.4)
    assert len(comments) == summary["comments"] > 0
    assert len(links) == summary["post_links"] > 0
    assert len(formulas) == summary["formulas"] == sum(summary["formulas_by_type"].values())
    # Ids unique and rows sorted by id, as in the official files.
    for ids in (
        [p.post_id for p in posts],
        [c.comment_id for c in comments],
        [int(f.formula_id) for f in formulas],
    ):
        assert ids == sorted(set(ids))
    # Answers point to generated questions whose AnswerCount is right; comments and links too.
    per_question = Counter(a.parent_id for a in answers)
    assert set(per_question) <= set(questions)
    assert all(q.answer_count == per_question.get(qid, 0) for qid, q in questions.items())
    post_ids = {p.post_id for p in posts}
    assert all(c.post_id in post_ids for c in comments)
    assert all(lk.post_id in questions and lk.related_post_id in questions for lk in links)
    assert all(q.title and q.tags for q in questions.values())
    # ARQMath ratios: ~20 formulae per answer over all post and comment types.
    assert 15 <= summary["formulas_per_answer"] <= 25


def test_every_formula_span_has_its_tsv_row(small):
    out, _summary = small
    rows = {f.formula_id: f for f in iter_formula_tsv(out / FILES[3])}
    seen: Counter[str] = Counter()
    posts = {p.post_id: p for p in iter_posts(out / FILES[0])}

    def check(found, post_id: int, kind: str) -> None:
        post = posts[post_id]
        for f in found:
            row = rows[f.formula_id]
            assert (row.formula, row.post_id, row.thread_id, row.kind.value) == (
                f.latex,
                post_id,
                post.thread_id,
                kind,
            )
            seen[f.formula_id] += 1

    for p in posts.values():
        check(body_text(p.body)[1], p.post_id, "question" if p.post_type == PostType.QUESTION else "answer")
        if p.title is not None:
            check(plain_text(p.title)[1], p.post_id, "title")
    for c in iter_comments(out / FILES[1]):
        check(plain_text(c.text)[1], c.post_id, "comment")
    assert set(seen) == set(rows) and max(seen.values()) == 1
    # Identical LaTeX => same visual id; perturbed formulae share the collection with verbatim ones.
    vid_of: dict[str, set] = {}
    for r in rows.values():
        vid_of.setdefault(r.formula, set()).add(r.visual_id)
    assert all(len(v) == 1 for v in vid_of.values())
    sample_latex = {f.formula for f in iter_formula_tsv(COLLECTION / FILES[3])}
    new = sum(r.formula not in sample_latex for r in rows.values())
    assert 0.2 * len(rows) < new < 0.8 * len(rows)
    distinct = len({r.visual_id for r in rows.values()})
    assert distinct < 0.8 * len(rows)


def test_files_are_written_like_the_sample(small):
    out, _summary = small
    for name in FILES[:3]:
        lines = (out / name).read_text(encoding="utf-8").split("\n")
        assert lines[0] == '<?xml version="1.0" encoding="utf-8"?>'
        assert lines[-1] == "" and lines[-2].startswith("</")
        assert all(line.startswith("   <row ") and line.endswith("/>") for line in lines[2:-2])
    raw = (out / FILES[3]).read_bytes()
    assert raw.startswith(b"id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n") and b"\r" not in raw
    text = raw.decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t"))
    again = io.StringIO()
    csv.writer(again, delimiter="\t", lineterminator="\n").writerows(rows)
    assert again.getvalue() == text  # csv QUOTE_MINIMAL, LF


def test_output_is_determined_by_the_seed(small, tmp_path):
    out, summary = small
    same = generate(tmp_path / "same", "--answers", "300", "--seed", "7", "--chunk", "40", "--workers", "1")
    assert {k: v for k, v in same.items() if k not in ("out", "seconds")} == {
        k: v for k, v in summary.items() if k not in ("out", "seconds")
    }
    for name in FILES:
        assert (tmp_path / "same" / name).read_bytes() == (out / name).read_bytes(), name
    generate(tmp_path / "other", "--answers", "300", "--seed", "8", "--chunk", "40")
    assert (tmp_path / "other" / FILES[0]).read_bytes() != (out / FILES[0]).read_bytes()


def test_raw_dump_has_dollar_math_and_dump_attributes(tmp_path):
    summary = generate(tmp_path / "raw", "--answers", "120", "--seed", "3", "--raw-dump")
    report = ReadReport()
    posts = list(iter_posts(tmp_path / "raw" / "Posts.xml", report))
    assert report.skipped == {} and len(posts) == summary["questions"] + summary["answers"]
    assert all(p.creation_date and p.score is not None for p in posts)
    bodies = " ".join(p.body for p in posts)
    assert "math-container" not in bodies  # no spans at all, as in a real dump
    assert bodies.count("$") >= 2 * summary["formulas_by_type"]["answer"]
    comments = list(iter_comments(tmp_path / "raw" / "Comments.xml"))
    assert len(comments) == summary["comments"] and all(c.creation_date for c in comments)
    assert len(list(iter_post_links(tmp_path / "raw" / "PostLinks.xml"))) == summary["post_links"]
    assert not (tmp_path / "raw" / "formulas").exists()


def test_bad_arguments_exit_non_zero_without_traceback(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--answers", "0", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and "--answers" in done.stderr


def test_slt_file_matches_the_latex_file(tmp_path):
    generate(tmp_path / "slt", "--answers", "60", "--seed", "5", "--slt")
    latex = list(iter_formula_tsv(tmp_path / "slt" / FILES[3]))
    slt = list(iter_formula_tsv(tmp_path / "slt" / "formulas" / "slt_representation_v3.tsv"))
    assert [(f.formula_id, f.post_id, f.visual_id) for f in slt] == [
        (f.formula_id, f.post_id, f.visual_id) for f in latex
    ]
    with_mathml = [(lt, st) for lt, st in zip(latex, slt, strict=True) if st.formula]
    assert len(with_mathml) > 0.9 * len(latex)
    # Sample formulae keep a MathML of the sample; perturbed ones get the renamed MathML,
    # whose alttext is their LaTeX.
    sample_mathml: dict[str, set[str]] = {}
    sample_latex = {f.formula_id: f.formula for f in iter_formula_tsv(COLLECTION / FILES[3])}
    for f in iter_formula_tsv(COLLECTION / "formulas" / "slt_representation_v3.tsv"):
        sample_mathml.setdefault(sample_latex[f.formula_id], set()).add(f.formula)
    perturbed = 0
    for lt, st in with_mathml:
        assert st.formula.startswith("<math") and st.formula.endswith("</math>")
        if lt.formula in sample_mathml:
            assert st.formula in sample_mathml[lt.formula]
            continue
        perturbed += 1
        alt = st.formula.split('alttext="', 1)[1].split('"', 1)[0]
        assert html.unescape(alt) == lt.formula
    assert perturbed > 0.2 * len(with_mathml)
