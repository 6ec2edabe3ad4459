"""Words of a typed query that no post of the collection holds, and the collection's nearest word
for each: "did you mean".

A misspelt word ("irrationnal", "numbr") matches nothing, and a query of such words finds nothing
at all without a word why.  :func:`spelling` names the query's words that no answer, nor its
comments, question or title, holds, and proposes for each a word of the collection one edit away (two for a
word of eight letters or more; a swap of two letters is one edit).  tantivy's fuzzy term query
finds the answers holding a near term, those about the query's other words first; their own words
say which word it was and how it is spelt.  Of the near words, the fewest edits away wins, then the
one that keeps most of the typed letters (a dropped letter restored, "multipler" -> "multiplier",
before a replaced one, "multiples"), then the one most of those answers hold, then the one most
answers of the collection hold (still a guess where those tie).  Words under five letters are not respelt: a
short word the collection lacks is as often a real one ("lock") as a slip.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import analysis as ta
from .base import SearchContext, SearchQuery

# The answer index's fields of words: the answer's own, its comments, its question's body and its title.
WORD_FIELDS = ("body", "comments", "question", "title")
NEAR_POSTS = 50  # answers read for the near words of one unknown word
MIN_LENGTH = 5  # shorter words are not respelt ("lock" is not "look")
LONG_WORD = 8  # a word this long may be two edits off, a shorter one one ("gimbal" is not "global")
MAX_RESPELT = 5  # unknown words looked up a query (a pasted paragraph of names stays fast)


@dataclass(frozen=True)
class Spelling:
    unknown: tuple[str, ...]  # the query's words (lower-cased, as typed) that no post holds
    suggestion: str | None  # the typed query with each unknown word replaced by its nearest, if any


def edits(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) from ``a`` to ``b``, as the fuzzy query counts."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def kept(typed: str, near: str) -> int:
    """How many of the typed letters ``near`` keeps, in order (their longest common subsequence):
    among words as many edits away, one that only adds a letter the typist dropped ("multipler" ->
    "multiplier") explains every letter typed, where a replaced one ("multiples") discards one."""
    prev = [0] * (len(near) + 1)
    for a in typed:
        cur = [0]
        for j, b in enumerate(near, 1):
            cur.append(prev[j - 1] + 1 if a == b else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def _held(ctx: SearchContext, term: str) -> int:
    text = ctx.text
    return sum(text.answer_doc_freq(f, term) for f in WORD_FIELDS)


def nearest_word(ctx: SearchContext, word: str, context: tuple[str, ...] = ()) -> str | None:
    """The word of the collection nearest the typed ``word`` (:data:`LONG_WORD`), spelt as the
    collection spells it; ``context``: the query's other terms, which the answers searched for it
    should hold too.  None when no word is that near."""
    found = ta.word_terms(word)
    if len(word) < MIN_LENGTH or not word.isalpha() or not found:
        return None
    allowed = 1 if len(word) < LONG_WORD else 2
    # the index holds stemmed terms ("series" -> "sery"): look two edits wide there, then keep the
    # words as written within the allowed edits of what was typed
    holders: dict[str, set[int]] = {}  # a near word as written -> the answers read that hold it
    terms: dict[str, str] = {}
    far: set[str] = set()  # words already found too far: each word's edits are counted once
    store = ctx.store
    for answer_id in ctx.text.answers_near("body", found[0][1], 2, NEAR_POSTS, context):
        post = store.post(answer_id)
        if post is None:
            continue
        prose, _ = ta.split_math(post.text or "")
        for form, term in ta.word_terms(prose):
            if form in holders:
                holders[form].add(answer_id)
            elif form in far:
                continue
            elif form != word and abs(len(form) - len(word)) <= allowed and edits(form, word) <= allowed:
                holders[form], terms[form] = {answer_id}, term
            else:
                far.add(form)
    if not holders:
        return None
    return min(holders, key=lambda f: (edits(f, word), -kept(word, f), -len(holders[f]), -_held(ctx, terms[f]), f))


def spelling(ctx: SearchContext, query: SearchQuery, typed: str) -> Spelling:
    """The words of ``query`` (its prose, not its formulae) that no post holds, and ``typed`` with
    each replaced by the collection's nearest word where one is near (:func:`nearest_word`)."""
    prose = " ".join(ta.split_math(t)[0] for t in (query.title, query.question) if t)
    pairs = dict(ta.word_terms(prose))  # each word typed, once, with its term
    unknown = [w for w, t in pairs.items() if w.isalpha() and _held(ctx, t) == 0]  # not "19x", "2nd"
    if not unknown:
        return Spelling((), None)
    suggestion, changed = typed, False
    context = tuple(dict.fromkeys(t for w, t in pairs.items() if w not in unknown))[:16]
    for word in unknown[:MAX_RESPELT]:
        near = nearest_word(ctx, word, context)
        if near is None:
            continue

        def respelt(m: re.Match, near: str = near) -> str:  # "Fibonaci" -> "Fibonacci": the typed capital kept
            return near[:1].upper() + near[1:] if m.group()[:1].isupper() else near

        suggestion, n = re.subn(rf"(?i)(?<![^\W_]){re.escape(word)}(?![^\W_])", respelt, suggestion, count=1)
        changed = changed or n > 0
    return Spelling(tuple(unknown), suggestion if changed else None)
