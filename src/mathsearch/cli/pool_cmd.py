"""``mathsearch pool``: judgement pools from run files, into an assessment database."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError
from ..records import ReadReport
from ._common import console, friendly_errors, print_json


def pool(
    runs: list[Path] = typer.Argument(..., help="Run files, named by the lab's convention (...-P.tsv primary, "
                                      "...-A.tsv alternate); a Task 1 pool also takes Task 3 runs."),
    task: int = typer.Option(..., "--task", "-t", help="1 (answers; Task 3 answers join them), 2 (formulae, by "
                             "visual id) or 3 (Task 3 answers)."),
    out: Path = typer.Option(..., "--out", "-o", help="Assessment database to write (SQLite); an existing one is "
                             "replaced only when made by mathsearch pool and holding no judgement (any other file with --force)."),
    force: bool = typer.Option(False, "--force", help="Replace --out even when it is not an assessment database "
                               "(never one that holds judgements)."),
    depth: int | None = typer.Option(None, "--depth", min=1, help="Primary runs' pool depth: answers (Task 1) or "
                                     "visually distinct formulae (Task 2). Default: the lab's 45 / 25 (ARQMath-3)."),
    alternate_depth: int | None = typer.Option(None, "--alternate-depth", min=1, help="Alternate runs' depth. "
                                               "Default: the lab's 20 / 15."),
    topics: Path | None = typer.Option(None, "--topics", help="Topic XML file: the questions the assessors read."),
    index: Path | None = typer.Option(None, "--index", "-i", help="INDEX_DIR: visual ids of formulae (Task 2)."),
    formulas: list[Path] | None = typer.Option(None, "--formulas", help="Formula index TSV(s) with visual ids "
                                               "(Task 2, instead of --index)."),
    instances: int = typer.Option(5, "--instances", min=1, help="Task 2: formula instances shown per visual id, "
                                  "chosen by reciprocal-rank votes."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random display order (and of the overlap draw)."),
    overlap: int = typer.Option(0, "--overlap", min=0, help="Topics drawn (seeded) into the shared overlap set "
                                "that every assessor judges, for agreement."),
    overlap_topics: str | None = typer.Option(None, "--overlap-topics", help="The overlap set by name: A.201,A.205 "
                                              "(instead of --overlap)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object (topics, items, per topic, per run)."),
) -> None:
    """Pool RUN files per topic as the ARQMath lab did and write the assessment database --out."""
    from ..assess import build_pool, check_pool_out, classify_runs, create_pool_db
    from ..readers.topics import read_topics

    if task not in (1, 2, 3):
        raise InputError(f"--task must be 1, 2 or 3, not {task}")
    if overlap and overlap_topics:
        raise InputError("give --overlap or --overlap-topics, not both")
    if task == 2 and index is None and not formulas:
        raise InputError("a Task 2 pool needs the formulae's visual ids: give --index IDX or --formulas TSV")
    pool_runs = classify_runs(runs, task)
    check_pool_out(out, force, [*runs, topics, index, *(formulas or [])])
    err = console(stderr=True)
    read = ReadReport(source=str(topics) if topics else "")
    topic_list = read_topics(topics, None, read) if topics is not None else []
    visual_ids = None
    if task == 2:
        if index is not None:
            from ..indexes.directory import open_store

            visual_ids = open_store(index).visual_ids
        else:
            from ..runs.lookup import FormulaTsvLookup

            vmap = FormulaTsvLookup(*formulas, report=read).visual_map()  # type: ignore[misc]
            visual_ids = lambda ids: {i: vmap.get(i) for i in ids}  # noqa: E731
    built = build_pool(task, pool_runs, depth=depth, alternate_depth=alternate_depth, seed=seed,
                       visual_ids=visual_ids, instances=instances, report=read)
    if not built.topics:
        raise InputError(f"no topic has a hit in {', '.join(map(str, runs))}: nothing to pool (is --task {task} right?)")
    known = {t.topic_id for t in topic_list}
    missing = [t for t in built.topics if t not in known]
    notes = list(built.notes)
    if topics is not None and len(missing) == len(built.topics):  # every question unseen: another year's file?
        raise InputError(f"none of the {len(built.topics)} pooled topics ({missing[0]} ...) is in {topics}, so the "
                         "assessors would read no question: topics of another year or task?")
    if topics is not None and missing:
        notes.append(f"{len(missing)} pooled topic(s) not in {topics} (their question will not be shown): "
                     + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""))
    chosen = create_pool_db(out, built, topic_list,
                            overlap=[t.strip() for t in overlap_topics.split(",") if t.strip()] if overlap_topics else overlap,
                            meta={"runs": ",".join(str(r.path) for r in pool_runs), "topics_file": str(topics or ""),
                                  "index": str(index or "")}, force=force)
    counts = built.counts()
    for problem in read.problems[:10]:
        err.print(f"warning: skipped {problem}", highlight=False, markup=False)
    for note in notes:
        err.print(f"note: {note}", highlight=False, markup=False)
    if json_out:
        print_json({"out": str(out), **counts, "overlap": chosen})
    else:
        unit = "visually distinct formulae" if task == 2 else "items"
        what = f" ({counts['visual_ids']:,} {unit})" if task == 2 else ""
        err.print(f"pooled {counts['items']:,} items{what} for {counts['topics']} topics into {out} "
                  f"(depth {built.depth}, alternates {built.alternate_depth}, seed {seed})", highlight=False, markup=False)
        for r in built.runs:
            err.print(f"  {r.name}: {r.role}, depth {r.depth}, pooled {r.pooled:,} ({r.unique:,} no other run pooled)",
                      highlight=False, markup=False)
        if chosen:
            err.print(f"  overlap set (every assessor): {', '.join(chosen)}", highlight=False, markup=False)
    if read.skipped_total:
        raise typer.Exit(1)  # pooled, but some input lines were skipped


def register(app: typer.Typer) -> None:
    app.command("pool")(friendly_errors(pool))
