"""What each signal of ``ours`` costs a query: median CPU ms per signal and the whole query's median
CPU and wall ms, over a year's Task 1 topics, for one or more configs in one run.

    python bench/profile_ours.py --index IDX                       # the config ours runs on IDX
    python bench/profile_ours.py --index IDX --config A.toml --config B.toml

At full size (``bench/bench_search.py --answers 1400000 --encoder ENC``) this says which signal
breaks the query budget first; a config's effectiveness on the sample is
``python bench/task1_table.py --index IDX --systems ours:config=A.toml``.  Each topic's vector is
encoded afresh (the context's cache is cleared), on the worker thread as ``ours`` does it, so wall
can be below CPU.  Rows of one run are comparable; from run to run medians move by about 10%.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from mathsearch.errors import InputError
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery, signals
from mathsearch.systems.ours import combine, ours_config, packaged_config_for

TOPICS = Path(__file__).resolve().parents[2] / "shared" / "data" / "arqmath" / "topics"


def profile(ctx: SearchContext, config, queries: list[SearchQuery]) -> tuple[dict[str, float], float, float]:
    """``({signal: median CPU ms}, median CPU ms, median wall ms)``; ``similar()`` is the similar
    questions' BM25, counted inside the first signal that asks for it as well; ``encode`` the
    topic's vector, made on the context's worker thread while the first signals run.  Signals run
    one by one here (each timed on its own thread's clock); ``ours`` itself runs the independent
    ones side by side, so its wall time is ``bench/bench_search.py``'s."""
    per: dict[str, list[float]] = defaultdict(list)
    asked = signals.similar_questions

    def timed_similar(*args, **kw):
        c = time.thread_time()
        found = asked(*args, **kw)
        per["similar()"].append((time.thread_time() - c) * 1000)
        return found

    def timed_encode(text, encode=ctx.dense.encode if "dense" in config.needs() else None):
        c = time.thread_time()  # on the context's worker thread, beside the first signals
        vector = encode(text)
        per["encode"].append((time.thread_time() - c) * 1000)
        return vector

    if "dense" in config.needs():
        ctx.dense.encode = timed_encode

    signals.similar_questions = timed_similar
    cpu, wall = [], []
    try:
        for query in queries:
            ctx.query_vectors.clear()

            def scores_of(name, sig, similar, earlier, query=query):
                c = time.thread_time()  # this thread's: the query encoder runs meanwhile on its own
                found = sig.scores(ctx, query, similar, earlier)
                per[name].append((time.thread_time() - c) * 1000)
                return found

            c, w = time.process_time(), time.perf_counter()
            combine(ctx, query, config, scores_of)
            cpu.append((time.process_time() - c) * 1000)
            wall.append((time.perf_counter() - w) * 1000)
    finally:
        signals.similar_questions = asked
        if "dense" in config.needs():
            del ctx.dense.encode  # the instance attribute: back to the class's method
    return ({k: statistics.median(v) for k, v in per.items()}, statistics.median(cpu), statistics.median(wall))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--config", action="append", default=[], help="a TOML config (repeat); default: what ours runs on IDX")
    ap.add_argument("--topics", type=Path, default=TOPICS / "task1-2021.xml")
    args = ap.parse_args(argv)
    try:  # a wrong index, topic file or config: one line, exit 2, as the CLI says it
        ctx = SearchContext(args.index)
        queries = [SearchQuery.from_topic(t) for t in read_topics(args.topics)]
        configs = [(c, ours_config(c)) for c in args.config] or [
            (packaged_config_for(args.index), ours_config("", packaged_config_for(args.index)))]
        if not queries:
            raise InputError(f"{args.topics} holds no topics")
        combine(ctx, queries[0], configs[0][1])  # open the indexes before timing
    except InputError as exc:
        print(f"profile_ours: {exc}", file=sys.stderr)
        return 2
    rows = [(name, *profile(ctx, cfg, queries)) for name, cfg in configs]
    names = list(dict.fromkeys(k for _, per, _, _ in rows for k in per))
    print(f"{len(queries)} topics of {args.topics.name} on {args.index}; median CPU ms per signal")
    print()
    print("| config | query CPU ms | query wall ms | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for name, per, cpu, wall in rows:
        cells = " | ".join(f"{per[k]:.1f}" if k in per else "-" for k in names)
        print(f"| {name} | {cpu:.0f} | {wall:.0f} | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
