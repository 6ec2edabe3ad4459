"""A run file from a system over a topic file: what ``mathsearch run`` does, as a library call.

:func:`open_run` does every check that can fail before the search (the task, the system against it,
the indexes it reads, the topics), :func:`make_run` searches and writes the run in the lab's layout,
validated, with the file name the lab's convention suggests.  The CLI only parses its options,
checks where the run goes and prints.

Examples:
    >>> source = open_run(2, None, "index", "topics.xml")  # doctest: +SKIP
    >>> make_run(source, "runs/formula.tsv").hits  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..readers.hidden import HIDDEN_FILE
from ..readers.topics import read_topics
from ..records import ReadReport, Topic
from ..systems import (
    Answerer,
    Ranker,
    SearchContext,
    System,
    check_hiding,
    needs_of,
    resolve,
    run_system,
    spec,
)
from .naming import suggest_run_name
from .validate import CheckReport
from .writer import write_formula_run, write_task3_run, write_trec_run

Progress = Callable[[int, int], None]
# What a run's hits come from: (system, its indexes, topics, depth, progress) -> hits; run_system here,
# mathsearch.distributed.batch on a Ray cluster.
Hits = Callable[[Ranker, SearchContext, list[Topic], int, Progress | None], list[Any]]


@dataclass
class RunSource:
    """A run about to be made: the system (checked against the task), its indexes (checked), the
    topics read and what reading them skipped."""

    task: int
    system: System
    ctx: SearchContext
    topics: list[Topic]
    read: ReadReport

    @property
    def spec(self) -> str:
        return spec(self.system)


@dataclass
class MadeRun:
    """A run written: where, by which system, what the checks dropped, the lab's name for it."""

    run: Path
    system: str
    task: int
    topics: int
    report: CheckReport
    suggested_name: str
    skipped_lines: int
    notes: list[str] = field(default_factory=list)  # Task 3: what happened on the way

    @property
    def ok(self) -> bool:
        """Written with every hit and every topic line (else ``mathsearch run`` exits 1)."""
        return self.report.ok and not self.skipped_lines

    def as_json(self) -> dict[str, Any]:
        return {"run": str(self.run), "system": self.system, "topics": self.topics,
                "topics_with_hits": self.report.topics, "hits": self.report.hits,
                "problems": dict(self.report.counts), "suggested_name": self.suggested_name,
                "skipped_lines": self.skipped_lines}


def open_run(task: int, system: str | None, index_dir: str | Path, topics: str | Path,
             formulas: str | Path | None = None) -> RunSource:
    """Check everything a run needs before it searches: ``system`` (default: the task's,
    :func:`mathsearch.systems.resolve`) against ``task``, the indexes it reads in ``index_dir``, and
    the topics (with the topic formula TSV ``formulas``, if given) read."""
    sys_obj = resolve(task, system, index_dir)
    ctx = SearchContext(index_dir)
    ctx.require(("store", *needs_of(sys_obj)))  # every index the run reads, checked before any work
    read = ReadReport(source=str(formulas or topics))
    topic_list = read_topics(topics, formulas, read)
    if task == 2 and not any(t.formula_id for t in topic_list):  # it wrote a run of 0 hits, exit 0
        raise InputError(f"{topics} holds no Task 2 topic (none names a query formula in <Formula_Id>): "
                         f"Task 2 topics, or --task 1 for these.")
    try:  # before any search (run_rankings checks the same), naming the file
        check_hiding(sys_obj, topic_list)
    except InputError as exc:
        raise InputError(f"{topics} (with the {HIDDEN_FILE} beside it): {exc}") from None
    return RunSource(task, sys_obj, ctx, topic_list, read)


def _here(system: Ranker, ctx: SearchContext, topics: list[Topic], depth: int, progress: Progress | None) -> list[Any]:
    return run_system(system, ctx, topics, depth, progress)


def make_run(source: RunSource, out: str | Path, depth: int = 1000, tag: str | None = None,
             group: str = "mathsearch", progress: Progress | None = None, hits_by: Hits | None = None) -> MadeRun:
    """Search ``source``'s topics (``depth`` hits each; Task 3: one answer) and write the run to
    ``out``, tagged ``tag`` (default: the system's spec); ``hits_by`` makes the hits elsewhere (a
    Ray cluster) with the same result."""
    out = Path(out)
    sys_obj, ctx = source.system, source.ctx
    notes: list[str] = []
    if source.task == 3:
        from ..systems.task3 import run_answers

        assert isinstance(sys_obj, Answerer), sys_obj
        answers, notes = run_answers(sys_obj, ctx, source.topics, progress)
        report = write_task3_run(out, answers, run_tag=tag)
    else:
        assert isinstance(sys_obj, Ranker), sys_obj
        hits = (hits_by or _here)(sys_obj, ctx, source.topics, depth, progress)
        writer = write_trec_run if source.task == 1 else write_formula_run
        report = writer(out, hits, run_tag=tag, lookup=ctx.store)
    # Systems that use formulae only say so (DATA_USED = "math"); the rest use text and math.
    suggestion = suggest_run_name(out.name, task=source.task, group=group, run_id=sys_obj.NAME.replace("-", "_"),
                                  data_used=getattr(sys_obj, "DATA_USED", "both"),
                                  ans_type=getattr(sys_obj, "ANS_TYPE", None))
    return MadeRun(out, source.spec, source.task, len(source.topics), report, suggestion, source.read.skipped_total, notes)

