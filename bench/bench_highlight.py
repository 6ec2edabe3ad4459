"""How often the page can box the matched part of a formula, and what it costs (issue 42.7).

    python bench/bench_highlight.py [--formulae PATH] [--limit N] [--index IDX --year 2020 --queries 20]

The part of a hit formula that matched is boxed in LaTeX written back from the formula's SLT
(:func:`mathsearch.formula.highlight.slt_latex`); where that LaTeX would not show the same formula
(same visual key), the page shows the stored formula unmarked.  This prints, over the sample's
distinct formulae (ARQMath ``latex_representation_v3.tsv``): the share written back faithfully, the
reasons of the rest, and the time of :func:`marked_latex` for a formula against a query (its own
first half), median and p95, beside a plain parse of the same formula (its floor).

With ``--index``: what it adds to a result page.  For the first ``--queries`` topics of a year
(Task 1 titles, Task 2 formulae; :func:`bench_web.queries`), page 1 is searched once
(:func:`mathsearch.web.results.results`) and its view made (:func:`results_view`) with the
highlighting and without it (the query formulae hidden from the view), in turns, in this process.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from bench_web import percentile, queries  # noqa: E402

from mathsearch.formula import parse_latex, visual_key  # noqa: E402
from mathsearch.formula.highlight import MAX_NODES, marked_latex, slt_latex  # noqa: E402
from mathsearch.formula.slt import iter_nodes  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[2] / "shared/data/arqmath/collection/formulas/latex_representation_v3.tsv"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--formulae", type=Path, default=DEFAULT)
    ap.add_argument("--limit", type=int, default=0, help="distinct formulae read (0: all)")
    ap.add_argument("--index", type=Path, help="also time result pages over this index")
    ap.add_argument("--year", type=int, default=2020)
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args()
    written_back(args)
    if args.index:
        page_cost(args)


def page_cost(args) -> None:
    from mathsearch.formula import highlight
    from mathsearch.searcher import Searcher
    from mathsearch.web import formula_marks
    from mathsearch.web import results as view

    searcher = Searcher(args.index)
    qs = queries(args.year)
    print(f"\nresult page 1, {args.queries} topics of {args.year} a task: the view (ms) with and without the marks")
    print(f"{'task':>4} {'search median':>14} {'view median':>12} {'view p90':>9} {'marked median':>14} {'marked p90':>11} {'added median':>13}")
    plain_split = view.split_math
    for task in (1, 2):
        search, plain, marked, added = [], [], [], []
        for q in qs[task][: args.queries]:
            t0 = time.perf_counter()
            found = view.results(searcher, q, task, 1)
            search.append((time.perf_counter() - t0) * 1000)
            formula_marks._marked.cache_clear()  # each view computes its marks afresh
            highlight.query_pairs.cache_clear()
            view.split_math = lambda text: (text, [])  # no query formulae: nothing is marked
            t0 = time.perf_counter()
            view.results_view(found, q, task, 1)
            plain.append((time.perf_counter() - t0) * 1000)
            view.split_math = plain_split
            t0 = time.perf_counter()
            view.results_view(found, q, task, 1)
            marked.append((time.perf_counter() - t0) * 1000)
            added.append(marked[-1] - plain[-1])
        print(f"{task:>4} {statistics.median(search):>14.1f} {statistics.median(plain):>12.1f} {percentile(plain, 90):>9.1f} "
              f"{statistics.median(marked):>14.1f} {percentile(marked, 90):>11.1f} {statistics.median(added):>13.1f}")


def written_back(args) -> None:
    csv.field_size_limit(sys.maxsize)
    seen: dict[str, None] = {}
    with open(args.formulae, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            seen.setdefault(row["formula"], None)
            if args.limit and len(seen) >= args.limit:
                break
    reasons: Counter[str] = Counter()
    marked_ms: list[float] = []
    parse_ms: list[float] = []
    for latex in seen:
        parsed = parse_latex(latex)
        n = sum(1 for node in iter_nodes(parsed.slt) if node.kind != "W")
        if parsed.recovered:
            reasons["repaired by the parser (not marked)"] += 1
            continue
        if n > MAX_NODES:
            reasons[f"over {MAX_NODES} symbols (not marked)"] += 1
            continue
        out = slt_latex(parsed.slt)
        if out is None:
            reasons["holds what the writer leaves (colour, unknown macro...)"] += 1
        elif visual_key(out, lab=False) != visual_key(latex, lab=False):
            reasons["written back as another formula (not marked)"] += 1
        else:
            reasons["written back, same visual key"] += 1
        if n >= 4:
            query = latex[: len(latex) // 2]
            t0 = time.perf_counter()
            parse_latex(latex)
            t1 = time.perf_counter()
            marked_latex(latex, [query])
            t2 = time.perf_counter()
            parse_ms.append((t1 - t0) * 1000)
            marked_ms.append((t2 - t1) * 1000)
    total = len(seen)
    print(f"{total:,} distinct formulae of {args.formulae.name}")
    print(f"{'outcome':<58} {'formulae':>9} {'share':>7}")
    for reason, count in reasons.most_common():
        print(f"{reason:<58} {count:>9,} {count / total:>7.2%}")
    if len(marked_ms) > 1:
        p95 = statistics.quantiles(marked_ms, n=20)[-1]
        print(f"\nmarked_latex, {len(marked_ms):,} formulae of 4+ symbols against their first half: "
              f"median {statistics.median(marked_ms):.2f} ms, p95 {p95:.2f} ms; "
              f"a parse of the same formula: median {statistics.median(parse_ms):.2f} ms "
              f"(ratio {statistics.median(marked_ms) / statistics.median(parse_ms):.1f}x)")


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
