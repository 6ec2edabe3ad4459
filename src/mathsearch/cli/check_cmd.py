"""``mathsearch check RUN... --task T``: validate run files as the ARQMath guidelines demand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import friendly_errors, print_json


def check(
    runs: Annotated[list[Path], typer.Argument(help="Run files to check.")],
    task: Annotated[int, typer.Option("--task", "-t", min=1, max=3, help="ARQMath task: 1, 2 or 3.")],
    index: Annotated[Path | None, typer.Option("--index", "-i", help="Collection store (post types, formula kinds).")] = None,
    formulas: Annotated[list[Path] | None, typer.Option("--formulas", help="Formula index TSV(s) instead of a store.")] = None,
    topics: Annotated[Path | None, typer.Option("--topics", help="Topic XML file: report topics not in it.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object keyed by run file name (its path where two share a name).")] = False,
) -> None:
    """Report invalid hits, duplicates, more than 1,000 hits, unknown topics and a bad file name.

    Exit code 0: every run is valid; 1: problems were found (listed).
    """
    from ..evaluation.evaluate import run_names
    from ..evaluation.files import check_runs
    from ..readers.topics import read_topics
    from ..records import ReadReport
    from ..runs import FormulaTsvLookup, check_run_file, suggest_run_name

    check_runs(runs, (task,))  # a file of another task's layout (or no run at all): exit 2, as eval refuses it

    lookup = None
    if index is not None:
        from ..indexes.directory import open_store

        lookup = open_store(index)
    elif formulas:
        lookup = FormulaTsvLookup(*formulas)
    read = ReadReport(source=str(topics))
    topic_ids = {t.topic_id for t in read_topics(topics, None, read)} if topics is not None else None
    for problem in read.problems[:10]:
        typer.echo(f"warning: skipped {problem}", err=True)
    results = {}
    all_ok = True
    for path, name in zip(runs, run_names(runs), strict=True):  # two runs of one name: by path
        report = check_run_file(path, task, lookup, topic_ids)
        all_ok &= report.ok
        entry = {
            "ok": report.ok,
            "hits": report.hits,
            "topics": report.topics,
            "problems": dict(report.counts),
            "examples": report.examples,
        }
        if report.counts.get("bad file name"):
            entry["suggested_name"] = suggest_run_name(path.name, task=task)
        results[name] = entry
    if json_out:
        print_json(results)
    else:
        for name, entry in results.items():
            verdict = "ok" if entry["ok"] else "PROBLEMS"
            typer.echo(f"{name}: {verdict} ({entry['hits']} hits, {entry['topics']} topics)")
            for kind, n in sorted(entry["problems"].items()):
                typer.echo(f"  {n} x {kind}")
            for example in entry["examples"][:10]:
                typer.echo(f"    e.g. {example}")
            if "suggested_name" in entry:
                typer.echo(f"  suggested name: {entry['suggested_name']}")
    if not all_ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("check")(friendly_errors(check))
