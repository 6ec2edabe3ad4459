"""Where the formula step's time goes, stage by stage, on both paths (pure Python and compiled).

    python bench/bench_formula_stages.py --index IDX [--formulae 5000] [--repeats 3]

Each stage of ``_analyze_chunk`` over the same first distinct formulae of IDX's store, the
collector off (as the build runs it), best CPU seconds of ``--repeats``; each path in a child
process (``MATHSEARCH_PURE_PYTHON``), so the two columns come from one run (docs/log/compiled.md).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

STAGES = ("parse", "OPT", "SLT tuples", "OPT tuples", "visual key", "node count", "leaf paths", "whole analysis",
          "token bags", "chunk with hashing")


def measure(index: Path, limit: int, repeats: int) -> dict[str, float]:
    from bench_compiled import first_distinct_latex  # the same formulae as its analysis row

    from mathsearch.formula import FormulaAnalyzer
    from mathsearch.formula.analysis import Parsed, visual_key
    from mathsearch.formula.opt import build_opt
    from mathsearch.formula.parser import parse_slt
    from mathsearch.formula.representations import leaf_paths, opt_tuples, slt_tuples
    from mathsearch.formula.slt import node_count
    from mathsearch.indexes.formula import build
    from mathsearch.indexes.formula.layout import OPT_WINDOW, SLT_WINDOW
    from mathsearch.indexes.formula.tokens import family_tokens

    todo = first_distinct_latex(index, limit)
    gc.disable()
    out: dict[str, float] = {}

    def stage(name, fn, items):  # noqa: ANN001, ANN202 - a bench helper
        best, made = float("inf"), []
        for _ in range(repeats):
            cpu = time.process_time()
            made = [fn(x) for x in items]
            best = min(best, time.process_time() - cpu)
        out[name] = best
        return made

    slts = stage("parse", parse_slt, todo)
    opts = stage("OPT", lambda s: build_opt(s[0]), slts)
    parsed = [Parsed(x, s[0], o, s[1].n_errors > 0) for x, s, o in zip(todo, slts, opts, strict=True)]
    stage("SLT tuples", lambda p: ["\t".join(t) for t in slt_tuples(p.slt, SLT_WINDOW)], parsed)
    stage("OPT tuples", lambda p: ["\t".join(t) for t in opt_tuples(p.opt, OPT_WINDOW)], parsed)
    stage("visual key", visual_key, parsed)
    stage("node count", lambda p: node_count(p.slt), parsed)
    stage("leaf paths", lambda p: leaf_paths(p.opt), parsed)
    analyzer = FormulaAnalyzer(slt_window=SLT_WINDOW, opt_window=OPT_WINDOW, cache_size=1024, keep_trees=True)
    analyses = stage("whole analysis", analyzer._analyze, todo)
    stage("token bags", family_tokens, analyses)

    def chunks(_: int) -> None:
        build._W.clear()  # a fresh analyzer and hasher, as a new worker has
        for i in range(0, len(todo), build.CHUNK):
            build._analyze_chunk(todo[i:i + build.CHUNK])

    stage("chunk with hashing", chunks, [0])
    return {"formulae": len(todo), **out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--formulae", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.index, args.formulae, args.repeats)))
        return 0
    from mathsearch.indexes.directory import IndexDirectory

    IndexDirectory(args.index).require(["store"])
    cols = {}
    for path, pure in (("pure", "1"), ("compiled", "0")):
        cmd = [sys.executable, __file__, "--child", "--index", str(args.index), "--formulae", str(args.formulae),
               "--repeats", str(args.repeats)]
        done = subprocess.run(cmd, env={**os.environ, "MATHSEARCH_PURE_PYTHON": pure}, capture_output=True, text=True,
                              check=True)
        cols[path] = json.loads(done.stdout)
    print(f"CPU s for the first {cols['pure']['formulae']:,} distinct formulae of {args.index}, collector off, "
          f"best of {args.repeats}\n")
    print("| stage | pure Python | compiled | ratio |\n|---|---:|---:|---:|")
    for name in STAGES:
        p, c = cols["pure"][name], cols["compiled"][name]
        print(f"| {name} | {p:.3f} | {c:.3f} | {p / c:.2f}x |")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
