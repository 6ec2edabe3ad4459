"""How well our visual keys reproduce the lab's visual ids (B-cubed precision and recall).

``lab=False`` is pure visual identity; the default also keeps MathJax-only macros (``\\lt``,
``\\gt``) apart from ``<`` and ``>`` as LaTeXML, which made the lab's ids, does.
Over the sample's formula instances that have a visual id, each instance's cluster under a key
(ours, or the LaTeX string without white space as the baseline) is compared with its cluster
under the official visual id.  Prints a table and the commonest disagreements.

    python bench/visual_keys.py [--tsv PATH] [--show 15]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

from mathsearch.formula import FormulaAnalyzer
from mathsearch.formula.agreement import bcubed, f1
from mathsearch.readers.formula_tsv import iter_formula_tsv

DEFAULT_TSV = Path(__file__).resolve().parents[1].parent / "shared/data/arqmath/collection/formulas/latex_representation_v3.tsv"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsv", type=Path, default=DEFAULT_TSV)
    ap.add_argument("--show", type=int, default=15, help="disagreements to print per side")
    args = ap.parse_args(argv)
    analyzer = FormulaAnalyzer()
    pure = FormulaAnalyzer(lab_visual_key=False)
    gold: list[str] = []
    ours: list[str] = []
    visual: list[str] = []
    base: list[str] = []
    latex: list[str] = []
    for rec in iter_formula_tsv(args.tsv):
        if not rec.visual_id:
            continue
        gold.append(rec.visual_id)
        latex.append(rec.formula)
        ours.append(analyzer.analyze(rec.formula).visual_key)
        visual.append(pure.analyze(rec.formula).visual_key)
        base.append("".join(rec.formula.split()))
    rows = [("LaTeX without white space", *bcubed(gold, base)),
            ("ours: visual_key (lab=False)", *bcubed(gold, visual)),
            ("ours: visual_key (default)", *bcubed(gold, ours))]
    print(f"formula instances with a visual id: {len(gold):,}; official ids: {len(set(gold)):,}; "
          f"LaTeX keys: {len(set(base)):,}; our keys: {len(set(ours)):,}")
    print(f"| {'key':<28} | precision | recall |   F1   |")
    print(f"|{'-' * 30}|-----------|--------|--------|")
    for name, p, r in rows:
        print(f"| {name:<28} |   {p:.4f}  | {r:.4f} | {f1(p, r):.4f} |")

    # commonest disagreements: merged by us but split officially, and the reverse
    by_key: dict[str, set[str]] = defaultdict(set)
    by_vid: dict[str, set[str]] = defaultdict(set)
    key_lat: dict[str, Counter] = defaultdict(Counter)
    vid_lat: dict[str, Counter] = defaultdict(Counter)
    for gk, ok, lt in zip(gold, ours, latex, strict=True):
        by_key[ok].add(gk)
        by_vid[gk].add(ok)
        key_lat[(ok, gk)][lt] += 1
        vid_lat[(gk, ok)][lt] += 1
    size = Counter(gold)
    over = sorted(((sum(size[v] for v in vs), k) for k, vs in by_key.items() if len(vs) > 1), reverse=True)
    print(f"\nour key merges different official ids ({len(over)} keys), largest first:")
    for _n, k in over[: args.show]:
        examples = [key_lat[(k, v)].most_common(1)[0][0] for v in sorted(by_key[k])][:4]
        print("   ", " | ".join(repr(e) for e in examples))
    keysize = Counter(ours)
    under = sorted(((sum(keysize[k] for k in ks), v) for v, ks in by_vid.items() if len(ks) > 1), reverse=True)
    print(f"\none official id split over several of our keys ({len(under)} ids), largest first:")
    for _n, v in under[: args.show]:
        examples = [vid_lat[(v, k)].most_common(1)[0][0] for k in sorted(by_vid[v])][:4]
        print("   ", " | ".join(repr(e) for e in examples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
