"""How much of an existing qrels file a pool reaches: the share of its judged ids (and of its H+M
relevant ones) that the pool would show an assessor again.

A check of pool depths against the lab's own judgements: on the sample, a pool of our runs at the
lab's depths holds most of what the lab found relevant there (README, "Pools and assessment").
Task 2 pools are compared by visual id (qrels keyed by visual ids); Task 3 ids never match
the lab's, so Task 3 pools are not compared.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..readers.qrels import read_qrels
from ..records import ReadReport
from .db import AssessDB
from .grades import GRADED, H_M
from .pool import ANSWER, FORMULA


@dataclass(slots=True)
class Coverage:
    topics: int  # qrels topics that the pool holds
    judged: int  # graded judgements of those topics (restricted to ``present`` when given)
    judged_pooled: int
    relevant: int  # ... of them H+M
    relevant_pooled: int

    def to_json(self) -> dict:
        return {"topics": self.topics, "judged": self.judged, "judged_pooled": self.judged_pooled,
                "judged_share": self.judged_pooled / self.judged if self.judged else None,
                "relevant": self.relevant, "relevant_pooled": self.relevant_pooled,
                "relevant_share": self.relevant_pooled / self.relevant if self.relevant else None}


def coverage(db: AssessDB, qrels: str | Path, present: Collection[str] | None = None,
             report: ReadReport | None = None) -> Coverage:
    """The share of ``qrels``' graded judgements (of the pool's topics; of ids in ``present`` when
    given, e.g. the answers of a sample collection) that the pool holds."""
    if db.task == 3:
        raise InputError("Task 3 pools judge answer texts whose ids are not the lab's; coverage compares "
                         "Task 1 and Task 2 pools")
    kind = FORMULA if db.task == 2 else ANSWER
    pooled = {(i.topic_id, i.visual_id if kind == FORMULA else i.doc_id) for i in db.items() if i.kind == kind}
    topics = {t for t, _ in pooled}
    judged = [q for q in read_qrels(qrels, report) if q.query_id in topics and q.relevance in GRADED
              and (present is None or q.doc_id in present)]
    hits = [(q.query_id, q.doc_id) in pooled for q in judged]
    relevant = [h for q, h in zip(judged, hits, strict=True) if q.relevance >= H_M]
    return Coverage(len({q.query_id for q in judged}), len(judged), sum(hits), len(relevant), sum(relevant))
