"""Writers for the three run layouts, validating hits as the participant guidelines demand.

Each topic's hits are written in trec_eval order (score descending, ties by id descending), so that
the rank column agrees with how every evaluator will read the file, cut at 1,000 hits, and with one
line per document.  Invalid hits (see :mod:`.validate`) are dropped (``on_invalid="drop"``, as the
lab filtered them before assessment) or refused (``on_invalid="raise"``); either way the returned
:class:`~.validate.CheckReport` says what happened.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TextIO

from ..errors import InputError
from ..ranking import ranked
from ..records import FormulaHit, ScoredDoc, Task3Answer
from .lookup import CollectionLookup
from .validate import (
    DUPLICATE,
    INVALID_KINDS,
    MAX_HITS,
    TOO_MANY,
    CheckReport,
    Problem,
    check_task1_hits,
    check_task2_hits,
    check_task3_answers,
)

OnInvalid = Literal["drop", "raise"]


def _fmt_score(score: float) -> str:
    # repr round-trips exactly: the file holds the score the system computed, ties stay ties.
    return repr(float(score))


def check_run_tag(tag: str | None, what: str = "run tag") -> None:
    """Refuse a run tag the layouts cannot carry: empty, or holding whitespace (every evaluator
    splits a run line on whitespace, so "my tag" would be two fields)."""
    if tag is not None and (not tag or any(ch.isspace() for ch in tag)):
        raise InputError(f"{what} {tag!r} is empty or holds whitespace; a run line is split on whitespace, "
                         "so use letters, digits, '-', '_' or '.'")


def _sieve(path: Path, task: int, problems: list[Problem], on_invalid: OnInvalid, report: CheckReport) -> set[tuple[str, str]]:
    bad: set[tuple[str, str]] = set()
    for p in problems:
        if p.kind == TOO_MANY:
            continue  # the writer cuts at 1,000 itself
        report.add(p)
        if p.kind in INVALID_KINDS:
            bad.add((p.query_id, p.item))
    if bad and on_invalid == "raise":
        first = next(p for p in problems if p.kind in INVALID_KINDS)
        raise InputError(f"run for {path} has {len(bad)} invalid hit(s), e.g. topic {first.query_id}: {first.message}")
    return bad


def _group(items: Iterable, key_doc, report: CheckReport) -> dict[str, dict[str, Any]]:
    per_topic: dict[str, dict[str, Any]] = defaultdict(dict)
    for item in items:
        docs = per_topic[item.query_id]
        doc = key_doc(item)
        if doc in docs:
            report.add(Problem(DUPLICATE, item.query_id, doc, f"{doc} listed twice (first kept)"))
            continue
        docs[doc] = item
    return per_topic


def _ordered(docs: dict[str, Any]) -> list[Any]:
    order = ranked({d: item.score for d, item in docs.items()})
    return [docs[d] for d in order[:MAX_HITS]]


def _write_hits(
    path: str | Path,
    task: int,
    hits: Iterable[Any],
    check: Callable[..., list[Problem]],
    hit_id: Callable[[Any], str],
    line: Callable[[Any, int, str], str],
    run_tag: str | None,
    lookup: CollectionLookup | None,
    on_invalid: OnInvalid,
) -> CheckReport:
    """Validate, drop or refuse invalid hits, keep the first of duplicates, then write each topic's
    hits in trec_eval order (at most 1,000), one ``line(hit, rank, tag)`` each."""
    check_run_tag(run_tag)
    path = Path(path)
    hits = list(hits)
    report = CheckReport(str(path), task)
    bad = _sieve(path, task, check(hits, lookup), on_invalid, report)
    per_topic = _group((h for h in hits if (h.query_id, hit_id(h)) not in bad), hit_id, report)
    with _writing(path) as out:
        for topic in sorted(per_topic):
            for rank, h in enumerate(_ordered(per_topic[topic]), 1):
                out.write(line(h, rank, run_tag or h.run_tag or "mathsearch"))
                report.hits += 1
            report.topics += 1
    return report


@contextmanager
def _writing(path: Path) -> Iterator[TextIO]:
    """``path`` open for writing; a failed write (a full disk, a device) names the file."""
    try:
        with path.open("w", encoding="utf-8", newline="") as out:
            yield out
    except OSError as exc:
        if exc.filename:
            raise
        raise OSError(exc.errno, f"writing the run failed: {exc.strerror or exc}", str(path)) from None


def write_trec_run(
    path: str | Path,
    hits: Iterable[ScoredDoc],
    run_tag: str | None = None,
    lookup: CollectionLookup | None = None,
    on_invalid: OnInvalid = "drop",
) -> CheckReport:
    """Write a Task 1 run in the TREC layout ``topic Q0 doc rank score tag`` (tab-separated)."""
    return _write_hits(
        path, 1, hits, check_task1_hits, lambda h: h.doc_id,
        lambda h, rank, tag: f"{h.query_id}\tQ0\t{h.doc_id}\t{rank}\t{_fmt_score(h.score)}\t{tag}\n",
        run_tag, lookup, on_invalid,
    )


def write_formula_run(
    path: str | Path,
    hits: Iterable[FormulaHit],
    run_tag: str | None = None,
    lookup: CollectionLookup | None = None,
    on_invalid: OnInvalid = "drop",
) -> CheckReport:
    """Write a Task 2 run: ``Query_Id Formula_Id Post_Id Rank Score Run_Id`` (tab-separated)."""
    return _write_hits(
        path, 2, hits, check_task2_hits, lambda h: h.formula_id,
        lambda h, rank, tag: f"{h.query_id}\t{h.formula_id}\t{h.post_id}\t{rank}\t{_fmt_score(h.score)}\t{tag}\n",
        run_tag, lookup, on_invalid,
    )


def write_task3_run(
    path: str | Path,
    answers: Iterable[Task3Answer],
    run_tag: str | None = None,
    on_invalid: OnInvalid = "drop",
) -> CheckReport:
    """Write a Task 3 run: ``Query_Id Rank Score Run_Id Sources Answer``, tab-separated, csv quoting."""
    check_run_tag(run_tag)
    path = Path(path)
    answers = list(answers)
    report = CheckReport(str(path), 3)
    problems = check_task3_answers(answers)
    bad = _sieve(path, 3, problems, on_invalid, report)
    seen: set[str] = set()
    with _writing(path) as out:
        writer = csv.writer(out, delimiter="\t", quotechar='"', quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        for a in answers:
            if (a.query_id, "") in bad:
                continue
            if a.query_id in seen:
                report.add(Problem(DUPLICATE, a.query_id, "", "more than one answer for the topic (first kept)"))
                continue
            seen.add(a.query_id)
            writer.writerow([a.query_id, 1, _fmt_score(a.score), run_tag or a.run_tag or "mathsearch", a.sources, a.answer])
            report.hits += 1
            report.topics += 1
    return report
