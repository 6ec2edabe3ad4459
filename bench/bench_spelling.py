"""What "did you mean" (:mod:`mathsearch.systems.spelling`) adds to a search: its time per query,
beside the search itself, on the judged topics as queries and on typed queries with a slip.

    python bench/bench_spelling.py --index IDX [--rounds 3]

Each query is timed ``--rounds`` times (the median kept) in one process, the indexes opened and
warmed first: ``spelling()`` alone, and ``ours:dense=False``'s search of the same query for scale.
Rows: the Task 1 topics of 2020 and 2021 (title and question, as a Task 3 question or a pasted
question reads), and a fixed list of short typed queries, each with a misspelt word.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.spelling import spelling

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
TYPED = ["irrationnal numbr", "converjence of seires", "derivitive of x^2", "Cauchy-Schwarz inequalty",
         "integrel of sinx", "matrx determinent", "Fibonaci numbers", "polynomal roots", "sequense convergent",
         "Galois theroy", "eigenvalus of a symetric matrix", "Lagrange multipler"]


def timed(fn, rounds: int) -> float:
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def row(name: str, ctx: SearchContext, system, queries: list[tuple[SearchQuery, str]], rounds: int) -> str:
    spell = sorted(timed(lambda q=q, t=t: spelling(ctx, q, t), rounds) for q, t in queries)
    search = sorted(timed(lambda q=q: system.search(ctx, q, 10), rounds) for q, _ in queries)
    unknown = sum(bool(spelling(ctx, q, t).unknown) for q, t in queries)

    def p(xs: list[float], f: float) -> float:
        return xs[min(len(xs) - 1, int(f * len(xs)))]

    return (f"| {name} | {len(queries)} | {unknown} | {statistics.median(spell):.1f} | {p(spell, 0.9):.1f} | "
            f"{spell[-1]:.1f} | {statistics.median(search):.1f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    ctx = SearchContext(args.index)
    system = make_system("ours:dense=False")
    topics = [SearchQuery.from_topic(t) for y in ("2020", "2021") for t in read_topics(DATA / "topics" / f"task1-{y}.xml")]
    typed = [SearchQuery.from_text(q) for q in TYPED]
    for q in topics[:3] + typed[:3]:  # indexes opened, caches warm
        spelling(ctx, q, q.title)
        system.search(ctx, q, 10)
    print("| queries | n | with a word no post holds | spelling median ms | p90 | max | search median ms (ours:dense=False) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(row("Task 1 topics 2020 + 2021 (title + question)", ctx, system, [(q, q.title) for q in topics], args.rounds))
    print(row("typed, one slip each", ctx, system, [(q, q.title) for q in typed], args.rounds))
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
