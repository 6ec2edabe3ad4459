"""How many snippets of the issue-41 searches are faulty, by this checkout's code and another's.

    python bench/bench_snippets.py --index IDX [--src OTHER/src]

The twelve searches of tests/test_web_snippets.py (six Task 1 topics of 2022 by title, three Task 2
topics of 2022 as formulae, three typed questions), ten hits each, over IDX (the sample index).  A
snippet is faulty when a formula in it, as the page reads it back, is not one of its post's formulae
(as stored or as shown: :func:`mathsearch.readers.snippets.tex_shown`), when its prose holds raw
``\\begin{``, ``\\frac``, ``\\left`` or ``amp;``, or when it shows nothing.  ``--src`` makes the
snippets with another checkout's ``src`` (the code before a change), judged by this one's reading.
Prints one table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DUMP = r"""
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import test_web_snippets as t
from mathsearch.searcher import Searcher
s = Searcher(sys.argv[1])
out = [[label, h.post_id, h.snippet] for label, task, q in t.searches(Path(sys.argv[2]), 1280)[:12]
       for h in s.search(q, task, k=10).hits]
print(json.dumps(out))
"""
RAW = ("\\begin{", "\\frac", "\\left", "amp;")


def snippets_of(index: Path, data: Path, src: Path) -> list:
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", DUMP, str(index), str(data), str(HERE / "tests")], env=env,
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def faulty(index: Path, items: list) -> list[tuple[str, int]]:
    from mathsearch.readers.snippets import post_atoms, tex_shown
    from mathsearch.searcher import Searcher
    from mathsearch.text.dollar_math import find_math

    store = Searcher(index).ctx.store
    bad = []
    for label, post_id, snip in items:
        atoms = post_atoms(store.post(post_id).body)
        own = {"".join(x.split()) for a in atoms if a.formula for x in (a.text, tex_shown(a.text))}
        found = find_math(snip, is_html=False)
        prose = snip
        for start, end, _ in reversed(found):
            prose = prose[:start] + prose[end:]
        if (any("".join(latex.split()) not in own for _, _, latex in found) or any(r in prose for r in RAW)
                or not snip.strip(". ")):
            bad.append((label, post_id))
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=HERE.parent / "shared" / "data" / "arqmath")
    ap.add_argument("--src", type=Path, default=None, help="another checkout's src, judged beside this one")
    args = ap.parse_args()
    columns = {"this checkout": HERE / "src", **({str(args.src): args.src.resolve()} if args.src else {})}
    print(f"{'code':<40} {'snippets':>9} {'faulty':>7}  posts")
    for label, src in columns.items():
        items = snippets_of(args.index, args.data, src)
        bad = faulty(args.index, items)
        print(f"{label[-40:]:<40} {len(items):>9} {len(bad):>7}  {', '.join(str(p) for _, p in bad[:8])}")


if __name__ == "__main__":
    main()
