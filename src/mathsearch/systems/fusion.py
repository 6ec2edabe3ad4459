"""Fusion of runs: pure functions from several runs to one.

A run here is ``{topic: {doc: score}}`` (as :func:`mathsearch.readers.runs.read_run_scores`
gives); ranks are taken in the one ranking order of :mod:`mathsearch.ranking` (trec_eval's: score
descending, ties by doc id descending), never from a rank column.  Every method returns a run of
the same shape, each topic cut at ``depth``; the per-query fusions are those of
:mod:`mathsearch.ranking`, which systems use too.

* :func:`rrf` reciprocal rank fusion: ``sum_i w_i / (k + rank_i)``, rank from 1.
* :func:`minmax` min-max averaging: each run's scores of a topic mapped to [0, 1], then the
  weighted mean over runs, a missing document counting 0 (the lab's TF-IDF + Tangent-S baseline).
* :func:`combsum` weighted CombSUM of normalised (``minmax``, ``rank``) or raw scores.
* :func:`mirmu` MIRMU's parameter-free ensemble (ARQMath 2020, section 7): order by median
  inverse rank, then frequency, then striped inverse rank (ties interleaved across runs).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from .. import ranking
from ..errors import InputError
from ..ranking import minmax_normalise, rank_normalise, ranked  # noqa: F401 - part of this module's API

Run = Mapping[str, Mapping[str, float]]
FusedRun = dict[str, dict[str, float]]
METHODS = ("rrf", "minmax", "combsum", "mirmu")
DEPTH = 1000


def _weights(runs: Sequence[Run], weights: Sequence[float] | None) -> list[float]:
    if weights is None:
        return [1.0] * len(runs)
    if len(weights) != len(runs):
        raise InputError(f"{len(weights)} weights given for {len(runs)} runs")
    return [float(w) for w in weights]


def _topics(runs: Sequence[Run]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        seen.update(dict.fromkeys(run))
    return list(seen)


def _cut(docs: dict[str, float], depth: int) -> dict[str, float]:
    return docs if len(docs) <= depth else ranking.top(docs, depth)


def rrf(runs: Sequence[Run], k: float = 60.0, weights: Sequence[float] | None = None, depth: int = DEPTH) -> FusedRun:
    w = _weights(runs, weights)
    return {topic: _cut(ranking.rrf([run.get(topic, {}) for run in runs], w, k), depth) for topic in _topics(runs)}


def combsum(
    runs: Sequence[Run], weights: Sequence[float] | None = None, normalise: str = "minmax", depth: int = DEPTH
) -> FusedRun:
    if normalise not in ranking.NORMALISERS:
        raise InputError(f"unknown normalisation {normalise!r}: minmax, rank or none")
    w = _weights(runs, weights)
    return {topic: _cut(ranking.combsum([run.get(topic, {}) for run in runs], w, normalise), depth)
            for topic in _topics(runs)}


def minmax(runs: Sequence[Run], weights: Sequence[float] | None = None, depth: int = DEPTH) -> FusedRun:
    w = _weights(runs, weights)
    total = sum(w)
    if total <= 0:
        raise InputError("the weights must add up to more than 0")
    summed = combsum(runs, w, "minmax", depth=10**9)
    return {t: _cut({d: s / total for d, s in docs.items()}, depth) for t, docs in summed.items()}


def mirmu(runs: Sequence[Run], depth: int = DEPTH) -> FusedRun:
    """MIRMU's ensemble.  Ranks are zero-based and ``depth`` where a run lacks the document.

    The reported score is the median inverse rank ``(depth - M) / depth`` plus a tie-breaking
    epsilon below the step between two median ranks (``1 / (2 depth)``), so that trec_eval, which
    orders by score alone, keeps the full four-key order (the paper's runs reported the median
    inverse rank only and lost the tie-breaking in evaluation).
    """
    if not runs:
        return {}
    out: FusedRun = {}
    n = len(runs)
    for topic in _topics(runs):
        ranks: dict[str, list[int | None]] = {}
        for i, run in enumerate(runs):
            for r, doc in enumerate(ranked(run.get(topic, {}))[:depth]):
                ranks.setdefault(doc, [None] * n)[i] = r
        keyed = []
        for doc, rs in ranks.items():
            median = statistics.median(depth if r is None else r for r in rs)
            m_inv = (depth - median) / depth
            present = [r for r in rs if r is not None]  # the f lists holding the doc, in run order
            keyed.append((m_inv, len(present), doc, present))
        # Within a group of equal (M^-1, f), the k-th document (by id) is judged by its rank in the
        # (k mod f)-th of its lists: the group is interleaved fairly across the runs.
        # The fusion's own keys (not ranking's order): the final scores below rank as ``ranked`` does.
        keyed.sort(key=lambda x: (-x[0], -x[1], x[2]))
        striped = []
        k = 0
        for j, (m_inv, f, doc, present) in enumerate(keyed):
            if j > 0 and (keyed[j - 1][0], keyed[j - 1][1]) != (m_inv, f):
                k = 0
            s_inv = (depth - present[k % f]) / depth
            striped.append((m_inv, f, s_inv, doc))
            k += 1
        striped.sort(key=lambda x: (x[0], x[1], x[2], x[3]), reverse=True)
        top = striped[:depth]
        eps = 1.0 / (2 * depth) / (len(top) + 1)
        out[topic] = {doc: m_inv + eps * (len(top) - pos) for pos, (m_inv, _, _, doc) in enumerate(top)}
    return out


def check_weights(weights: Sequence[float] | None, what: str = "fusion weights") -> None:
    """Refuse weights that rank nothing sensibly: a negative one (it ranks a run's best hits last),
    NaN, or all zero."""
    if weights is not None and (any(not w >= 0 for w in weights) or not any(weights)):  # (NaN is not >= 0)
        raise InputError(f"{what} {list(weights)}: each weight is 0 or more, and one is above 0 "
                         "(a negative weight ranks a run's best hits last)")


def fuse(method: str, runs: Sequence[Run], weights: Sequence[float] | None = None, k: float = 60.0,
         normalise: str = "minmax", depth: int = DEPTH) -> FusedRun:
    """Dispatch by method name (what ``mathsearch fuse --method`` takes)."""
    check_weights(weights)
    if method == "rrf":
        return rrf(runs, k, weights, depth)
    if method == "minmax":
        return minmax(runs, weights, depth)
    if method == "combsum":
        return combsum(runs, weights, normalise, depth)
    if method == "mirmu":
        if weights is not None:
            raise InputError("the MIRMU ensemble takes no weights")
        return mirmu(runs, depth)
    raise InputError(f"unknown fusion method {method!r}: one of {', '.join(METHODS)}")
