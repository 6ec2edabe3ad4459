"""``mathsearch eval --task T --qrels QRELS RUN...``: score runs as the ARQMath lab does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import console, friendly_errors, print_json


def eval_runs(
    runs: Annotated[list[Path], typer.Argument(help="Run files (TREC, ARQMath Task 2 or Task 3 layout).")],
    task: Annotated[int, typer.Option("--task", "-t", min=1, max=3, help="ARQMath task: 1, 2 or 3.")],
    qrels: Annotated[Path, typer.Option("--qrels", "-q", help="Relevance judgements (topic 0 id relevance).")],
    index: Annotated[Path | None, typer.Option("--index", "-i", help="Collection store (visual ids, answer texts, ids present).")] = None,
    formulas: Annotated[list[Path] | None, typer.Option("--formulas", help="Formula index TSV(s) with visual ids (Task 2).")] = None,
    posts: Annotated[Path | None, typer.Option("--posts", help="Posts XML for answer texts (Task 3 LO/CS).")] = None,
    answers: Annotated[Path | None, typer.Option("--answers", help="TSV 'id<TAB>text' of judged answers (Task 3).")] = None,
    answer_map: Annotated[Path | None, typer.Option("--answer-map", help="TSV 'run topic answer_id' (lab's Task 3 map).")] = None,
    collection_only: Annotated[bool, typer.Option("--collection-only", help="Sub-collection protocol: judgements of absent documents removed.")] = False,
    qrels_key: Annotated[str, typer.Option("--qrels-key", help="Task 2 qrels ids: auto, visual or formula.")] = "auto",
    categories: Annotated[Path | None, typer.Option("--categories", help="CSV/TSV of topic categories for breakdowns.")] = None,
    test: Annotated[str, typer.Option("--test", help="Significance test against the first run: t or randomisation.")] = "t",
    no_cs: Annotated[bool, typer.Option("--no-cs", help="Task 3: skip Contextual Similarity (no model loaded).")] = False,
    model: Annotated[Path | None, typer.Option("--model", help="Task 3: local model directory for Contextual Similarity.")] = None,
    sources: Annotated[bool, typer.Option("--sources", help="Task 3 development protocol with Task 1 qrels: AR_src/P@1_src "
                                          "(grade of the main source post), LO/CS against the other relevant answers of "
                                          "<= 1,200 characters; Task 1 runs read as their first hit cut to 1,200.")] = False,
    tokenizer: Annotated[str, typer.Option("--tokenizer", help="With --sources, LO tokens: default (MathBERTa or MiniLM "
                                           "wordpiece when installed) or regex (math-aware, no model).")] = "default",
    per_topic: Annotated[bool, typer.Option("--per-topic", help="Also print every topic's scores.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object keyed by run file name.")] = False,
) -> None:
    """Score RUN files against QRELS: nDCG', MAP', P'@10, nDCG@10 (Tasks 1, 2) or AR, P@1, LO, CS (Task 3)."""
    from ..evaluation import to_json, to_text
    from ..evaluation.files import EvalFiles, evaluate_files

    report = evaluate_files(EvalFiles(
        task=task, qrels=qrels, runs=tuple(runs), index=index, formulas=tuple(formulas or ()), posts=posts,
        answers=answers, answer_map=answer_map, collection_only=collection_only, qrels_key=qrels_key,
        categories=categories, test=test, contextual=not no_cs, model=model, sources=sources, tokenizer=tokenizer,
    ))
    bad_lines = report.qrels_read.skipped_total + sum(r.read.skipped_total for r in report.runs)
    if json_out:
        print_json(to_json(report))
        err = console(stderr=True)
        for r in report.runs:
            for w in r.notes + (r.checks.summary() if r.checks else []):
                err.print(f"warning: {r.name}: {w}", highlight=False, soft_wrap=True)
        for note in report.notes:
            err.print(note, highlight=False, soft_wrap=True)
    else:
        typer.echo(to_text(report, per_topic=per_topic), nl=False)
    if bad_lines:
        raise typer.Exit(1)  # scored, but some input lines were skipped


def register(app: typer.Typer) -> None:
    app.command("eval")(friendly_errors(eval_runs))
