"""``linked-posts``: the lab's "Linked MSE posts" baseline, as far as it can be rebuilt here.

The lab's oracle returned the answers of collection questions that MSE marked as duplicates of
the topic question itself, by vote score.  Those links (made after the collection snapshot) were
never released, and a topic's own question is not in the collection, so the oracle cannot be
reproduced.  What this system does instead, openly a proxy: it finds the ``neighbours``
collection questions most like the topic (BM25 over title, body, tags and formulae) and returns
the answers of the questions linked as duplicates to them (either direction), ranked by the
similarity of the neighbour that led to them, then by vote score when the collection has scores.
With ``include_neighbours`` the neighbours' own answers come first (a neighbour that is very
like the topic stands in for the topic question).  On the sample few links stay inside the
collection (248 of 6,779), so the run is short for most topics.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ranking import ranked
from ..records import LinkType
from .base import Ranking, SearchContext, SearchQuery, register
from .signals import similar_questions

QUESTION_FIELDS = {"title_words->title": 2.0, "words->title": 1.0, "words->question": 1.0, "tags->tags": 1.0,
                   "math->q_math": 0.5}


@register
@dataclass(frozen=True)
class LinkedPosts:
    NAME = "linked-posts"
    TASK = 1
    NEEDS = ("store", "text")
    DESCRIPTION = "answers of questions linked as duplicates to the collection questions most like the topic"
    neighbours: int = 5
    include_neighbours: bool = False

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        store = ctx.store
        near = similar_questions(ctx, query, QUESTION_FIELDS, self.neighbours)
        threads: list[int] = []
        for qid in ranked(near):
            if self.include_neighbours and qid not in threads:
                threads.append(qid)
            for other in sorted(store.linked(qid, LinkType.DUPLICATE)):
                if other not in threads:
                    threads.append(other)
        hits: list[tuple[int, int, int]] = []  # (thread position, -vote score, answer id)
        for pos, thread in enumerate(threads):
            for a in store.answers_of(thread):
                hits.append((pos, -(a.score or 0), a.post_id))
        hits.sort()
        n = len(hits)
        # Scores follow the order: thread by thread, votes within a thread.
        return Ranking((aid, float(n - i)) for i, (_, _, aid) in enumerate(hits[:limit]))
