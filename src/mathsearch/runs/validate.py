"""Run validation as the ARQMath participant guidelines demand.

* Task 1: every hit is an answer post.
* Task 2: every formula comes from a question or an answer post (never a comment), and the post
  id given with it is the post the formula occurs in.
* Task 3: one answer per topic, rank 1, at most 1,200 Unicode characters.
* All tasks: at most 1,000 hits per topic, topics from the topic set, one line per document,
  a file name following the convention (:mod:`.naming`).

Checks that need the collection take a :class:`~.lookup.CollectionLookup`; without one they are
skipped.  Ids the lookup does not know are reported apart ("unknown to the collection"): on a
sample collection they are expected and are not invalid.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..records import FormulaHit, ReadReport, ScoredDoc, Task3Answer
from .lookup import POST_ANSWER, CollectionLookup
from .naming import check_run_name

MAX_HITS = 1000
MAX_ANSWER_CHARS = 1200

# Problem kinds.  INVALID_KINDS are hits the lab filtered out before assessment.
NOT_ANSWER = "not an answer post"
COMMENT_FORMULA = "formula from a comment"
POST_MISMATCH = "formula not in the given post"
TOO_MANY = "more than 1,000 hits"
ANSWER_TOO_LONG = "answer longer than 1,200 characters"
BAD_RANK = "Task 3 rank is not 1"
UNKNOWN_TOPIC = "unknown topic"
UNKNOWN_ID = "unknown to the collection"
DUPLICATE = "duplicate document"
MALFORMED = "malformed line"
BAD_NAME = "bad file name"
INVALID_KINDS = frozenset({NOT_ANSWER, COMMENT_FORMULA, POST_MISMATCH, TOO_MANY, ANSWER_TOO_LONG})


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str
    query_id: str
    item: str  # the document, formula or file the problem is about
    message: str


@dataclass(slots=True)
class CheckReport:
    """What :func:`check_run_file` found: problems by kind, with the first examples."""

    source: str
    task: int
    hits: int = 0
    topics: int = 0
    counts: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    max_examples: int = 20

    def add(self, problem: Problem) -> None:
        self.counts[problem.kind] += 1
        if len(self.examples) < self.max_examples:
            where = f"topic {problem.query_id}: " if problem.query_id else ""
            self.examples.append(f"{where}{problem.message}")

    @property
    def ok(self) -> bool:
        """No problem that the lab would have refused or filtered (unknown ids are tolerated)."""
        return not any(k != UNKNOWN_ID for k in self.counts)

    def summary(self) -> list[str]:
        return [f"{n} x {kind}" for kind, n in sorted(self.counts.items())]


def _topic_problems(topic_counts: Counter, topics: Container[str] | None) -> Iterable[Problem]:
    for topic, n in topic_counts.items():
        if n > MAX_HITS:
            yield Problem(TOO_MANY, topic, "", f"{n} hits (at most {MAX_HITS})")
        if topics is not None and topic not in topics:
            yield Problem(UNKNOWN_TOPIC, topic, "", f"topic {topic} is not in the topic set")


def check_task1_hits(
    hits: Iterable[ScoredDoc], lookup: CollectionLookup | None = None, topics: set[str] | None = None
) -> list[Problem]:
    """Problems of Task 1 hits: non-answer posts, too many hits, unknown topics."""
    problems: list[Problem] = []
    per_topic: Counter = Counter()
    for h in hits:
        per_topic[h.query_id] += 1
        if lookup is None:
            continue
        kind = lookup.post_type(h.doc_id)
        if kind is None:
            problems.append(Problem(UNKNOWN_ID, h.query_id, h.doc_id, f"post {h.doc_id} is unknown to the collection"))
        elif kind != POST_ANSWER:
            problems.append(Problem(NOT_ANSWER, h.query_id, h.doc_id, f"post {h.doc_id} is not an answer post"))
    problems.extend(_topic_problems(per_topic, topics))
    return problems


def _formula_post_getter(lookup: CollectionLookup | None):
    """How to ask ``lookup`` which post a formula occurs in (not part of the small protocol)."""
    if lookup is None:
        return None
    getter = getattr(lookup, "formula_post", None)
    if getter is not None:
        return getter
    record = getattr(lookup, "formula", None)  # the store: formula(id) -> record with post_id
    if record is None:
        return None
    return lambda fid: getattr(record(fid), "post_id", None)


def check_task2_hits(
    hits: Iterable[FormulaHit], lookup: CollectionLookup | None = None, topics: set[str] | None = None
) -> list[Problem]:
    """Problems of Task 2 hits: comment formulae, formulae not in the given post, too many hits."""
    problems: list[Problem] = []
    per_topic: Counter = Counter()
    formula_post = _formula_post_getter(lookup)
    for h in hits:
        per_topic[h.query_id] += 1
        if lookup is None:
            continue
        kind = lookup.formula_kind(h.formula_id)
        if kind is None:
            problems.append(
                Problem(UNKNOWN_ID, h.query_id, h.formula_id, f"formula {h.formula_id} is unknown to the collection")
            )
            continue
        if kind == "comment":
            problems.append(
                Problem(COMMENT_FORMULA, h.query_id, h.formula_id, f"formula {h.formula_id} occurs in a comment")
            )
            continue
        if formula_post is not None and h.post_id:
            post = formula_post(h.formula_id)
            if post is not None and str(post) != str(h.post_id):
                problems.append(
                    Problem(
                        POST_MISMATCH,
                        h.query_id,
                        h.formula_id,
                        f"formula {h.formula_id} occurs in post {post}, not in post {h.post_id}",
                    )
                )
    problems.extend(_topic_problems(per_topic, topics))
    return problems


def check_task3_answers(answers: Iterable[Task3Answer], topics: set[str] | None = None) -> list[Problem]:
    """Problems of Task 3 answers: longer than 1,200 characters, rank other than 1, unknown topics."""
    problems: list[Problem] = []
    for a in answers:
        n = len(a.answer)  # str length = Unicode code points, as the guidelines count
        if n > MAX_ANSWER_CHARS:
            problems.append(Problem(ANSWER_TOO_LONG, a.query_id, "", f"answer has {n} characters (at most 1,200)"))
        if a.rank != 1:
            problems.append(Problem(BAD_RANK, a.query_id, "", f"rank {a.rank} (only rank 1 is allowed)"))
        if topics is not None and a.query_id not in topics:
            problems.append(Problem(UNKNOWN_TOPIC, a.query_id, "", f"topic {a.query_id} is not in the topic set"))
    return problems


def _read_kind(reason: str) -> str:
    return DUPLICATE if "duplicate" in reason or "more than one answer" in reason else MALFORMED


def check_run_file(
    path: str | Path,
    task: int,
    lookup: CollectionLookup | None = None,
    topics: set[str] | None = None,
    check_name: bool = True,
) -> CheckReport:
    """Read a run file of ``task`` and report every problem: malformed lines, duplicates,
    invalid hits, too many hits, unknown topics and a file name that breaks the convention."""
    from ..readers.runs import read_formula_run, read_task3_run, read_trec_run

    path = Path(path)
    report = CheckReport(str(path), task)
    read = ReadReport(source=str(path))
    if task == 1:
        hits: list = read_trec_run(path, read)
        problems = check_task1_hits(hits, lookup, topics)
    elif task == 2:
        hits = read_formula_run(path, read)
        problems = check_task2_hits(hits, lookup, topics)
    else:
        hits = read_task3_run(path, read)
        problems = check_task3_answers(hits, topics)
    report.hits = len(hits)
    report.topics = len({h.query_id for h in hits})
    for reason, n in read.skipped.items():
        report.counts[_read_kind(reason)] += n
    for where in read.problems:  # the first examples, with file:line
        if len(report.examples) < report.max_examples:
            report.examples.append(where)
    for p in problems:
        report.add(p)
    if check_name:
        for message in check_run_name(path.name, task):
            report.add(Problem(BAD_NAME, "", path.name, f"file name {path.name!r}: {message}"))
    return report


def check_run_scores(
    run: Mapping[str, Mapping[str, float]],
    task: int,
    lookup: CollectionLookup | None = None,
    topics: Container[str] | None = None,
) -> list[Problem]:
    """The checks of :func:`check_task1_hits` / :func:`check_task2_hits` on an already read
    ``{topic: {id: score}}`` run (what the evaluator holds); Task 2 post ids are not checked here."""
    problems: list[Problem] = []
    per_topic = Counter({t: len(d) for t, d in run.items()})
    problems.extend(_topic_problems(per_topic, topics))  # type: ignore[arg-type]
    if lookup is None:
        return problems
    for topic, docs in run.items():
        for doc in docs:
            if task == 1:
                kind = lookup.post_type(doc)
                if kind is None:
                    problems.append(Problem(UNKNOWN_ID, topic, doc, f"post {doc} is unknown to the collection"))
                elif kind != POST_ANSWER:
                    problems.append(Problem(NOT_ANSWER, topic, doc, f"post {doc} is not an answer post"))
            else:
                fkind = lookup.formula_kind(doc)
                if fkind is None:
                    problems.append(Problem(UNKNOWN_ID, topic, doc, f"formula {doc} is unknown to the collection"))
                elif fkind == "comment":
                    problems.append(Problem(COMMENT_FORMULA, topic, doc, f"formula {doc} occurs in a comment"))
    return problems
