"""bench/crossyear.py: what the results tables know of how the packaged settings were chosen (the
choice itself: tests/test_selection.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mathsearch.errors import InputError
from mathsearch.evaluation import selection

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import crossyear  # noqa: E402


def test_a_decision_is_recorded_for_the_tables_and_never_over_an_earlier_record(tmp_path):
    topics = [("2020", f"A.{i}") for i in range(1, 31)] + [("2021", f"A.{i}") for i in range(301, 341)]

    def flat(v):
        return {"nDCG@10": {t: v + (0.05 if i % 2 else -0.05) for i, t in enumerate(topics)},
                "nDCG'": {t: v + 0.1 for t in topics}}

    scores = {"simple": flat(0.5), "rich": flat(0.53)}
    decision = selection.decide(scores, ["simple", "rich"])
    configs = {"simple": {"depth": 10}, "rich": {"depth": 20}}
    written = crossyear.record(decision, configs, tmp_path / "ours", "python bench/tune_ours.py --index IDX")
    assert sorted(p.name for p in written) == ["selection.json", "tuned-on-2020.toml", "tuned-on-2021.toml"]
    made = json.loads((tmp_path / "ours" / "selection.json").read_text())
    assert made["chosen"] == "rich" and made["cross_validated"]["nDCG@10"] == pytest.approx(0.53, abs=1e-9)
    assert made["leave_one_year_out"]["2021"]["chosen_on"] == "2020" and made["repeats"] == selection.REPEATS
    assert (tmp_path / "ours" / "tuned-on-2020.toml").read_text() == "\"depth\" = 20\n"
    before = (tmp_path / "ours" / "selection.json").read_bytes()
    with pytest.raises(InputError, match="nothing is overwritten"):
        crossyear.record(decision, configs, tmp_path / "ours", "again")
    assert (tmp_path / "ours" / "selection.json").read_bytes() == before
    with pytest.raises(SystemExit, match="2022"):
        crossyear.check_years(["2021", "2022"])


def test_results_tables_know_which_rows_are_in_sample_and_where_their_out_of_year_config_is(tmp_path, monkeypatch):
    index = tmp_path / "no-vectors"  # no dense vectors: ours runs ours_lexical.toml
    monkeypatch.setattr(crossyear, "OUT_OF_YEAR", tmp_path / "out")
    lexical = crossyear.in_sample("ours", index)
    assert lexical.chosen_on == ("2020", "2021") and lexical.mark("2020") == "in sample"
    assert lexical.out_of_year == {"2020": None, "2021": None}  # not made: the tables say n/m
    folder = tmp_path / "out" / "ours_lexical"
    folder.mkdir(parents=True)
    (folder / "tuned-on-2021.toml").write_text("x = 1\n")
    made = crossyear.in_sample("ours:dense=False", index)
    assert made.out_of_year == {"2020": f"ours:dense=False,config={folder / 'tuned-on-2021.toml'}", "2021": None}
    assert crossyear.in_sample("formula", index).chosen_on == ("2020", "2021")  # chosen on both years pooled
    for untuned in ("bm25-thread", "first-hit", "extract:consensus=0", "tangent-s-formula"):
        assert crossyear.in_sample(untuned, index).chosen_on == () and crossyear.in_sample(untuned, index).mark("2020") == ""
    default = crossyear.in_sample("extract", index)  # the consensus choice, chosen on both years
    assert default.mark("2021") == "in sample" and default.out_of_year == {"2020": "extract", "2021": "extract:consensus=15"}
    assert crossyear.in_sample("extract:consensus=10", index).chosen_on == ("2020", "2021")
    assert crossyear.in_sample("extract:k=2", index).mark("2021") == "in sample"
    # a Task 3 option's out-of-year counterpart is found whatever order its parameters are written in
    assert crossyear.in_sample("extract:consensus_k=4,consensus=10", index).out_of_year["2021"] == "extract:consensus=10,consensus_k=3"
