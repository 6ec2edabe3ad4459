"""BM25 systems over the text index: the lab's TF-IDF baselines and plain peers.

Tantivy scores with BM25 (k1 1.2, b 0.75), not Terrier's TF-IDF; the ``tfidf-*`` names keep the
lab's baselines' representations (raw LaTeX strings; LaTeX mapped to words) over answer text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..indexes.text_index import Clause
from .base import Ranking, SearchContext, SearchQuery, register


def bm25(ctx: SearchContext, query: SearchQuery, clauses: list[Clause], limit: int) -> Ranking:
    found = ctx.text.search_answers(query.bags, clauses, limit)
    return Ranking(found)


@register
@dataclass(frozen=True)
class Bm25Answer:
    """BM25 over the answer's own text: its words and the math tokens of its formulae."""

    NAME = "bm25-answer"
    TASK = 1
    NEEDS = ("text",)
    DESCRIPTION = "BM25 over answer text (words and math tokens)"
    math: float = 1.0

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        return bm25(ctx, query, [Clause("words", "body"), Clause("math", "body_math", self.math)], limit)


@register
@dataclass(frozen=True)
class Bm25Thread:
    """BM25 over the answer and its thread: the question's title, body and tags, unweighted."""

    NAME = "bm25-thread"
    TASK = 1
    NEEDS = ("text",)
    DESCRIPTION = "BM25 over answer plus thread text (question title, body, tags)"
    math: float = 1.0

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        clauses = [
            Clause("words", "body"), Clause("math", "body_math", self.math),
            Clause("words", "title"), Clause("words", "question"), Clause("tags", "tags"),
            Clause("math", "q_math", self.math),
        ]
        return bm25(ctx, query, clauses, limit)


@register
@dataclass(frozen=True)
class TfidfLatex:
    """The lab's first TF-IDF baseline: answer text with raw LaTeX, cut by a generic tokeniser."""

    NAME = "tfidf-latex"
    TASK = 1
    NEEDS = ("text",)
    DESCRIPTION = "BM25 over answer text with raw LaTeX strings as text"

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        return bm25(ctx, query, [Clause("raw", "body_raw")], limit)


@register
@dataclass(frozen=True)
class TfidfWords:
    """The lab's PyTerrier baseline: answer text with LaTeX symbols mapped to English words."""

    NAME = "tfidf-words"
    TASK = 1
    NEEDS = ("text",)
    DESCRIPTION = "BM25 over answer text with LaTeX mapped to words"

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        return bm25(ctx, query, [Clause("latex_words", "body_lw")], limit)
