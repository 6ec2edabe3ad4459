"""MIRMU's systems (seed 002) beside ours on the sample: Tasks 1 and 2, 2020 and 2021.

    python bench/mirmu_table.py --index INDEX_DIR [--years 2020,2021] [--runs DIR]

INDEX_DIR must hold the MIRMU artifacts (``mathsearch index ... --with mias,scm,formula2vec,compubert``)
and, for ``ours`` at its best, dense MiniLM vectors (``--dense``).  Measures as ``mathsearch eval
--collection-only``: nDCG' and nDCG@10 (unjudged = non-relevant), the paired t-test p-value
against ``bm25-thread`` (Task 1) or ``tangent-s-formula`` (Task 2), mean ms per topic.

Fusions: the MIRMU ensemble (``mathsearch fuse --method mirmu``, seed 7) of the seed's primaries
(Task 1: mias, scm, compubert, 7.2; Task 2: scm-formula, formula2vec-formula) and of all four Task 1
systems; ``ours`` fused with the best single MIRMU system (highest mean nDCG' over the years shown,
chosen on these 2020/2021 figures: no held-out year is touched) by RRF (k = 60) and by the MIRMU
ensemble.  2022 is refused: its judgements are held out.  Rows chosen on the year they report say
"in sample" (``ours``' packaged weights were tuned on 2020 and 2021; the best MIRMU system is chosen
on the years shown), with the out-of-year figure beside them: ``ours`` tuned on the other year
only (``bench/crossyear.py``; "n/m" where not made), the fusion with the MIRMU system best on the
other year.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from mathsearch.evaluation.collection import from_index
from mathsearch.evaluation.evaluate import evaluate_runs
from mathsearch.evaluation.stats import paired_t_test
from mathsearch.evaluation.trec import cut_depth
from mathsearch.readers.topics import read_topics
from mathsearch.records import FormulaHit
from mathsearch.runs.writer import write_formula_run
from mathsearch.systems import SearchContext, make_system, needs_of, run_rankings
from mathsearch.systems.fusion import mirmu, rrf

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossyear import in_sample, other  # noqa: E402
from task1_table import year_topics  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
TASK1 = ("bm25-thread", "mias", "scm", "formula2vec", "compubert", "ours")
MIRMU1 = ("mias", "scm", "formula2vec", "compubert")
PRIMARY1 = ("mias", "scm", "compubert")  # seed 7.2: the ensemble of the three primary submissions
TASK2 = ("tangent-s-formula", "formula", "scm-formula", "formula2vec-formula")
PRIMARY2 = ("scm-formula", "formula2vec-formula")
MEASURES = ("nDCG'", "nDCG@10")


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def available(ctx: SearchContext, names) -> tuple[str, ...]:
    """The systems whose indexes ``ctx`` holds; the others are named on stderr and left out."""
    out = []
    for name in names:
        missing = [n for n in needs_of(make_system(name)) if not ctx.has(n)]
        if missing:
            print(f"(left out {name}: the index lacks {', '.join(missing)})", file=sys.stderr)
        else:
            out.append(name)
    return tuple(out)


def task1(index: Path, years: list[str], cache: Path | None = None) -> tuple[dict, dict]:
    """Every Task 1 system's per-topic scores; with ``cache``, runs are kept there as JSON (exact
    scores, seconds a topic) and read back instead of run again (delete them after a rebuild)."""
    ctx = SearchContext(index)
    systems, members, primary = available(ctx, TASK1), available(ctx, MIRMU1), available(ctx, PRIMARY1)
    present = ctx.store.answer_ids()
    runs: dict = {}
    seconds: dict = {}
    scores: dict = {}
    scorers: dict = {}
    for year in years:
        topics, scorer = year_topics(present, year)
        scorers[year] = scorer
        for name in systems:
            cached = cache / f"task1-{year}-{name}.json" if cache else None
            if cached is not None and cached.is_file():  # a run of an earlier call, exact scores
                data = json.loads(cached.read_text())
                seconds[(name, year)], runs[(name, year)] = data["seconds"], data["run"]
            else:
                started = time.perf_counter()
                ranked = run_rankings(make_system(name), ctx, topics)
                seconds[(name, year)] = (time.perf_counter() - started) / max(len(topics), 1)
                runs[(name, year)] = {t: dict(r) for t, r in ranked.items()}
                if cached is not None:
                    cached.write_text(json.dumps({"seconds": seconds[(name, year)], "run": runs[(name, year)]}))
            scores[(name, year)] = scorer.score(cut_depth(runs[(name, year)]))
        scores[(f"mirmu ensemble ({', '.join(primary)})", year)] = scorer.score(
            mirmu([runs[(n, year)] for n in primary]))
        if members != primary:
            scores[(f"mirmu ensemble ({', '.join(members)})", year)] = scorer.score(
                mirmu([runs[(n, year)] for n in members]))
    best = max(members, key=lambda n: _mean(_mean(scores[(n, y)]["nDCG'"].values()) for y in years))
    for year in years:
        scorer = scorers[year]
        pair = [runs[("ours", year)], runs[(best, year)]]
        scores[(f"ours + {best} (RRF k=60)", year)] = scorer.score(rrf(pair))
        scores[(f"ours + {best} (mirmu ensemble)", year)] = scorer.score(mirmu(pair))
    # out of year: ours tuned on the other year only; the fusion with the member best on the other year
    where = in_sample("ours", index) if "ours" in systems else None
    out_of_year: dict = {}
    for year in years:
        scorer, topics = scorers[year], year_topics(present, year)[0]
        counterpart = where.out_of_year.get(year) if where else None
        if counterpart:
            out_of_year[("ours", year)] = scorer.score(cut_depth(run_rankings(make_system(counterpart), ctx, topics)))
        if len(years) == 2:
            pick = max(members, key=lambda n, y=other(year): _mean(scores[(n, y)]["nDCG'"].values()))
            pair = [runs[("ours", year)], runs[(pick, year)]]
            out_of_year[(f"ours + {best} (RRF k=60)", year)] = scorer.score(rrf(pair))
            out_of_year[(f"ours + {best} (mirmu ensemble)", year)] = scorer.score(mirmu(pair))
    scores["out of year"] = out_of_year
    scores["in sample"] = {("ours", y): bool(where and where.mark(y)) for y in years} | {
        (f"ours + {best} (RRF k=60)", y): True for y in years} | {(f"ours + {best} (mirmu ensemble)", y): True for y in years}
    return scores, seconds


def print_task1(scores: dict, seconds: dict, years: list[str]) -> None:
    out_of_year, sample = scores.pop("out of year", {}), scores.pop("in sample", {})
    names = list(dict.fromkeys(n for n, _ in scores))
    head = ["system", *(f"{y} {m}" for y in years for m in MEASURES), *(f"{y} p {m}" for y in years for m in MEASURES),
            *(f"{y} ms/topic" for y in years), *(f"{y} chosen on / out of year {m}" for y in years for m in MEASURES)]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in names:
        row = [name]
        row += [f"{_mean(scores[(name, y)][m].values()):.3f}" for y in years for m in MEASURES]
        for y in years:
            for m in MEASURES:
                if name == "bm25-thread":
                    row.append("-")
                    continue
                ref = scores[("bm25-thread", y)][m]
                topics = sorted(ref)
                row.append(f"{paired_t_test([scores[(name, y)][m][t] for t in topics], [ref[t] for t in topics]):.3g}")
        row += [f"{seconds[(name, y)] * 1000:.0f}" if (name, y) in seconds else "-" for y in years]
        for y in years:
            for m in MEASURES:
                if not sample.get((name, y)):
                    row.append("-")
                elif (name, y) not in out_of_year:
                    row.append("in sample / n/m")
                else:
                    row.append(f"in sample / {_mean(out_of_year[(name, y)][m].values()):.3f}")
        print("| " + " | ".join(row) + " |")
    # the seed's 7.3 / 8.1: the ensemble better than each ensembled system (paired t-test, nDCG')
    ensemble = next((n for n in names if n.startswith("mirmu ensemble")), None)
    if ensemble is not None:
        print(f"\n{ensemble} against each member, nDCG' (difference of means, paired t-test p):")
        for name in [n for n in MIRMU1 if (n, years[0]) in seconds and n in ensemble]:
            parts = []
            for y in years:
                a, b = scores[(ensemble, y)]["nDCG'"], scores[(name, y)]["nDCG'"]
                topics = sorted(a)
                diff = _mean(a.values()) - _mean(b.values())
                parts.append(f"{y} {diff:+.3f} (p {paired_t_test([a[t] for t in topics], [b[t] for t in topics]):.3g})")
            print(f"- vs {name}: " + ", ".join(parts))
    # the seed's 8.1: "the best configuration of the SCM is significantly better than MIaS,
    # Formula2Vec, and CompuBERT" (paired t-test here, nDCG')
    others = [n for n in MIRMU1 if n != "scm" and (n, years[0]) in seconds]
    if ("scm", years[0]) in seconds and others:
        print("\nscm against each other MIRMU system, nDCG' (difference of means, paired t-test p):")
        for name in others:
            parts = []
            for y in years:
                a, b = scores[("scm", y)]["nDCG'"], scores[(name, y)]["nDCG'"]
                topics = sorted(a)
                diff = _mean(a.values()) - _mean(b.values())
                parts.append(f"{y} {diff:+.3f} (p {paired_t_test([a[t] for t in topics], [b[t] for t in topics]):.3g})")
            print(f"- scm vs {name}: " + ", ".join(parts))


def task2(index: Path, years: list[str], out: Path) -> None:
    ctx = SearchContext(index)
    facts = from_index(index)
    head = ["system", *(f"{y} {m}" for y in years for m in MEASURES), *(f"{y} p {m}" for y in years for m in MEASURES),
            *(f"{y} ms/topic" for y in years), *(f"{y} chosen on / out of year {m}" for y in years for m in MEASURES)]
    table: dict = {}
    where = {name: in_sample(name, index) for name in TASK2}
    for year in years:
        topics = read_topics(DATA / "topics" / f"task2-{year}.xml")
        paths, names, runs, posts = [], [], {}, {}
        counterparts = [c for c in (w.out_of_year.get(year) for w in where.values()) if c]
        for name in (*TASK2, *counterparts):
            system = make_system(name)
            started = time.perf_counter()
            ranked = run_rankings(system, ctx, topics)
            table[(name, year, "ms")] = (time.perf_counter() - started) / max(len(topics), 1) * 1000
            runs[name] = {t: dict(r) for t, r in ranked.items()}
            for r in ranked.values():
                posts.update({f: r.post_of(f) for f in r})
            hits = [FormulaHit(t, f, r.post_of(f), s, 0, name) for t, r in ranked.items() for f, s in r.items()]
            path = out / f"{year}-{name.replace('/', '_').replace(':', '_').replace(',', '_')}.tsv"
            write_formula_run(path, hits)
            paths.append(path)
            names.append(name)
        fused = mirmu([runs[n] for n in PRIMARY2])
        name = "mirmu ensemble (scm-formula, formula2vec-formula)"
        path = out / f"{year}-mirmu-ensemble.tsv"
        write_formula_run(path, [FormulaHit(t, f, posts[f], s, 0, "mirmu") for t, d in fused.items() for f, s in d.items()])
        paths.append(path)
        names.append(name)
        report = evaluate_runs(2, DATA / "qrels" / f"task2-{year}.tsv", paths, facts=facts, collection_only=True)
        for i, (n, result) in enumerate(zip(names, report.runs, strict=True)):
            for m in MEASURES:
                table[(n, year, m)] = result.means[m]
                table[(n, year, "p " + m)] = None if i == 0 else result.p_values.get(m)
        table["names"] = [n for n in names if n not in counterparts]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for n in table["names"]:
        row = [n, *(f"{table[(n, y, m)]:.3f}" for y in years for m in MEASURES)]
        row += ["-" if table[(n, y, "p " + m)] is None else f"{table[(n, y, 'p ' + m)]:.3g}" for y in years for m in MEASURES]
        row += [f"{table[(n, y, 'ms')]:.0f}" if (n, y, "ms") in table else "-" for y in years]
        for y in years:
            w = where.get(n)
            c = w.out_of_year.get(y) if w else None
            row += ["-" if not (w and w.mark(y)) else "in sample / " + ("n/m" if c is None else f"{table[(c, y, m)]:.3f}")
                    for m in MEASURES]
        print("| " + " | ".join(row) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--years", default="2020,2021")
    ap.add_argument("--tasks", default="1,2")
    ap.add_argument("--runs", type=Path, default=None, help="Keep the runs here (Task 1: reused when there).")
    args = ap.parse_args(argv)
    years = [y for y in args.years.split(",") if y]
    if any(y not in ("2020", "2021") for y in years):
        ap.error("only 2020 and 2021: the 2022 judgements are held out")
    if "1" in args.tasks:
        print("Task 1")
        if args.runs:
            args.runs.mkdir(parents=True, exist_ok=True)
        print_task1(*task1(args.index, years, args.runs), years)
    if "2" in args.tasks:
        out = args.runs or Path(tempfile.mkdtemp(prefix="mirmu-runs-"))
        out.mkdir(parents=True, exist_ok=True)
        print("\nTask 2")
        task2(args.index, years, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
