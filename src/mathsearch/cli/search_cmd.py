"""``mathsearch search "text with $x^2$"``: the top hits of a system, with snippets and matched formulae.

A thin face over :class:`mathsearch.searcher.Searcher`, which the web page will share."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from ..readers.snippets import tex_shown
from ..searcher import Searcher
from ._common import QueryCommand, console, friendly_errors, print_json, searching


def search(
    query: str = typer.Argument(..., help='Query text, formulae as $LaTeX$ or typed plain (sqrt 2, x^2+y^2=1); '
                                          'filters \\[tag], -\\[tag], score:N, answers:N, is:accepted.'),  # \\[: not rich markup
    index_dir: Path = typer.Option(Path("index"), "--index", "-i", help="INDEX_DIR built by `mathsearch index`."),
    task: int = typer.Option(1, "--task", min=1, max=2,
                             help="1: answers, 2: formula instances (Task 3's one answer: `mathsearch answer`)."),
    system: str | None = typer.Option(None, "--system", "-s", help="System (default: ours for Task 1, formula for Task 2)."),
    tags: str = typer.Option("", "--tags", help="Comma-separated tags of the question."),
    top_k: int = typer.Option(10, "--top", "-k", min=1, help="Hits to show."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Print the top hits for QUERY: score, post, snippet and the formulae it shares with the query.

    Titles and matched formulae longer than 200 characters are cut ("..."; with --json the hit's
    "cut" lists the fields shortened), as snippets are; at most 10 matched formulae are listed.
    """
    with searching():  # on a terminal, a line while it works: a first search with vectors loads MiniLM (~10 s)
        result = Searcher(index_dir).search(query, task, system, top_k, tuple(t.strip() for t in tags.split(",") if t.strip()))
    if json_out:
        print_json(result.as_json())
        return
    out = console()
    for notice in result.notices:
        out.print(f"note: {notice}", highlight=False, markup=False)
    if result.suggestion:
        out.print(f"did you mean: {result.suggestion}", highlight=False, markup=False)
    understood = result.searched_as
    if understood:
        out.print("searched as: " + "  ".join(f"${s['latex']}$" for s in understood), highlight=False, markup=False)
    out.print(f"[bold]{escape(result.system)}[/bold]: {len(result.hits)} hits", highlight=False)
    kind = "formula" if task == 2 else "answer"
    for h in result.hits:
        out.print(f"{h.rank:>3}. {h.score:.4f}  {kind} {h.id}  in: {h.thread_title or ''}", highlight=False, markup=False)
        out.print(f"     {h.snippet}", highlight=False, markup=False)
        if h.matched_formulae:
            more = h.matched_total - len(h.matched_formulae)
            # as the page shows them: LaTeXML's "%" continuations and entities gone (--json: as stored)
            out.print("     matched: " + "  ".join(f"${tex_shown(m)}$" for m in h.matched_formulae)
                      + (f"  (+{more} more)" if more else ""), highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("search", cls=QueryCommand)(friendly_errors(search))
