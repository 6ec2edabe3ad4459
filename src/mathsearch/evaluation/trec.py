"""Scoring ranked runs the way trec_eval (and so the ARQMath lab) does.

A run is ``{topic: {doc: score}}``; qrels are ``{topic: {doc: relevance}}`` (graded 0-3 only).
trec_eval ranks a topic's documents by score descending and breaks ties by document id descending
(string comparison), ignoring the rank column; :func:`trec_order` is that order (the one ranking
order of :mod:`mathsearch.ranking`), for what we compute ourselves.  Means are over every topic of the qrels: a topic the run misses scores 0
(trec_eval without ``-c`` would leave it out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import ir_measures

from ..ranking import ranked
from .measures import DEPTH, JUDGED_AT, TrecMeasure

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]


def trec_order(docs: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval's order: score descending, then id descending."""
    return ranked(docs)


def cut_depth(run: Run, depth: int = DEPTH) -> dict[str, dict[str, float]]:
    """Each topic's first ``depth`` hits in trec_eval order (the lab scored depth 1,000)."""
    out: dict[str, dict[str, float]] = {}
    for topic, docs in run.items():
        if len(docs) > depth:
            keep = trec_order(docs)[:depth]
            out[topic] = {d: docs[d] for d in keep}
        else:
            out[topic] = dict(docs)
    return out


def judged_only(run: Run, qrels: Qrels) -> dict[str, dict[str, float]]:
    """The run with unjudged hits removed (trec_eval ``-J``); topics without qrels dropped."""
    out: dict[str, dict[str, float]] = {}
    for topic, docs in run.items():
        judged = qrels.get(topic)
        if judged is None:
            continue
        out[topic] = {d: s for d, s in docs.items() if d in judged}
    return out


def rank_run(run: Run, depth: int = DEPTH) -> dict[str, list[str]]:
    """Each topic's ids in trec_eval order, cut at ``depth``: sorted once, used by every measure."""
    return {topic: trec_order(docs)[:depth] for topic, docs in run.items()}


def _cutoff(measure: object) -> int | None:
    params = getattr(measure, "params", {}) or {}
    return params.get("cutoff")


class TrecScorer:
    """trec_eval measures for many runs against one qrels (the evaluators are built once).

    What each pytrec_eval call sees is trimmed to what the measure can look at: the judged hits
    for prime measures, the first ``cutoff`` hits for measures with a cutoff (nDCG@10).  The
    values are unchanged (trec_eval's ideal DCG comes from the qrels, not the run); it is only
    faster.
    """

    def __init__(self, qrels: Qrels, measures: Iterable[TrecMeasure]):
        self.qrels = qrels
        self.measures = list(measures)
        self._groups: list[tuple[bool, int | None, dict, object]] = []
        by_flag: dict[bool, list[TrecMeasure]] = {}
        for m in self.measures:
            by_flag.setdefault(m.judged_only, []).append(m)
        for judged, group in by_flag.items():
            names = {m.measure: m.name for m in group}
            cutoffs = [_cutoff(m.measure) for m in group]
            cutoff = None if judged or None in cutoffs else max(cutoffs)  # type: ignore[type-var]
            evaluator = ir_measures.pytrec_eval.evaluator(list(names), qrels)
            self._groups.append((judged, cutoff, names, evaluator))

    def score(self, run: Run, ranked: Mapping[str, list[str]] | None = None) -> dict[str, dict[str, float]]:
        """``{measure name: {topic: value}}`` for every topic of the qrels (0 where the run has nothing).

        ``ranked`` (from :func:`rank_run`) saves sorting again; without it the run is ranked
        here and cut at depth 1,000.
        """
        if ranked is None:
            ranked = rank_run(run)
        topics = list(self.qrels)
        out: dict[str, dict[str, float]] = {m.name: dict.fromkeys(topics, 0.0) for m in self.measures}
        for judged, cutoff, names, evaluator in self._groups:
            view: dict[str, dict[str, float]] = {}
            for topic, order in ranked.items():
                rels = self.qrels.get(topic)
                if rels is None:
                    continue
                docs = run[topic]
                if judged:
                    hits = {d: docs[d] for d in filter(rels.__contains__, order)}
                else:
                    hits = {d: docs[d] for d in (order[:cutoff] if cutoff else order)}
                if hits:  # pytrec_eval needs a hit; an empty topic keeps its 0
                    view[topic] = hits
            if not view:
                continue
            for metric in evaluator.iter_calc(view):  # type: ignore[attr-defined]
                out[names[metric.measure]][metric.query_id] = float(metric.value)
        return out


def score_topics(run: Run, qrels: Qrels, measures: Iterable[TrecMeasure]) -> dict[str, dict[str, float]]:
    """One-off :meth:`TrecScorer.score`."""
    return TrecScorer(qrels, measures).score(run)


def judged_fractions(
    run: Run, qrels: Qrels, ranks: Iterable[int] = JUDGED_AT, ranked: Mapping[str, list[str]] | None = None
) -> dict[int, float]:
    """Share of judged hits among the first k of each topic, pooled over the run's qrels topics.

    ``{k: judged hits in the top k of all topics / hits in the top k of all topics}``, the
    quantity plotted in the MIRMU paper's figure 9; it tells how far prime measures can be trusted.
    """
    ranks = sorted(set(ranks))
    if ranked is None:
        ranked = rank_run(run, max(ranks))
    judged_counts = dict.fromkeys(ranks, 0)
    totals = dict.fromkeys(ranks, 0)
    for topic, order in ranked.items():
        judged = qrels.get(topic)
        if judged is None or not order:
            continue
        flags = list(map(judged.__contains__, order))
        for k in ranks:
            top = flags[:k]
            judged_counts[k] += sum(top)
            totals[k] += len(top)
    return {k: (judged_counts[k] / totals[k] if totals[k] else 0.0) for k in ranks}
