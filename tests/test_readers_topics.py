"""Topic files of all years and tasks, with their formulae."""

from __future__ import annotations

import pytest
from conftest import TOPICS

from mathsearch.errors import InputError
from mathsearch.readers.formula_tsv import read_topic_formulas
from mathsearch.readers.topics import read_topics
from mathsearch.records import FormulaKind

EXPECTED = {
    ("task1", 2020): 98, ("task1", 2021): 100, ("task1", 2022): 100,
    ("task2", 2020): 85, ("task2", 2021): 100, ("task2", 2022): 100,
}


@pytest.mark.parametrize(("task", "year"), sorted(EXPECTED))
def test_every_topic_file_reads(task, year):
    topics = read_topics(TOPICS / f"{task}-{year}.xml", TOPICS / "formulas" / f"formulas-{year}-latex.tsv")
    assert len(topics) == EXPECTED[(task, year)]
    assert len({t.topic_id for t in topics}) == len(topics)
    prefix = "A." if task == "task1" else "B."
    assert all(t.topic_id.startswith(prefix) and t.title and t.tags for t in topics)
    assert all(t.formulas for t in topics)
    if task == "task2":
        for t in topics:
            q = t.query_formula
            assert q is not None and t.formula_id and t.latex
            assert q.formula_id == t.formula_id


def test_topic_formulas_have_ids_latex_and_kind():
    topics = {t.topic_id: t for t in read_topics(TOPICS / "task1-2020.xml", TOPICS / "formulas" / "formulas-2020-latex.tsv")}
    a1 = topics["A.1"]
    assert [f.formula_id for f in a1.formulas[:3]] == ["q_1", "q_2", "q_3"]
    assert a1.formulas[1].latex == "f(x) = \\frac{x^2 + x + c}{x^2 + 2x + c}"
    assert a1.formulas[0].kind == FormulaKind.TITLE
    assert a1.formulas[3].kind == FormulaKind.QUESTION
    assert a1.formulas[0].thread_id == 3062860
    assert a1.tags == ("functions",)


@pytest.mark.parametrize("year", [2020, 2021, 2022])
@pytest.mark.parametrize("rep", ["latex", "slt", "opt"])
def test_topic_formula_tsvs_read(year, rep):
    rows = read_topic_formulas(TOPICS / "formulas" / f"formulas-{year}-{rep}.tsv")
    # As published: the 2020 LaTeX file has one row more than its SLT and OPT files.
    expected = {2020: 1008 if rep == "latex" else 1007, 2021: 843, 2022: 1050}[year]
    assert len(rows) == expected
    assert rows[0].formula_id == "q_1"
    # 2022 files say "body" for question formulae
    assert {r.kind for r in rows} <= {FormulaKind.TITLE, FormulaKind.QUESTION}


def test_task2_latex_field_is_unescaped():
    topics = {t.topic_id: t for t in read_topics(TOPICS / "task2-2021.xml")}
    assert topics["B.202"].latex == "[E:F] < \\infty; \\tag 2"


def test_not_a_topic_file(tmp_path):
    bad = tmp_path / "t.xml"
    bad.write_text("<Topics><Topic number='A.1'><Title>x</Title>")
    with pytest.raises(InputError, match="t.xml"):
        read_topics(bad)


def test_a_reader_called_without_a_report_warns_of_the_lines_it_skipped(tmp_path):
    import warnings

    from mathsearch.readers.qrels import read_qrels
    from mathsearch.records import ReadReport, SkippedLinesWarning

    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("A.1\t0\t5\t2\nbad line\nA.2\t0\t7\t1\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert len(read_qrels(qrels)) == 2
    assert [w.category for w in seen] == [SkippedLinesWarning]
    assert f"1 line(s) of {qrels} skipped (the first: {qrels}:2:" in str(seen[0].message)
    with warnings.catch_warnings(record=True) as seen:  # a caller with a report reads it there
        warnings.simplefilter("always")
        report = ReadReport()
        assert len(read_qrels(qrels, report=report)) == 2 and report.skipped_total == 1
    assert seen == []
