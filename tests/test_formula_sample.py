"""The issue's measures on the real sample: every formula parses, few need repair, and our visual
keys agree with the lab's visual ids better than LaTeX strings do."""

from __future__ import annotations

from pathlib import Path

import pytest

from mathsearch.formula import FormulaAnalyzer
from mathsearch.formula.agreement import bcubed, f1
from mathsearch.readers.formula_tsv import iter_formula_tsv

SAMPLE_TSV = Path(__file__).resolve().parents[1].parent / "shared/data/arqmath/collection/formulas/latex_representation_v3.tsv"


@pytest.fixture(scope="module")
def analysed():
    analyzer = FormulaAnalyzer(cache_size=100_000)
    records = list(iter_formula_tsv(SAMPLE_TSV))
    return records, [analyzer.analyze(r.formula) for r in records]


def test_every_sample_formula_gives_a_tree_and_few_need_repair(analysed):
    records, analyses = analysed
    assert len(records) == 76_968
    assert all(a.visual_key and a.slt_tokens and a.opt_tokens for a in analyses)
    clean = sum(not a.recovered for a in analyses) / len(analyses)
    assert clean >= 0.995


def test_visual_keys_agree_with_the_lab_better_than_latex_strings(analysed):
    records, analyses = analysed
    gold = [r.visual_id for r in records if r.visual_id]
    ours = [a.visual_key for r, a in zip(records, analyses, strict=True) if r.visual_id]
    latex = ["".join(r.formula.split()) for r in records if r.visual_id]
    p, r = bcubed(gold, ours)
    bp, br = bcubed(gold, latex)
    assert p >= 0.985 and r >= 0.985, (p, r)
    assert f1(p, r) > f1(bp, br)


def test_bcubed_on_a_toy_clustering():
    assert bcubed(["a", "a", "b"], ["x", "x", "y"]) == (1.0, 1.0)
    p, r = bcubed(["a", "a", "b"], ["x", "x", "x"])
    assert r == 1.0 and abs(p - (2 * 2 / 3 + 1 / 3) / 3) < 1e-12
    with pytest.raises(ValueError):
        bcubed(["a"], [])
