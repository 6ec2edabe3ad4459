"""Fuzz the formula module: N generated inputs through every public function, no exception allowed.

Inputs mix mutated real formulae from the sample (characters inserted, deleted, replaced,
formulae spliced), soups of LaTeX tokens, random Unicode text, random bytes, and long
repetitions of pathological units (``{``, ``\\left(``, ``x^{``...).  Prints the number of
exceptions (must be 0), the share of repaired parses, throughput and the slowest inputs
(time per character, to spot anything non-linear).  Exit status 1 if anything raised.

    python bench/fuzz_formula.py --n 1000000 --jobs 2 [--seed 1]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import sys
import time
import traceback
from pathlib import Path

from mathsearch.formula import (
    infix,
    latex_to_words,
    leaf_paths,
    opt_key,
    opt_to_cmathml,
    opt_tuples,
    parse_latex,
    prefix,
    slt_to_pmathml,
    slt_tuples,
    subexpression_terms,
    visual_key,
)

TSV = Path(__file__).resolve().parents[1].parent / "shared/data/arqmath/collection/formulas/latex_representation_v3.tsv"
TOKENS = ["{", "}", "^", "_", "'", "&", "\\\\", "(", ")", "[", "]", "|", "\\|", "\\{", "\\}", "x", "2", "+", "-",
          "=", "<", ",", "!", "\\frac", "\\sqrt", "\\left", "\\right", "\\left(", "\\right)", "\\sum", "\\int",
          "\\lim", "\\sin", "\\begin{matrix}", "\\end{matrix}", "\\begin{cases}", "\\end{cases}", "\\begin{array}{cc}",
          "\\over", "\\choose", "\\mathbb", "\\text", "\\hat", "\\not", "\\newcommand", "\\def", "#1", "#", "\\foo",
          "\\operatorname", "\\color", "\\big", "\\,", "\\mathrm", "\\overset", "\\xrightarrow", "\\pmod", "&lt;",
          "%", "$", "~", "\\root", "\\of", "\\binom", "\\underbrace", "\\limits", "\\cdots", "...", ":=", "α", "≤",
          "\\", "\\textcolor", "\\renewcommand", "\\let", "\\middle", "\\substack", "\\genfrac", "\\hskip",
          "\\DeclareMathOperator", "\\gt", "\x00", "\ud800", "𝔽", "\u0338"]
UNITS = ["{", "}", "\\left(", "\\right)", "x^{", "\\frac{", "(", "|", "\\sqrt", "\\sum", "a-", "x'", "x^a", "\\sin",
         "&", "\\\\", "\\begin{matrix}", "\\over", "_{", "\\text{", "\\not", "[", "\\newcommand{\\a}{\\a\\a}\\a"]
ALPHABET = "{}^_()[]|\\&$%'!,.=+-<>ab12 \\frac\\left\\right\\begin{}\\end{}"


def everything(latex: str) -> bool:
    p = parse_latex(latex)
    slt_tuples(p.slt)
    opt_tuples(p.opt)
    leaf_paths(p.opt)
    prefix(p.opt)
    infix(p.opt)
    opt_key(p.opt)
    subexpression_terms(p.opt)
    slt_to_pmathml(p.slt)
    opt_to_cmathml(p.opt)
    latex_to_words(latex)
    p.slt.to_json()
    p.opt.to_dict()
    visual_key(p)
    return p.recovered


def generate(rng: random.Random, real: list[str]) -> str:
    kind = rng.random()
    if kind < 0.45:  # mutated real formula
        s = list(rng.choice(real))
        for _ in range(rng.randint(1, 6)):
            op = rng.random()
            pos = rng.randint(0, len(s))
            if op < 0.4:
                s.insert(pos, rng.choice(ALPHABET))
            elif op < 0.7 and s:
                del s[min(pos, len(s) - 1)]
            elif s:
                s[min(pos, len(s) - 1)] = rng.choice(ALPHABET)
        if rng.random() < 0.1:
            s += list(rng.choice(real))
        return "".join(s)
    if kind < 0.75:  # token soup
        return "".join(rng.choice(TOKENS) for _ in range(rng.randint(0, 80)))
    if kind < 0.88:  # random Unicode text
        return "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0, 0x2FFF), rng.randint(0, 0x10FFFF)]))
                       for _ in range(rng.randint(0, 60)))
    if kind < 0.998:  # random bytes
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 120))).decode("utf-8", errors="replace")
    return rng.choice(UNITS) * rng.randint(100, 1000)  # long pathological repetition


def worker(args: tuple[int, int, int]) -> dict:
    seed, n, _job = args
    rng = random.Random(seed)
    with TSV.open(encoding="utf-8") as fh:
        real = [line.rstrip("\n").split("\t")[-1] for line in fh][1:] or ["x^2"]
    failures: list[str] = []
    n_fail = recovered = 0
    slowest: list[tuple[float, int, str]] = []
    t0 = time.perf_counter()
    for _ in range(n):
        latex = generate(rng, real)
        t = time.perf_counter()
        try:
            recovered += everything(latex)
        except Exception:  # noqa: BLE001 - counting is the point
            n_fail += 1
            if len(failures) < 5:
                failures.append(f"{latex[:200]!r}\n{traceback.format_exc(limit=3)}")
        dt = time.perf_counter() - t
        if len(slowest) < 5 or dt > slowest[-1][0]:
            slowest.append((dt, len(latex), latex[:60]))
            slowest.sort(reverse=True)
            del slowest[5:]
    return {"n": n, "failures": n_fail, "examples": failures, "recovered": recovered,
            "seconds": time.perf_counter() - t0, "slowest": slowest}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    per = [args.n // args.jobs + (1 if i < args.n % args.jobs else 0) for i in range(args.jobs)]
    tasks = [(args.seed * 1000 + i, k, i) for i, k in enumerate(per)]
    t0 = time.perf_counter()
    if args.jobs == 1:
        results = [worker(tasks[0])]
    else:
        with mp.Pool(args.jobs) as pool:
            results = pool.map(worker, tasks)
    wall = time.perf_counter() - t0
    n = sum(r["n"] for r in results)
    fails = sum(r["failures"] for r in results)
    rec = sum(r["recovered"] for r in results)
    cpu = sum(r["seconds"] for r in results)
    print("| inputs | exceptions | repaired | inputs/s (all jobs) | inputs/s per core | wall s |")
    print("|--------|------------|----------|---------------------|-------------------|--------|")
    print(f"| {n:,} | {fails} | {rec / max(n, 1):.1%} | {n / wall:,.0f} | {n / cpu:,.0f} | {wall:.0f} |")
    slow = sorted((s for r in results for s in r["slowest"]), reverse=True)[:5]
    print("\nslowest inputs (seconds, characters, start):")
    for dt, length, start in slow:
        print(f"  {dt:.3f}s  {length:>6}  {start!r}")
    for r in results:
        for ex in r["examples"]:
            print("\nFAILED on", ex)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
