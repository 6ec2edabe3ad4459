"""Evaluation speed: scoring many full-size runs with ``mathsearch.evaluation``.

    python bench/bench_eval.py [--runs 100] [--topics 100] [--hits 1000] [--repeat 3]

Generates (once, under bench/out/eval/) a qrels file of ``--topics`` topics with ~450 graded
judgements each (the relevance mix of ARQMath-1 Task 1) and ``--runs`` TREC runs of
``--topics`` x ``--hits`` hits, about a third of them judged, with tied scores.  Then times, in this
process, each of:

* ``mathsearch``: :func:`mathsearch.evaluation.evaluate_runs` — reading, run checks, depth cut,
  nDCG'/MAP'/P'@10 on the judged-only run, nDCG@10 on the full run, judged shares at 6 depths,
  intervals and a paired t-test against the first run, for every run;
* ``ir_measures`` (peer): ``ir_measures.read_trec_run`` + ``calc_aggregate`` of the same four
  trec_eval measures on the full runs (no prime removal, no reports): the library's own path;
* ``mathsearch eval`` (CLI, one process for all runs, ``--json``), as a user runs it.

Medians over ``--repeat`` rounds of wall time and of CPU time (this process, or the child for
the CLI): on a shared machine CPU time is the steadier figure.  Ratios are against the peer.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "eval"
REL_MIX = [(0, 0.895), (1, 0.058), (2, 0.028), (3, 0.019)]  # task1-2020.tsv proportions


def _relevance(rng: random.Random) -> int:
    r, acc = rng.random(), 0.0
    for rel, p in REL_MIX:
        acc += p
        if r <= acc:
            return rel
    return REL_MIX[-1][0]


def generate(n_runs: int, n_topics: int, hits: int, seed: int = 7) -> tuple[Path, list[Path]]:
    folder = OUT / f"r{n_runs}-t{n_topics}-h{hits}"
    qrels = folder / "qrels.tsv"
    runs = [folder / f"TeamB-task1-run{i:03d}-auto-both-A.tsv" for i in range(n_runs)]
    if qrels.exists() and all(r.exists() for r in runs):
        return qrels, runs
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    topics = [f"A.{i}" for i in range(1, n_topics + 1)]
    judged: dict[str, list[str]] = {}
    with qrels.open("w") as out:
        for t in topics:
            docs = rng.sample(range(1, 3_000_000), 450)
            judged[t] = [str(d) for d in docs]
            for d in docs:
                out.write(f"{t}\t0\t{d}\t{_relevance(rng)}\n")
    for path in runs:
        with path.open("w") as out:
            for t in topics:
                pool = judged[t]
                seen: set[str] = set()
                for rank in range(1, hits + 1):
                    while True:
                        doc = rng.choice(pool) if rng.random() < 0.33 else str(rng.randrange(1, 3_000_000))
                        if doc not in seen:
                            break
                    seen.add(doc)
                    score = round(100.0 - rank * 0.09 + rng.random() * 0.5, 1)  # rounding makes ties
                    out.write(f"{t}\tQ0\t{doc}\t{rank}\t{score}\tbench\n")
    return qrels, runs


def time_ours(qrels: Path, runs: list[Path]) -> tuple[float, float]:
    from mathsearch.evaluation import evaluate_runs

    t0, c0 = time.perf_counter(), time.process_time()
    report = evaluate_runs(1, qrels, runs)
    elapsed = time.perf_counter() - t0, time.process_time() - c0
    assert len(report.runs) == len(runs)
    return elapsed


def time_peer(qrels: Path, runs: list[Path]) -> tuple[float, float]:
    import ir_measures
    from ir_measures import AP, P, nDCG

    measures = [nDCG, AP(rel=2), P(rel=2) @ 10, nDCG @ 10]
    t0, c0 = time.perf_counter(), time.process_time()
    qrels_list = list(ir_measures.read_trec_qrels(str(qrels)))
    for path in runs:
        ir_measures.calc_aggregate(measures, qrels_list, ir_measures.read_trec_run(str(path)))
    return time.perf_counter() - t0, time.process_time() - c0


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_cli(qrels: Path, runs: list[Path]) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), _child_cpu()
    subprocess.run(
        [sys.executable, "-m", "mathsearch", "eval", "--task", "1", "--qrels", str(qrels), *map(str, runs), "--json"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0, _child_cpu() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--hits", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI row")
    args = ap.parse_args()

    t0 = time.perf_counter()
    qrels, runs = generate(args.runs, args.topics, args.hits)
    gen = time.perf_counter() - t0
    n_hits = args.runs * args.topics * args.hits
    print(f"# {args.runs} runs x {args.topics} topics x {args.hits} hits = {n_hits:,} hits "
          f"({sum(r.stat().st_size for r in runs) / 1e6:.0f} MB); data ready in {gen:.1f} s")
    print(f"# {platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPU(s), "
          f"median of {args.repeat} round(s)")
    rows = [("mathsearch evaluate_runs", time_ours), ("ir_measures (peer)", time_peer)]
    if not args.no_cli:
        rows.append(("mathsearch eval (CLI)", time_cli))
    results: dict[str, tuple[float, float]] = {}
    for name, fn in rows:
        times = [fn(qrels, runs) for _ in range(args.repeat)]
        results[name] = (statistics.median(t[0] for t in times), statistics.median(t[1] for t in times))
    peer_wall, peer_cpu = results["ir_measures (peer)"]
    print()
    print(f"{'what':<26} {'wall s':>7} {'cpu s':>7} {'cpu s/run':>9} {'hits/cpu s':>11} {'wall vs peer':>12} {'cpu vs peer':>11}")
    for name, (wall, cpu) in results.items():
        print(
            f"{name:<26} {wall:>7.2f} {cpu:>7.2f} {cpu / args.runs:>9.3f} {n_hits / cpu:>11,.0f} "
            f"{wall / peer_wall:>11.2f}x {cpu / peer_cpu:>10.2f}x"
        )


if __name__ == "__main__":
    main()
