"""Scoring ranked runs the way trec_eval (and so the ARQMath lab) does.

A run is ``{topic: {doc: score}}``; qrels are ``{topic: {doc: relevance}}`` (graded 0-3 only).
trec_eval ranks a topic's documents by score descending and breaks ties by document id descending
(string comparison), ignoring the rank column; :func:`trec_order` is that order, for what we
compute ourselves.  Means are over every topic of the qrels: a topic the run misses scores 0
(trec_eval without ``-c`` would leave it out).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import ir_measures

from .measures import DEPTH, JUDGED_AT, TrecMeasure

Run = Mapping[str, Mapping[str, float]]
Qrels = Mapping[str, Mapping[str, int]]


def trec_order(docs: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval's order: score descending, then id descending."""
    return [d for _, d in sorted(zip(docs.values(), docs.keys(), strict=True), reverse=True)]


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


class TrecScorer:
    """trec_eval measures for many runs against one qrels (the evaluators are built once)."""

    def __init__(self, qrels: Qrels, measures: Iterable[TrecMeasure]):
        self.qrels = qrels
        self.measures = list(measures)
        self._groups: list[tuple[bool, dict, object]] = []
        by_flag: dict[bool, list[TrecMeasure]] = {}
        for m in self.measures:
            by_flag.setdefault(m.judged_only, []).append(m)
        for judged, group in by_flag.items():
            names = {m.measure: m.name for m in group}
            self._groups.append((judged, names, ir_measures.pytrec_eval.evaluator(list(names), qrels)))

    def score(self, run: Run) -> dict[str, dict[str, float]]:
        """``{measure name: {topic: value}}`` for every topic of the qrels (0 where the run has nothing).

        ``run`` should already be cut to depth (:func:`cut_depth`).
        """
        topics = list(self.qrels)
        out: dict[str, dict[str, float]] = {m.name: dict.fromkeys(topics, 0.0) for m in self.measures}
        in_qrels = {t: docs for t, docs in run.items() if t in self.qrels}
        for judged, names, evaluator in self._groups:
            scored = judged_only(in_qrels, self.qrels) if judged else in_qrels
            scored = {t: docs for t, docs in scored.items() if docs}  # pytrec_eval needs a hit
            if not scored:
                continue
            for metric in evaluator.iter_calc(scored):  # type: ignore[attr-defined]
                out[names[metric.measure]][metric.query_id] = float(metric.value)
        return out


def score_topics(run: Run, qrels: Qrels, measures: Iterable[TrecMeasure]) -> dict[str, dict[str, float]]:
    """One-off :meth:`TrecScorer.score`."""
    return TrecScorer(qrels, measures).score(run)


def judged_fractions(run: Run, qrels: Qrels, ranks: Iterable[int] = JUDGED_AT) -> dict[int, float]:
    """Share of judged hits among the first k of each topic, pooled over the run's qrels topics.

    ``{k: judged hits in the top k of all topics / hits in the top k of all topics}``, the
    quantity plotted in the MIRMU paper's figure 9; it tells how far prime measures can be trusted.
    """
    ranks = sorted(set(ranks))
    judged_counts = dict.fromkeys(ranks, 0)
    totals = dict.fromkeys(ranks, 0)
    for topic, docs in run.items():
        judged = qrels.get(topic)
        if judged is None or not docs:
            continue
        flags = [d in judged for d in trec_order(docs)]
        # running count of judged hits down the list
        running = 0
        prefix = [0]
        for f in flags:
            running += f
            prefix.append(running)
        for k in ranks:
            n = min(k, len(flags))
            judged_counts[k] += prefix[n]
            totals[k] += n
    return {k: (judged_counts[k] / totals[k] if totals[k] else 0.0) for k in ranks}
