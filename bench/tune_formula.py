"""Grid over ``formula.toml`` settings, chosen on all the judged Task 2 topics by cross-validation.

    python bench/tune_formula.py --index INDEX_DIR [section.key=v1,v2,... ...] [--each] [--out DIR]

Each argument is ``section.key=v1,v2,...`` (``depth=...`` for a top-level key), **the simpler value
first**; without arguments the grid of the extras formula.toml leaves off (``scoring.unified=0,0.3
scoring.paths=0,0.2 scoring.idf=false,true text.weight=0,0.05``).  Every combination is written as
a TOML file beside the packaged one's other values and scored per topic as ``mathsearch eval
--task 2 --collection-only`` does (cached in ``--cache``), on the 2020 and 2021 topics pooled.  The
choice among the combinations (simplest first: every axis at its first value) is made on nDCG@10
by :mod:`mathsearch.evaluation.selection`: 10 x 5-fold cross-validation stratified by year; the
combination chosen on all topics replaces the simplest only when the cross-validated choice gains
more than 0.002 nDCG@10 out of fold.  The table gives the pooled and per-year figures, the gain
against the simplest with a bootstrap 95% interval, and the leave-one-year-out rows.  ``--each``:
each axis varied alone, the others at the packaged values.  2020 and 2021 only; never the holdout.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import itertools
import json
import sys
import tempfile
from pathlib import Path

from mathsearch.errors import InputError
from mathsearch.evaluation import selection
from mathsearch.evaluation.collection import from_index
from mathsearch.evaluation.evaluate import evaluate_ranked
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, make_system, run_rankings
from mathsearch.systems.formula import load_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossyear import record, to_toml  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
CACHE = Path(__file__).resolve().parent / "out" / "tune-formula-cache"
EXTRAS = ["scoring.unified=0,0.3", "scoring.paths=0,0.2", "scoring.idf=false,true", "text.weight=0,0.05"]


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
    ap.add_argument("--each", action="store_true", help="vary each axis alone, the others at formula.toml's values")
    ap.add_argument("--cache", type=Path, default=CACHE, help="per-setting per-topic scores kept here")
    ap.add_argument("--out", type=Path, default=None, help="write the chosen combination here (chosen.toml)")
    args = ap.parse_args(argv)
    axes = []
    for item in args.grid or EXTRAS:
        key, _, values = item.partition("=")
        if not values:
            raise InputError(f"grid axis {item!r}: write it as section.key=v1,v2,...")
        axes.append((tuple(key.split(".")), [_value(v) for v in values.split(",")]))
    ctx = SearchContext(args.index)
    facts = from_index(args.index)
    data = {}
    key = hashlib.sha256((Path(args.index) / "mathsearch-index.json").read_bytes())
    for year in selection.YEARS:
        qrels_file, topics_file = DATA / "qrels" / f"task2-{year}.tsv", DATA / "topics" / f"task2-{year}.xml"
        qrels = restrict_qrels(qrels_to_dict(read_qrels(qrels_file)), facts.present(2)).qrels
        topics = [t for t in read_topics(topics_file) if t.topic_id in qrels]
        data[year] = (qrels, topics)
        key.update(qrels_file.read_bytes() + topics_file.read_bytes())
    base = load_config("")
    configs: dict[str, dict] = {}
    scores: dict[str, dict] = {}
    tmp = Path(tempfile.mkdtemp(prefix="formula-tune-"))

    def score(settings: list[tuple[tuple[str, ...], object]]) -> str:
        """Score formula.toml with ``settings`` changed on both years (once); its label."""
        label = " ".join(f"{'.'.join(p)}={v}" for p, v in settings) or "formula.toml"
        if label in scores:
            return label
        cfg = copy.deepcopy(base)
        for path, v in settings:
            node = cfg
            for p in path[:-1]:
                node = node.setdefault(p, {})
            node[path[-1]] = v
        configs[label] = cfg
        digest = hashlib.sha256(key.hexdigest().encode() + json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:24]
        cached = args.cache / f"{digest}.json"
        if cached.is_file():
            per_year = json.loads(cached.read_text())
        else:
            conf = tmp / f"c{len(scores)}.toml"
            conf.write_text(to_toml(cfg))
            system = make_system("formula", config=str(conf))
            per_year = {}
            for year in selection.YEARS:
                qrels, topics = data[year]
                run = run_rankings(system, ctx, topics)
                res = evaluate_ranked(2, qrels, [("r", run)], visual_of=facts.visual_of)[0]
                per_year[year] = {m: dict(res.per_topic[m]) for m in selection.MEASURES}
            args.cache.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(per_year))
        scores[label] = selection.pool(per_year)
        means = " ".join(f"{y} {sum(v.values()) / len(v):.3f}" for y, m in per_year.items() for v in [m["nDCG@10"]])
        print(f"scored {label}: nDCG@10 {means}", file=sys.stderr, flush=True)
        return label

    def report(order: list[str], title: str) -> selection.Decision:
        decision = selection.decide(scores, order)
        print("\n".join(selection.report(decision, title)) + "\n", flush=True)
        return decision

    if args.each:  # one axis at a time, the others as packaged
        for path, values in axes:
            report([score([(path, v)]) for v in values], f"### {'.'.join(path)} alone (the first value the simpler)")
        return 0
    order = [score(list(zip((p for p, _ in axes), combo, strict=True)))
             for combo in itertools.product(*(vals for _, vals in axes))]
    decision = report(order, "### the grid, simplest first")
    if args.out:
        target = args.out / "chosen.toml"
        if target.exists():
            raise InputError(f"{target} exists; choose another --out (nothing is overwritten)")
        record(decision, configs, args.out, "python bench/tune_formula.py " + " ".join(sys.argv[1:]))
        target.write_text(to_toml(configs[decision.chosen]) + "\n")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
