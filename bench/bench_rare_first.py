"""The answer BM25 with ``rare_first`` (frequent terms scored for the rare terms' best answers only,
from ``text/frequent/``) against the one query of every term, in one run: CPU per topic and how much
of the exact ranking each setting keeps, for the answer signal alone and for ``ours`` fused.

    python bench/bench_rare_first.py --index IDX [--rare-first 2000,5000,10000] [--config ours_static.toml]

At the sample's size the rare terms match fewer answers than ``rare_first`` and every row is the
exact query; the setting matters from ~100k answers (``bench/bench_search.py --answers N``).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery
from mathsearch.systems.ours import combine, ours_config, packaged_config_for
from mathsearch.systems.signals import fielded_bm25

TOPICS = Path(__file__).resolve().parents[2] / "shared" / "data" / "arqmath" / "topics"


def _overlap(a: list, b: list, k: int) -> float:
    return len(set(a[:k]) & set(b[:k])) / max(1, min(k, len(b)))


def _ranked(scores) -> list:
    return [d for d, _ in sorted(scores.items(), key=lambda x: (-x[1], str(x[0])))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", required=True, type=Path)
    ap.add_argument("--rare-first", default="2000,5000,10000")
    ap.add_argument("--config", default="", help="ours config (default: the one ours runs on the index)")
    ap.add_argument("--year", default="2021")
    ap.add_argument("--fused", type=int, default=1, help="also compare ours' fused rankings (1) or not (0)")
    args = ap.parse_args(argv)
    ctx = SearchContext(args.index)
    if ctx.text.frequent is None:
        sys.exit(f"{args.index} has no frequent-terms index (text/frequent/): rebuild it with this version")
    config = ours_config(args.config, packaged_config_for(args.index))
    answer = next(sig for name, _, sig in config.signals if name == "answer")
    queries = [SearchQuery.from_topic(t) for t in read_topics(TOPICS / f"task1-{args.year}.xml")]
    fielded_bm25(ctx, queries[0], answer.fields, answer.limit)  # open the indexes before timing

    def run(rare_first: int):
        cpu, found = [], []
        for q in queries:
            c = time.thread_time()
            found.append(fielded_bm25(ctx, q, answer.fields, answer.limit, answer.max_terms, rare_first))
            cpu.append((time.thread_time() - c) * 1000)
        return statistics.median(cpu), found

    settings = [0] + [int(x) for x in args.rare_first.split(",") if x]
    runs = {r: run(r) for r in settings}
    fused = {}
    if args.fused:
        for r in settings:
            quick = dataclasses.replace(answer, rare_first=r)
            cfg = dataclasses.replace(config, signals=tuple((n, k, quick if n == "answer" else s) for n, k, s in config.signals))
            fused[r] = []
            for q in queries:
                ctx.query_vectors.clear()
                fused[r].append(_ranked(combine(ctx, q, cfg)))
    exact = [_ranked(f) for f in runs[0][1]]
    print(f"index: {args.index} ({ctx.text.num_answers:,} answers), {len(queries)} topics of {args.year}; "
          f"frequent terms: {len(ctx.text.frequent.terms):,}")
    print()
    print("| rare_first | answer BM25 median CPU ms | vs exact | answer top-10 kept (mean / min) | answer top-1000 kept | ours top-10 kept (mean / min) |")
    print("|---|---|---|---|---|---|")
    for r in settings:
        ms, found = runs[r]
        ranked = [_ranked(f) for f in found]
        t10 = [_overlap(a, b, 10) for a, b in zip(ranked, exact, strict=True)]
        t1k = [_overlap(a, b, 1000) for a, b in zip(ranked, exact, strict=True)]
        fused_cell = "-"
        if args.fused:
            f10 = [_overlap(a, b, 10) for a, b in zip(fused[r], fused[0], strict=True)]
            fused_cell = f"{statistics.mean(f10):.3f} / {min(f10):.1f}"
        label = "0 (every term in one query)" if r == 0 else str(r)
        print(f"| {label} | {ms:.1f} | {ms / runs[0][0]:.2f} | {statistics.mean(t10):.3f} / {min(t10):.1f} | "
              f"{statistics.mean(t1k):.3f} | {fused_cell} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
