"""How close the best hit comes to a query: the evidence behind "no close match".

A fused score says which answer is best, not whether any is good: ``ours`` normalises each signal
per query, so its best hit always scores near the top.  :func:`evidence` asks instead how much of
the query the best hit's thread holds: the share of the query's distinct content words and math
symbols found in the answer, its question or its title, each weighted by its BM25 idf in the
answer index (a rare word missing counts more than "prove"; a word no answer holds counts fully).
It lies in [0, 1] and is comparable across queries.

:data:`NO_CLOSE_MATCH_BELOW` is the threshold calibrated on the judged 2020 and 2021 topics by
``bench/no_match.py`` (repeated cross-validation: the largest threshold under which at most one top
hit in ten is relevant).  Below it the page, the API and Task 3 say that nothing close was found.
"""

from __future__ import annotations

from ..indexes.text_index import bm25_idf
from ..text import analysis as ta
from .base import SearchContext, SearchQuery

# bench/no_match.py --index IDX (sample, ours:dense=False, topic titles as typed queries)
NO_CLOSE_MATCH_BELOW = 0.323

NO_CLOSE_MATCH = ("No close match: the best hits below share little of the query (the nearest the "
                  "collection holds, not answers to it).")
COMMON_WORDS_ONLY = ("Every word of the query is as common as 'the' or 'why', and it holds no formula: nothing "
                     "can match its words. Add the words or a $formula$ of what you ask about.")
NOTHING_TO_MATCH = ("The query holds no word and no formula this collection can match (symbols alone, or a "
                    "formula that reads as nothing). Add the words or a $formula$ of what you ask about.")


def no_terms_notice(query: SearchQuery) -> str:
    """Why a query without content terms (:func:`query_terms` empty) can match nothing: its words
    are all common ("why", "how to do this"), or it holds no word at all ("😀", "$\\{$")."""
    prose = " ".join(ta.split_math(t)[0] for t in (query.title, query.question) if t)
    return COMMON_WORDS_ONLY if any(ch.isalnum() for ch in prose) else NOTHING_TO_MATCH


def _thread_terms(ctx: SearchContext, post_id: int) -> tuple[set[str], set[str]]:
    """The words and math symbols of a post, its thread's question and title."""
    store = ctx.store
    post = store.post(post_id)
    if post is None:
        return set(), set()
    texts = [post.text or ""]
    if post.thread_id != post.post_id:
        question = store.post(post.thread_id)
        if question is not None:
            texts.append(question.text or "")
            texts.append(question.title or "")
    elif post.title:
        texts.append(post.title)
    words: set[str] = set()
    maths: set[str] = set()
    for text in texts:
        prose, formulae = ta.split_math(text)
        words.update(ta.words(prose))
        maths.update(t for t in ta.formula_math_tokens(formulae) if t.startswith("m:"))
    return words, maths


def query_terms(query: SearchQuery) -> tuple[set[str], set[str]]:
    bags = query.bags
    words = set(bags.title_words + bags.question_words)
    maths = {t for t in bags.title_math + bags.question_math if t.startswith("m:")}
    return words, maths


def evidence(ctx: SearchContext, query: SearchQuery, post_id: int | str) -> float:
    """The idf-weighted share of the query's words and math symbols that the post's thread holds
    (0.0 for a query with no content term, "why" or "how to do this": no hit can show that it is
    close, and its best hits are the vectors' nearest posts to a common word)."""
    q_words, q_maths = query_terms(query)
    if not q_words and not q_maths:
        return 0.0
    try:
        pid = int(post_id)
    except (TypeError, ValueError):
        return 0.0
    h_words, h_maths = _thread_terms(ctx, pid)
    text = ctx.text
    n = text.num_answers
    total = found = 0.0
    for terms, held, fld in ((q_words, h_words, "body"), (q_maths, h_maths, "body_math")):
        for term in terms:
            df = text.answer_doc_freq(fld, term)
            weight = bm25_idf(df, n) if df else bm25_idf(0, n)
            total += weight
            if term in held:
                found += weight
    return found / total if total else 1.0


def is_close(value: float, threshold: float = NO_CLOSE_MATCH_BELOW) -> bool:
    return value >= threshold
