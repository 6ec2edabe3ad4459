"""Task 3 results table on the sample collection (the development protocol), 2020 and 2021 topics.

    python bench/task3_table.py --index INDEX_DIR [--system SPEC ...] [--cs] [--tokenizer regex|default]
                                [--test t|randomisation]

Each ``--system`` is a Task 3 spec (``extract``, ``first-hit``, ``extract:k=3``) or a Task 1 spec
(``bm25-thread``, ``ours:dense=False``), which is read as the lab read Task 1 systems: its first
hit cut to 1,200 characters (the issue's reference points).  Measures as
``mathsearch eval --task 3 --sources --collection-only``: AR_src and P@1_src (the Task 1 grade
of the main source; unjudged 0), LO (token F1, by default the math-aware regex tokens the
reference points were measured with) and, with ``--cs``, CS against the other relevant answers of
at most 1,200 characters.  Judgements of 2020 and 2021 only (the years tuned on); other years
are refused.  Below the table: each system's paired test against the first system listed
(p of AR_src, P@1_src and LO per year; ``--test``, a paired t-test by default).  A row whose
choice was tuned on the year it reports (``extract``'s options ``k`` > 1 and ``consensus``) says
"in sample", with the option chosen on the other year alone beside it where known
(``bench/crossyear.py``; "n/m" where not).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from mathsearch.evaluation.task3 import evaluate_sources
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.runs import write_task3_run, write_trec_run
from mathsearch.systems import SearchContext, make_system, run_system, spec
from mathsearch.systems.task3 import run_answers
from mathsearch.text.tokenize import MathRegexTokenizer, default_tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossyear import in_sample  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
YEARS = ("2020", "2021")
DEFAULT = ("bm25-thread", "ours:dense=False", "ours", "first-hit", "extract")
MEASURES = ("AR_src", "P@1_src", "LO", "CS")


def runs_for(ctx: SearchContext, names: list[str], year: str, folder: Path, data: Path = DATA) -> list[tuple[str, Path, float]]:
    """One run file per system over the year's judged topics: (spec, path, seconds per topic)."""
    present = ctx.store.answer_ids()
    judged = {t for t, docs in qrels_to_dict(read_qrels(data / "qrels" / f"task1-{year}.tsv")).items()
              if any(d in present for d in docs)}
    topics = [t for t in read_topics(data / "topics" / f"task1-{year}.xml",
                                     data / "topics" / "formulas" / f"formulas-{year}-latex.tsv") if t.topic_id in judged]
    out = []
    for i, name in enumerate(names):
        system = make_system(name)
        path = folder / f"{year}-{i}.tsv"
        started = time.perf_counter()
        if system.TASK == 3:
            answers, _ = run_answers(system, ctx, topics)
            write_task3_run(path, answers, on_invalid="raise")
        else:
            write_trec_run(path, run_system(system, ctx, topics, 10), lookup=ctx.store, on_invalid="raise")
        out.append((spec(system), path, (time.perf_counter() - started) / max(len(topics), 1)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--system", action="append", help="Task 3 or Task 1 spec (repeat); default: " + ", ".join(DEFAULT))
    ap.add_argument("--years", default=",".join(YEARS))
    ap.add_argument("--data", type=Path, default=DATA, help="The ARQMath data folder (topics, qrels).")
    ap.add_argument("--cs", action="store_true", help="Also Contextual Similarity (loads a model).")
    ap.add_argument("--tokenizer", choices=("regex", "default"), default="regex")
    ap.add_argument("--test", choices=("t", "randomisation"), default="t", help="paired test against the first system")
    args = ap.parse_args(argv)
    years = [y for y in args.years.split(",") if y]
    if any(y not in YEARS for y in years):
        print(f"only {', '.join(YEARS)} may be measured here (no other year's judgements are used)", file=sys.stderr)
        return 2
    ctx = SearchContext(args.index)
    names = []
    for name in args.system or DEFAULT:
        system = make_system(name)
        try:
            ctx.require(("store", *system.needs())) if hasattr(system, "needs") else None
        except Exception as exc:  # noqa: BLE001 - e.g. ours' dense signals on an index without vectors
            print(f"skipping {name}: {exc}", file=sys.stderr)
            continue
        names.append(name)
    where = {spec(make_system(n)): in_sample(n, args.index) for n in names}
    counterparts = [c for w in where.values() for c in w.out_of_year.values() if c]
    shown = list(dict.fromkeys(spec(make_system(n)) for n in names))
    run_names = list(dict.fromkeys([*names, *(c for c in counterparts if spec(make_system(c)) not in shown)]))
    tokenizer = MathRegexTokenizer() if args.tokenizer == "regex" else default_tokenizer()
    similarity = None
    if args.cs:
        from mathsearch.evaluation.similarity import ContextualSimilarity

        similarity = ContextualSimilarity()
    present = ctx.store.answer_ids()

    def text_of(doc: str) -> str | None:
        post = ctx.store.post(doc)
        return post.text if post is not None else None

    results: dict[tuple[str, str], dict[str, float]] = {}
    pvalues: dict[tuple[str, str], dict[str, float]] = {}
    kinds: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="task3-table-") as tmp:
        for year in years:
            made = runs_for(ctx, run_names, year, Path(tmp), args.data)
            report = evaluate_sources(args.data / "qrels" / f"task1-{year}.tsv", [p for _, p, _ in made], text_of, present,
                                      tokenizer, similarity, test=args.test)
            for (name, _, sec), result in zip(made, report.runs, strict=True):
                results[(name, year)] = {**result.means, "ms": sec * 1000, "topics": result.topics}
                pvalues[(name, year)] = dict(result.p_values)
                kinds[name] = "Task 1 first hit, cut" if make_system(name).TASK == 1 else "Task 3"
    measures = [m for m in MEASURES if m != "CS" or similarity is not None]
    head = ["system", "kind", *[f"{y} {m}" for y in years for m in measures], "ms/topic",
            *[f"{y} chosen on / out of year AR_src" for y in years]]
    print(f"LO tokenizer: {tokenizer.name}" + (f"; CS model: {similarity.name}" if similarity else ""))
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in shown:
        row = [name, kinds[name]]
        for y in years:
            r = results[(name, y)]
            row += [f"{r[m]:.3f}" for m in measures]
        row.append(f"{sum(results[(name, y)]['ms'] for y in years) / len(years):.0f}")
        for y in years:
            counterpart = where[name].out_of_year.get(y)
            row.append("-" if not where[name].mark(y) else "in sample / " + (
                "n/m" if counterpart is None else f"{results[(spec(make_system(counterpart)), y)]['AR_src']:.3f}"))
        print("| " + " | ".join(row) + " |")
    print("topics: " + ", ".join(f"{y}: {results[(names[0], y)]['topics']}" for y in years))
    if len(names) > 1:
        tested = ("AR_src", "P@1_src", "LO")
        print(f"\npaired {'t-test' if args.test == 't' else 'randomisation test'} against {spec(make_system(names[0]))}: "
              "difference of the means (p)")
        print("| system | " + " | ".join(f"{y} {m}" for y in years for m in tested) + " |")
        print("|" + "---|" * (1 + len(years) * len(tested)))
        base = spec(make_system(names[0]))
        for name in shown[1:]:
            cells = []
            for y in years:
                for m in tested:
                    diff = results[(name, y)][m] - results[(base, y)][m]
                    p = pvalues[(name, y)].get(m)
                    cells.append(f"{diff:+.3f} ({p:.3f})" if p is not None else f"{diff:+.3f}")
            print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
