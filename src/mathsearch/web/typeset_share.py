"""The share of a collection's formulae that the page's renderer typesets without error.

Every formula instance of an index's store, grouped by thread in the order the thread page shows
them (title, question, its comments, then each answer by score with its comments), is handed to
``node bench/typeset_share.js``, which typesets each as the page does (``static/texcompat.js``, then
MathJax configured by ``static/mathjax-config.js``; or KaTeX, the renderer the page had before, for
comparison) and counts the failures.  A page's ``\\newcommand`` holds for its later formulae and no
further, as on Math Stack Exchange.  Used by ``bench/bench_typeset.py`` and its test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..store.store import Store

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "bench" / "typeset_share.js"
RENDERERS = ("mathjax", "katex")


def page_formulae(store: Store, every: int = 1) -> Iterator[tuple[int, list[tuple[int, str]]]]:
    """``(thread id, [(formula id, LaTeX), ...])`` for each thread (those whose id is a multiple
    of ``every``), its formulae in the order its page shows them."""
    by_thread: dict[int, list] = defaultdict(list)
    for f in store.iter_formulas():
        if f.thread_id % every == 0:
            by_thread[f.thread_id].append(f)
    for tid in sorted(by_thread):
        formulas = by_thread[tid]
        posts = store.posts({f.post_id for f in formulas})

        def place(f, posts=posts, tid=tid) -> tuple:
            p = posts.get(f.post_id)
            answer = p is not None and p.post_id != tid
            score = (p.score or 0) if p is not None else 0
            return (f.kind != "title", answer, -score if answer else 0, f.post_id,
                    f.comment_id is not None, f.comment_id or 0, f.formula_id)

        formulas.sort(key=place)
        yield tid, [(f.formula_id, f.latex) for f in formulas]


def typeset_share(index_dir: str | Path, renderer: str = "mathjax", every: int = 1, node: str = "node") -> dict:
    """Run the node typesetter over the index's formulae; its counts, with ``share`` (typeset
    without error, 0..1: an undefined macro shown by name in red, as the site shows it, counts as
    typeset) and ``share_defined`` (typeset, every macro defined)."""
    if renderer not in RENDERERS:
        raise InputError(f"renderer must be one of {', '.join(RENDERERS)}, not {renderer!r}.")
    if shutil.which(node) is None:
        raise InputError(f"{node!r} is not on PATH: the typesetting share is measured with node (bash scripts/setup_web.sh).")
    if not (REPO / "node_modules" / renderer).is_dir():
        raise InputError(f"node_modules/{renderer} is missing: run `bash scripts/setup_web.sh`.")
    with Store.open(index_dir) as store, tempfile.TemporaryDirectory(prefix="ms-typeset-") as tmp:
        pages = Path(tmp) / "threads.jsonl"
        with pages.open("w", encoding="utf-8") as out:
            for tid, formulae in page_formulae(store, every):
                out.write(json.dumps({"thread": tid, "formulae": formulae}) + "\n")
        done = subprocess.run([node, str(SCRIPT), str(pages), renderer], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{SCRIPT.name} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    result = json.loads(done.stdout)
    n = result["formulae"] or 1
    result["share"] = 1 - result["errors"] / n
    result["share_defined"] = 1 - (result["errors"] + result["undefinedShown"]) / n
    return result
