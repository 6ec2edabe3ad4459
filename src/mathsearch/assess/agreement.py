"""Agreement between assessors: Cohen's kappa on the items two assessors both judged.

As the lab reported it: four-way (grades 0-3) and with H+M binarisation (2 and 3 relevant), per
topic and over all shared items, for each pair of assessors.  "System failure" (5) and "do not know"
(6) are no relevance degree: an item either assessor answered so is left out of the pair's kappa.

Kappa is undefined when chance agreement is certain (both assessors gave one and the same
category to every shared item): it is then ``None``, where scikit-learn returns NaN.  The lab
met this too ("meaningful values of kappa for binary relevance can not be calculated in such
cases") and left such topics out of its averages; ``mean_topic_kappa`` does the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

from ..records import topic_order
from .db import AssessDB
from .grades import GRADED, H_M


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa of two raters' labels of the same items (``None`` when undefined)."""
    if len(a) != len(b):
        raise ValueError(f"kappa needs labels of the same items: {len(a)} and {len(b)} labels given")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def binarise(grades: Sequence[int]) -> list[int]:
    """H+M binarisation: 1 for High and Medium (2, 3), 0 for Low and Not Relevant."""
    return [int(g >= H_M) for g in grades]


@dataclass(slots=True)
class PairAgreement:
    assessors: tuple[str, str]
    items: int = 0
    graded: float | None = None  # four-way kappa over all shared items
    binary: float | None = None  # H+M binarised
    per_topic: dict[str, dict[str, float | int | None]] = field(default_factory=dict)

    def mean_topic_kappa(self, which: str) -> float | None:
        """The mean of the defined per-topic kappas (``which``: graded or binary)."""
        values = [v[which] for v in self.per_topic.values() if v[which] is not None]
        return sum(values) / len(values) if values else None  # type: ignore[arg-type]

    def to_json(self) -> dict:
        return {"assessors": list(self.assessors), "items": self.items, "graded": self.graded, "binary": self.binary,
                "mean_topic_graded": self.mean_topic_kappa("graded"),
                "mean_topic_binary": self.mean_topic_kappa("binary"), "per_topic": self.per_topic}


def pair_agreement(first: dict[int, int], second: dict[int, int], topic_of: dict[int, str],
                   names: tuple[str, str]) -> PairAgreement:
    """Kappas of two assessors' ``{item: grade}`` on the items both graded 0-3."""
    shared = sorted(i for i in first.keys() & second.keys() if first[i] in GRADED and second[i] in GRADED)
    out = PairAgreement(names, len(shared))
    a = [first[i] for i in shared]
    b = [second[i] for i in shared]
    out.graded = cohen_kappa(a, b)
    out.binary = cohen_kappa(binarise(a), binarise(b))
    by_topic: dict[str, list[int]] = {}
    for i in shared:
        by_topic.setdefault(topic_of[i], []).append(i)
    for topic in sorted(by_topic, key=topic_order):
        ids = by_topic[topic]
        ta = [first[i] for i in ids]
        tb = [second[i] for i in ids]
        out.per_topic[topic] = {"items": len(ids), "graded": cohen_kappa(ta, tb),
                                "binary": cohen_kappa(binarise(ta), binarise(tb))}
    return out


def agreement(db: AssessDB) -> list[PairAgreement]:
    """Every pair of assessors who judged at least one item in common, with their kappas."""
    topic_of = {i.item_id: i.topic_id for i in db.items()}
    grades: dict[str, dict[int, int]] = {}
    for j in db.judgements():
        grades.setdefault(j.assessor, {})[j.item_id] = j.grade
    out = []
    for x, y in combinations(sorted(grades), 2):
        if grades[x].keys() & grades[y].keys():
            out.append(pair_agreement(grades[x], grades[y], topic_of, (x, y)))
    return out
