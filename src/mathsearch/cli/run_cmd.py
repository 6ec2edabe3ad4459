"""``mathsearch run``: run a system over a topic file and write an official run file."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ..errors import InputError
from ..readers.topics import read_topics
from ..records import ReadReport
from ..runs import suggest_run_name, write_formula_run, write_task3_run, write_trec_run
from ..systems import SearchContext, make_system, needs_of, run_system, spec, system_class, system_names
from ..systems.ours import default_spec
from ..systems.task3 import run_answers
from ._common import check_output, console, friendly_errors, print_json


def run(
    index_dir: Path = typer.Option(Path("index"), "--index", "-i", help="INDEX_DIR built by `mathsearch index`."),
    task: int = typer.Option(1, "--task", help="1: answers, 2: formula instances, 3: one answer of at most 1,200 characters."),
    system: str | None = typer.Option(None, "--system", "-s", help="System name, optionally with parameters: name:k=v,k=v "
                                      "(default: ours for Task 1, with dense signals when the index has them; formula for Task 2; "
                                      "extract for Task 3)."),
    topics: Path = typer.Option(..., "--topics", "-t", help="Topic XML file of the task."),
    formulas: Path | None = typer.Option(None, "--formulas", help="Topic formula TSV (adds formula ids/threads)."),
    out: Path = typer.Option(..., "--out", "-o", help="Run file to write (missing parent folders are created)."),
    depth: int = typer.Option(1000, "--depth", min=1, help="Hits per topic (the lab allows 1,000)."),
    tag: str | None = typer.Option(None, "--tag", help="Run tag (default: the system's spec)."),
    group: str = typer.Option("mathsearch", "--group", help="Team name for the suggested run-file name."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help="Spread the topics over Ray tasks (Tasks 1 "
                                   "and 2): local (a cluster started here) or a running cluster's address."),
) -> None:
    """Write a run of SYSTEM over TOPICS: every topic, up to 1,000 hits each (Task 3: one answer), validated."""
    if task not in (1, 2, 3):
        raise InputError(f"--task must be 1, 2 or 3, not {task}")
    if system is None:
        system = default_spec(index_dir) if task == 1 else ("formula" if task == 2 else "extract")
    name = system.partition(":")[0]
    if system_class(name).TASK != task:
        raise InputError(f"system {name} answers task {system_class(name).TASK}; task {task} systems: "
                         + ", ".join(system_names(task)))
    sys_obj = make_system(system)
    ctx = SearchContext(index_dir)
    ctx.require(("store", *needs_of(sys_obj)))  # every index the run reads, checked before any work
    read = ReadReport(source=str(formulas or topics))
    topic_list = read_topics(topics, formulas, read)
    # Checked before the search: a run must not fail at its end for want of a place to write.
    check_output(out, [topics, formulas, index_dir])
    err = console(stderr=True)
    for problem in read.problems[:10]:
        err.print(f"warning: skipped {problem}", highlight=False, markup=False)
    if read.skipped_total > 10:
        err.print(f"warning: {read.skipped_total - 10} more lines skipped", highlight=False)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err,
                  disable=json_out or not err.is_terminal, transient=True) as bar:
        job = bar.add_task(spec(sys_obj), total=len(topic_list))
        progress = lambda done, _: bar.update(job, completed=done)  # noqa: E731
        if task == 3:
            answers, answer_notes = run_answers(sys_obj, ctx, topic_list, progress)
        elif ray is not None:  # the same hits, the topics spread over a cluster
            from ..building.engine import RayEngine
            from ..distributed.batch import run_system_on_ray

            engine = RayEngine(ray)
            try:
                hits = run_system_on_ray(engine, sys_obj, str(index_dir), topic_list, depth)
            finally:
                engine.close()
        else:
            hits = run_system(sys_obj, ctx, topic_list, depth, progress)
    if task == 3:
        for note in answer_notes[:10]:
            err.print(f"warning: {note}", highlight=False, markup=False)
        report = write_task3_run(out, answers, run_tag=tag)
    else:
        writer = write_trec_run if task == 1 else write_formula_run
        report = writer(out, hits, run_tag=tag, lookup=ctx.store)
    # Systems that use formulae only say so (DATA_USED = "math"); the rest use text and math.
    data_used = getattr(sys_obj, "DATA_USED", "both")
    suggestion = suggest_run_name(out.name, task=task, group=group, run_id=name.replace("-", "_"), data_used=data_used,
                                  ans_type=getattr(sys_obj, "ANS_TYPE", None))
    result = {"run": str(out), "system": spec(sys_obj), "topics": len(topic_list), "topics_with_hits": report.topics,
              "hits": report.hits, "problems": dict(report.counts), "suggested_name": suggestion,
              "skipped_lines": read.skipped_total}
    if json_out:
        print_json(result)
    else:
        what = "answers" if task == 3 else "hits"
        err.print(f"wrote {report.hits:,} {what} for {report.topics} of {len(topic_list)} topics to {out} "
                  f"({spec(sys_obj)})", highlight=False, markup=False)
        for line in report.summary():
            err.print(f"  dropped {line}", highlight=False)
        if out.name != suggestion:
            err.print(f"  file name following the lab's convention: {suggestion}", highlight=False, markup=False)
    if not report.ok or read.skipped_total:
        raise typer.Exit(1)  # written, but hits were dropped or input lines skipped


def register(app: typer.Typer) -> None:
    app.command("run")(friendly_errors(run))
