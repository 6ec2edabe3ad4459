"""A ranking narrowed to what a typed query allows: its filters (``[tag]``, ``-[tag]``, ``answers:N``,
``score:N``, ``is:accepted``; :mod:`mathsearch.text.filters`) and, for a formula search, its query
variables (``?a^2+?b^2``; :mod:`mathsearch.formula.wildcards`).  A system ranks deeper than it is
asked, then these keep the hits they allow, in their order (:meth:`mathsearch.searcher.Searcher.rank_by`)."""

from __future__ import annotations

import heapq
from collections.abc import Callable

from ..formula.analysis import FormulaAnalyzer
from ..formula.opt import ONode
from ..formula.wildcards import match
from ..ranking import Ranking
from ..text.filters import QueryFilters
from .base import SearchContext

# Task 2 ranks one instance a visual id; a filter its instance fails looks for another instance of the
# same visual id among its first OTHER_INSTANCES, for at most OTHER_LOOKUPS visual ids a query
OTHER_INSTANCES = 1000
OTHER_LOOKUPS = 200


def matching(ctx: SearchContext, ranking: Ranking, pattern: ONode, analyzer: FormulaAnalyzer) -> Ranking:
    """The formula instances of ``ranking`` whose operator tree holds ``pattern`` (its query
    variables bound consistently), in their order."""
    keep = {}
    store = ctx.store
    verdict: dict[str, bool] = {}  # by LaTeX: instances of one formula repeat
    for doc in ranking:
        f = store.formula(doc)
        if f is None:
            continue
        if f.latex not in verdict:
            verdict[f.latex] = match(pattern, analyzer.analyze(f.latex).parsed.opt) is not None
        if verdict[f.latex]:
            keep[doc] = ranking[doc]
    posts = {d: ranking.posts[d] for d in keep if d in ranking.posts} if ranking.posts is not None else None
    return Ranking(keep, posts)


def filtered(ctx: SearchContext, ranking: Ranking, filters: QueryFilters, need: int = 0) -> Ranking:
    """The hits of ``ranking`` whose post and thread pass ``filters`` (a field the collection does
    not record passes: the searcher's notices say it was not applied).  A Task 2 ranking holds one
    instance a visual id: where that instance fails, another instance of the same visual id that
    passes stands for it (among its first :data:`OTHER_INSTANCES`), for the hits that could be among
    the best ``need``."""
    posts = {d: ranking.post_of(d) or d for d in ranking}
    store = ctx.store
    scored = store.holds_field("score")
    accepted_known = store.holds_field("accepted_answer_id")

    def allowed(facts: dict, post: str) -> bool:
        fact = facts.get(int(post)) if post.isdigit() else None
        if fact is None:
            return False
        _, score, tags, answers, accepted = fact
        if any(t not in tags for t in filters.tags) or any(t in tags for t in filters.not_tags):
            return False
        if filters.min_score is not None and scored and (score is None or score < filters.min_score):
            return False
        if filters.min_answers is not None and (answers or 0) < filters.min_answers:
            return False
        return not (filters.accepted and accepted_known and accepted != int(post))

    facts = store.filter_facts(set(posts.values()))
    keep = {doc: ranking[doc] for doc, post in posts.items() if allowed(facts, post)}
    posts_kept = {d: ranking.posts[d] for d in keep if d in ranking.posts} if ranking.posts is not None else None
    if posts_kept is not None and need > 0:
        _other_instances(ctx, ranking, [d for d in ranking.ordered() if d not in keep], keep, posts_kept, allowed, need)
    return Ranking(keep, posts_kept)


def _other_instances(ctx: SearchContext, ranking: Ranking, failed: list[str], keep: dict[str, float],
                     posts_kept: dict[str, str], allowed: Callable[[dict, str], bool], need: int) -> None:
    """For each Task 2 hit of ``failed`` (in rank order) that may still be among the best ``need``,
    the first instance of its visual id that ``allowed`` passes, with that hit's score."""
    store = ctx.store
    best = heapq.nsmallest(need, (-s for s in keep.values()))  # negated: the kept hits' best need scores
    kept_visuals: set[str | None] | None = None  # read only when a stand-in is looked for
    for looked, doc in enumerate(failed):
        if looked >= OTHER_LOOKUPS or len(best) >= need and ranking[doc] < -best[-1]:
            break  # the kept hits' best need all score higher: no stand-in could enter them
        if kept_visuals is None:
            kept_visuals = {f.visual_id for d in keep if (f := store.formula(d)) is not None}
        f = store.formula(doc)
        if f is None or f.visual_id is None or f.visual_id in kept_visuals:
            continue
        others = [o for o in store.formulas_with_visual_id(f.visual_id, OTHER_INSTANCES) if o.formula_id != f.formula_id]
        facts = store.filter_facts({o.post_id for o in others})
        for o in others:
            if allowed(facts, str(o.post_id)):
                keep[str(o.formula_id)], posts_kept[str(o.formula_id)] = ranking[doc], str(o.post_id)
                kept_visuals.add(f.visual_id)
                best = heapq.nsmallest(need, [*best, -ranking[doc]])
                break
