"""``mathsearch eval --task T --qrels QRELS RUN...``: score runs as the ARQMath lab does."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ._common import console, friendly_errors, print_json


def _answer_map(path: Path) -> dict[tuple[str, str], str]:
    # The lab's map from (run name, topic) to the synthetic id its Task 3 qrels use.
    out: dict[tuple[str, str], str] = {}
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            for i, row in enumerate(csv.reader(handle, delimiter="\t"), 1):
                if not row:
                    continue
                if len(row) != 3:
                    raise InputError(f"{path}, line {i}: expected 3 fields (run name, topic, answer id)")
                out[(row[0].strip(), row[1].strip())] = row[2].strip()
    except FileNotFoundError:
        raise InputError(f"answer map {path} does not exist") from None
    return out


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
    from ..evaluation import (
        evaluate_runs,
        from_formula_tsv,
        from_index,
        from_posts_xml,
        read_answer_texts,
        read_categories,
        to_json,
        to_text,
    )

    if qrels_key not in ("auto", "visual", "formula"):
        raise InputError(f"--qrels-key must be auto, visual or formula, not {qrels_key!r}")
    if test not in ("t", "randomisation"):
        raise InputError(f"--test must be t or randomisation, not {test!r}")
    if tokenizer not in ("default", "regex"):
        raise InputError(f"--tokenizer must be default or regex, not {tokenizer!r}")
    if sources and task != 3:
        raise InputError("--sources is the Task 3 development protocol: give --task 3")
    facts = None
    if index is not None:
        facts = from_index(index)
    elif formulas:
        facts = from_formula_tsv(*formulas)
    elif posts is not None:
        facts = from_posts_xml(posts)
    if index is not None and posts is not None:
        facts.text_of = from_posts_xml(posts).text_of  # type: ignore[union-attr]
    if sources:
        report = _evaluate_sources(qrels, runs, facts, collection_only, tokenizer, not no_cs, model, categories, test)
    else:
        report = evaluate_runs(
            task,
            qrels,
            runs,
            facts=facts,
            collection_only=collection_only,
            qrels_key=qrels_key,  # type: ignore[arg-type]
            categories=read_categories(categories) if categories else None,
            test=test,  # type: ignore[arg-type]
            answer_map=_answer_map(answer_map) if answer_map else None,
            answer_texts=read_answer_texts(answers) if answers else None,
            contextual=not no_cs,
            model_dir=model,
        )
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


def _evaluate_sources(qrels, runs, facts, collection_only, tokenizer, contextual, model, categories, test):
    """The Task 3 development protocol (:func:`mathsearch.evaluation.task3.evaluate_sources`)."""
    from ..evaluation import read_categories
    from ..evaluation.task3 import evaluate_sources
    from ..evaluation.tokenize import MathRegexTokenizer

    if facts is None or facts.text_of is None:
        raise InputError("--sources needs the answers' texts: give --index DIR (or --posts POSTS.xml)")
    present = None
    if collection_only:
        present = facts.present(1)
        if present is None:
            raise InputError("--collection-only needs the collection: give --index DIR")
    similarity = None
    if contextual:
        from ..evaluation.similarity import ContextualSimilarity

        similarity = ContextualSimilarity(model)
    return evaluate_sources(
        qrels, runs, facts.text_of, present, MathRegexTokenizer() if tokenizer == "regex" else None, similarity,
        read_categories(categories) if categories else None, test,
    )


def register(app: typer.Typer) -> None:
    app.command("eval")(friendly_errors(eval_runs))
