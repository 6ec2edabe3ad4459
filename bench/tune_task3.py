"""Choose the ``extract`` source rule on one year, check it on the other, both ways.

    python bench/tune_task3.py --index INDEX_DIR [--base SPEC] [--cache DIR] [--depth 20] [--alpha 0.05]

The Task 1 ranking each answer is drawn from (``--base``, default ``ours`` as the index allows) is
computed once per year and kept on disk (``--cache``, default ``bench/out/task3-cache``), so a
grid costs no searching.  For every point of a small grid the main source of each topic is chosen
exactly as :meth:`Extract.answer_from <mathsearch.systems.task3.Extract.answer_from>` chooses it,
and graded by the Task 1 judgements (AR_src, P@1_src, unjudged 0, ``--collection-only``).  Two
rules are searched: the linear rule (k, rank, words, too_long, dense, formula, exact; retrieval
stays 1) and the consensus choice (``consensus``, ``consensus_k``: agreement with the other top
answers, fused with the ranking's order).  Each is chosen on all the judged topics by
:mod:`mathsearch.evaluation.selection`: 2020 and 2021 pooled, 10 x 5-fold cross-validation
stratified by year, the point with the best AR_src on the training folds (ties within 0.002: the
simpler point; the first hit is the simplest); a rule replaces the first hit (``extract``'s default:
k = 1, consensus off) when the cross-validated choice beats the first hit's AR_src out of fold by
more than 0.002.  The table gives the gain with a bootstrap 95% interval, the per-year figures and the
leave-one-year-out rows (chosen on 2020, measured on 2021, and back), with LO of the real answers
for the leave-one-year-out choices.  Only 2020 and 2021 are allowed; 2022 never is.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
from pathlib import Path

from mathsearch.answers.extract import ChoiceWeights, QueryProfile, candidates, choose
from mathsearch.evaluation import selection
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.evaluation.task3 import Task3Scores, ablated_references, overlap_scores
from mathsearch.readers.qrels import qrels_to_dict, read_qrels, task3_relevance
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.task3 import Extract, _dense, base_system, ranks_by_dense
from mathsearch.text.tokenize import MathRegexTokenizer

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
    # what the system runs, weights included (ours' packaged config can change under the same spec)
    config_for = getattr(system, "config_for", None)
    runs = repr(config_for(ctx.index_dir)) if config_for is not None else ""
    key = hashlib.sha256(manifest + f"|{system!r}|{runs}|{depth}|{year}".encode()).hexdigest()[:16]
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


def mean(values: dict[str, int]) -> float:
    return sum(values.values()) / len(values) if values else 0.0


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


def label(point: dict) -> str:
    """A grid point as the spec parameters it sets (the first hit: k=1 and nothing else)."""
    if "consensus" in point:
        return f"consensus_k={point['consensus_k']}, consensus={point['consensus']}"
    if point["k"] == 1:
        return "first hit (k=1)"
    return ", ".join(f"{k}={point[k]:g}" for k in KEYS if point[k] or k == "k")


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

    def grades(point: dict, year: str) -> dict[str, int]:
        """Per topic, the Task 1 grade (0-3) of the source this point chooses (AR_src's terms)."""
        y = years[year]
        w = weights(point)
        out = {}
        for topic, judged in y["qrels"].items():
            found = choose(y["cands"].get(topic, [])[: max(w.k, w.consensus)], w)
            out[topic] = task3_relevance(judged.get(str(found[0].post_id), 0)) if found else 0
        return out

    lo_cache: dict[tuple[str, str], float] = {}

    def lo(point: dict, year: str) -> float:
        """LO of the real answers (``Extract.answer_from`` with this point's weights)."""
        key = (label(point), year)
        if key in lo_cache:
            return lo_cache[key]
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
        lo_cache[key] = sum(values.values()) / len(values)
        return lo_cache[key]

    dense_base = ranks_by_dense(ctx, args.base)
    points = grid_points()  # simplest first: points[0] is the first hit
    first = points[0]
    by_label = {label(p): p for p in points}
    cpoints = consensus_points()
    by_label.update({label(p): p for p in cpoints})
    scores = {lab: {y: grades(p, y) for y in ALLOWED} for lab, p in by_label.items()}

    def cells(lab: str, year: str, with_lo: bool = True) -> str:
        rel = scores[lab][year]
        ar = mean(rel)
        p1 = sum(r >= 2 for r in rel.values()) / len(rel)
        point = by_label[lab]
        # extract uses the consensus choice on dense rankings only: elsewhere its LO is not this point's
        shown = with_lo and ("consensus" not in point or dense_base)
        return f"{ar:.3f} | {p1:.3f} | " + (f"{lo(point, year):.3f}" if shown else "n/a")

    print("topics: " + ", ".join(f"{y}: {len(years[y]['qrels'])}" for y in ALLOWED)
          + f"; base ranking: {args.base or 'ours as the index allows'}" + ("" if dense_base else " (lexical)"))
    def pooled(order: list[str]) -> dict[str, dict[str, dict[tuple[str, str], float]]]:
        return {lab: {"AR_src": {(y, t): float(g) for y in ALLOWED for t, g in scores[lab][y].items()},
                      "P@1_src": {(y, t): float(g >= 2) for y in ALLOWED for t, g in scores[lab][y].items()}}
                for lab in order}

    verdicts = {}
    for name, order in (("linear rule", [label(p) for p in points]),
                        ("consensus choice", [label(first)] + [label(p) for p in cpoints])):
        decision = selection.decide(pooled(order), order, primary="AR_src", measures=("AR_src", "P@1_src"))
        verdicts[name] = decision
        shown = {order[0], decision.on_all, *(lab for lab, n in decision.cv.chosen.items() if n)}
        shown.update(sorted(order, key=lambda lab: -decision.in_sample[lab]["AR_src"])[:8])
        print(f"\n{name}: {len(order) - 1} grid points besides the first hit" + ("" if dense_base or name == "linear rule"
              else " (this base ranking is not dense: extract does not use the consensus choice on it)"))
        print("\n".join(selection.report(decision, shown=[lab for lab in order if lab in shown])))
        for y in decision.years:
            print(f"LO of the choice made on {y.chosen_on} ({y.chosen}), on {y.tested_on}: "
                  f"{cells(y.chosen, y.tested_on)} (AR_src | P@1_src | LO); the first hit: {cells(order[0], y.tested_on)}")

    packaged = Extract()
    current = ({"consensus_k": packaged.consensus_k, "consensus": packaged.consensus}
               if packaged.consensus and dense_base else {k: getattr(packaged, k) for k in KEYS})
    by_label.setdefault(label(current), current)
    scores.setdefault(label(current), {y: grades(current, y) for y in ALLOWED})
    print("\nin sample (chosen on both years: for comparison only, no out-of-year figure):")
    print("| choice | weights | 2020 AR_src | 2020 P@1_src | 2020 LO | 2021 AR_src | 2021 P@1_src | 2021 LO |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| task3.toml as packaged | {label(current)} | " + " | ".join(cells(label(current), y) for y in ALLOWED) + " |")
    for name, order in (("linear rule", [label(p) for p in points]),
                        ("consensus choice", [label(first)] + [label(p) for p in cpoints])):
        both = max(order, key=lambda lab: (sum(mean(scores[lab][y]) for y in ALLOWED), -order.index(lab)))
        print(f"| {name}, best on 2020 + 2021 (in sample) | {both} | "
              + " | ".join(cells(both, y) for y in ALLOWED) + " |")
    held = [name for name, d in verdicts.items() if d.replaces]
    print("\nrules whose cross-validated choice beats the first hit: " + (", ".join(held) or "none")
          + " (the grid searches each rule's weights; choices made before it, such as the consensus choice's"
          " similarity, are not in it)")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
