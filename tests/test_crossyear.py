"""bench/crossyear.py: the cross-year selection every tuning script shares (choose on one year,
measure on the other, both ways; a setting replaces the simpler one only if it holds out of year)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import crossyear  # noqa: E402

TOPICS = {"2020": [f"A.{i}" for i in range(1, 31)], "2021": [f"A.{i}" for i in range(101, 141)]}


def scores(per_year: dict[str, float], noise: float = 0.0) -> dict[str, dict[str, float]]:
    """A setting scoring ``per_year[y]`` on every topic of ``y`` (plus an alternating ``noise``)."""
    return {y: {t: v + (noise if i % 2 else -noise) for i, t in enumerate(TOPICS[y])} for y, v in per_year.items()}


def test_a_setting_better_in_both_years_holds_both_ways():
    s = {"simple": scores({"2020": 0.50, "2021": 0.40}, 0.05),
         "tuned": scores({"2020": 0.60, "2021": 0.50}, 0.06)}
    directions = crossyear.cross_year(s, ["simple", "tuned"])
    assert [(d.chosen_on, d.tested_on, d.chosen) for d in directions] == [("2020", "2021", "tuned"),
                                                                          ("2021", "2020", "tuned")]
    d20 = directions[0]
    assert d20.in_year == pytest.approx(0.60) and d20.out_of_year == pytest.approx(0.50)
    assert d20.baseline_out == pytest.approx(0.40) and d20.gain == pytest.approx(0.10) and d20.p < 0.001
    ok, reason = crossyear.decide(directions)
    assert ok and "holds out of year both ways" in reason and "both together p" in reason


def test_a_gain_in_both_years_too_small_for_either_year_alone_can_hold_on_both_together():
    # +0.02 a topic on average in each year, too noisy for 30 or 40 topics alone, clear on 70
    def shifted(year: str, gain: float) -> dict[str, float]:
        return {t: 0.5 + (gain + (0.12 if i % 2 else -0.1)) * (i % 5 != 0) for i, t in enumerate(TOPICS[year])}

    base = {y: {t: 0.5 for t in TOPICS[y]} for y in TOPICS}
    s = {"simple": base, "tuned": {"2020": shifted("2020", 0.02), "2021": shifted("2021", 0.02)}}
    directions = crossyear.cross_year(s, ["simple", "tuned"])
    assert all(d.chosen == "tuned" and d.gain > 0 and d.p > 0.05 for d in directions)
    assert crossyear.pooled_p(directions) < 0.05 and crossyear.decide(directions)[0]


def test_a_setting_chosen_on_one_year_that_loses_the_other_is_not_packaged():
    s = {"simple": scores({"2020": 0.50, "2021": 0.50}, 0.05),
         "noise-fit": scores({"2020": 0.60, "2021": 0.45}, 0.07)}
    directions = crossyear.cross_year(s, ["simple", "noise-fit"])
    assert directions[0].chosen == "noise-fit" and directions[0].gain == pytest.approx(-0.05)
    assert directions[1].chosen == "simple" and not directions[1].holds()  # 2021 keeps the simpler
    ok, reason = crossyear.decide(directions)
    assert not ok and "the simpler setting itself" in reason and "2021 -0.050" in reason


def test_ties_go_to_the_simpler_setting_and_a_small_gain_needs_the_paired_test():
    s = {"simple": scores({"2020": 0.5, "2021": 0.5}), "same": scores({"2020": 0.5, "2021": 0.5})}
    assert crossyear.best_on(s, ["simple", "same"], "2020") == "simple"
    # better on average in both years, but by a difference the topics do not support
    wobbly = {y: {t: v + (0.3 if i % 3 == 0 else -0.14) for i, (t, v) in enumerate(s["simple"][y].items())}
              for y in ("2020", "2021")}
    s2 = {"simple": s["simple"], "wobbly": wobbly}
    directions = crossyear.cross_year(s2, ["simple", "wobbly"])
    assert all(d.chosen == "wobbly" and d.gain > 0 for d in directions)
    assert all(d.p > 0.05 for d in directions) and crossyear.pooled_p(directions) > 0.05
    assert all(d.holds() for d in directions) and not crossyear.decide(directions)[0]
    assert crossyear.decide(directions, alpha=1.0)[0]  # without the test, the mean gain would have passed


def test_table_puts_in_year_and_out_of_year_side_by_side_and_2022_is_refused():
    s = {"simple": scores({"2020": 0.5, "2021": 0.4}, 0.05), "tuned": scores({"2020": 0.6, "2021": 0.5}, 0.07)}
    directions = crossyear.cross_year(s, ["simple", "tuned"])
    rows = crossyear.table(directions, lambda lab, y: f"{crossyear.mean(s[lab][y]):.2f}", ["x"])
    assert rows[0].startswith("| chosen on -> measured on | setting | in year: x | out of year: x | simpler")
    assert rows[2].startswith("| 2020 -> 2021 | tuned | 0.60 | 0.50 | 0.40 | +0.100 (") and rows[2].endswith(" | yes |")
    assert "beats the simpler" in rows[0]
    assert rows[3].startswith("| 2021 -> 2020 | tuned | 0.50 | 0.60 | 0.50 | +0.100 (")
    with pytest.raises(SystemExit, match="2022"):
        crossyear.cross_year(s, ["simple", "tuned"], years=("2021", "2022"))
    with pytest.raises(ValueError, match="different 2021 topics"):
        crossyear.direction({"a": s["simple"], "b": {"2020": s["tuned"]["2020"], "2021": {"A.101": 1.0}}},
                            ["a", "b"], "2020", "2021")


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
    for untuned in ("bm25-thread", "extract", "first-hit", "tangent-s-formula", "formula"):
        assert crossyear.in_sample(untuned, index).chosen_on == () and crossyear.in_sample(untuned, index).mark("2020") == ""
    assert crossyear.in_sample("extract:consensus=10", index).chosen_on == ("2020", "2021")
    assert crossyear.in_sample("extract:k=2", index).mark("2021") == "in sample"
    # a Task 3 option's out-of-year counterpart is found whatever order its parameters are written in
    assert crossyear.in_sample("extract:consensus_k=4,consensus=10", index).out_of_year["2021"] == "extract:consensus=10,consensus_k=3"
