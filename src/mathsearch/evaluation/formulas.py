"""Task 2: scoring a ranked list of formula instances over visually distinct formulae.

As the lab's ARQMath-2/3 script does: each formula instance becomes its visual id, the list is
de-duplicated from the top (a visual id keeps its first, i.e. best-scored, instance's score), and
the prime measures are computed on the visual ids with trec_eval.  Which instance of a tied pair
comes "first" never matters: only the score survives, and trec_eval re-ranks the visual ids by score,
ties by visual id descending.

Judgements come keyed by visual id (ARQMath-2/3 files and this repository's qrels) or by formula
instance id (the 2020 lab file); a visual id's relevance is the maximum over its judged instances.
With formula-keyed judgements the evaluator also follows the 2020 script in removing unjudged
*instances* before de-duplication (for the prime measures), so a visual id ranks by the score of
its best judged instance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from .trec import Qrels, Run

QrelsKey = Literal["visual", "formula", "auto"]


@dataclass(slots=True)
class VisualRunStats:
    instances: int = 0  # formula instances read
    visual_ids: int = 0  # distinct visual ids kept
    unknown: int = 0  # instances whose formula id has no visual id (left out)


def visual_run(run: Run, visual_of: Mapping[str, str]) -> tuple[dict[str, dict[str, float]], VisualRunStats]:
    """``{topic: {visual_id: score}}``: instances replaced by visual ids, de-duplicated from the top."""
    stats = VisualRunStats()
    out: dict[str, dict[str, float]] = {}
    get = visual_of.get
    for topic, hits in run.items():
        best: dict[str, float] = {}
        for formula_id, score in hits.items():
            stats.instances += 1
            vid = get(formula_id)
            if vid is None:
                stats.unknown += 1
                continue
            # First in trec order = highest score; equal scores leave the same value.
            old = best.get(vid)
            if old is None or score > old:
                best[vid] = score
        stats.visual_ids += len(best)
        out[topic] = best
    return out, stats


def detect_qrels_key(qrels: Qrels, visual_of: Mapping[str, str]) -> Literal["visual", "formula"]:
    """Whether judged ids are visual ids or formula ids: whichever the formula index knows more of.

    Both are integers in overlapping ranges, so one id proves nothing; the count over a whole
    file does.  A tie (nothing known) reads as visual ids, the layout of current files.
    """
    visual_ids = set(visual_of.values())
    as_visual = as_formula = 0
    for docs in qrels.values():
        for doc in docs:
            as_visual += doc in visual_ids
            as_formula += doc in visual_of
    return "formula" if as_formula > as_visual else "visual"


def visual_qrels(qrels: Qrels, visual_of: Mapping[str, str]) -> tuple[dict[str, dict[str, int]], int]:
    """Formula-id-keyed judgements -> visual-id-keyed, max relevance per visual id.

    Returns the new qrels and the number of judged formula ids without a known visual id (dropped).
    """
    out: dict[str, dict[str, int]] = {}
    unknown = 0
    for topic, docs in qrels.items():
        per_visual = out.setdefault(topic, {})
        for formula_id, rel in docs.items():
            vid = visual_of.get(formula_id)
            if vid is None:
                unknown += 1
                continue
            if rel > per_visual.get(vid, -1):
                per_visual[vid] = rel
    return out, unknown
