"""Differential check of a refactoring: every system's runs on the sample, at two revisions, byte for byte.

    python bench/diff_runs.py --rev HEAD~5 --out bench/out/runs-before   # runs of an older revision
    python bench/diff_runs.py --out bench/out/runs-after                 # runs of the working tree
    python bench/diff_runs.py --compare bench/out/runs-before bench/out/runs-after

An older revision is checked out with ``git worktree`` into a temporary folder (removed after)
and run with its own sources first on ``PYTHONPATH``.  Each revision indexes the sample itself
(the index layout may differ between them), then runs every registered system (plus the
``extra`` specs below) on the 2020 and 2021 topics of its task.  A system that fails writes its
error instead of a run, so that a system added or removed also shows up in the comparison.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "arqmath"
YEARS = ("2020", "2021")
EXTRA = {1: ["ours:dense=False"], 2: []}  # specs that are not a bare registered name


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _mathsearch(src: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mathsearch", *args], env=_env(src), capture_output=True, text=True)


def _systems(src: Path) -> dict[int, list[str]]:
    code = ("import json, mathsearch, mathsearch.systems as s; "
            f"assert mathsearch.__file__.startswith({str(src)!r}), mathsearch.__file__; "
            "print(json.dumps({t: s.system_names(t) for t in (1, 2)}))")
    out = subprocess.run([sys.executable, "-c", code], env=_env(src), capture_output=True, text=True, check=True)
    return {int(k): v for k, v in json.loads(out.stdout).items()}


def make_runs(src: Path, out: Path, dense: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    index = out / "index"
    # --encoder minilm, not --dense: both revisions understand it, and it never leaves the choice to a
    # plan measured on a busy machine
    built = _mathsearch(src, "index", str(DATA / "collection"), "--index", str(index), *(["--encoder", "minilm"] if dense else []))
    if built.returncode not in (0, 1):
        raise SystemExit(f"index failed: {built.stderr}")
    for task, names in _systems(src).items():
        for spec in names + EXTRA[task]:
            for year in YEARS:
                name = f"task{task}-{year}-{spec.replace(':', '_').replace('=', '-')}"
                args = ["run", "--index", str(index), "--task", str(task), "--system", spec,
                        "--topics", str(DATA / "topics" / f"task{task}-{year}.xml"),
                        "--formulas", str(DATA / "topics" / "formulas" / f"formulas-{year}-latex.tsv"),
                        "--out", str(out / f"{name}.tsv")]
                done = _mathsearch(src, *args)
                if done.returncode not in (0, 1):
                    (out / f"{name}.error").write_text(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "?")
                print(f"{name}: exit {done.returncode}", flush=True)


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir() if p.is_file()} | {p.name for p in b.iterdir() if p.is_file()})
    rows, differing = [], 0
    for name in names:
        pa, pb = a / name, b / name
        if not pa.exists() or not pb.exists():
            state = f"only in {'after' if not pa.exists() else 'before'}"
        elif filecmp.cmp(pa, pb, shallow=False):
            state = "identical"
        else:
            state = "DIFFERENT"
        differing += state != "identical"
        rows.append((name, state))
    width = max(len(n) for n, _ in rows) if rows else 10
    print(f"| {'file':<{width}} | result |\n|{'-' * (width + 2)}|--------|")
    for name, state in rows:
        print(f"| {name:<{width}} | {state} |")
    print(f"\n{len(rows) - differing} of {len(rows)} files identical")
    return 1 if differing else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", help="git revision to run (default: the working tree)")
    ap.add_argument("--out", type=Path, help="folder for the runs")
    ap.add_argument("--dense", action="store_true", help="index with dense vectors (minutes on a CPU)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        raise SystemExit(compare(*args.compare))
    if args.out is None:
        ap.error("--out is needed")
    if args.rev is None:
        make_runs(REPO / "src", args.out, args.dense)
        return
    with tempfile.TemporaryDirectory(prefix="mathsearch-rev-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), args.rev], check=True,
                       capture_output=True)
        try:
            make_runs(tree / "src", args.out, args.dense)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)


if __name__ == "__main__":
    main()
