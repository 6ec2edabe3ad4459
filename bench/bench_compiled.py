"""The compiled core beside the pure-Python reference, paired in one run (setup.py, mathsearch._compiled).

    python bench/bench_compiled.py --index INDEX_DIR [--rounds 2] [--formulae 5000] [--encoder DIR --posts 30000]

INDEX_DIR holds a collection store (``mathsearch index DIR --index INDEX_DIR --store-only``; e.g. a
collection from ``bench/make_collection.py --answers 100000``) and, for the Task 1 row, a text index
(else that row is skipped and says so).  Every measurement runs in a fresh process, once with
``MATHSEARCH_PURE_PYTHON=1`` and once without, the two alternating round by round (pure, compiled,
compiled, pure, ...) so that load from other work on a shared machine falls on both alike.  Rows:

* parse + tuple extraction: distinct formulae of the store analysed as the index build does
  (SLT, OPT, visual key, the four token families, hashing), formulae per CPU second;
* formula index build: ``build_formula_index`` into a scratch folder (wall and CPU seconds, the
  analysis workers' CPU included), and the CPU seconds of each of its parts (:data:`BUILD_PARTS`);
* text index build: ``build_text_indexes`` into a scratch folder (wall and CPU seconds, the
  analysis workers' and tantivy's included); the documents fed to tantivy are compared by a digest
  of every one of them, in order;
* static encoder (``--encoder DIR``, a trained student's folder; the row is left out without it):
  the store's first ``--posts`` passages encoded as the dense step does, posts per CPU second
  (reading the passages not counted) and whether the vectors are identical;
* Task 2 ``formula`` (without its text boost) and Task 1 ``ours:dense=False`` queries over the
  2020+2021 topics: median and p95 milliseconds per query, wall and CPU of the process (on a shared
  machine the CPU figure is the steadier one; the first query of each system warms up).

Each process checks which path it ran (``_compiled.status()``); the build rows also compare the
two indexes' arrays byte for byte and print whether they are identical.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
PATHS = ("pure", "compiled")


def first_distinct_latex(index: Path, limit: int) -> list[str]:
    """The first ``limit`` distinct LaTeX strings of the index's store, in store order."""
    from mathsearch.store import Store

    latex: dict[str, None] = {}
    with Store.open(index) as store:
        for f in store.iter_formulas():
            latex.setdefault(f.latex)
            if len(latex) >= limit:
                break
    return list(latex)


def phase_analyse(index: Path, limit: int) -> dict:
    from mathsearch.indexes.formula import build

    todo = first_distinct_latex(index, limit)
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(0, len(todo), build.CHUNK):
        build._analyze_chunk(todo[i:i + build.CHUNK])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"formulae": len(todo), "cpu_s": cpu, "wall_s": wall, "per_cpu_s": len(todo) / cpu}


# The formula step's parts, in the order build_formula_index runs them (timed one by one in phase_build).
# The grouping and the analysis overlap (the workers start on the first chunk of visual formulae while
# the main process reads on): one call, its CPU split between the main process and the workers.
BUILD_PARTS = (("_analyze_all:own", "instances grouped, results spilled (main process)"),
               ("_analyze_all:kids", "analysis (in its workers)"),
               ("_write_postings", "postings"), ("_instance_arrays", "instance arrays"))


def _cpu(who: str = "all") -> float:
    """CPU seconds of this process (``own``), of its finished children (``kids``: the analysis
    workers), or both."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = {"own": own.ru_utime + own.ru_stime, "kids": kids.ru_utime + kids.ru_stime}
    return cpu[who] if who in cpu else sum(cpu.values())


def phase_build(index: Path, out: Path) -> dict:
    from mathsearch.indexes.formula import build, build_formula_index
    from mathsearch.store import Store

    parts: dict[str, dict[str, float]] = {}

    def timed(name: str, fn):  # noqa: ANN001, ANN202 - a wrapper of a build function
        def run(*a, **k):  # noqa: ANN002, ANN003, ANN202
            own, kids, wall = _cpu("own"), _cpu("kids"), time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                wall = time.perf_counter() - wall
                own, kids = _cpu("own") - own, _cpu("kids") - kids
                parts[name] = {"wall_s": wall, "cpu_s": own + kids}
                parts[f"{name}:own"] = {"wall_s": wall, "cpu_s": own}
                parts[f"{name}:kids"] = {"wall_s": wall, "cpu_s": kids}
        return run

    for name in {part.split(":")[0] for part, _ in BUILD_PARTS}:  # this child only: it exits after the build
        setattr(build, name, timed(name, getattr(build, name)))
    cpu, wall = _cpu(), time.perf_counter()
    with Store.open(index) as store:
        counts = build_formula_index(store, out)
    cpu = _cpu() - cpu
    digest = hashlib.sha256()
    for p in sorted((out / "formula").iterdir()):
        digest.update(p.name.encode() + p.read_bytes())
    return {"wall_s": time.perf_counter() - wall, "cpu_s": cpu, "visual": counts["formula_visual"],
            "postings": counts["formula_postings"], "sha256": digest.hexdigest(), "parts": parts}


def phase_text(index: Path, out: Path) -> dict:
    from mathsearch.indexes import text_index
    from mathsearch.store import Store

    digest = hashlib.sha256()
    to_tantivy = text_index._doc

    def doc(d):  # noqa: ANN001, ANN202 - every document as tantivy gets it, in order (this child only)
        digest.update(repr(d).encode())
        return to_tantivy(d)

    text_index._doc = doc
    cpu, wall = _cpu(), time.perf_counter()
    with Store.open(index) as store:
        counts = text_index.build_text_indexes(store, out)
    return {"wall_s": time.perf_counter() - wall, "cpu_s": _cpu() - cpu, "answers": counts["text_answers"],
            "sha256": digest.hexdigest()}


def phase_encode(index: Path, encoder: str, posts: int) -> dict:
    import itertools

    from mathsearch.encoders import load_encoder
    from mathsearch.indexes.dense import iter_passages
    from mathsearch.store import Store

    model = load_encoder(encoder)
    with Store.open(index) as store:
        texts = [text for _, _, text, _ in itertools.islice(iter_passages(store), posts)]
    cpu, wall = time.process_time(), time.perf_counter()
    vectors = model.encode(texts)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"posts": len(texts), "cpu_s": cpu, "wall_s": wall, "per_cpu_s": len(texts) / cpu,
            "sha256": hashlib.sha256(vectors.tobytes()).hexdigest()}


def phase_query(index: Path) -> dict:
    from mathsearch.errors import InputError
    from mathsearch.readers.topics import read_topics
    from mathsearch.systems import SearchContext, SearchQuery, make_system

    out = {}
    ctx = SearchContext(index)
    for task, name in ((2, "formula:config=" + str(_no_text_config())), (1, "ours:dense=False")):
        topics = [t for year in (2020, 2021) for t in read_topics(DATA / "topics" / f"task{task}-{year}.xml")]
        system = make_system(name)
        try:
            system.search(ctx, SearchQuery.from_topic(topics[0]))  # warm the page cache and imports
        except InputError as exc:  # e.g. no text index: say so, go on
            out[f"task{task}"] = {"skipped": str(exc)}
            continue
        ms, cpu_ms = [], []
        digest = hashlib.sha256()
        for topic in topics:
            started, cpu = time.perf_counter(), time.process_time()
            ranking = system.search(ctx, SearchQuery.from_topic(topic))
            ms.append((time.perf_counter() - started) * 1000)
            cpu_ms.append((time.process_time() - cpu) * 1000)
            digest.update(repr(sorted(ranking.items())).encode())
        out[f"task{task}"] = {"queries": len(ms), "median_ms": statistics.median(ms),
                              "p95_ms": statistics.quantiles(ms, n=20)[-1], "cpu_median_ms": statistics.median(cpu_ms),
                              "cpu_p95_ms": statistics.quantiles(cpu_ms, n=20)[-1], "sha256": digest.hexdigest()}
    return out


def _no_text_config() -> Path:
    """The packaged formula.toml with the thread text boost off (formula structure alone)."""
    text = (Path(__file__).resolve().parents[1] / "src" / "mathsearch" / "systems" / "formula.toml").read_text()
    path = Path(tempfile.gettempdir()) / "formula-no-text.toml"
    path.write_text(text.replace("[text]\nweight = ", "[text]\nweight = 0.0 # ", 1))
    return path


def _child(path: str, phase: str, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "MATHSEARCH_PURE_PYTHON"}
    if path == "pure":
        env["MATHSEARCH_PURE_PYTHON"] = "1"
    done = subprocess.run([sys.executable, __file__, "--phase", phase, *args], env=env, check=True,
                          capture_output=True, text=True)
    result = json.loads(done.stdout.splitlines()[-1])
    want = "python" if path == "pure" else "compiled"
    if set(result.pop("status").values()) != {want}:
        raise SystemExit(f"bench_compiled: the {path} process did not run {want} code (build the extension: "
                         "python setup.py build_ext --inplace)")
    return result


def _not_our_json(path: Path) -> str | None:
    """None when ``path`` holds figures this script wrote (``--json``), else why it must stay."""
    try:
        runs = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return "is not this script's JSON"
    ok = isinstance(runs, dict) and set(runs) <= {"analyse", "build", "text", "encode", "query"} and all(
        isinstance(v, dict) and set(v) <= set(PATHS) for v in runs.values())
    return None if ok else "is not this script's JSON"


def _order(rounds: int) -> list[str]:
    """pure, compiled, compiled, pure, ...: each path first as often as second."""
    return [p for r in range(rounds) for p in (PATHS if r % 2 == 0 else PATHS[::-1])]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=2, help="runs of each path per row (alternating)")
    ap.add_argument("--formulae", type=int, default=5000, help="distinct formulae of the analysis row")
    ap.add_argument("--skip", default="", help="rows to leave out: analyse,build,text,encode,query (comma-separated)")
    ap.add_argument("--encoder", help="a static encoder's folder (e.g. INDEX/dense/encoder of a --dense student "
                                      "build): adds the encoding row")
    ap.add_argument("--posts", type=int, default=30_000, help="passages of the encoding row")
    ap.add_argument("--json", type=Path, help="also write every run's figures here")
    ap.add_argument("--force", action="store_true", help="let --json replace a file this script did not write")
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.phase:  # a child: one measurement on the path its environment selects
        from mathsearch import _compiled

        if args.phase == "analyse":
            result = phase_analyse(args.index, args.formulae)
        elif args.phase == "build":
            result = phase_build(args.index, Path(args.rest[0]))
        elif args.phase == "text":
            result = phase_text(args.index, Path(args.rest[0]))
        elif args.phase == "encode":
            result = phase_encode(args.index, args.encoder, args.posts)
        else:
            result = phase_query(args.index)
        print(json.dumps({**result, "status": _compiled.status()}))
        return 0

    skip = set(filter(None, args.skip.split(",")))
    if args.encoder is None:
        skip.add("encode")
    else:  # checked here, from its record: a wrong folder or another kind is one line and exit 2
        from mathsearch.encoders import encoder_info, load_encoder
        from mathsearch.errors import InputError

        if encoder_info(args.encoder).get("kind") != "static":
            raise InputError(f"--encoder {args.encoder} is not a static encoder (the encoding row times the "
                             "compiled word pieces of one).")
        load_encoder(args.encoder)  # a static one loads in a moment: an incomplete folder is said here
    from mathsearch.indexes.directory import IndexDirectory
    from mathsearch.runs.output import check_output

    if args.json:  # before any child: an existing file is replaced only if it is this script's own output
        check_output(args.json, [args.index], option="--json", force=args.force, ours=_not_our_json)

    # checked here, before any child starts: a wrong --index is one line and exit 2, not a child's traceback
    IndexDirectory(args.index).require(["store"] + (["text", "formula"] if "query" not in skip else []))
    runs: dict[str, dict[str, list[dict]]] = {}
    for path in _order(args.rounds):
        if "analyse" not in skip:
            runs.setdefault("analyse", {}).setdefault(path, []).append(
                _child(path, "analyse", "--index", str(args.index), "--formulae", str(args.formulae)))
        for row in ("build", "text"):
            if row in skip:
                continue
            scratch = Path(tempfile.mkdtemp(prefix=f"bench-compiled-{path}-"))
            try:
                runs.setdefault(row, {}).setdefault(path, []).append(
                    _child(path, row, "--index", str(args.index), str(scratch)))
            finally:
                shutil.rmtree(scratch)
        if "encode" not in skip:
            runs.setdefault("encode", {}).setdefault(path, []).append(
                _child(path, "encode", "--index", str(args.index), "--encoder", args.encoder, "--posts", str(args.posts)))
        if "query" not in skip:
            runs.setdefault("query", {}).setdefault(path, []).append(_child(path, "query", "--index", str(args.index)))
        print(f"  {path} round done", file=sys.stderr, flush=True)

    def med(row: str, path: str, key: str, sub: str | None = None) -> float:
        vals = [(r[sub] if sub else r)[key] for r in runs[row][path]]
        return statistics.median(vals)

    print(f"\nindex {args.index}, {args.rounds} rounds per path, alternating; medians over rounds\n")
    print("| measure | pure Python | compiled | ratio |")
    print("|---|---:|---:|---:|")
    if "analyse" in runs:
        p, c = med("analyse", "pure", "per_cpu_s"), med("analyse", "compiled", "per_cpu_s")
        n = runs["analyse"]["pure"][0]["formulae"]
        print(f"| parse + tuple extraction, formulae per CPU s ({n:,} distinct) | {p:,.0f} | {c:,.0f} | {c / p:.2f}x |")
    if "build" in runs:
        b = runs["build"]
        for key, label in (("wall_s", "wall s"), ("cpu_s", "CPU s")):
            p, c = med("build", "pure", key), med("build", "compiled", key)
            print(f"| formula index build, {label} ({b['pure'][0]['visual']:,} visual formulae) | {p:.1f} | {c:.1f} | {p / c:.2f}x |")
        for name, label in BUILD_PARTS:
            p, c = (statistics.median(r["parts"][name]["cpu_s"] for r in b[path]) for path in PATHS)
            print(f"| - of which {label}, CPU s | {p:.1f} | {c:.1f} | {p / max(c, 1e-9):.2f}x |")
        same = len({r["sha256"] for rs in b.values() for r in rs}) == 1
        print(f"| formula index arrays identical (sha256 over all files, every run) | | | {'yes' if same else 'NO'} |")
    if "text" in runs:
        t = runs["text"]
        for key, label in (("wall_s", "wall s"), ("cpu_s", "CPU s")):
            p, c = med("text", "pure", key), med("text", "compiled", key)
            print(f"| text index build, {label} ({t['pure'][0]['answers']:,} answers) | {p:.1f} | {c:.1f} | {p / c:.2f}x |")
        same = len({r["sha256"] for rs in t.values() for r in rs}) == 1
        print(f"| text index documents identical (sha256 of every document fed to tantivy, every run) | | | {'yes' if same else 'NO'} |")
    if "encode" in runs:
        e = runs["encode"]
        p, c = med("encode", "pure", "per_cpu_s"), med("encode", "compiled", "per_cpu_s")
        print(f"| static encoder, posts per CPU s ({e['pure'][0]['posts']:,} passages) | {p:,.0f} | {c:,.0f} | {c / p:.2f}x |")
        p, c = med("encode", "pure", "wall_s"), med("encode", "compiled", "wall_s")
        print(f"| static encoder, wall s | {p:.1f} | {c:.1f} | {p / c:.2f}x |")
        same = len({r["sha256"] for rs in e.values() for r in rs}) == 1
        print(f"| static encoder vectors identical (sha256, every run) | | | {'yes' if same else 'NO'} |")
    if "query" in runs:
        q = runs["query"]
        for task in ("task2", "task1"):
            first = q["pure"][0][task]
            if "skipped" in first:
                print(f"| {task}: skipped ({first['skipped']}) | | | |")
                continue
            name = "Task 2 formula (no text boost)" if task == "task2" else "Task 1 ours:dense=False"
            for key in ("median_ms", "p95_ms", "cpu_median_ms", "cpu_p95_ms"):
                p, c = med("query", "pure", key, task), med("query", "compiled", key, task)
                label = key.replace("_ms", "").replace("cpu_", "CPU ").replace("median", "median ms").replace("p95", "p95 ms")
                if not key.startswith("cpu"):
                    label = "wall " + label
                print(f"| {name}, {label} ({first['queries']} topics) | {p:.1f} | {c:.1f} | {p / c:.2f}x |")
            same = len({r[task]["sha256"] for rs in q.values() for r in rs}) == 1
            print(f"| {name}: rankings identical (ids and scores, every run) | | | {'yes' if same else 'NO'} |")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
