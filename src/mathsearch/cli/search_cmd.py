"""``mathsearch search "text with $x^2$"``: the top hits of a system, with snippets and matched formulae."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from ..errors import InputError
from ..systems import SearchContext, SearchQuery, make_system, spec, system_class, system_names
from ..systems.ours import default_spec
from ..systems.runner import top
from ..text.analysis import formula_key, split_math
from ._common import console, friendly_errors, print_json

DEFAULT_SYSTEM = {2: "formula"}  # Task 1: ours, with dense signals when the index has them
MAX_SHOWN = 200  # characters of a title or matched formula printed, as a snippet is cut at 200
MAX_MATCHED = 10  # matched formulae listed per hit


def snippet(text: str, words: set[str], width: int = 200) -> str:
    """The stretch of ``text`` around the first query word it holds, on one line."""
    flat = " ".join(text.split())
    low = flat.lower()
    at = min((i for w in words if len(w) > 2 and (i := low.find(w)) >= 0), default=0)
    start = max(0, at - width // 3)
    piece = flat[start : start + width]
    return ("..." if start else "") + piece + ("..." if start + width < len(flat) else "")


def cap(text: str, width: int = MAX_SHOWN) -> tuple[str, bool]:
    """``text`` cut to ``width`` characters (with "..." after it), and whether it was cut."""
    if len(text) <= width:
        return text, False
    return text[:width] + "...", True


def search(
    query: str = typer.Argument(..., help='Query text, formulae as $LaTeX$ (Task 2: the formula).'),
    index_dir: Path = typer.Option(Path("index"), "--index", "-i", help="INDEX_DIR built by `mathsearch index`."),
    task: int = typer.Option(1, "--task", help="1: answers, 2: formula instances."),
    system: str | None = typer.Option(None, "--system", "-s", help="System (default: ours for Task 1, formula for Task 2)."),
    tags: str = typer.Option("", "--tags", help="Comma-separated tags of the question."),
    top_k: int = typer.Option(10, "--top", "-k", min=1, help="Hits to show."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Print the top hits for QUERY: score, post, snippet and the formulae it shares with the query.

    Titles and matched formulae longer than 200 characters are cut ("..."; with --json the hit's
    "cut" lists the fields shortened), as snippets are; at most 10 matched formulae are listed.
    """
    if task not in (1, 2):
        raise InputError(f"--task must be 1 or 2, not {task}")
    if not query.strip() or not query.replace("$", "").strip():
        what = "words or a $formula$" if task == 1 else "a formula"
        raise InputError(f"the query is empty; give {what} to search for.")
    name = system or (default_spec(index_dir) if task == 1 else DEFAULT_SYSTEM[task])
    cls = system_class(name.partition(":")[0])
    if cls.TASK != task:
        raise InputError(f"system {cls.NAME} answers task {cls.TASK}; task {task} systems: {', '.join(system_names(task))}")
    sys_obj = make_system(name)
    ctx = SearchContext(index_dir)
    q = SearchQuery.from_text(query, tags=tuple(t.strip() for t in tags.split(",") if t.strip()))
    ranking = top(sys_obj.search(ctx, q, max(top_k, 1)), top_k)
    order = sorted(ranking.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    store = ctx.store
    query_keys = {formula_key(latex): latex for latex in split_math(query)[1]} if task == 1 else {}
    words = set(q.bags.title_words)
    hits = []
    for rank, (hit_id, score) in enumerate(order, 1):
        if task == 2:
            f = store.formula(hit_id)
            post = store.post(f.post_id) if f else None
            matched = [f.latex] if f else []
        else:
            post = store.post(hit_id)
            matched = []
            if post is not None:
                matched = sorted({f.latex for f in store.formulas_of(post.post_id) if formula_key(f.latex) in query_keys})
        thread = store.post(post.thread_id) if post is not None else None
        cut = []
        title = thread.title if thread else None
        if title is not None:
            title, was_cut = cap(title)
            if was_cut:
                cut.append("thread_title")
        shown = [cap(m) for m in matched[:MAX_MATCHED]]
        if len(matched) > MAX_MATCHED or any(c for _, c in shown):
            cut.append("matched_formulae")
        hits.append({
            "rank": rank, "id": hit_id, "post_id": post.post_id if post else None, "score": score,
            "thread_title": title,
            "snippet": snippet(post.text, words) if post else "", "matched_formulae": [m for m, _ in shown],
            "matched_total": len(matched), "cut": cut,
        })
    if json_out:
        print_json({"query": query, "system": spec(sys_obj), "hits": hits})
        return
    out = console()
    out.print(f"[bold]{escape(spec(sys_obj))}[/bold]: {len(hits)} hits", highlight=False)
    for h in hits:
        kind = "formula" if task == 2 else "answer"
        out.print(f"{h['rank']:>3}. {h['score']:.4f}  {kind} {h['id']}  in: {h['thread_title'] or ''}", highlight=False,
                  markup=False)
        out.print(f"     {h['snippet']}", highlight=False, markup=False)
        if h["matched_formulae"]:
            more = h["matched_total"] - len(h["matched_formulae"])
            out.print("     matched: " + "  ".join(f"${m}$" for m in h["matched_formulae"])
                      + (f"  (+{more} more)" if more else ""), highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("search")(friendly_errors(search))
