"""Grid over ``formula.toml`` settings, chosen on one Task 2 year and measured on the other.

    python bench/tune_formula.py --index INDEX_DIR scoring.idf=false,true text.weight=0,0.05,0.1 [--alpha 0.05]

Each argument is ``section.key=v1,v2,...`` (``depth=...`` for a top-level key), **the simpler value
first**: every combination is written as a TOML file beside the packaged one's other values and
scored as ``mathsearch eval --task 2 --collection-only`` does.  The first combination (every axis
at its first value) is the simpler setting; the combination with the best mean of nDCG' and
nDCG@10 on one year (ties: the earlier combination) is measured on the other, both ways
(``bench/crossyear.py``), in-year and out-of-year columns side by side; it replaces the simpler
setting only if it beats it out of year both ways (and a paired t-test over both out-of-year
comparisons' topics together gives p < ``--alpha``).
``--each``: each axis varied alone, the others at the packaged values, each axis checked so
(its first value the simpler).  Also prints every combination's four figures, best over both years first (in sample: for
comparison only).  2020 and 2021 only; never the holdout.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import sys
import tempfile
from pathlib import Path

from mathsearch.evaluation.collection import from_index
from mathsearch.evaluation.evaluate import evaluate_ranked
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, make_system, run_rankings
from mathsearch.systems.formula import load_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossyear import ALPHA, cross_year, decide, table, to_toml  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
YEARS = ("2020", "2021")


def _value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        return float(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("grid", nargs="*")
    ap.add_argument("--alpha", type=float, default=ALPHA)
    ap.add_argument("--each", action="store_true", help="vary each axis alone, the others at formula.toml's values")
    ap.add_argument("--out", type=Path, default=None, help="write the combination chosen on each year here "
                    "(tuned-on-YEAR.toml; the product grid only)")
    args = ap.parse_args(argv)
    axes = []
    for item in args.grid:
        key, _, values = item.partition("=")
        axes.append((tuple(key.split(".")), [_value(v) for v in values.split(",")]))
    ctx = SearchContext(args.index)
    facts = from_index(args.index)
    data = {}
    for year in YEARS:
        qrels = qrels_to_dict(read_qrels(DATA / "qrels" / f"task2-{year}.tsv"))
        qrels = restrict_qrels(qrels, facts.present(2)).qrels
        topics = [t for t in read_topics(DATA / "topics" / f"task2-{year}.xml") if t.topic_id in qrels]
        data[year] = (qrels, topics)
    base = load_config("")
    rows: dict[str, tuple[float, list[float]]] = {}
    configs: dict[str, dict] = {}
    objective: dict[str, dict[str, dict[str, float]]] = {}
    figures: dict[tuple[str, str], str] = {}
    tmp = Path(tempfile.mkdtemp(prefix="formula-tune-"))

    def score(settings: list[tuple[tuple[str, ...], object]]) -> str:
        """Score formula.toml with ``settings`` changed on both years (once); its label."""
        label = " ".join(f"{'.'.join(p)}={v}" for p, v in settings) or "formula.toml"
        if label in rows:
            return label
        cfg = copy.deepcopy(base)
        for path, v in settings:
            node = cfg
            for p in path[:-1]:
                node = node.setdefault(p, {})
            node[path[-1]] = v
        conf = tmp / f"c{len(rows)}.toml"
        conf.write_text(to_toml(cfg))
        configs[label] = cfg
        system = make_system("formula", config=str(conf))
        scores = []
        objective[label] = {}
        for year in YEARS:
            qrels, topics = data[year]
            run = run_rankings(system, ctx, topics)
            res = evaluate_ranked(2, qrels, [("r", run)], visual_of=facts.visual_of)[0]
            scores += [res.means["nDCG'"], res.means["nDCG@10"]]
            figures[(label, year)] = f"{res.means[chr(110) + 'DCG' + chr(39)]:.3f} | {res.means['nDCG@10']:.3f}"
            objective[label][year] = {t: (v + res.per_topic["nDCG@10"][t]) / 2 for t, v in res.per_topic["nDCG'"].items()}
        rows[label] = (sum(scores) / 4, scores)
        print(f"{label}: " + " ".join(f"{s:.3f}" for s in scores), flush=True)
        return label

    def report(order: list[str]) -> None:
        directions = cross_year(objective, order)
        print(f"\nchosen on one year (mean of nDCG' and nDCG@10), measured on the other; the simpler setting: {order[0]}")
        print("\n".join(table(directions, lambda lab, y: figures[(lab, y)], ("nDCG'", "nDCG@10"))))
        print(f"verdict: {decide(directions, args.alpha)[1]}")
        if args.out and not args.each:
            args.out.mkdir(parents=True, exist_ok=True)
            for d in directions:
                (args.out / f"tuned-on-{d.chosen_on}.toml").write_text(to_toml(configs[d.chosen]) + "\n")

    if args.each:  # one axis at a time, the others as packaged
        for path, values in axes:
            report([score([(path, v)]) for v in values])
    else:
        report([score(list(zip((p for p, _ in axes), combo, strict=True)))
                for combo in itertools.product(*(vals for _, vals in axes))])
    order = list(rows)
    print("\nin sample, best over both years first (nDCG'2020 nDCG@10-2020 nDCG'2021 nDCG@10-2021, mean):")
    for label in sorted(order, key=lambda lab: (-rows[lab][0], order.index(lab)))[:15]:
        print(f"{rows[label][0]:.4f}  " + " ".join(f"{s:.3f}" for s in rows[label][1]) + f"  {label}")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
