"""bench/tile_formula_index.py, the full-size stand-in for Task 2 timing: bad input is refused in
one line with exit 2 and nothing written; a tiling R times has R times the formulae, and each copy's
instances are other formulae (shifted ids), so the search finds R distinct hits per formula."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from mathsearch.indexes.formula import FormulaIndex, Scoring

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "tile_formula_index.py"


def _tile_main():
    spec = importlib.util.spec_from_file_location("tile_formula_index", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def test_bad_input_is_refused_and_nothing_is_written(sample_index, tmp_path, capsys):
    main = _tile_main()
    mine = tmp_path / "other" / "formula" / "mine.txt"
    mine.parent.mkdir(parents=True)
    mine.write_text("keep")
    empty = tmp_path / "empty"
    empty.write_text("")
    cases = [
        ([str(tmp_path / "nope"), str(tmp_path / "o1"), "2"], "holds no formula index"),
        ([str(empty), str(tmp_path / "o2"), "2"], "holds no formula index"),
        ([str(sample_index), str(tmp_path / "o3"), "x"], "whole number"),
        ([str(sample_index), str(tmp_path / "o4"), "0"], "whole number"),
        ([str(sample_index), str(tmp_path / "other"), "2"], "exists"),
        ([str(sample_index), str(empty), "2"], "is a file"),
    ]
    for argv, said in cases:
        assert main(argv) == 2, argv
        assert said in capsys.readouterr().err, argv
    assert mine.read_text() == "keep" and empty.read_text() == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "other"]  # no OUT made


def test_a_tiled_index_holds_r_copies_with_their_own_ids(sample_index, tmp_path):
    assert _tile_main()([str(sample_index), str(tmp_path / "t"), "2"]) == 0
    one, two = FormulaIndex.open(sample_index), FormulaIndex.open(tmp_path / "t")
    assert two.n == 2 * one.n
    ids = np.asarray(two.inst_formula)
    assert len(np.unique(ids)) == 2 * len(np.unique(np.asarray(one.inst_formula)))
    q = one.query("x^2+y^2=z^2")
    ranking = two.best_instances(q, Scoring(), 50, 50)
    single = one.best_instances(q, Scoring(), 25, 25)
    assert len(ranking) == 2 * len(single)  # each hit once per copy, as other formulae
    assert sorted(set(ranking.values())) == sorted(set(single.values()))  # the same scores
