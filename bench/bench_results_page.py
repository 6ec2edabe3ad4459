"""What the search page's grouped result list costs beside the flat list it replaced, per query.

    python bench/bench_results_page.py --index IDX [--year 2020] [--queries 20] [--pages 1 2]

For the first ``--queries`` topics of a year (Task 1: the titles, text with $LaTeX$; Task 2: the
query formulae), in this process with the index opened and warmed once (as a server keeps it):

* **flat**: the page before issue 34: ``Searcher.search(q, task, k=page*10)``, every hit decorated,
  the page's ten sliced off;
* **grouped**: the page now: :func:`mathsearch.web.results.results`: the best ``DEPTH`` (1,000)
  hits ranked, grouped by thread (Task 1) or visual id (Task 2), only the shown hits decorated.

Prints the median and 90th percentile of each in milliseconds and the median of the per-query
ratio grouped/flat, for each task and page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from bench_web import percentile, queries  # noqa: E402


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--year", type=int, default=2020)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--pages", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()

    from mathsearch.searcher import Searcher
    from mathsearch.web.results import DEPTH, results

    searcher = Searcher(args.index)
    qs = queries(args.year)
    for q in (qs[1][0], qs[2][0]):  # open and warm every index once
        searcher.search(q, 1 if q is qs[1][0] else 2, k=DEPTH)
    print(f"index {args.index.name}: {searcher.ctx.store.counts()['answers']:,} answers; "
          f"{args.queries} queries of {args.year} a task; depth {DEPTH}")
    print(f"{'task':>4} {'page':>4} {'flat median':>12} {'flat p90':>9} {'grouped median':>15} {'grouped p90':>12} {'ratio median':>13}")
    for task in (1, 2):
        for page in args.pages:
            flat, grouped, ratios = [], [], []
            for q in qs[task][: args.queries]:
                f = timed(lambda q=q, t=task, p=page: searcher.search(q, t, k=p * 10).hits[(p - 1) * 10:])
                g = timed(lambda q=q, t=task, p=page: results(searcher, q, t, p))
                flat.append(f)
                grouped.append(g)
                ratios.append(g / f)
            print(f"{task:>4} {page:>4} {statistics.median(flat):>12.1f} {percentile(flat, 90):>9.1f} "
                  f"{statistics.median(grouped):>15.1f} {percentile(grouped, 90):>12.1f} {statistics.median(ratios):>13.2f}")


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
