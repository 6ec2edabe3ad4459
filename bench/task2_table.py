"""Task 2 results table on the sample collection: formula systems over the 2020 and 2021 topics.

    python bench/task2_table.py --index INDEX_DIR [--systems formula,tangent-s-formula] [--runs DIR]

Each system's run is written as an official Task 2 run file (``--runs``, a temporary folder by
default) and scored exactly as ``mathsearch eval --task 2 --qrels Q RUN --index INDEX_DIR
--collection-only`` does: instances become visual ids, de-duplicated from the top; qrels restricted
to visual ids of question/answer formulae in the collection.  Columns: nDCG', MAP', P'@10, nDCG@10
(unjudged = non-relevant), the paired t-test p-value against the first system listed, and the
mean milliseconds per topic.  A row whose settings were chosen on the year it reports (the packaged
``formula.toml`` was chosen on 2020 and 2021 pooled) says "in sample", with the cross-validated figure
of that choice and the leave-one-year-out figure beside it: the choice made on the other year only
(``bench/crossyear.py``; "n/m" where not made).  Extra runs (e.g. a peer's run file) can be scored with ``--extra``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from mathsearch.evaluation.collection import from_index
from mathsearch.evaluation.evaluate import evaluate_runs
from mathsearch.evaluation.measures import measure_names
from mathsearch.readers.topics import read_topics
from mathsearch.runs.writer import write_formula_run
from mathsearch.systems import SearchContext, make_system, run_system, spec, system_names

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossyear import in_sample  # noqa: E402
from task1_table import cross_validated  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
YEARS = ("2020", "2021")
DEFAULT = "formula,tangent-s-formula"


def make_runs(index: Path, systems: list[str], out: Path, years=YEARS) -> dict[tuple[str, str], tuple[Path, float]]:
    """Write ``out/<year>-<system>.tsv`` for each system and year; ``{(system, year): (path, s/topic)}``."""
    ctx = SearchContext(index)
    runs = {}
    for year in years:
        topics = read_topics(DATA / "topics" / f"task2-{year}.xml")
        for name in systems:
            system = make_system(name)
            started = time.perf_counter()
            hits = run_system(system, ctx, topics)
            seconds = (time.perf_counter() - started) / max(len(topics), 1)
            path = out / f"{year}-{spec(system).replace(':', '_').replace(',', '_').replace('/', '_')}.tsv"
            write_formula_run(path, hits)
            runs[(name, year)] = (path, seconds)
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--systems", default=DEFAULT)
    ap.add_argument("--runs", type=Path, default=None, help="Keep the run files here.")
    ap.add_argument("--years", default=",".join(YEARS))
    args = ap.parse_args(argv)
    years = tuple(y for y in args.years.split(",") if y)
    names = [s for s in args.systems.split(",") if s and s.split(":")[0] in set(system_names(2))]
    out = args.runs or Path(tempfile.mkdtemp(prefix="task2-runs-"))
    out.mkdir(parents=True, exist_ok=True)
    where = {n: in_sample(n, args.index) for n in names}
    counterparts = list(dict.fromkeys(c for w in where.values() for c in w.out_of_year.values() if c))
    runs = make_runs(args.index, names + [c for c in counterparts if c not in names], out, years)
    facts = from_index(args.index)
    measures = measure_names(2)
    head = ["system", "year", *measures, "p(nDCG')", "p(nDCG@10)", "ms/topic", "chosen on",
            "cross-validated nDCG'", "cross-validated nDCG@10", "out of year nDCG'", "out of year nDCG@10"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for year in years:
        extra = [c for c in counterparts if c not in names]
        paths = [runs[(n, year)][0] for n in names + extra]
        report = evaluate_runs(2, DATA / "qrels" / f"task2-{year}.tsv", paths, facts=facts, collection_only=True)
        by_name = dict(zip(names + extra, report.runs, strict=True))
        for i, name in enumerate(names):
            result = by_name[name]
            row = [name, year, *(f"{result.means[m]:.3f}" for m in measures)]
            for m in ("nDCG'", "nDCG@10"):
                row.append("-" if i == 0 else f"{result.p_values.get(m, float('nan')):.3g}")
            row.append(f"{runs[(name, year)][1] * 1000:.0f}")
            counterpart = where[name].out_of_year.get(year)
            row.append(where[name].mark(year) or "-")
            row.extend(cross_validated(where[name], year))
            for m in ("nDCG'", "nDCG@10"):
                row.append("-" if not where[name].mark(year) else
                           "n/m" if counterpart is None else f"{by_name[counterpart].means[m]:.3f}")
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
