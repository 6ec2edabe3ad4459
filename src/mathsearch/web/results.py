"""The search page's results as a person reads them: how many were found, one entry a thread (Task 1)
or a formula (Task 2), best first, without system names or scores unless asked for.

    found = results(searcher, q, task, page)       # the library call (a server's worker runs it on a miss)
    view = results_view(found, q, task, page, details=False)   # what search.html shows

A page ranks :data:`DEPTH` hits once and groups them: the answers of one thread under the thread
(its best answer stands for it, at the rank of that answer; "n more answers in this thread"), the
instances of one formula under the formula (one visual id).  Pages count groups, ten a page, so a
thread is on one page only.  Only the hits a page shows are decorated (snippets, titles), so a deep
ranking costs its ranking, not a thousand snippets.  The JSON API (``/api/search``) is unchanged:
hits of a page, for programs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any
from urllib.parse import urlencode

from ..answers import sources_label
from ..ranking import Ranking
from ..searcher import ParsedQuery, Searcher, SearchHit, group_by_visual_id
from .formula_marks import formula_parts_html, text_parts_html
from .render import formula_html, latex_code, marks_of, text_html

MAX_PAGE = 20  # pages of a result list (the API's and the page's)
DEPTH = 1000  # hits ranked for a page: the count shown is "more than 1,000" past it
GROUPS_A_PAGE = 10
MORE_SHOWN = 3  # the other hits of a group listed under it (the rest: its thread or formula page)


def href(path: str, **params: Any) -> str:
    """``path`` with the parameters that have a value (not None, not "") as its query string; a 0
    (formula id 0) is kept."""
    kept = {k: v for k, v in params.items() if v is not None and v != ""}
    return path + ("?" + urlencode(kept) if kept else "")


def group_ids(ids: list[str], key_of: Mapping[str, object]) -> list[list[str]]:
    """``ids`` (in rank order) grouped by ``key_of`` (an id without a key is a group alone), groups
    in the order of their best hit, each group in rank order."""
    groups: dict[object, list[str]] = {}
    for i in ids:
        key = key_of.get(i)
        groups.setdefault(("alone", i) if key is None else key, []).append(i)
    return list(groups.values())


def results(searcher: Searcher, q: str, task: int, page: int, per_page: int = GROUPS_A_PAGE,
            max_page: int = MAX_PAGE) -> dict:
    """One page of grouped results (Task 1: by thread; Task 2: by visual id) and the counts."""
    return ranked_results(searcher, q, task, page, per_page, max_page)[3]


def ranked_results(searcher: Searcher, q: str, task: int, page: int, per_page: int = GROUPS_A_PAGE,
                   max_page: int = MAX_PAGE) -> tuple[str, Ranking, ParsedQuery, dict]:
    """:func:`results` with the spec that ranked, its ranking :data:`DEPTH` deep and the query as
    parsed (for a server to keep)."""
    p = searcher.parse(q, task)
    system, ranking = searcher.rank(p, task, k=DEPTH)
    return system, ranking, p, results_from(searcher, p, system, ranking, page, per_page, max_page)


def results_from(searcher: Searcher, p: ParsedQuery, system: str, ranking: Ranking, page: int,
                 per_page: int = GROUPS_A_PAGE, max_page: int = MAX_PAGE) -> dict:
    """:func:`results` from a ranking :data:`DEPTH` deep already made and its query as parsed (a
    server keeps both): the next pages of a query group and decorate, they do not search again."""
    task = p.task
    ids = ranking.ordered()
    store = searcher.ctx.store
    keys: Mapping[str, object] = store.thread_ids(ids) if task == 1 else store.visual_ids(ids)
    groups = group_ids(ids, keys)
    shown = groups[(page - 1) * per_page: page * per_page]
    wanted = {i for g in shown for i in g[: 1 + MORE_SHOWN]}
    decorated = {str(h.id): h for h in searcher.decorate(ranking, task, p, wanted)}
    out = []
    for g in shown:
        hits = [decorated[i] for i in g[: 1 + MORE_SHOWN]]
        entry: dict[str, Any] = {"hits": hits, "count": len(g), "key": keys.get(g[0])}
        if task == 2:
            entry["posts"] = group_by_visual_id(hits[:1], searcher)[0].posts
        out.append(entry)
    best = out[0]["hits"][0].id if out and page == 1 else None  # "no close match" is said on page 1
    return {"system": system, "found": len(ids), "capped": len(ids) >= DEPTH, "groups_found": len(groups),
            "pages": min(max_page, -(-len(groups) // per_page)), "groups": out, "per_page": per_page,
            # the query as it was read, for the page: no face reads the typed text again
            "searched": p.searched, "formulae": list(p.marked_formulae), "bare_formula": p.bare_formula,
            "searched_as": p.searched_as_json(), "notices": searcher.notices(p, task, best),
            "suggestion": searcher.spelling(p, task).suggestion}


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def summary(found: dict, task: int, page: int) -> str:
    """The count line: "312 answers in 201 threads · page 2 of 21", or past :data:`DEPTH` hits
    "1,000+ answers; the best 1,000 are in 815 threads · page 1 of 20"."""
    n, g = found["found"], found["groups_found"]
    if not n:
        return "No answer found." if task == 1 else "No formula found."
    count = f"{n:,}+" if found["capped"] else f"{n:,}"
    if task == 1:
        text = f"{count} answers" if n > 1 else "1 answer"
        text += f"; the best {n:,} are in {_plural(g, 'thread')}" if found["capped"] else f" in {_plural(g, 'thread')}"
    elif g == n:  # one instance a formula (the formula systems return one a visual id)
        text = f"{count} formulae" if n > 1 else "1 formula"
    else:
        text = f"{count} formula instances of {_plural(g, 'distinct formula', 'distinct formulae')}"
    if page <= found["pages"] and (found["pages"] > 1 or page > 1):  # past the end, the page says so itself
        text += f" · page {page} of {found['pages']}"
    return text


def results_view(found: dict, q: str, task: int, page: int, details: bool = False) -> dict:
    """What search.html shows of a grouped result page (Task 1 or 2)."""
    marks = marks_of(found["searched"])  # plain-words maths marks as $...$ does
    queries = found["formulae"]  # the parts of hit formulae they match are marked
    back = {"page": page if page > 1 else None, "details": 1 if details else None}  # a thread's way back here

    def hit(h: SearchHit) -> dict:
        fid = h.id if task == 2 else None
        link = href(f"/thread/{h.post_id}", q=q, task=task, fid=fid, **back) + f"#p{h.post_id}"
        matched = [formula_html(m, mark=True) if "matched_formulae" not in h.cut or len(m) <= 200 else latex_code(m)
                   for m in h.matched_formulae]
        snippet_marks = marks if task == 1 else {*marks, *marks_of("".join(f"${m}$" for m in h.matched_formulae))}
        snippet_html = (text_parts_html(h.snippet, marks, queries, bound_parts(h)) if task == 1
                        else text_html(h.snippet, snippet_marks))
        return {**asdict(h), "href": link, "title_html": text_html(h.thread_title or f"post {h.post_id}", marks),
                "snippet_html": snippet_html, "matched_html": matched,
                "more": h.matched_total - len(h.matched_formulae)}

    first = (page - 1) * found["per_page"] + 1
    groups = []
    for g in found["groups"]:
        hits = [hit(h) for h in g["hits"]]
        best = hits[0]
        entry: dict[str, Any] = {"best": best, "others": hits[1:], "count": g["count"],
                                 "unlisted": g["count"] - len(hits), "key": g["key"]}
        if task == 1:
            entry["more_label"] = _plural(g["count"] - 1, "more answer") + " in this thread"
            entry["all_href"] = href(f"/thread/{best['post_id']}", q=q, task=task, **back) + f"#p{best['post_id']}"
        else:
            latex = best["matched_formulae"][0] if best["matched_formulae"] else ""
            entry["more_label"] = _plural(g["count"] - 1, "more instance") + " of this formula"
            # marked whole when it is the query's formula, else in part (the best hit was the one left plain)
            entry["formula_html"] = formula_parts_html(latex, queries, marks, bound=bound_parts(best))
            entry["all_href"] = entry["formula_href"] = href("/formula", id=best["id"])
            shown = {h["post_id"] for h in hits}
            seen: set[int] = set()
            entry["posts"] = []
            for p in g["posts"]:
                if p.post_id not in shown and p.thread_id not in seen:
                    seen.add(p.thread_id)
                    entry["posts"].append({"href": href(f"/thread/{p.post_id}", fid=p.formula_id) + f"#p{p.post_id}",
                                           "title_html": text_html(p.thread_title or f"thread {p.thread_id}")})
        groups.append(entry)
    pages = found["pages"]
    view: dict[str, Any] = {
        "groups": groups, "first_rank": first, "summary": summary(found, task, page),
        "system": found["system"], "depth": DEPTH,
        "prev_href": href("/", q=q, task=task, page=page - 1, details=int(details) or None) if page > 1 else None,
        "next_href": href("/", q=q, task=task, page=page + 1, details=int(details) or None) if page < pages else None,
        "details_href": href("/", q=q, task=task, page=page if page > 1 else None, details=None if details else 1),
        "bare_formula": found["bare_formula"],
    }
    if view["bare_formula"]:
        view["query_formula_html"] = formula_html(found["searched"][1:-1])
    return view


def bound_parts(hit: SearchHit | Mapping[str, Any]) -> list[str]:
    """The sub-formulae of a hit bound to the query's variables (``?a``), boxed in blue: the hit's
    ``bindings`` (``{"a": LaTeX}``, issue 42.4's field: the LaTeX is written back from the
    operator tree, :func:`mathsearch.formula.wildcards.to_latex`)."""
    bindings = hit.get("bindings") if isinstance(hit, Mapping) else getattr(hit, "bindings", None)
    return [latex for latex in (bindings or {}).values() if latex]


def answer_view(found: dict, q: str) -> dict:
    """What search.html shows of a Task 3 answer: its text and its sources."""
    marks = marks_of(q)
    a = found["answer"]
    sources = [{"post_id": s["post_id"], "href": href(f"/thread/{s['post_id']}", q=q, task=3) + f"#p{s['post_id']}",
                "title_html": text_html(s["thread_title"] or f"post {s['post_id']}", marks)} for s in a["sources"]]
    how = sources_label(a.get("mode", "extract"), len(sources))
    if a.get("mode") == "declined":  # nothing close enough to answer from: the notice says so
        said = "No answer: the nearest posts, none close to the question." if sources else \
            "No answer: no post of the collection to answer from."
        return {"answer": {"html": text_html(said, marks),
                           "sources": sources, "how": f"The answer is {how}" + (":" if sources else ".")},
                "system": found["system"],
                "summary": f"No answer; {_plural(len(sources), 'nearest post')}." if sources else "No answer."}
    return {"answer": {"html": text_html(a["text"], marks, lines=True), "sources": sources,
                       "how": f"The answer above is {how}" + (":" if sources else ".")},
            "system": found["system"],
            "summary": f"One answer from {_plural(len(sources), 'source')}."}
