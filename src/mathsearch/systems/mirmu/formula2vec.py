"""``formula2vec`` (Task 1) and ``formula2vec-formula`` (Task 2): Doc2Vec DBOW formula vectors
(seed 002, section 5; ``formula2vec.toml``).

Task 2: the query formula's vector is inferred, and the nearest visual formulae (by cosine) are
returned, one instance each.  Task 1: each of the topic's largest formulae is matched to its
nearest formulae; an answer scores the best cosine among its formulae, summed over the topic's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base import Ranking, SearchContext, SearchQuery, register
from ..formula import largest_formulae
from .config import search_config


@dataclass(frozen=True)
class Formula2VecSearch:
    infer_epochs: int = 10
    query_formulae: int = 5
    depth: int = 2000
    nprobe: int = 256


@register
@dataclass(frozen=True)
class Formula2VecFormula:
    """Task 2: the visual formulae nearest the query formula's inferred Doc2Vec vector."""

    NAME = "formula2vec-formula"
    TASK = 2
    NEEDS = ("formula2vec",)
    DATA_USED = "math"
    DESCRIPTION = "Formula2Vec (MIRMU): Doc2Vec DBOW vectors of formulae in prefix notation, cosine"
    config: str = ""
    nprobe: int = -1  # -1: the config's; 0: exact over every vector even where an IVF index is built

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        if not query.formula_latex:
            return Ranking()
        cfg = search_config(Formula2VecSearch, "formula2vec", self.config)
        index = ctx.open("formula2vec")
        rows, scores = index.nearest(index.infer(query.formula_latex, cfg.infer_epochs), limit,
                                     cfg.nprobe if self.nprobe < 0 else self.nprobe)
        return Ranking({int(index.instance_ids[r]): float(s) for r, s in zip(rows, scores, strict=True)},
                       posts={int(index.instance_ids[r]): int(index.post_ids[r]) for r in rows})


@register
@dataclass(frozen=True)
class Formula2Vec:
    """Task 1: answers by their formulae's Doc2Vec similarity to the topic's formulae."""

    NAME = "formula2vec"
    TASK = 1
    NEEDS = ("formula2vec",)
    DATA_USED = "math"
    DESCRIPTION = "Formula2Vec (MIRMU): answers by the best cosine of their formulae to each topic formula"
    config: str = ""
    nprobe: int = -1  # -1: the config's; 0: exact over every vector even where an IVF index is built

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        cfg = search_config(Formula2VecSearch, "formula2vec", self.config)
        nprobe = cfg.nprobe if self.nprobe < 0 else self.nprobe
        formulae = [f for f in query.bags.formulae if f.strip()]
        if not formulae:
            return Ranking()
        index = ctx.open("formula2vec")
        total: dict[int, float] = {}
        for latex in largest_formulae(list(dict.fromkeys(formulae)), cfg.query_formulae):
            rows, scores = index.nearest(index.infer(latex, cfg.infer_epochs), cfg.depth, nprobe)
            best: dict[int, float] = {}
            for r, s in zip(rows.tolist(), scores.tolist(), strict=True):
                for a in index.answers_of(int(r)).tolist():
                    if s > best.get(a, -2.0):
                        best[a] = s
            for a, s in best.items():
                total[a] = total.get(a, 0.0) + s
        return Ranking(total).top(limit)
