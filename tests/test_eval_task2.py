"""Task 2: formula instances scored as de-duplicated visual ids, with both qrels keyings."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mathsearch.evaluation import (
    detect_qrels_key,
    evaluate_ranked,
    evaluate_runs,
    from_formula_tsv,
    visual_qrels,
    visual_run,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
FORMULAS = DATA / "collection" / "formulas" / "latex_representation_v3.tsv"

VISUAL_OF = {"f1": "v1", "f2": "v1", "f3": "v2", "f4": "v3", "f5": "v2", "f6": "v4"}
# Instances: f5 0.95 (v2), f2 0.9 (v1), f3 0.8 (v2, dup), f4 0.7 (v3), f1 0.5 (v1, dup), f9 unknown.
RUN = {"B.1": {"f1": 0.5, "f2": 0.9, "f3": 0.8, "f4": 0.7, "f5": 0.95, "f9": 0.99}}
BY_VISUAL = {"B.1": {"v1": 3, "v2": 0, "v3": 2}}
# The 2020 lab file keys judgements by formula instance: max over a visual id's instances.
BY_FORMULA = {"B.1": {"f1": 3, "f2": 1, "f3": 0, "f4": 2}}


def test_dedup_keeps_best_instance_score():
    vrun, stats = visual_run(RUN, VISUAL_OF)
    assert vrun == {"B.1": {"v1": 0.9, "v2": 0.95, "v3": 0.7}}
    assert stats.unknown == 1 and stats.instances == 6 and stats.visual_ids == 3


def test_formula_keyed_qrels_take_max_relevance():
    vq, unknown = visual_qrels(BY_FORMULA, VISUAL_OF)
    assert vq == BY_VISUAL and unknown == 0


def test_both_keyings_score_the_same_worked_out():
    # Visual list: v2 (0), v1 (3), v3 (2); ideal 3, 2, 0.
    expected = (0 + 3 / math.log2(3) + 2 / math.log2(4)) / (3 + 2 / math.log2(3))
    (by_visual,) = evaluate_ranked(2, BY_VISUAL, [("r", RUN)], visual_of=VISUAL_OF)
    vq, _ = visual_qrels(BY_FORMULA, VISUAL_OF)
    (by_formula,) = evaluate_ranked(2, vq, [("r", RUN)], visual_of=VISUAL_OF)
    assert by_visual.means["nDCG'"] == pytest.approx(expected)
    assert by_formula.per_topic == by_visual.per_topic
    # MAP' with H+M: relevant v1 (rank 2) and v3 (rank 3): (1/2 + 2/3) / 2
    assert by_visual.means["MAP'"] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_without_dedup_the_score_would_differ():
    # Scoring instances directly would count v1 twice; our result must not equal that.
    instance_qrels = {"B.1": {"f1": 3, "f2": 3, "f3": 0, "f5": 0, "f4": 2}}
    (naive,) = evaluate_ranked(1, instance_qrels, [("r", RUN)])
    (proper,) = evaluate_ranked(2, BY_VISUAL, [("r", RUN)], visual_of=VISUAL_OF)
    assert naive.means["nDCG'"] != pytest.approx(proper.means["nDCG'"])


def test_keying_detection():
    assert detect_qrels_key(BY_VISUAL, VISUAL_OF) == "visual"
    assert detect_qrels_key(BY_FORMULA, VISUAL_OF) == "formula"


def test_real_qrels_and_formula_index_both_keyings(tmp_path):
    facts = from_formula_tsv(FORMULAS)
    qrels_path = DATA / "qrels" / "task2-2021.tsv"
    qrels = {}
    for line in qrels_path.read_text().splitlines():
        t, _, vid, rel = line.split()
        qrels.setdefault(t, {})[vid] = int(rel)
    # A run of real formula instances whose visual ids are judged: two instances per visual id
    # where the sample has them, scores descending with the qrels order.
    by_visual: dict[str, list[str]] = {}
    for fid, vid in facts.visual_of.items():
        by_visual.setdefault(vid, []).append(fid)
    lines, formula_qrels = [], []
    for topic, docs in qrels.items():
        score = 100.0
        for vid, rel in docs.items():
            for fid in by_visual.get(vid, [])[:2]:
                post = facts.lookup.formula_post(fid)  # type: ignore[union-attr]
                lines.append(f"{topic}\t{fid}\t{post}\t1\t{score}\tt")
                formula_qrels.append(f"{topic}\t0\t{fid}\t{rel}")
                score -= 1
    run = tmp_path / "TeamX-task2-real-auto-math-A.tsv"
    run.write_text("\n".join(lines) + "\n")
    fq = tmp_path / "by-formula.tsv"
    fq.write_text("\n".join(formula_qrels) + "\n")
    visual = evaluate_runs(2, qrels_path, [run], facts=facts, collection_only=True)
    formula = evaluate_runs(2, fq, [run], facts=facts, collection_only=True)
    assert visual.qrels_key == "visual" and formula.qrels_key == "formula"
    assert visual.topics == formula.topics > 40
    v, f = visual.runs[0], formula.runs[0]
    assert v.means["nDCG'"] == pytest.approx(f.means["nDCG'"])
    assert 0 < v.means["nDCG'"] <= 1
    # The collection holds only part of the judged visual ids: topics were dropped, judgements removed.
    assert len(visual.topics_dropped) == 58 - visual.topics and visual.judgements_removed > 0


def test_formula_keyed_files_follow_the_2020_script(tmp_path):
    # f5 (best instance of v2) is unjudged in the formula-keyed file: the 2020 script dropped it
    # before de-duplicating, so v2 ranks by f3 (0.8), below v1 (f2, 0.9).
    from mathsearch.evaluation.collection import CollectionFacts

    facts = CollectionFacts(visual_of=dict(VISUAL_OF))
    run = tmp_path / "TeamX-task2-hand-auto-math-A.tsv"
    run.write_text("".join(f"B.1\t{f}\t1\t1\t{s}\tt\n" for f, s in RUN["B.1"].items()))
    fq = tmp_path / "formula.tsv"
    fq.write_text("".join(f"B.1\t0\t{f}\t{r}\n" for f, r in BY_FORMULA["B.1"].items()))
    vq = tmp_path / "visual.tsv"
    vq.write_text("".join(f"B.1\t0\t{v}\t{r}\n" for v, r in BY_VISUAL["B.1"].items()))
    idcg = 3 + 2 / math.log2(3)
    by_formula = evaluate_runs(2, fq, [run], facts=facts, qrels_key="formula").runs[0]
    by_visual = evaluate_runs(2, vq, [run], facts=facts).runs[0]
    assert by_formula.means["nDCG'"] == pytest.approx((3 + 0 + 2 / math.log2(4)) / idcg)  # v1, v2, v3
    assert by_visual.means["nDCG'"] == pytest.approx((0 + 3 / math.log2(3) + 2 / math.log2(4)) / idcg)  # v2, v1, v3
    # nDCG@10 counts unjudged as non-relevant and uses every instance either way.
    assert by_formula.means["nDCG@10"] == pytest.approx(by_visual.means["nDCG@10"])


def test_evaluate_ranked_follows_the_2020_script_too(tmp_path):
    # evaluate_ranked scores through the same path as evaluate_runs: formula-keyed judgements
    # (detected, or named) drop the unjudged best instance f5 before de-duplicating.
    from mathsearch.evaluation.collection import CollectionFacts

    idcg = 3 + 2 / math.log2(3)
    (detected,) = evaluate_ranked(2, BY_FORMULA, [("r", RUN)], visual_of=VISUAL_OF)
    assert detected.means["nDCG'"] == pytest.approx((3 + 0 + 2 / math.log2(4)) / idcg)  # v1, v2, v3
    (named,) = evaluate_ranked(2, BY_FORMULA, [("r", RUN)], visual_of=VISUAL_OF, qrels_key="formula")
    assert named.per_topic == detected.per_topic
    run = tmp_path / "TeamX-task2-hand-auto-math-A.tsv"
    run.write_text("".join(f"B.1\t{f}\t1\t1\t{s}\tt\n" for f, s in RUN["B.1"].items()))
    fq = tmp_path / "formula.tsv"
    fq.write_text("".join(f"B.1\t0\t{f}\t{r}\n" for f, r in BY_FORMULA["B.1"].items()))
    from_file = evaluate_runs(2, fq, [run], facts=CollectionFacts(visual_of=dict(VISUAL_OF))).runs[0]
    assert from_file.per_topic == detected.per_topic and from_file.judged_at == detected.judged_at
