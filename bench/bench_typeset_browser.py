"""Time to typeset a long thread in Chromium: MathJax (the page's renderer) beside KaTeX.

    python bench/bench_typeset_browser.py --index IDX [--threads 2804569 1579998] [--repeat 3]

Serves ``mathsearch serve``'s app on loopback (tests/web_support.py: Debian's /usr/bin/chromium
through Playwright, nothing downloaded), opens each thread page once (its wall time to
``data-math=ready``, MathJax typesetting included, is printed too), collects the LaTeX of its formula
elements, and then, in that page, typesets the same formulae ``--repeat`` times into fresh elements
with each renderer: MathJax 3 through ``mathsearch.js`` (``static/texcompat.js``, batches between
frames), and KaTeX 0.19 (node_modules/katex, injected for the measure only) with the same
``prepareTex``.  Prints the median milliseconds of each, their ratio, and the formulae each failed.
Without ``--threads``: the three threads of the index with the most formulae.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from web_support import chromium, serve  # noqa: E402

from mathsearch.store.store import Store  # noqa: E402
from mathsearch.web.app import create_app  # noqa: E402

KATEX = REPO / "node_modules" / "katex" / "dist"

# Typeset the page's formulae again into a hidden-free, fresh container; resolves to {ms, failed}.
MATHJAX = """async (items) => {
  const box = document.createElement('div'); document.querySelector('main').appendChild(box);
  for (const [latex, display] of items) { const s = document.createElement('span');
    s.className = 'tex' + (display ? ' display' : ''); s.textContent = latex; box.appendChild(s); }
  const t0 = performance.now(); await window.mathsearchRender(box); await new Promise(requestAnimationFrame);
  const ms = performance.now() - t0; const failed = box.querySelectorAll('.tex-error').length; box.remove();
  return {ms, failed};
}"""
KATEX_RUN = """async (items) => {
  const box = document.createElement('div'); document.querySelector('main').appendChild(box);
  const spans = items.map(([latex, display]) => { const s = document.createElement('span'); box.appendChild(s); return [s, latex, display]; });
  const macros = {}; let failed = 0;
  const t0 = performance.now();
  for (const [s, latex, display] of spans) {
    try { katex.render(window.mathsearchTex.prepareTex(latex), s, {displayMode: display, throwOnError: true,
          trust: false, strict: 'ignore', maxSize: 20, maxExpand: 500, macros, globalGroup: true}); }
    catch (e) { s.textContent = latex; failed++; }
  }
  await new Promise(requestAnimationFrame); box.getBoundingClientRect();
  const ms = performance.now() - t0; box.remove();
  return {ms, failed};
}"""
ITEMS = "() => Array.from(document.querySelectorAll('[data-latex]')).map(e => [e.getAttribute('data-latex'), e.classList.contains('display')])"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--threads", type=int, nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    threads = args.threads
    if not threads:
        with Store.open(args.index) as store:
            threads = [t for t, _ in Counter(f.thread_id for f in store.iter_formulas()).most_common(3)]
    print(f"{'thread':>9} {'formulae':>8} {'page s':>7} {'MathJax ms':>10} {'KaTeX ms':>9} {'ratio':>6} "
          f"{'MJ failed':>9} {'KaTeX failed':>12}")
    # bypass_csp: the page's policy allows only its own scripts; KaTeX is injected for the measure
    with serve(create_app(args.index)) as base, chromium(viewport={"width": 1000, "height": 900}, bypass_csp=True) as ctx:
        page = ctx.new_page()
        for tid in threads:
            t0 = time.perf_counter()
            page.goto(f"{base}/thread/{tid}")
            page.wait_for_selector("html[data-math=ready]", timeout=120000)
            wall = time.perf_counter() - t0
            items = page.evaluate(ITEMS)
            page.add_style_tag(path=str(KATEX / "katex.min.css"))
            page.add_script_tag(path=str(KATEX / "katex.min.js"))
            mj = [page.evaluate(MATHJAX, items) for _ in range(args.repeat)]
            kx = [page.evaluate(KATEX_RUN, items) for _ in range(args.repeat)]
            mj_ms = statistics.median(r["ms"] for r in mj)
            kx_ms = statistics.median(r["ms"] for r in kx)
            print(f"{tid:>9} {len(items):>8} {wall:>7.2f} {mj_ms:>10.0f} {kx_ms:>9.0f} {mj_ms / kx_ms:>6.1f} "
                  f"{mj[0]['failed']:>9} {kx[0]['failed']:>12}")
        page.close()
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
