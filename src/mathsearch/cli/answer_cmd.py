"""``mathsearch answer "question with $x^2$"``: one answer of at most 1,200 characters, with its sources.

A thin face over :meth:`mathsearch.searcher.Searcher.answer`, which the web page will share.  The
generative system takes its endpoint from ``--system generate:url=...,model=...`` or the
environment (``MATHSEARCH_LLM_URL``, ``MATHSEARCH_LLM_MODEL``); ``--llm-key`` or
``MATHSEARCH_LLM_KEY`` / ``OPENAI_API_KEY`` give its key, which is never printed.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from ..answers import sources_label
from ..searcher import Searcher
from ._common import QueryCommand, console, friendly_errors, print_json, searching


def answer(
    question: str = typer.Argument(..., help="The question, formulae as $LaTeX$."),
    index_dir: Path = typer.Option(Path("index"), "--index", "-i", help="INDEX_DIR built by `mathsearch index`."),
    system: str | None = typer.Option(None, "--system", "-s", help="Task 3 system: extract (default), first-hit, "
                                      "or generate:url=URL,model=NAME (an OpenAI-compatible endpoint)."),
    tags: str = typer.Option("", "--tags", help="Comma-separated tags of the question."),
    llm_key: str | None = typer.Option(None, "--llm-key", help="API key of the generate system's endpoint "
                                       "(default: $MATHSEARCH_LLM_KEY or $OPENAI_API_KEY).", show_default=False),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Print one answer to QUESTION (at most 1,200 characters, LaTeX between $) and the posts it came from."""
    if llm_key is not None:
        os.environ["MATHSEARCH_LLM_KEY"] = llm_key  # read by the endpoint; never part of the system's spec
    with searching():  # on a terminal, a line while it works: a first search with vectors loads MiniLM (~10 s)
        result = Searcher(index_dir).answer(question, system, tuple(t.strip() for t in tags.split(",") if t.strip()))
    if json_out:
        print_json(result.as_json())
        return
    out = console()
    err = console(stderr=True)
    for note in result.notes:
        err.print(f"warning: {note}", highlight=False, markup=False)
    if result.suggestion:
        err.print(f"did you mean: {result.suggestion}", highlight=False, markup=False)
    if result.text:  # a declined answer has none: its notes above say why
        out.print(result.text, highlight=False, markup=False)
        out.print("", highlight=False)
    out.print(f"Sources: the answer is {sources_label(result.mode, len(result.sources))} (system {result.system})"
              + (":" if result.sources else "."), highlight=False, markup=False)
    for s in result.sources:
        out.print(f"  answer {s.post_id}  in: {s.thread_title or ''}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("answer", cls=QueryCommand)(friendly_errors(answer))
