"""``mathsearch fuse``: fuse runs (reciprocal rank, min-max, CombSUM, MIRMU's ensemble)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import InputError
from ..evaluation.files import check_runs
from ..ranking import Ranking
from ..readers.runs import read_formula_rankings, read_run_scores
from ..records import FormulaHit, ReadReport, ScoredDoc
from ..runs import check_run_tag, write_formula_run, write_trec_run
from ..systems.fusion import METHODS, check_weights, fuse
from ._common import check_output, console, friendly_errors, print_json


def fuse_runs(
    runs: list[Path] = typer.Argument(..., help="Run files to fuse (same task)."),
    method: str = typer.Option("rrf", "--method", "-m", help="rrf, minmax, combsum or mirmu."),
    out: Path = typer.Option(..., "--out", "-o", help="Fused run file to write (missing parent folders are created); "
                             "an existing file is replaced only when it is a run file, or with --force."),
    force: bool = typer.Option(False, "--force", help="Replace --out even when it is not a run file."),
    task: int = typer.Option(1, "--task", help="1 (TREC layout) or 2 (formula runs)."),
    weights: str | None = typer.Option(None, "--weights", help="Comma-separated weight per run (rrf, minmax, combsum)."),
    k: float = typer.Option(60.0, "--k", min=0.0, help="RRF constant (0 or more)."),
    normalise: str = typer.Option("minmax", "--normalise", help="combsum: minmax, rank or none."),
    depth: int = typer.Option(1000, "--depth", min=1, help="Hits per topic kept."),
    tag: str | None = typer.Option(None, "--tag", help="Run tag (default fused-METHOD)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Fuse RUN files into one run written to --out."""
    if method not in METHODS:
        raise InputError(f"--method must be one of {', '.join(METHODS)}, not {method!r}")
    if task not in (1, 2):
        raise InputError(f"--task must be 1 or 2, not {task}")
    w = None
    if weights:
        try:
            w = [float(x) for x in weights.split(",")]
        except ValueError:
            raise InputError(f"--weights {weights!r} should be numbers separated by commas") from None
    if w is not None and len(w) != len(runs):
        raise InputError(f"--weights gives {len(w)} weights for {len(runs)} runs")
    check_weights(w, "--weights")  # before --out is touched
    check_run_tag(tag, "--tag")
    check_runs(runs, (task,))  # a file of another task's layout (or no run at all): exit 2, nothing written
    check_output(out, runs, force=force)
    err = console(stderr=True)
    read = ReadReport(source=", ".join(map(str, runs)))
    scored = []
    empty = []
    for p in runs:
        one = ReadReport(source=str(p))
        scored.append(read_run_scores(p, task, one) if task == 1 else read_formula_rankings(p, one))
        read.merge(one)
        if not any(scored[-1].values()):
            empty.append(p)
    if len(empty) == len(runs):
        raise InputError(f"no hits in {', '.join(map(str, runs))}: nothing to fuse (is --task {task} right?)")
    for p in empty:
        err.print(f"warning: {p} has no hits (empty, or every line skipped): it adds nothing to the fusion",
                  highlight=False, markup=False)
    fused = fuse(method, scored, w, k=k, normalise=normalise, depth=depth)
    run_tag = tag or f"fused-{method}"
    if task == 1:
        report = write_trec_run(out, (ScoredDoc(t, d, s) for t, docs in fused.items() for d, s in docs.items()), run_tag)
    else:
        def post_of(topic: str, formula: str) -> str:  # the first run that has the formula says where it is
            return next(p for r in scored if (p := r.get(topic, Ranking()).post_of(formula)) is not None)

        hits = (FormulaHit(t, f, post_of(t, f), s) for t, docs in fused.items() for f, s in docs.items())
        report = write_formula_run(out, hits, run_tag)
    result = {"out": str(out), "method": method, "runs": len(runs), "topics": report.topics, "hits": report.hits,
              "skipped_lines": read.skipped_total, "empty_runs": [str(p) for p in empty]}
    if json_out:
        print_json(result)
    else:
        err.print(f"fused {len(runs)} runs ({method}) into {out}: {report.hits:,} hits, "
                  f"{report.topics} topics", highlight=False, markup=False)
        for problem in read.problems[:10]:
            err.print(f"  {problem}", style="yellow", highlight=False, markup=False)
    if read.skipped_total or empty:
        raise typer.Exit(1)  # written, but input lines were skipped or a run was empty


def register(app: typer.Typer) -> None:
    app.command("fuse")(friendly_errors(fuse_runs))
