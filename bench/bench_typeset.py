"""The share of an index's formulae that the web page's renderer typesets without error.

    python bench/bench_typeset.py --index IDX [--renderer mathjax katex] [--every 1]

Runs ``node bench/typeset_share.js`` (through :func:`mathsearch.web.typeset_share.typeset_share`)
over every formula instance of the index's store, a thread's formulae in its page's order: each
goes through ``static/texcompat.js`` and is typeset by MathJax 3 as the page configures it
(``static/mathjax-config.js``), or by KaTeX (the page's renderer before, for comparison).  Prints
one row per renderer: formulae, failures (not typeset: shown as their LaTeX), those typeset with
a macro that no formula of their page defines (shown by name in red, as the site shows it; KaTeX
counts these as failures), the share typeset, the share typeset with every macro defined, node's
seconds, then the commonest error messages.  ``--every N`` keeps the threads whose id is a multiple of N (a quicker sample).
"""

from __future__ import annotations

import argparse

from mathsearch.web.typeset_share import RENDERERS, typeset_share


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="an INDEX_DIR made by `mathsearch index`")
    ap.add_argument("--renderer", nargs="+", choices=RENDERERS, default=list(RENDERERS))
    ap.add_argument("--every", type=int, default=1, help="keep threads whose id is a multiple of N")
    ap.add_argument("--errors", type=int, default=8, help="commonest error messages shown a renderer")
    args = ap.parse_args(argv)
    results = [typeset_share(args.index, r, args.every) for r in args.renderer]
    print(f"{'renderer':<16} {'formulae':>9} {'errors':>7} {'undefined':>9} {'typeset':>8} {'all defined':>11} {'node s':>7}")
    for r in results:
        print(f"{r['renderer'] + ' ' + r['version']:<16} {r['formulae']:>9,} {r['errors']:>7,} {r['undefinedShown']:>9,} "
              f"{100 * r['share']:>7.2f}% {100 * r['share_defined']:>10.2f}% {r['seconds']:>7.1f}")
    for r in results:
        print(f"\n{r['renderer']}: commonest errors")
        for message, n in r["top"][: args.errors]:
            print(f"  {n:>6,}  {message}")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
