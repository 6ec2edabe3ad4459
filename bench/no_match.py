"""Calibrate "no close match": the evidence of the best hit against whether it is relevant.

    python bench/no_match.py --index INDEX_DIR [--system ours:dense=False] [--rate 0.1] [--repeats 20]

Every judged Task 1 topic of 2020 and 2021 (qrels restricted to the collection's answers), its
title typed as a query (plain-words maths read as formulae), the system's best hit, that hit's
:func:`mathsearch.systems.closeness.evidence`, and whether the hit is relevant (H+M, relevance >= 2;
unjudged = not).  A threshold is chosen as the largest evidence under which at most ``--rate`` of
the top hits are relevant (the notice is wrong at most that often), by repeated 5-fold
cross-validation over the pooled topics: printed are the mean out-of-fold share of relevant top
hits below the chosen threshold, the share of topics flagged, the thresholds chosen, the
leave-one-year-out figures, and the threshold chosen on all topics (the packaged value).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.indexes.documents import topic_text
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.closeness import evidence

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
YEARS = ("2020", "2021")


def observations(index: Path, system_spec: str) -> list[tuple[str, float, bool]]:
    """``(year, evidence of the best hit, whether it is relevant)`` per judged topic."""
    ctx = SearchContext(index)
    present = ctx.store.answer_ids()
    system = make_system(system_spec)
    out = []
    for year in YEARS:
        qrels = restrict_qrels(qrels_to_dict(read_qrels(DATA / "qrels" / f"task1-{year}.tsv")), present).qrels
        for topic in read_topics(DATA / "topics" / f"task1-{year}.xml"):
            if topic.topic_id not in qrels:
                continue
            title, _ = topic_text(topic)
            query = SearchQuery.from_text(title)
            best = system.search(ctx, query, 10).ordered()[:1]
            if not best:
                out.append((year, 0.0, False))
                continue
            out.append((year, evidence(ctx, query, best[0]), qrels[topic.topic_id].get(best[0], 0) >= 2))
    return out


def choose(obs: list[tuple[str, float, bool]], rate: float) -> float:
    """The largest threshold t (one of the evidences seen) with at most ``rate`` of the top hits
    below t relevant; 0.0 (never flag) when none qualifies."""
    best = 0.0
    for t in sorted({e for _, e, _ in obs}):
        below = [r for _, e, r in obs if e < t]
        if below and sum(below) / len(below) <= rate:
            best = t
    return best


def judge(obs: list[tuple[str, float, bool]], t: float) -> tuple[float | None, float]:
    """(share of relevant top hits below t, or None when none is below; share of topics below t)."""
    below = [r for _, e, r in obs if e < t]
    return (sum(below) / len(below) if below else None), len(below) / max(len(obs), 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--system", default="ours:dense=False")
    ap.add_argument("--rate", type=float, default=0.1, help="most relevant top hits allowed below the threshold")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args(argv)
    obs = observations(args.index, args.system)
    relevant = sum(r for _, _, r in obs)
    print(f"{len(obs)} judged topics, best hit relevant (H+M) in {relevant} ({relevant / len(obs):.2f})")
    for lo, hi in ((0, .2), (.2, .3), (.3, .4), (.4, .5), (.5, .6), (.6, .8), (.8, 1.01)):
        band = [r for _, e, r in obs if lo <= e < hi]
        if band:
            print(f"  evidence {lo:.1f}-{min(hi, 1):.1f}: {len(band):3d} topics, best hit relevant {sum(band) / len(band):.2f}")
    rng = random.Random(42)
    out_rates, flagged, chosen = [], [], []
    for _ in range(args.repeats):
        shuffled = obs[:]
        rng.shuffle(shuffled)
        for k in range(args.folds):
            test = shuffled[k::args.folds]
            train = [o for i, o in enumerate(shuffled) if i % args.folds != k]
            t = choose(train, args.rate)
            chosen.append(t)
            rate, share = judge(test, t)
            if rate is not None:
                out_rates.append(rate)
            flagged.append(share)
    print(f"repeated {args.folds}-fold CV ({args.repeats} repeats): relevant among flagged top hits "
          f"{statistics.mean(out_rates) if out_rates else float('nan'):.3f} (over {len(out_rates)} folds that flagged any; "
          f"sd {statistics.pstdev(out_rates) if out_rates else float('nan'):.3f}), topics flagged "
          f"{statistics.mean(flagged):.3f}, thresholds chosen median {statistics.median(chosen):.3f} "
          f"(range {min(chosen):.3f}-{max(chosen):.3f})")
    for held in YEARS:
        train = [o for o in obs if o[0] != held]
        t = choose(train, args.rate)
        rate, share = judge([o for o in obs if o[0] == held], t)
        shown = "none flagged" if rate is None else f"{rate:.3f} relevant among flagged"
        print(f"  chosen without {held}: t={t:.3f}; on {held}: {shown}, {share:.3f} of topics flagged")
    print(f"chosen on all topics: t={choose(obs, args.rate):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
