"""``mathsearch run``: run a system over a topic file and write an official run file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ..records import Topic
from ..runs import check_run_tag
from ..runs.make import Hits, make_run, open_run
from ..systems import Ranker, SearchContext
from ._common import check_output, console, friendly_errors, print_json


def run(
    index_dir: Path = typer.Option(Path("index"), "--index", "-i", help="INDEX_DIR built by `mathsearch index`."),
    task: int = typer.Option(1, "--task", help="1: answers, 2: formula instances, 3: one answer of at most 1,200 characters."),
    system: str | None = typer.Option(None, "--system", "-s", help="System name, optionally with parameters: name:k=v,k=v "
                                      "(default: ours for Task 1, with dense signals when the index has them; formula for Task 2; "
                                      "extract for Task 3)."),
    topics: Path = typer.Option(..., "--topics", "-t", help="Topic XML file of the task."),
    formulas: Path | None = typer.Option(None, "--formulas", help="Topic formula TSV (adds formula ids/threads)."),
    out: Path = typer.Option(..., "--out", "-o", help="Run file to write (missing parent folders are created); an "
                             "existing file is replaced only when it is a run file, or with --force."),
    force: bool = typer.Option(False, "--force", help="Replace --out even when it is not a run file."),
    depth: int = typer.Option(1000, "--depth", min=1, help="Hits per topic (the lab allows 1,000)."),
    tag: str | None = typer.Option(None, "--tag", help="Run tag (default: the system's spec)."),
    group: str = typer.Option("mathsearch", "--group", help="Team name for the suggested run-file name."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help="Spread the topics over Ray tasks (Tasks 1 "
                                   "and 2): local (a cluster started here) or a running cluster's address."),
) -> None:
    """Write a run of SYSTEM over TOPICS: every topic, up to 1,000 hits each (Task 3: one answer), validated."""
    source = open_run(task, system, index_dir, topics, formulas)
    # the tag every line carries, checked before the search (the system's spec when --tag is not given)
    if tag is not None:
        check_run_tag(tag, "--tag")
    else:
        check_run_tag(source.spec, "the run tag (the system's spec; give --tag)")
    # Checked before the search: a run must not fail at its end for want of a place to write.
    check_output(out, [p for p in (topics, formulas, index_dir) if p is not None], force=force)
    err = console(stderr=True)
    read = source.read
    for problem in read.problems[:10]:
        err.print(f"warning: skipped {problem}", highlight=False, markup=False)
    if read.skipped_total > 10:
        err.print(f"warning: {read.skipped_total - 10} more lines skipped", highlight=False)
    close = None
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=err,
                      disable=json_out or not err.is_terminal, transient=True) as bar:
            job = bar.add_task(source.spec, total=len(source.topics))
            progress = lambda done, _: bar.update(job, completed=done)  # noqa: E731
            hits_by = None
            if ray is not None and task != 3:  # the same hits, the topics spread over a cluster
                hits_by, close = _on_ray(ray, index_dir)
            made = make_run(source, out, depth, tag, group, progress, hits_by)
    finally:
        if close is not None:
            close()
    for note in made.notes[:10]:
        err.print(f"warning: {note}", highlight=False, markup=False)
    if json_out:
        print_json(made.as_json())
    else:
        what = "answers" if task == 3 else "hits"
        report = made.report
        err.print(f"wrote {report.hits:,} {what} for {report.topics} of {made.topics} topics to {out} "
                  f"({made.system})", highlight=False, markup=False)
        for line in report.summary():
            err.print(f"  dropped {line}", highlight=False)
        if out.name != made.suggested_name:
            err.print(f"  file name following the lab's convention: {made.suggested_name}", highlight=False, markup=False)
    if not made.ok:
        raise typer.Exit(1)  # written, but hits were dropped or input lines skipped


def _on_ray(address: str, index_dir: Path) -> tuple[Hits, Callable[[], None]]:
    """``make_run``'s hits made by Ray tasks on the cluster at ``address``, and what closes it."""
    from ..building.engine import RayEngine
    from ..distributed.batch import run_system_on_ray

    engine = RayEngine(address)

    def hits(system: Ranker, _ctx: SearchContext, topics: list[Topic], depth: int, _progress: object) -> list[Any]:
        return run_system_on_ray(engine, system, str(index_dir), topics, depth)

    return hits, engine.close


def register(app: typer.Typer) -> None:
    app.command("run")(friendly_errors(run))
