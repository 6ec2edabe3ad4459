"""Formulae per second per core: LaTeX -> SLT + OPT + tuples (ours) beside two peers.

Peers, measured in the same run on the same strings: ``latex2mathml`` (pure Python, LaTeX ->
Presentation MathML only) and Approach0's C parser ``pya0.parse`` (LaTeX -> OPT).  Rows:

* distinct formulae, no cache (every string parsed once);
* every instance of the sample in file order, ours through the cached ``FormulaAnalyzer``
  (the collection repeats itself: a cache by LaTeX string is part of the design);
* the share of formulae each tool could not handle (exception or error status).

Each figure is the median of ``--repeat`` runs on one core (the process is single-threaded),
counted in CPU seconds of this process (``time.process_time``) so that other work on a shared
machine does not count against any tool; wall-clock rates are printed beside them.

    python bench/bench_formula.py [--tsv PATH] [--limit N] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from mathsearch.formula import FormulaAnalyzer, opt_tuples, parse_latex, slt_tuples
from mathsearch.readers.formula_tsv import iter_formula_tsv

DEFAULT_TSV = Path(__file__).resolve().parents[1].parent / "shared/data/arqmath/collection/formulas/latex_representation_v3.tsv"


def ours_uncached(latexes: list[str]) -> int:
    failures = 0
    for s in latexes:
        p = parse_latex(s)
        slt_tuples(p.slt)
        opt_tuples(p.opt)
        failures += p.recovered
    return failures


def ours_cached(latexes: list[str]) -> int:
    analyzer = FormulaAnalyzer()
    return sum(analyzer.analyze(s).recovered for s in latexes)


def latex2mathml_run(latexes: list[str]) -> int:
    from latex2mathml.converter import convert

    failures = 0
    for s in latexes:
        try:
            convert(s)
        except Exception:  # noqa: BLE001 - a peer's failure is what we count
            failures += 1
    return failures


def pya0_run(latexes: list[str]) -> int:
    import pya0

    failures = 0
    for s in latexes:
        try:
            res = pya0.parse(s, insert_rank_node=False)
            if not res or res[0] != "OK":
                failures += 1
        except Exception:  # noqa: BLE001
            failures += 1
    return failures


def timed(fn, data: list[str], repeat: int) -> tuple[float, float, int]:
    """Median CPU seconds, median wall seconds, and the failure count of one run."""
    cpu, wall = [], []
    failures = 0
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        failures = fn(data)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall), failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsv", type=Path, default=DEFAULT_TSV)
    ap.add_argument("--limit", type=int, default=0, help="use only the first N instances")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    instances = [r.formula for r in iter_formula_tsv(args.tsv)]
    if args.limit:
        instances = instances[: args.limit]
    distinct = list(dict.fromkeys(instances))
    print(f"{len(instances):,} formula instances, {len(distinct):,} distinct LaTeX strings; "
          f"median of {args.repeat} runs, one core")
    rows = []
    runs = [
        ("ours: SLT+OPT+tuples", "distinct", ours_uncached, distinct),
        ("latex2mathml: PMML", "distinct", latex2mathml_run, distinct),
        ("pya0.parse: OPT (C)", "distinct", pya0_run, distinct),
        ("ours: FormulaAnalyzer cached", "all instances", ours_cached, instances),
        ("latex2mathml: PMML", "all instances", latex2mathml_run, instances),
        ("pya0.parse: OPT (C)", "all instances", pya0_run, instances),
    ]
    for name, which, fn, data in runs:
        try:
            cpu, wall, failures = timed(fn, data, args.repeat)
        except ImportError as exc:
            print(f"skipping {name}: {exc}")
            continue
        rows.append((name, which, len(data) / cpu, len(data) / wall, failures / len(data)))
    base = {which: rate for name, which, rate, _w, _f in rows if name.startswith("ours")}
    print(f"| {'tool':<30} | {'input':<13} | formulae/s per core (CPU) | vs ours | wall-clock /s | failed/recovered |")
    print(f"|{'-' * 32}|{'-' * 15}|---------------------------|---------|---------------|------------------|")
    for name, which, rate, wrate, fail in rows:
        print(f"| {name:<30} | {which:<13} | {rate:>25,.0f} | {rate / base[which]:>6.2f}x | {wrate:>13,.0f} "
              f"| {fail:>15.2%} |")
    minutes = 28_000_000 / (base.get("all instances", 1.0) * 2) / 60
    print(f"\nARQMath's 28M formulae on two cores at the cached rate: about {minutes:.0f} minutes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
