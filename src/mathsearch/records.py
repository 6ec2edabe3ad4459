"""Typed records for everything that flows through mathsearch.

One record per source schema, with field names taken from the ARQMath files
(post_id, thread_id, formula_id, visual_id, ...).  Attributes a source file lacks
are ``None``: they are never invented.  Run and qrels records reuse the field
names of ir_measures (query_id, doc_id, relevance, score).
"""

from __future__ import annotations

import functools
import inspect
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any, TypeVar


class PostType(int, Enum):
    QUESTION = 1
    ANSWER = 2


class FormulaKind(StrEnum):
    """Where a formula instance occurs (the ``type`` column of the formula TSV files)."""

    TITLE = "title"
    QUESTION = "question"
    ANSWER = "answer"
    COMMENT = "comment"

    @classmethod
    def parse(cls, value: str) -> FormulaKind:
        # 2022 topic files say "body" where the collection says "question".
        value = value.strip().lower()
        if value == "body":
            return cls.QUESTION
        return cls(value)


class LinkType(int, Enum):
    RELATED = 1
    DUPLICATE = 3


@dataclass(frozen=True, slots=True)
class Formula:
    """A formula instance found in a piece of text: its id and its LaTeX (without delimiters)."""

    formula_id: str
    latex: str
    start: int = -1  # character offsets of ``$latex$`` in the plain text, -1 when unknown
    end: int = -1


@dataclass(frozen=True, slots=True)
class Post:
    """A question (``post_type`` 1) or answer (2) of a Posts file.

    ``body`` is the HTML as in the file; ``title`` and ``tags`` are set for questions only.
    ``thread_id`` is the question's id (for a question, its own id).
    """

    post_id: int
    post_type: PostType
    body: str
    thread_id: int
    parent_id: int | None = None
    title: str | None = None
    tags: tuple[str, ...] = ()
    score: int | None = None
    creation_date: str | None = None
    answer_count: int | None = None
    comment_count: int | None = None
    view_count: int | None = None
    favorite_count: int | None = None
    accepted_answer_id: int | None = None
    owner_user_id: int | None = None
    line: int = 0  # line in the source file, for messages

    def default_text(self) -> str:
        """Title (questions) and body HTML joined by a newline."""
        return f"{self.title}\n{self.body}" if self.title else self.body


@dataclass(frozen=True, slots=True)
class Comment:
    """A comment of a Comments file; ``text`` is plain text (formulae in math-container spans)."""

    comment_id: int
    post_id: int
    text: str
    score: int | None = None
    creation_date: str | None = None
    user_id: int | None = None
    line: int = 0

    def default_text(self) -> str:
        """The comment text."""
        return self.text


@dataclass(frozen=True, slots=True)
class PostLink:
    link_id: int
    post_id: int
    related_post_id: int
    link_type: LinkType
    creation_date: str | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class FormulaRecord:
    """One row of a formula index TSV file (6-column sample layout or 9-column v3 layout).

    ``formula`` is the representation the file holds: LaTeX, Presentation MathML (SLT)
    or Content MathML (OPT).  ``visual_id`` is ``None`` where the file leaves it empty.
    """

    formula_id: str
    post_id: int
    thread_id: int
    kind: FormulaKind
    formula: str
    visual_id: str | None = None
    comment_id: int | None = None
    old_visual_id: str | None = None
    issue: str | None = None
    line: int = 0

    def default_text(self) -> str:
        """The formula representation."""
        return self.formula


@dataclass(frozen=True, slots=True)
class TopicFormula:
    """A formula of a topic (from the topic XML spans or a topic formula TSV)."""

    formula_id: str
    topic_id: str
    latex: str
    kind: FormulaKind
    thread_id: int | None = None


_NUM = re.compile(r"(\d+)")


def topic_order(topic_id: str) -> tuple:
    """Natural order of topic ids (A.2 before A.10)."""
    return tuple(int(p) if p.isdigit() else p for p in _NUM.split(topic_id))


@dataclass(frozen=True, slots=True)
class Topic:
    """A topic of Task 1 (A.N), Task 2 (B.N, with the query formula) or Task 3 (A.N).

    ``title`` and ``question`` are HTML as in the topic file.  ``formulas`` lists every
    formula of title and question in document order.  A topic drawn from the collection itself
    names what a system must not read for it (its ``hidden-threads.tsv``): whole threads, or
    questions whose answers may still be found by their own text.
    """

    topic_id: str
    title: str
    question: str
    tags: tuple[str, ...]
    formulas: tuple[TopicFormula, ...] = ()
    formula_id: str | None = None  # Task 2 only
    latex: str | None = None  # Task 2 only
    hidden_threads: tuple[int, ...] = ()
    hidden_questions: tuple[int, ...] = ()

    @property
    def hides(self) -> bool:
        """Whether a system must leave something of the collection unread for this topic."""
        return bool(self.hidden_threads or self.hidden_questions)

    @property
    def query_formula(self) -> TopicFormula | None:
        """Task 2: the formula to search for."""
        if self.formula_id is None:
            return None
        for f in self.formulas:
            if f.formula_id == self.formula_id:
                return f
        return TopicFormula(self.formula_id, self.topic_id, self.latex or "", FormulaKind.QUESTION)

    def default_text(self) -> str:
        """Title, question HTML and tags joined by newlines."""
        return "\n".join([self.title, self.question, " ".join(self.tags)])


@dataclass(frozen=True, slots=True)
class Qrel:
    """A relevance judgement (ir_measures field names). Task 3 adds codes 5 and 6."""

    query_id: str
    doc_id: str
    relevance: int
    iteration: str = "0"


@dataclass(frozen=True, slots=True)
class ScoredDoc:
    """A hit of a Task 1 run (TREC layout): ``doc_id`` is an answer post id."""

    query_id: str
    doc_id: str
    score: float
    rank: int = 0
    run_tag: str = ""


@dataclass(frozen=True, slots=True)
class FormulaHit:
    """A hit of a Task 2 run: a formula instance and the post it occurs in."""

    query_id: str
    formula_id: str
    post_id: str
    score: float
    rank: int = 0
    run_tag: str = ""


@dataclass(frozen=True, slots=True)
class Task3Answer:
    """The single answer of a Task 3 run for a topic."""

    query_id: str
    answer: str
    score: float = 1.0
    rank: int = 1
    run_tag: str = ""
    sources: str = ""


@dataclass(slots=True)
class ReadReport:
    """What a reader saw: rows read, rows skipped by reason, and where.

    Every row of a file ends up in exactly one of ``rows`` (yielded) or ``skipped``.
    """

    source: str = ""
    rows: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    max_problems: int = 50

    def skip(self, reason: str, where: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if len(self.problems) < self.max_problems:
            self.problems.append(f"{where}: {reason}")

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def merge(self, other: ReadReport) -> None:
        self.rows += other.rows
        for k, v in other.skipped.items():
            self.skipped[k] = self.skipped.get(k, 0) + v
        room = self.max_problems - len(self.problems)
        if room > 0:
            self.problems.extend(other.problems[:room])


class SkippedLinesWarning(UserWarning):
    """A reader called without a :class:`ReadReport` skipped lines: said once, with the first."""


_Reader = TypeVar("_Reader", bound=Callable[..., Any])


def warns_of_skips(reader: _Reader) -> _Reader:
    """``reader`` (a function with a ``report`` parameter) says what it skipped when its caller
    passed no report: one :class:`SkippedLinesWarning` naming the file, the count and the first bad
    line, where the lines would otherwise be dropped without a word."""
    signature = inspect.signature(reader)

    @functools.wraps(reader)
    def read(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        if bound.arguments.get("report") is not None:
            return reader(*args, **kwargs)
        report = ReadReport(source=str(bound.arguments.get("path", "")))
        bound.arguments["report"] = report
        out = reader(*bound.args, **bound.kwargs)
        if report.skipped_total:
            first = report.problems[0] if report.problems else ""
            warnings.warn(f"{report.skipped_total:,} line(s) of {report.source} skipped (the first: {first}); "
                          "pass report=ReadReport() to see them all", SkippedLinesWarning, stacklevel=2)
        return out

    return read  # type: ignore[return-value]
