"""Task 1 results table on the sample collection: every system, 2020 and 2021 topics.

    python bench/task1_table.py --index INDEX_DIR [--systems bm25-answer,ours] [--per-topic]

Measures as ``mathsearch eval --collection-only``: qrels restricted to answers in the collection
(topics left without a relevant answer dropped), nDCG', MAP', P'@10 and nDCG@10 (unjudged =
non-relevant).  The last columns give the paired t-test p-value of each system against the
first one listed for nDCG' and nDCG@10.  A row whose settings were chosen on the year it reports
(the packaged ``ours`` configs were chosen on 2020 and 2021 pooled) says "in sample", and beside it
the cross-validated figure of that choice on the year's topics (repeated 5-fold cross-validation over
the pooled topics, as the tuning recorded it: ``bench/out_of_year/<config>/selection.json``) and the
leave-one-year-out figure: the config the same choice makes on the other year alone
(``bench/crossyear.py``; "n/m" where not made).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mathsearch.evaluation.measures import RANKED_MEASURES
from mathsearch.evaluation.stats import paired_t_test
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.evaluation.trec import TrecScorer, cut_depth
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, make_system, run_rankings, system_names

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossyear import in_sample  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
YEARS = ("2020", "2021")
DEFAULT = "bm25-answer,bm25-thread,tfidf-latex,tfidf-words,tangent-s,tfidf-tangent-s,linked-posts,ours"


def year_topics(present, year: str) -> tuple[list, TrecScorer]:
    """A year's Task 1 topics that have judgements among the ``present`` answers, and their scorer."""
    topics = read_topics(DATA / "topics" / f"task1-{year}.xml")
    qrels = restrict_qrels(qrels_to_dict(read_qrels(DATA / "qrels" / f"task1-{year}.tsv")), present).qrels
    return [t for t in topics if t.topic_id in qrels], TrecScorer(qrels, RANKED_MEASURES)


def evaluate(index: Path, systems: list[str], years=YEARS) -> dict:
    """``{(spec, year): (per-topic scores, seconds a topic)}`` for ``systems`` and, where a system
    was chosen on the year, for its out-of-year counterpart."""
    ctx = SearchContext(index)
    present = ctx.store.answer_ids()
    out: dict = {}
    for year in years:
        topics, scorer = year_topics(present, year)
        counterparts = [in_sample(n, index).out_of_year.get(year) for n in systems]
        for name in dict.fromkeys([*systems, *(c for c in counterparts if c)]):
            system = make_system(name)
            started = time.perf_counter()
            run = run_rankings(system, ctx, topics)
            seconds = time.perf_counter() - started
            per_topic = scorer.score(cut_depth(run))
            out[(name, year)] = (per_topic, seconds / max(len(topics), 1))
    return out


def cross_validated(where, year: str) -> list[str]:
    """The cross-validated nDCG' and nDCG@10 of the choice on ``year``'s topics, as the tuning recorded it."""
    if not where.mark(year):
        return ["-", "-"]
    if where.selection is None:
        return ["n/m", "n/m"]
    per = where.selection["cross_validated_per_year"][year]
    return [f"{per[m]:.3f}" for m in ("nDCG'", "nDCG@10")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--systems", default=DEFAULT)
    args = ap.parse_args(argv)
    names = [s for s in args.systems.split(",") if s]
    known = set(system_names(1))
    names = [n for n in names if n.split(":")[0] in known]
    results = evaluate(args.index, names)
    measures = [m.name for m in RANKED_MEASURES]
    head = ["system", "year", *measures, "p(nDCG')", "p(nDCG@10)", "ms/topic", "chosen on",
            "cross-validated nDCG'", "cross-validated nDCG@10", "out of year nDCG'", "out of year nDCG@10"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    base = names[0]
    for year in YEARS:
        for name in names:
            per_topic, sec = results[(name, year)]
            row = [name, year]
            for m in measures:
                vals = list(per_topic[m].values())
                row.append(f"{sum(vals) / len(vals):.3f}")
            for m in ("nDCG'", "nDCG@10"):
                if name == base:
                    row.append("-")
                else:
                    ref = results[(base, year)][0][m]
                    topics = sorted(ref)
                    row.append(f"{paired_t_test([per_topic[m][t] for t in topics], [ref[t] for t in topics]):.3g}")
            row.append(f"{sec * 1000:.0f}")
            where = in_sample(name, args.index)
            row.append(where.mark(year) or "-")
            row.extend(cross_validated(where, year))
            counterpart = where.out_of_year.get(year)
            for m in ("nDCG'", "nDCG@10"):
                if not where.mark(year):
                    row.append("-")
                elif counterpart is None:
                    row.append("n/m")
                else:
                    vals = list(results[(counterpart, year)][0][m].values())
                    row.append(f"{sum(vals) / len(vals):.3f}")
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
