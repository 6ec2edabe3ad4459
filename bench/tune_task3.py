"""Tune the ``extract`` choice weights on the sample, and check them across years.

    python bench/tune_task3.py --index INDEX_DIR [--base SPEC] [--cache DIR] [--depth 10]

The Task 1 ranking each answer is drawn from (``--base``, default ``ours`` as the index allows) is
computed once per year and kept on disk (``--cache``, default ``bench/out/task3-cache``), so a
grid costs no searching.  For every point of a small grid over the choice weights (k, rank, words,
too_long, dense, formula, exact; retrieval stays 1) the main source of each topic is chosen
exactly as :meth:`Extract.answer_from <mathsearch.systems.task3.Extract.answer_from>` chooses it,
and graded by the Task 1 judgements (AR_src, P@1_src, unjudged 0, ``--collection-only``).  It
prints the first hit, the packaged ``task3.toml`` weights, the best point for each year and for
both (ties: the simpler point), and the cross-year check: tuned on 2020 and measured on 2021, and
the reverse, with LO of the real answers (``Extract.answer_from`` on the cached ranking).  Only 2020
and 2021 are allowed; 2022 never is.

The consensus choice (``consensus``, ``consensus_k``: agreement with the other top answers, fused
with the ranking's order) has its own small grid, checked the same way: the point best on one year
(ties: the simpler point) measured on the other, both directions, with how many points of the grid
beat the first hit in both years and the grid's mean (how much the choice of point matters).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
from pathlib import Path

from mathsearch.answers.extract import ChoiceWeights, QueryProfile, candidates, choose
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.evaluation.task3 import Task3Scores, ablated_references, overlap_scores
from mathsearch.evaluation.tokenize import MathRegexTokenizer
from mathsearch.readers.qrels import qrels_to_dict, read_qrels, task3_relevance
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.task3 import Extract, _dense, base_system, ranks_by_dense

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
ALLOWED = ("2020", "2021")
GRID = {
    "k": (1, 2, 3, 5),
    "rank": (0.0, 0.01, 0.03, 0.1),
    "words": (0.0, 0.1, 0.2, 0.5),
    "too_long": (0.0, 0.05, 0.1, 0.2),
    "dense": (0.0, 0.1, 0.3),
    "formula": (0.0, 0.1, 0.3),
    "exact": (0.0, 0.05, 0.1),
}
KEYS = tuple(GRID)
CONSENSUS_GRID = {"consensus_k": (2, 3, 4, 5, 6, 8, 10), "consensus": (5, 8, 10, 15, 20)}


def cached_rankings(ctx: SearchContext, base: str, queries: list[SearchQuery], year: str, depth: int,
                    folder: Path) -> dict[str, list[tuple[str, float]]]:
    """``{topic: [(answer id, score), ...]}``, the top ``depth`` of ``base``, from ``folder`` when
    this index (its manifest), base and depth were ranked before."""
    system = base_system(ctx, base)
    manifest = (Path(ctx.index_dir) / "mathsearch-index.json").read_bytes()
    key = hashlib.sha256(manifest + f"|{system!r}|{depth}|{year}".encode()).hexdigest()[:16]
    path = folder / f"{year}-{key}.json"
    if path.is_file():
        return {t: [(d, s) for d, s in r] for t, r in json.loads(path.read_text()).items()}
    out = {}
    for q in queries:
        found = system.search(ctx, q, depth)
        out[q.query_id] = [(d, found[d]) for d in found.ordered()[:depth]]
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out))
    return out


def complexity(point: dict) -> tuple:
    """Simpler first: fewer candidates, fewer weights in use, smaller weights."""
    return (point["k"], sum(1 for k in KEYS[1:] if point[k]), sum(point[k] for k in KEYS[1:]))


def grid_points() -> list[dict]:
    points = []
    for values in itertools.product(*GRID.values()):
        p = dict(zip(KEYS, values, strict=True))
        if p["k"] == 1 and any(p[k] for k in KEYS[1:]):
            continue  # one candidate: the weights do not matter
        points.append(p)
    return sorted(points, key=complexity)


def weights(point: dict) -> ChoiceWeights:
    if "consensus" in point:  # the consensus choice: the ranking's order fused with agreement
        return ChoiceWeights(k=point["consensus_k"], rank=0.0, words=0.0, too_long=0.0,
                             consensus=point["consensus"], consensus_k=point["consensus_k"])
    return ChoiceWeights(point["k"], 1.0, point["rank"], point["formula"], point["exact"], point["words"],
                         point["too_long"], 0.0, 0.0, point["dense"])


def consensus_points() -> list[dict]:
    """Simpler first: fewer candidates, then fewer answers compared."""
    return [{"consensus_k": k, "consensus": d} for k in CONSENSUS_GRID["consensus_k"]
            for d in CONSENSUS_GRID["consensus"] if d >= k]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--base", default="", help="Task 1 spec drawn from (default: ours as the index allows)")
    ap.add_argument("--cache", type=Path, default=Path(__file__).resolve().parent / "out" / "task3-cache")
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args(argv)
    ctx = SearchContext(args.index)
    present = ctx.store.answer_ids()
    tokenizer = MathRegexTokenizer()
    years: dict[str, dict] = {}
    for year in ALLOWED:
        qrels = restrict_qrels(qrels_to_dict(read_qrels(args.data / "qrels" / f"task1-{year}.tsv"), graded_only=True),
                               present).qrels
        topics = read_topics(args.data / "topics" / f"task1-{year}.xml",
                             args.data / "topics" / "formulas" / f"formulas-{year}-latex.tsv")
        queries = [SearchQuery.from_topic(t) for t in topics if t.topic_id in qrels]
        rankings = cached_rankings(ctx, args.base, queries, year, args.depth, args.cache)
        cands = {}
        for q in queries:
            ranking = rankings[q.query_id]
            dense = _dense(ctx, q, [d for d, _ in ranking]) if ranking else None
            cands[q.query_id] = candidates(ctx.store, ranking, QueryProfile.of(q.title, q.question), args.depth,
                                           None, dense)
        years[year] = {"qrels": qrels, "queries": queries, "rankings": rankings, "cands": cands}

    def grades(point: dict, year: str) -> tuple[float, float]:
        y = years[year]
        w = weights(point)
        ar = p1 = 0.0
        for topic, judged in y["qrels"].items():
            found = choose(y["cands"].get(topic, [])[: max(w.k, w.consensus)], w)
            rel = task3_relevance(judged.get(str(found[0].post_id), 0)) if found else 0
            ar += rel
            p1 += rel >= 2
        n = len(y["qrels"])
        return ar / n, p1 / n

    def lo(point: dict, year: str) -> float:
        """LO of the real answers (``Extract.answer_from`` with this point's weights)."""
        y = years[year]
        system = make_system("extract", base=args.base, **point, **({} if "consensus" in point else {"consensus": 0}))
        answers, sources = {}, {}
        for q in y["queries"]:
            a = system.answer_from(ctx, q, y["rankings"][q.query_id])
            answers[q.query_id], sources[q.query_id] = a.text, list(a.sources)

        def text_of(doc: str) -> str | None:
            post = ctx.store.post(doc)
            return post.text if post is not None else None

        scores = Task3Scores()
        overlap_scores(answers, ablated_references(y["qrels"], text_of, sources), scores, tokenizer)
        values = scores.per_topic["LO"]
        return sum(values.values()) / len(values)

    points = grid_points()
    table = {i: {y: grades(p, y) for y in ALLOWED} for i, p in enumerate(points)}
    first = next(i for i, p in enumerate(points) if p["k"] == 1)
    packaged = Extract()
    current = {k: getattr(packaged, k) for k in KEYS}
    table[-1] = {y: grades(current, y) for y in ALLOWED}
    dense_base = ranks_by_dense(ctx, args.base)
    best = {y: max((i for i in table if i >= 0), key=lambda i, y=y: (table[i][y][0], -i)) for y in ALLOWED}
    both = max((i for i in table if i >= 0), key=lambda i: (sum(table[i][y][0] for y in ALLOWED), -i))

    def show(label: str, i: int) -> None:
        point = current if i < 0 else points[i]
        cells = " | ".join(f"{table[i][y][0]:.3f} | {table[i][y][1]:.3f} | {lo(point, y):.3f}" for y in ALLOWED)
        used = ", ".join(f"{k}={point[k]:g}" for k in KEYS if point[k] or k == "k")
        print(f"| {label} | {used} | {cells} |")

    print(f"{len(points)} grid points; topics: " + ", ".join(f"{y}: {len(years[y]['qrels'])}" for y in ALLOWED))
    print("| choice | weights | 2020 AR_src | 2020 P@1_src | 2020 LO | 2021 AR_src | 2021 P@1_src | 2021 LO |")
    print("|---|---|---|---|---|---|---|---|")
    show("first hit (its best pieces)", first)
    show("task3.toml (its linear rule: rankings without vectors)", -1)
    show("tuned on 2020 (2021: cross-year)", best["2020"])
    show("tuned on 2021 (2020: cross-year)", best["2021"])
    show("tuned on both", both)

    cpoints = consensus_points()
    ctable = {i: {y: grades(p, y) for y in ALLOWED} for i, p in enumerate(cpoints)}
    first_ar = {y: table[first][y][0] for y in ALLOWED}
    cbest = {y: max(ctable, key=lambda i, y=y: (ctable[i][y][0], -i)) for y in ALLOWED}
    cboth = max(ctable, key=lambda i: (sum(ctable[i][y][0] for y in ALLOWED), -i))
    beat = sum(all(ctable[i][y][0] > first_ar[y] for y in ALLOWED) for i in ctable)
    mean = {y: sum(ctable[i][y][0] for i in ctable) / len(ctable) for y in ALLOWED}
    packaged_point = {"consensus_k": packaged.consensus_k, "consensus": packaged.consensus}

    def cshow(label: str, point: dict) -> None:
        ar = {y: grades(point, y) for y in ALLOWED}
        # extract answers with the consensus choice on dense rankings only: elsewhere its LO is not this point's
        cells = " | ".join(f"{ar[y][0]:.3f} | {ar[y][1]:.3f} | " + (f"{lo(point, y):.3f}" if dense_base else "n/a")
                           for y in ALLOWED)
        print(f"| {label} | consensus_k={point['consensus_k']}, consensus={point['consensus']} | {cells} |")

    print()
    print(f"consensus choice: {len(cpoints)} grid points" + ("" if dense_base else
          " (this base ranking is not dense: extract does not use the consensus choice on it)"))
    print("| choice | weights | 2020 AR_src | 2020 P@1_src | 2020 LO | 2021 AR_src | 2021 P@1_src | 2021 LO |")
    print("|---|---|---|---|---|---|---|---|")
    if packaged.consensus:
        cshow("task3.toml", packaged_point)
    cshow("tuned on 2020 (2021: cross-year)", cpoints[cbest["2020"]])
    cshow("tuned on 2021 (2020: cross-year)", cpoints[cbest["2021"]])
    cshow("tuned on both", cpoints[cboth])
    print(f"points above the first hit's AR_src in both years: {beat} of {len(cpoints)}; grid mean AR_src "
          + ", ".join(f"{y} {mean[y]:.3f} (first hit {first_ar[y]:.3f})" for y in ALLOWED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
