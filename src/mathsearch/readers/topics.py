"""Topic files of Tasks 1, 2 and 3 (all years) and their formulae.

``<Topics><Topic number="A.1"><Title/><Question/><Tags/></Topic>...``; Task 2 topics add
``<Formula_Id>`` and ``<Latex>``.  Title and Question hold HTML whose formulae are
``<span class="math-container" id="q_N">$...$</span>``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lxml import etree

from ..errors import FormatError, InputError
from ..records import FormulaKind, ReadReport, Topic, TopicFormula, warns_of_skips
from .arqmath import parse_tags
from .formula_tsv import read_topic_formulas
from .hidden import HIDDEN_FILE, read_hidden_threads
from .html import body_text, extract_math


def _child_text(elem: etree._Element, name: str) -> str:
    child = elem.find(name)
    return (child.text or "") if child is not None else ""


def topic_formulas_from_markup(topic_id: str, title: str, question: str) -> list[TopicFormula]:
    """Formulae of a topic's title and question, in document order."""
    out: list[TopicFormula] = []
    _, in_title = extract_math(title, escaped=True, is_html=True)
    _, in_question = body_text(question)
    for kind, found in ((FormulaKind.TITLE, in_title), (FormulaKind.QUESTION, in_question)):
        out.extend(TopicFormula(f.formula_id, topic_id, f.latex, kind) for f in found)
    return out


@warns_of_skips
def read_topics(
    path: str | Path,
    formulas_tsv: str | Path | None = None,
    report: ReadReport | None = None,
) -> list[Topic]:
    """All topics of a topic XML file.

    ``formulas_tsv`` (a topic LaTeX formula file) adds the thread id and any formula the
    markup lacks; the span text is kept where both exist.  Its bad lines are skipped and reported
    in ``report`` with file and line.

    A ``hidden-threads.tsv`` beside the file (topics drawn from the collection itself,
    :mod:`mathsearch.readers.hidden`) says what each topic hides (``Topic.hidden_threads``,
    ``Topic.hidden_questions``).

    Raises :class:`InputError` when the file holds no topic, and :class:`FormatError` (naming both
    lines) when a topic number appears twice: a run cannot tell the two topics apart.

    Examples:
        >>> topics = read_topics("../shared/data/arqmath/topics/task1-2020.xml")
        >>> len(topics), topics[0].topic_id, topics[0].tags
        (98, 'A.1', ('functions',))
    """
    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    if not path.is_file():
        raise InputError(f"{path} does not exist or is not a file.")
    extra: dict[str, list[TopicFormula]] = {}
    if formulas_tsv is not None:
        for tf in read_topic_formulas(formulas_tsv, report):
            extra.setdefault(tf.topic_id, []).append(tf)
    topics: list[Topic] = []
    first_line: dict[str, int] = {}
    try:
        for _, elem in etree.iterparse(str(path), events=("end",), tag="Topic", huge_tree=True):
            topic_id = (elem.get("number") or "").strip()
            if not topic_id:
                report.skip("topic without number", f"{path}:{elem.sourceline}")
                elem.clear()
                continue
            if any(ch.isspace() for ch in topic_id):  # a run line is split on whitespace: "A 1" would be two fields
                raise FormatError(str(path), elem.sourceline or 0,
                                  f"topic number {topic_id!r} holds whitespace, which no run layout can carry")
            if topic_id in first_line:
                raise FormatError(str(path), elem.sourceline or 0,
                                  f"topic {topic_id} appears twice (first at line {first_line[topic_id]})")
            first_line[topic_id] = elem.sourceline or 0
            title, question = _child_text(elem, "Title"), _child_text(elem, "Question")
            formulas = topic_formulas_from_markup(topic_id, title, question)
            # Task 2 topic ids are B.N; the formula files are keyed by the Task 1 id A.N.
            task1_id = "A." + topic_id.split(".", 1)[1] if topic_id.startswith("B.") else topic_id
            known = {f.formula_id for f in formulas}
            for tf in extra.get(task1_id, []):
                if tf.formula_id not in known:
                    formulas.append(TopicFormula(tf.formula_id, topic_id, tf.latex, tf.kind, tf.thread_id))
            thread = next((tf.thread_id for tf in extra.get(task1_id, []) if tf.thread_id), None)
            if thread is not None:
                formulas = [TopicFormula(f.formula_id, topic_id, f.latex, f.kind, thread) for f in formulas]
            formula_id = _child_text(elem, "Formula_Id").strip() or None
            latex = _child_text(elem, "Latex").strip() or None
            topics.append(
                Topic(
                    topic_id=topic_id,
                    title=title.strip(),
                    question=question.strip(),
                    tags=parse_tags(_child_text(elem, "Tags")),
                    formulas=tuple(formulas),
                    formula_id=formula_id,
                    latex=latex,
                )
            )
            report.rows += 1
            elem.clear()
    except etree.XMLSyntaxError as exc:
        if path.stat().st_size == 0:
            raise InputError(f"{path} is empty: an ARQMath topic file holds <Topics><Topic number=...>.") from None
        # lxml's message often names the line and column already ("..., line 1, column 37")
        where = "" if ", line " in (exc.msg or "") else f" (line {exc.lineno})"
        raise InputError(f"{path} is not a readable topic XML file: {exc.msg}{where}.") from None
    if not topics:
        if report.skipped.get("topic without number"):
            raise InputError(f"{path}: no <Topic> has a number attribute, so there is no topic to read.")
        raise InputError(f"{path} holds no <Topic> element: is it an ARQMath topic file?")
    return with_hidden(topics, path.parent / HIDDEN_FILE)


def with_hidden(topics: list[Topic], hidden_file: Path) -> list[Topic]:
    """``topics`` with what ``hidden_file`` says each hides (unchanged when there is no such file)."""
    if not hidden_file.is_file():
        return topics
    hidden = read_hidden_threads(hidden_file)
    return [dataclasses.replace(t, hidden_threads=h.threads, hidden_questions=h.questions)
            if (h := hidden.get(t.topic_id)) is not None else t for t in topics]
