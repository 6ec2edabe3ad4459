"""Where the lexical build's CPU goes: cProfile of the formula step and of the text analysis.

    python bench/profile_build.py --index INDEX_DIR [--top 25] [--formulae N] [--threads N]

INDEX_DIR holds a collection store (``mathsearch index DIR --index INDEX_DIR --store-only``).  Both
steps run here in one process (no workers), timed in CPU seconds of this process
(``time.process_time``, so other work on a shared machine does not count):

* formula step: the analysis ``build_formula_index`` runs per distinct formula (LaTeX -> SLT ->
  OPT -> tuples, paths, visual key, hashes; the first ``--formulae`` distinct ones, all by
  default) and the posting construction of the whole index;
* text analysis: the token fields of every thread's documents as they are fed to tantivy
  (``--threads`` jobs of threads, all by default), without tantivy itself.

Prints per step the top functions by own CPU seconds (tottime), with calls and cumulative
seconds.  ``MATHSEARCH_PURE_PYTHON=1`` profiles the pure-Python reference; without it the
compiled modules (setup.py) run, and cProfile sees them only as the Python calls into them.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path


def _table(prof: cProfile.Profile, top: int, title: str) -> None:
    stats = pstats.Stats(prof)
    total = stats.total_tt
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]
    print(f"\n### {title}: {total:.1f} CPU s in all\n")
    print("| function | calls | own CPU s | share | with callees, CPU s |")
    print("|---|---:|---:|---:|---:|")
    for (file, line, name), (_cc, nc, tt, ct, _callers) in rows:
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if file != "~" else "built-in"
        print(f"| `{name}` ({where}) | {nc:,} | {tt:.2f} | {tt / total:.1%} | {ct:.2f} |")


def profile_formula(index: Path, limit: int | None, top: int) -> None:
    import numpy as np

    from mathsearch.indexes.formula import build
    from mathsearch.parallel import batched
    from mathsearch.store import Store

    with Store.open(index) as store:
        latex_of = [latex for chunk in build._Grouping(store, None).chunks(build.CHUNK) for latex in chunk]
    todo = latex_of[:limit] if limit else latex_of
    scratch = Path(tempfile.mkdtemp(prefix="profile-formula-"))
    prof = cProfile.Profile(time.process_time)
    try:
        spill = build._Spill(scratch / "spill")
        prof.enable()
        n_nodes, _vkeys = build._analyze_all(batched(todo, build.CHUNK), 1, None, spill)
        build._write_postings(scratch, spill, len(todo), None)
        prof.disable()
        assert len(n_nodes) == len(todo) and np.all(n_nodes >= 0)
    finally:
        shutil.rmtree(scratch)
    _table(prof, top, f"formula step, {len(todo):,} distinct formulae of {len(latex_of):,}")


def profile_text(index: Path, limit: int | None, top: int) -> None:
    from mathsearch.indexes import text_index
    from mathsearch.store import Store

    prof = cProfile.Profile(time.process_time)
    n = docs = 0
    with Store.open(index) as store:
        for job in text_index._jobs(store):
            if limit and n >= limit:
                break
            prof.enable()
            out = text_index._JOBS[job[0]](store, job[1])
            prof.disable()
            n += 1
            docs += sum(1 + len(item[1]) if len(item) == 2 else 1 for item in out)
    _table(prof, top, f"text analysis, {docs:,} documents ({n} jobs)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--formulae", type=int, default=0, help="distinct formulae to analyse (0: all)")
    ap.add_argument("--threads", type=int, default=0, help="text jobs to analyse (0: all)")
    ap.add_argument("--skip", default="", help="formula or text")
    args = ap.parse_args(argv)
    from mathsearch import _compiled

    print(f"paths: {sorted(set(_compiled.status().values()))}")
    if args.skip != "formula":
        profile_formula(args.index, args.formulae or None, args.top)
    if args.skip != "text":
        profile_text(args.index, args.threads or None, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
