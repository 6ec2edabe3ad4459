"""Scoring signals that systems combine: each maps a query to ``{answer id: score}``.

* :func:`fielded_bm25` BM25 over weighted (query part, index field) pairs of the answer index.
* :func:`similar_questions` BM25 of collection questions against the topic (question-question
  similarity; topics are questions, and duplicates share vocabulary).
* :func:`thread_scores` spreads question scores onto their answers.
* :func:`linked_scores` answers of questions linked as duplicates to the given questions.
* :func:`dense_answers` / :func:`dense_questions` cosine similarity of MiniLM embeddings
  (needs the optional dense index).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..indexes.text_index import Clause
from ..records import LinkType
from .base import SearchContext, SearchQuery


def clauses_from(weights: Mapping[str, float]) -> list[Clause]:
    """``{"bag->field": weight}`` (the config file's form) as clauses."""
    out = []
    for key, w in weights.items():
        bag, _, fld = key.partition("->")
        out.append(Clause(bag.strip(), fld.strip(), float(w)))
    return out


def fielded_bm25(ctx: SearchContext, query: SearchQuery, weights: Mapping[str, float], limit: int) -> dict[int, float]:
    return ctx.text.search_answers(query.bags, clauses_from(weights), limit)


def similar_questions(ctx: SearchContext, query: SearchQuery, weights: Mapping[str, float], limit: int) -> dict[int, float]:
    return ctx.text.search_questions(query.bags, clauses_from(weights), limit)


def thread_scores(ctx: SearchContext, questions: Mapping[int, float]) -> dict[int, float]:
    """Each answer of a scored question gets the question's score."""
    out: dict[int, float] = {}
    answers = ctx.store.answer_ids_of_threads(questions)
    for qid, score in questions.items():
        for a in answers.get(qid, ()):
            out[a] = max(out.get(a, 0.0), score)
    return out


def linked_scores(ctx: SearchContext, questions: Mapping[int, float], decay: float = 1.0) -> dict[int, float]:
    """Answers of questions linked as duplicates to scored questions, with that score times ``decay``."""
    out: dict[int, float] = {}
    store = ctx.store
    links = store.linked_many(questions, LinkType.DUPLICATE)
    answers = store.answer_ids_of_threads({o for others in links.values() for o in others})
    for qid, score in questions.items():
        for other in links.get(qid, ()):
            for a in answers.get(other, ()):
                out[a] = max(out.get(a, 0.0), score * decay)
    return out


def _dense(ctx: SearchContext):
    from ..indexes.dense import DenseIndex

    return ctx.part("dense", DenseIndex.open)


def _query_vector(ctx: SearchContext, query: SearchQuery):
    from ..indexes.dense import query_passage

    # One embedding per query text, shared by the dense signals and kept for the context's life
    # (tuning runs the same topics many times); bounded so a long-lived server does not grow.
    cache = ctx.part("dense_query_cache", lambda _: {})
    key = query_passage(query.title, query.question)
    if key not in cache:
        if len(cache) >= 10_000:
            cache.clear()
        cache[key] = _dense(ctx).encode(key)
    return cache[key]


def dense_answers(ctx: SearchContext, query: SearchQuery, limit: int) -> dict[int, float]:
    return _dense(ctx).search_answers(_query_vector(ctx, query), limit)


def dense_questions(ctx: SearchContext, query: SearchQuery, limit: int) -> dict[int, float]:
    return _dense(ctx).search_questions(_query_vector(ctx, query), limit)
