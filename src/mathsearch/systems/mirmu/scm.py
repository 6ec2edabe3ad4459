"""``scm``: the Soft Cosine Measure of the topic to answers (seed 002, section 4; ``scm.toml``).

The topic's title, body and tags (4.2) become words and prefix-notation formula tokens
(:func:`mathsearch.indexes.mirmu.common.mixed_tokens`); their dtn TF-IDF vector is compared by
soft cosine (:class:`mathsearch.indexes.mirmu.scm.ScmIndex`) with the BM25 candidates of
``candidate_system`` (or every answer with ``candidates = 0``).  A query without a word the
dictionary knows returns no hits.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...indexes.mirmu.common import mixed_tokens, prefix_tokens
from ...text.analysis import words
from ..base import Ranker, Ranking, SearchContext, SearchQuery, make_system, needs_of, register
from .config import search_config


@dataclass(frozen=True)
class ScmSearch:
    tags: bool = True
    candidates: int = 1000
    candidate_system: str = "bm25-thread"


def query_tokens(query: SearchQuery, tags: bool = True) -> list[str]:
    out = mixed_tokens(query.title) + mixed_tokens(query.question)
    # tags as words ("real-analysis" -> real, analysis): the dictionary holds body words
    return out + words(" ".join(query.tags).replace("-", " ")) if tags else out


@register
@dataclass(frozen=True)
class Scm:
    """MIRMU's SCM: fastText term similarities, TF-IDF, soft cosine over BM25 candidates."""

    NAME = "scm"
    TASK = 1
    DATA_USED = "both"
    DESCRIPTION = "Soft Cosine Measure (MIRMU): fastText + sparse term similarity matrix + TF-IDF, re-ranking BM25"
    config: str = ""  # a TOML file; empty: the packaged mirmu/scm.toml
    candidates: int = -1  # -1: the config's; 0: every answer

    def _cfg(self) -> ScmSearch:
        return search_config(ScmSearch, "scm", self.config)

    def _depth(self) -> int:
        return self._cfg().candidates if self.candidates < 0 else self.candidates

    def needs(self) -> tuple[str, ...]:
        if self._depth() == 0:
            return ("scm",)
        return ("scm", *needs_of(make_system(self._cfg().candidate_system)))

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        cfg = self._cfg()
        index = ctx.open("scm")
        tokens = query_tokens(query, cfg.tags)
        if not tokens:
            return Ranking()
        depth = self._depth()
        rows = None
        if depth > 0:
            candidates = make_system(cfg.candidate_system)
            assert isinstance(candidates, Ranker), candidates  # a Task 1 system (its config is checked)
            found = candidates.search(ctx, query, depth)
            rows = index.rows_of([int(d) for d in found])
            if len(rows) == 0:
                return Ranking()
        return Ranking(index.soft_cosine(tokens, rows)).top(limit)


@register
@dataclass(frozen=True)
class ScmFormula:
    """Task 2: the soft cosine of the query formula's prefix tokens to every visual formula (4.2)."""

    NAME = "scm-formula"
    TASK = 2
    NEEDS = ("scm",)
    DATA_USED = "math"
    DESCRIPTION = "Soft Cosine Measure (MIRMU) over formulae in prefix notation, one instance a visual formula"

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        if not query.formula_latex:
            return Ranking()
        index = ctx.open("scm").formulae
        found = index.soft_cosine(prefix_tokens(query.formula_latex), limit)
        return Ranking({int(index.instance_ids[r]): s for r, s in found.items()},
                       posts={int(index.instance_ids[r]): int(index.post_ids[r]) for r in found})
