"""How well one clustering of formula instances (our visual keys) agrees with another (the lab's
visual ids): B-cubed precision and recall, item-averaged."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def bcubed(gold: Sequence[str], pred: Sequence[str]) -> tuple[float, float]:
    """B-cubed (precision, recall) of clusters ``pred`` against ``gold``; item i's precision is the
    share of its predicted cluster that shares its gold cluster, and recall the converse."""
    if len(gold) != len(pred):
        raise ValueError("gold and pred must label the same items")
    if not gold:
        return 0.0, 0.0
    pair = Counter(zip(gold, pred, strict=True))
    g = Counter(gold)
    p = Counter(pred)
    n = len(gold)
    precision = sum(c * c / p[pk] for (_gk, pk), c in pair.items()) / n
    recall = sum(c * c / g[gk] for (gk, _pk), c in pair.items()) / n
    return precision, recall


def f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
