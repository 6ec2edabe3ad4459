"""``mias``: MIaS with Leave-Rightmost-Out query expansion (seed 002, section 3; ``mias.toml``).

The topic's title (3.1) becomes a sequence of units in reading order: each content word, and each
formula with its M-terms.  :func:`lro_subqueries` makes the full query, then the query leaving the
rightmost unit out, then the two rightmost, and so on; each subquery is searched and the results
are interleaved round-robin (:func:`interleave`: the first of each subquery's list in order, then
the second of each ...), a document kept at its first place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...indexes.mirmu.common import mterm_tokens
from ...text.analysis import words
from ...text.dollar_math import find_math
from ..base import Ranking, SearchContext, SearchQuery, register
from .config import search_config

# One unit of a query: ("text", (word,)) or ("math", (m-term tokens of one formula,)).
Unit = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class MiasSearch:
    body_fallback: bool = True
    max_subqueries: int = 8
    text_weight: float = 1.0
    math_weight: float = 1.0
    unified_weight: float = 0.5
    depth: int = 1000


def query_units(text: str, unify: bool = True, max_term_tokens: int = 128) -> list[Unit]:
    """Words and formulae of ``text`` (``$LaTeX$``) in reading order, one unit each."""
    units: list[Unit] = []
    pos = 0
    for start, end, latex in find_math(text, is_html=False):
        units.extend(("text", (w,)) for w in words(text[pos:start]))
        terms = mterm_tokens(latex, unify, max_term_tokens)
        if terms:
            units.append(("math", terms))
        pos = end
    units.extend(("text", (w,)) for w in words(text[pos:]))
    return units


def lro_subqueries(units: Sequence[Unit], max_subqueries: int) -> list[list[Unit]]:
    """Leave Rightmost Out: ``units``, ``units[:-1]``, ``units[:-2]`` ... down to one unit, at most
    ``max_subqueries`` of them."""
    n = len(units)
    return [list(units[: n - k]) for k in range(min(n, max(1, max_subqueries)))]


def interleave(lists: Sequence[Sequence[int]], limit: int) -> list[int]:
    """Round-robin over ``lists``: rank 1 of each in order, then rank 2 ..., each document once."""
    seen: set[int] = set()
    out: list[int] = []
    longest = max((len(x) for x in lists), default=0)
    for r in range(longest):
        for lst in lists:
            if r < len(lst) and lst[r] not in seen:
                seen.add(lst[r])
                out.append(lst[r])
                if len(out) >= limit:
                    return out
    return out


@register
@dataclass(frozen=True)
class Mias:
    """MIRMU's MIaS: title words and M-terms, LRO subqueries, interleaved."""

    NAME = "mias"
    TASK = 1
    NEEDS = ("mias",)
    DATA_USED = "both"
    DESCRIPTION = "MIaS (MIRMU): text and M-terms in tantivy, Leave-Rightmost-Out subqueries interleaved"
    config: str = ""  # a TOML file; empty: the packaged mirmu/mias.toml

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        cfg = search_config(MiasSearch, "mias", self.config)
        index = ctx.open("mias")
        build = index.build
        units = query_units(query.title, build.unify, build.max_term_tokens)
        if not units and cfg.body_fallback:
            units = query_units(query.question, build.unify, build.max_term_tokens)
        if not units:
            return Ranking()
        lists = []
        for sub in lro_subqueries(units, cfg.max_subqueries):
            terms = []
            for kind, tokens in sub:
                if kind == "text":
                    terms.append(("text", tokens[0], cfg.text_weight))
                else:
                    terms.extend(("math", t, cfg.unified_weight if t[0] == "u" else cfg.math_weight) for t in tokens)
            lists.append(index.search(terms, cfg.depth))
        ordered = interleave(lists, limit)
        n = len(ordered)
        return Ranking({doc: float(n - i) for i, doc in enumerate(ordered)})
