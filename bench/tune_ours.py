"""Tune the weights of ``ours`` by coordinate ascent on one year, and measure them on the other.

    python bench/tune_ours.py --index INDEX_DIR [--config FILE] [--rounds 2] [--alpha 0.05]
    python bench/tune_ours.py --index INDEX_DIR --simplify [--config FILE] [--out DIR]
    python bench/tune_ours.py --index INDEX_DIR --candidates A.toml,B.toml,... (simplest first)
    python bench/tune_ours.py --index INDEX_DIR --tune 2020 [--test 2021]   (one direction)

By default both directions (``bench/crossyear.py``): starting from the packaged ``ours.toml`` (or
``--config``: the simpler setting), tries each weight (signal weights and field weights) at a few
multiples, keeps a change when the mean of nDCG' and nDCG@10 on the one year improves, and
measures the result on the other year: tuned on 2020, measured on 2021, and the reverse, the
in-year and out-of-year columns side by side.  The tuned weights replace the start only if both
beat it out of year, and a paired t-test over both out-of-year comparisons' topics together
(the per-topic mean of nDCG' and nDCG@10) gives p < ``--alpha``; ``--out DIR`` writes them as ``tuned-on-2020.toml`` and ``tuned-on-2021.toml``.
``--simplify``: each signal of the config in use, dropped alone (fewer signals is the simpler
setting): a signal stays only if, chosen on either year, it beats its absence on the other (the
same paired test), and the config without the signals that do not hold is measured beside the
start (``--out``: ``simplified.toml``).  ``--candidates``: no ascent; each file (``packaged`` for ``ours.toml``) is
scored, the best on one year (ties: the earlier, simpler file) is measured on the other, both
ways.  ``--tune 2020,2021`` tunes on both years: in sample, for comparison only.  Only 2020 and
2021 topics are allowed here; 2022 (the held-out year) never is.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import sys
from pathlib import Path

import mathsearch.systems  # noqa: F401  (registers every signal, the formula one too)
from mathsearch.evaluation.measures import RANKED_MEASURES
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.evaluation.trec import TrecScorer, cut_depth
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery
from mathsearch.systems.ours import OursConfig, combine, load_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossyear import (  # noqa: E402
    ALPHA,
    YEARS,
    check_years,
    cross_year,
    decide,
    direction,
    other,
    pooled_p,
    table,
    to_toml,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"


class Bench:
    def __init__(self, index: Path, years: list[str]):
        self.ctx = SearchContext(index)
        present = self.ctx.store.answer_ids()
        self.years = {}
        for year in years:
            topics = read_topics(DATA / "topics" / f"task1-{year}.xml")
            qrels = restrict_qrels(qrels_to_dict(read_qrels(DATA / "qrels" / f"task1-{year}.tsv")), present).qrels
            queries = [SearchQuery.from_topic(t) for t in topics if t.topic_id in qrels]
            self.years[year] = (queries, TrecScorer(qrels, RANKED_MEASURES))

        # Each signal's scores per topic, by the signal's settings other than its weight (and the
        # similar questions' settings it may start from): a trial that changes a weight only
        # re-fuses; one that changes a field recomputes that one signal.  Two variants are kept
        # per topic and signal (the best so far and the trial), so memory stays bounded.
        self.cache: dict[tuple[str, str], dict[str, dict[int, float]]] = {}

    def fused(self, config: dict, query: SearchQuery) -> dict[int, float]:
        """:func:`combine` itself, its signals' scores taken from the cache."""
        parsed = OursConfig.parse(config, "(tuning)")
        similar_key = repr(parsed.similar)  # the similar questions that linked / questions start from

        def cached(name: str, sig, similar, earlier) -> dict[int, float]:
            # a re-scoring signal depends on the signals before it: their settings are in its key
            variant = repr(dataclasses.replace(sig, weight=0.0)) + similar_key
            if getattr(sig, "rerank", 0):
                variant += repr([repr(dataclasses.replace(s, weight=0.0)) for n, _, s in parsed.signals if n in earlier])
            kept = self.cache.setdefault((query.query_id, name), {})
            if variant in kept:
                kept[variant] = kept.pop(variant)  # most recently used last
            else:
                if len(kept) >= 2:
                    kept.pop(next(iter(kept)))
                kept[variant] = sig.scores(self.ctx, query, similar, earlier)
            return kept[variant]

        return combine(self.ctx, query, parsed, cached)

    def per_topic(self, config: dict, year: str) -> dict[str, dict[str, float]]:
        """``{measure: {topic: value}}`` of ``config`` on ``year``."""
        queries, scorer = self.years[year]
        run = {q.query_id: {str(a): s for a, s in self.fused(config, q).items()} for q in queries}
        return scorer.score(cut_depth(run))

    def scores(self, config: dict, years: list[str]) -> dict[str, dict[str, float]]:
        out = {}
        for year in years:
            out[year] = {m: sum(v.values()) / len(v) for m, v in self.per_topic(config, year).items()}
        return out


def objective(scores: dict[str, dict[str, float]]) -> float:
    return sum(s["nDCG'"] + s["nDCG@10"] for s in scores.values()) / (2 * len(scores))


def weight_paths(config: dict) -> list[tuple[str, ...]]:
    paths = []
    for name, sec in config.get("signals", {}).items():
        paths.append(("signals", name, "weight"))
        paths.extend(("signals", name, "fields", f) for f in sec.get("fields", {}))
    return paths


def get(config: dict, path: tuple[str, ...]) -> float:
    for key in path:
        config = config[key]
    return float(config)  # type: ignore[arg-type]


def put(config: dict, path: tuple[str, ...], value: float) -> dict:
    out = copy.deepcopy(config)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def describe(scores: dict[str, dict[str, float]]) -> str:
    return "  ".join(f"{y}: nDCG' {s[chr(110) + 'DCG' + chr(39)]:.3f} nDCG@10 {s['nDCG@10']:.3f}" for y, s in scores.items())


def tune(bench: Bench, config: dict, years: list[str], rounds: int) -> dict:
    best = objective(bench.scores(config, years))
    for _ in range(rounds):
        improved = False
        for path in weight_paths(config):
            current = get(config, path)
            for value in ([0.25, 0.5, 1.0, 2.0] if current == 0 else [0.0, current / 2, current * 2]):
                trial = put(config, path, value)
                score = objective(bench.scores(trial, years))
                if score > best + 1e-4:
                    best, config, improved = score, trial, True
                    print(f"  {'.'.join(path)} = {value}: {score:.4f}", file=sys.stderr, flush=True)
                    current = value
        if not improved:
            break
    return config


def topic_objective(per_topic: dict[str, dict[str, float]]) -> dict[str, float]:
    """Per topic, the mean of nDCG' and nDCG@10 (what the ascent maximises, topic by topic)."""
    return {t: (v + per_topic["nDCG@10"][t]) / 2 for t, v in per_topic["nDCG'"].items()}


def cross_year_report(bench: Bench, configs: dict[str, dict], chosen: dict[str, str] | None, alpha: float) -> None:
    """Score every config on both years; print each direction (the config chosen on a year, or
    ``chosen[year]``) against the first config, in-year and out-of-year columns side by side."""
    measured = {label: {y: bench.per_topic(cfg, y) for y in YEARS} for label, cfg in configs.items()}
    scores = {label: {y: topic_objective(m[y]) for y in YEARS} for label, m in measured.items()}
    order = list(configs)

    def cells(label: str, year: str) -> str:
        m = measured[label][year]
        return " | ".join(f"{sum(m[k].values()) / len(m[k]):.3f}" for k in ("nDCG'", "nDCG@10"))

    print("| setting | " + " | ".join(f"{y} {k}" for y in YEARS for k in ("nDCG'", "nDCG@10")) + " |")
    print("|---|" + "---|" * 4)
    for label in order:
        print(f"| {label} | " + " | ".join(cells(label, y) for y in YEARS) + " |")
    if chosen is None:
        directions = cross_year(scores, order)
    else:
        directions = [direction(scores, order, y, other(y), chosen=chosen[y]) for y in YEARS]
    print()
    print("\n".join(table(directions, cells, ("nDCG'", "nDCG@10"))))
    print(f"verdict against {order[0]}: {decide(directions, alpha)[1]}")


def mean_of(per_topic: dict[str, dict[str, float]], measure: str) -> float:
    values = per_topic[measure]
    return sum(values.values()) / len(values)


def simplify(bench: Bench, start: dict, alpha: float) -> dict:
    """Drop each signal of ``start`` alone; print whether it holds; return ``start`` without the
    signals that do not."""
    measured = {"start": {y: bench.per_topic(start, y) for y in YEARS}}
    print("| signal dropped | " + " | ".join(f"{y} nDCG' / nDCG@10 with / without" for y in YEARS)
          + " | chosen on 2020 -> 2021: gain (p) | chosen on 2021 -> 2020: gain (p) | both together: p | holds |")
    print("|---|---|---|---|---|---|---|")
    simplified = copy.deepcopy(start)
    for name, sec in start.get("signals", {}).items():
        if not sec.get("weight"):
            continue
        label = f"without {name}"
        without = put(start, ("signals", name, "weight"), 0.0)
        measured[label] = {y: bench.per_topic(without, y) for y in YEARS}
        scores = {k: {y: topic_objective(m[y]) for y in YEARS} for k, m in measured.items() if k in ("start", label)}
        directions = cross_year(scores, [label, "start"])  # the simpler first
        holds, _ = decide(directions, alpha)
        cells = [" / ".join(f"{mean_of(measured[k][y], m):.3f}" for k in ("start", label) for m in ("nDCG'", "nDCG@10"))
                 for y in YEARS]
        gains = [f"{'kept' if d.chosen == 'start' else 'dropped'}: {d.gain:+.3f} ({d.p:.3g})" for d in directions]
        print(f"| {name} ({sec['weight']:g}) | " + " | ".join(cells + gains)
              + f" | {pooled_p(directions):.3g} | {'yes' if holds else 'no'} |",
              flush=True)
        if not holds:
            simplified["signals"][name]["weight"] = 0.0
    return simplified


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--tune", default="", help="tune on these years only (default: each year, measured on the other)")
    ap.add_argument("--test", default="")
    ap.add_argument("--config", default="", help="the start (default: the packaged ours.toml)")
    ap.add_argument("--candidates", default="", help="comma-separated config files, simplest first ('packaged': ours.toml)")
    ap.add_argument("--simplify", action="store_true", help="drop each signal alone; keep those that hold out of year")
    ap.add_argument("--no-dense", action="store_true", help="drop the start's dense signals (tune ours:dense=False)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--alpha", type=float, default=ALPHA)
    ap.add_argument("--out", type=Path, default=None, help="write the tuned (or simplified) configs here")
    args = ap.parse_args(argv)
    tune_years = [y for y in args.tune.split(",") if y]
    test_years = [y for y in args.test.split(",") if y]
    check_years(tune_years + test_years)
    if args.candidates:
        files = [f for f in args.candidates.split(",") if f]
        bench = Bench(args.index, list(YEARS))
        configs = {f: load_config("" if f == "packaged" else f) for f in files}
        cross_year_report(bench, configs, None, args.alpha)
        return 0
    start = load_config(args.config)
    if args.no_dense:
        start["signals"] = {k: v for k, v in start["signals"].items() if v.get("kind") not in ("dense", "dense_questions")}
    if args.simplify:
        bench = Bench(args.index, list(YEARS))
        simplified = simplify(bench, start, args.alpha)
        print()
        cross_year_report(bench, {"simplified": simplified, "start": start}, None, args.alpha)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "simplified.toml").write_text(to_toml(simplified) + "\n")
        return 0
    if not tune_years:  # the default: each year in turn, measured on the other
        bench = Bench(args.index, list(YEARS))
        tuned = {}
        for year in YEARS:
            print(f"tuning on {year} ...", file=sys.stderr, flush=True)
            tuned[year] = tune(bench, start, [year], args.rounds)
            print(f"tuned on {year}:\n" + json.dumps(tuned[year].get("signals", {}), indent=1))
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"tuned-on-{year}.toml").write_text(to_toml(tuned[year]) + "\n")
        labels = {"start": start, **{f"tuned on {y}": tuned[y] for y in YEARS}}
        cross_year_report(bench, labels, {y: f"tuned on {y}" for y in YEARS}, args.alpha)
        return 0
    bench = Bench(args.index, sorted(set(tune_years + test_years)))
    every = sorted(set(tune_years + test_years))
    print(f"start:      {describe(bench.scores(start, every))}")
    tuned = tune(bench, start, tune_years, args.rounds)
    sample = " (in sample: chosen on every year shown)" if set(every) <= set(tune_years) else ""
    print(f"tuned on {','.join(tune_years)}: {describe(bench.scores(tuned, every))}{sample}")
    print(json.dumps(tuned.get("signals", {}), indent=1))
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
