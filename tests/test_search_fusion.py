"""Fusion methods on small hand-made runs, with the fused values worked out by hand."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from mathsearch.cli import app
from mathsearch.errors import InputError
from mathsearch.systems.fusion import combsum, fuse, minmax, mirmu, ranked, rrf

# Two runs of one topic; trec order of A: a (3), b (2), c (1); of B: c (10), d (5), a (0).
A = {"t": {"a": 3.0, "b": 2.0, "c": 1.0}}
B = {"t": {"c": 10.0, "d": 5.0, "a": 0.0}}


def test_ranked_follows_trec_eval_ties():
    assert ranked({"x": 1.0, "y": 1.0, "z": 2.0}) == ["z", "y", "x"]  # ties: id descending


def test_rrf_values():
    fused = rrf([A, B], k=1)
    # a: 1/(1+1) + 1/(1+3) = 0.75; b: 1/(1+2) = 1/3; c: 1/(1+3) + 1/(1+1) = 0.75; d: 1/(1+2)
    assert fused["t"] == pytest.approx({"a": 0.75, "b": 1 / 3, "c": 0.75, "d": 1 / 3})
    weighted = rrf([A, B], k=1, weights=[2, 0])
    assert weighted["t"] == pytest.approx({"a": 1.0, "b": 2 / 3, "c": 0.5, "d": 0.0})


def test_minmax_averages_normalised_scores():
    fused = minmax([A, B])
    # A normalised: a 1, b .5, c 0; B: c 1, d .5, a 0; mean over the two runs, missing = 0
    assert fused["t"] == pytest.approx({"a": 0.5, "b": 0.25, "c": 0.5, "d": 0.25})
    assert minmax([A, B], weights=[3, 1])["t"]["a"] == pytest.approx(0.75)


def test_combsum_weighted_and_raw():
    assert combsum([A, B], weights=[1, 2])["t"] == pytest.approx({"a": 1.0, "b": 0.5, "c": 2.0, "d": 1.0})
    assert combsum([A, B], normalise="none")["t"] == pytest.approx({"a": 3.0, "b": 2.0, "c": 11.0, "d": 5.0})
    # rank normalisation: 1 - i/n, n = 3
    assert combsum([A, B], normalise="rank")["t"] == pytest.approx({"a": 1 + 1 / 3, "b": 2 / 3, "c": 1 / 3 + 1, "d": 2 / 3})


def test_mirmu_orders_by_median_inverse_rank_then_frequency_then_stripes():
    depth = 10
    fused = mirmu([A, B], depth=depth)["t"]
    # zero-based ranks (absent = 10): a (0, 2) median 1; c (2, 0) median 1; b (1, 10) 5.5; d (10, 1) 5.5
    order = ranked(fused)
    assert set(order[:2]) == {"a", "c"} and set(order[2:]) == {"b", "d"}
    # scores keep the median inverse rank, (10 - M) / 10, plus a tie-breaking epsilon below half a rank step (1/20)
    assert 0.9 < fused["a"] < 0.95 and 0.45 < fused["b"] < 0.5
    # a and c tie on (M^-1, f = 2); by id, a is the 0th of the group -> its rank in its first list (A: 0),
    # c the 1st -> its rank in its second list (B: 0): S^-1 equal, so the id decides (descending): c first.
    assert order[:2] == ["c", "a"]
    # b, d tie on (0.45, f = 1); b's S = 1 (A), d's S = 1 (B): tie, id descending: d first
    assert order[2:] == ["d", "b"]


def test_mirmu_stripes_interleave_runs():
    # x and y both appear in the two runs with the same median rank; x is better in run 1, y in run 2.
    r1 = {"t": {"x": 9.0, "y": 8.0, "p": 7.0, "q": 6.0}}  # x 0, y 1, p 2, q 3
    r2 = {"t": {"q": 9.0, "p": 8.0, "y": 7.0, "x": 6.0}}  # q 0, p 1, y 2, x 3
    order = ranked(mirmu([r1, r2], depth=100)["t"])
    # all four have median 1.5 and f = 2; group by id: p (k=0 -> run 1: rank 2), q (k=1 -> run 2: 0),
    # x (k=2 -> run 1: 0), y (k=3 -> run 2: 2): S^-1 puts q and x (rank 0) before p and y (rank 2).
    assert set(order[:2]) == {"q", "x"} and set(order[2:]) == {"p", "y"}


def test_depth_cut_and_bad_input():
    many = {"t": {str(i): float(i) for i in range(50)}}
    assert len(rrf([many], depth=10)["t"]) == 10
    assert set(combsum([many], depth=3)["t"]) == {"49", "48", "47"}
    with pytest.raises(InputError):
        rrf([A, B], weights=[1])
    with pytest.raises(InputError):
        fuse("borda", [A])
    with pytest.raises(InputError):
        fuse("mirmu", [A, B], weights=[1, 1])
    for weights in ([1, -1], [0, 0], [float("nan"), 1]):  # every face's fusion refuses them
        with pytest.raises(InputError, match="each weight is 0 or more, and one is above 0"):
            fuse("combsum", [A, B], weights=weights)


def test_fuse_command_writes_a_valid_run(tmp_path):
    def write(path, run):
        with path.open("w") as out:
            for topic, docs in run.items():
                for rank, doc in enumerate(ranked(docs), 1):
                    out.write(f"{topic}\tQ0\t{doc}\t{rank}\t{docs[doc]}\ttag\n")

    write(tmp_path / "a.tsv", A)
    write(tmp_path / "b.tsv", B)
    out = tmp_path / "fused.tsv"
    result = CliRunner().invoke(app, ["fuse", "--method", "combsum", "--weights", "1,2", str(tmp_path / "a.tsv"),
                                      str(tmp_path / "b.tsv"), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in out.read_text().splitlines()]
    assert [line[2] for line in lines] == ["c", "d", "a", "b"]  # 2.0, 1.0, 1.0 (id descending: d > a), 0.5
    assert [float(line[4]) for line in lines] == pytest.approx([2.0, 1.0, 1.0, 0.5])
    bad = CliRunner().invoke(app, ["fuse", "--method", "nope", str(tmp_path / "a.tsv"), "--out", str(out)])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
