"""The fuzzing campaign, long: the properties of tests/fuzz_properties.py (the ones tests/test_fuzz.py
runs on bounded Hypothesis examples) on N seeded inputs a target, counted.

Targets: every reader (Posts, Comments, PostLinks XML, formula TSV, topics XML, qrels, a Task 1
run) with one row damaged, the LaTeX parser on strings of bench/fuzz_formula.py's generator, and
snippet cutting.  Prints a table: inputs tried, outcomes (a damaged row kept as a record, reported
with its line, or the file refused by a typed error), property failures and unexpected exceptions
(both must be 0), seconds.  Exit status 1 if any.

    nice -n 10 python bench/fuzz_campaign.py --n 100000 [--targets posts_xml,qrels] [--seed 1] [--seconds S]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_properties import (  # noqa: E402
    check_parse,
    check_reader,
    check_snippet,
    check_typed_query,
    random_edits,
    reader_targets,
    typed_query,
)

WORDS = ["prime", "number", "the", "proof", "of", "is", "integral", "sum", "x", "a"]
FORMULAE = ["$x^2$", "$\\frac{a}{b}$", "$\\sum_{i=1}^n i$", "$a+b$", "$\\sqrt{2}$", "$e^{i\\pi}+1=0$",
            "$\\int_0^1 f(x)\\,dx$", "$n$", "$$\\begin{align*} a &= b \\\\ c &= d \\end{align*}$$", "$$" + "x" * 300 + "$$"]


def parse_inputs(rng: random.Random):
    import fuzz_formula

    real = _real_formulae()
    return lambda: fuzz_formula.generate(rng, real)


def _real_formulae() -> list[str]:
    import fuzz_formula

    with fuzz_formula.TSV.open(encoding="utf-8") as fh:
        return [line.rstrip("\n").split("\t")[-1] for _, line in zip(range(20_000), fh, strict=False)][1:]


def run_target(name: str, n: int, seed: int, folder: Path, seconds: float = float("inf")) -> dict:
    rng = random.Random(f"{seed}-{name}")
    outcomes: Counter[str] = Counter()
    failures: list[str] = []
    errors: list[str] = []
    n_failed = n_errors = 0
    if name == "latex_parser":
        draw = parse_inputs(rng)
        one = lambda: "recovered" if check_parse(draw()) else "clean"  # noqa: E731
    elif name == "snippet":
        def one() -> str:
            text = " ".join(rng.choice(WORDS + FORMULAE) for _ in range(rng.randint(1, 120)))
            check_snippet(text, set(rng.sample(WORDS, rng.randint(0, 3))), rng.randint(20, 400))
            return "ok"
    elif name == "typed_query":
        def one() -> str:
            return check_typed_query(typed_query(rng), rng.choice((1, 2)))
    else:
        target = reader_targets()[name]

        def one() -> str:
            row, edits = rng.randrange(1000), random_edits(rng)
            try:
                return check_reader(target, row, edits, folder)
            except AssertionError as exc:  # the input, to replay it: check_reader(target, row, edits, folder)
                raise AssertionError(f"{exc} [row={row}, edits={edits!r}]") from None
    t0 = time.perf_counter()
    tried = 0
    for tried in range(1, n + 1):  # noqa: B007 - the count is reported
        if time.perf_counter() - t0 > seconds:
            tried -= 1
            break
        try:
            outcomes[one()] += 1
        except AssertionError as exc:
            n_failed += 1
            if len(failures) < 3:
                failures.append(f"{exc}"[:1500])
                print(f"FAILED {name} #{tried}: {failures[-1]}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - counting them is the point
            n_errors += 1
            if len(errors) < 3:
                errors.append(traceback.format_exc(limit=4)[-1200:])
    return {"target": name, "n": tried, "outcomes": dict(outcomes), "failed": n_failed, "errors": n_errors,
            "seconds": time.perf_counter() - t0, "failures": failures, "tracebacks": errors}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="inputs a target")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--targets", default="", help="comma-separated (default: all)")
    ap.add_argument("--seconds", type=float, default=float("inf"), help="time budget a target: stop before --n "
                    "when it is spent (the table says how many inputs were tried)")
    args = ap.parse_args(argv)
    names = [*sorted(reader_targets()), "latex_parser", "snippet", "typed_query"]
    if args.targets:
        names = [t for t in args.targets.split(",") if t]
    print("| target | inputs | outcomes | property failures | unexpected exceptions | inputs/s | seconds |")
    print("|--------|--------|----------|-------------------|-----------------------|----------|---------|")
    bad = 0
    details = []
    with tempfile.TemporaryDirectory(prefix="ms-fuzz-") as d:
        for name in names:
            r = run_target(name, args.n, args.seed, Path(d), args.seconds)
            outcomes = ", ".join(f"{k} {v:,}" for k, v in sorted(r["outcomes"].items()))
            print(f"| {name} | {r['n']:,} | {outcomes} | {r['failed']} | {r['errors']} | "
                  f"{r['n'] / r['seconds']:,.0f} | {r['seconds']:.0f} |", flush=True)
            bad += r["failed"] + r["errors"]
            details += [f"{name}: {x}" for x in r["failures"] + r["tracebacks"]]
    for x in details:
        print("\n" + x)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
