"""Make a formula index R times larger by tiling an existing one, to time queries at full size.

    python bench/tile_formula_index.py SOURCE_INDEX_DIR OUT_INDEX_DIR R

Copy r of visual formula d becomes d + r * N: every posting block holds R shifted copies (still
sorted by formula), lengths, sizes and instances are repeated, and the idf of every tuple is
unchanged (N and each df both grow R times).  The result has no store or text index, so query it
with ``bench/bench_formula_search.py --index OUT --no-build`` (the ``formula`` system's text boost
is skipped there) or through ``FormulaIndex`` directly.  Queries see R-fold ties; posting counts and
candidate sets grow as in a collection R times larger, which is what the latency depends on.  Formula
ids, posts and threads are shifted per copy too, so each copy's instances are distinct Task 2 hits.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np


def tile(src: Path, dst: Path, copies: int) -> dict:
    src, dst = src / "formula", dst / "formula"
    dst.mkdir(parents=True, exist_ok=True)

    def load(name: str) -> np.ndarray:
        return np.load(src / f"{name}.npy", mmap_mode="r")

    n = len(load("n_nodes"))
    start, end = np.asarray(load("post_start")), np.asarray(load("post_end"))
    df = end - start
    total = int(df.sum())
    by_start = np.argsort(start)  # blocks keep their order on disk
    new_start = np.empty_like(start)
    new_start[by_start] = np.concatenate([[0], np.cumsum(df[by_start] * copies)[:-1]])
    token = np.repeat(by_start, df[by_start])  # token of each posting, in disk order
    offset = np.arange(total, dtype=np.int64) - start[token]
    base, size = new_start[token], df[token]
    del token
    docs, tfs = np.asarray(load("post_doc")), np.asarray(load("post_tf"))
    out_doc = np.lib.format.open_memmap(dst / "post_doc.npy", mode="w+", dtype=np.int32, shape=(total * copies,))
    out_tf = np.lib.format.open_memmap(dst / "post_tf.npy", mode="w+", dtype=np.uint16, shape=(total * copies,))
    for r in range(copies):
        at = base + r * size + offset
        out_doc[at] = docs + r * n
        out_tf[at] = tfs
    out_doc.flush()
    out_tf.flush()
    del out_doc, out_tf
    np.save(dst / "post_start.npy", new_start)
    np.save(dst / "post_end.npy", new_start + df * copies)
    for name in ("tok_hash", "tok_idf"):
        shutil.copy(src / f"{name}.npy", dst / f"{name}.npy")
    for name in ("len_plain", "len_idf"):
        np.save(dst / f"{name}.npy", np.tile(np.asarray(load(name)), (1, copies)))
    for name in ("n_nodes", "vkey", "retrievable", "inst_kind", "inst_answer"):
        np.save(dst / f"{name}.npy", np.tile(np.asarray(load(name)), copies))
    # Formula ids, posts and threads shifted per copy as the formulae are: a copy's instances are
    # other formulae in other posts (the same ids would merge R formulae into one Task 2 hit).
    for names in (("inst_formula", "first_hit"), ("inst_post",), ("inst_thread",)):  # first_hit: formula ids
        step = int(np.asarray(load(names[0])).max(initial=-1)) + 1
        for name in names:
            ids = np.asarray(load(name))
            np.save(dst / f"{name}.npy", np.concatenate([np.where(ids >= 0, ids + r * step, ids) for r in range(copies)]))
    ptr = np.asarray(load("inst_ptr"))
    m = int(ptr[-1])
    np.save(dst / "inst_ptr.npy", np.concatenate([ptr[:-1] + r * m for r in range(copies)] + [[m * copies]]))
    meta = json.loads((src / "manifest.json").read_text())
    meta.update(formula_visual=n * copies, formula_postings=total * copies, formula_instances=m * copies,
                tiled_from=str(src.parent), tiled_copies=copies)
    (dst / "manifest.json").write_text(json.dumps(meta, indent=1))
    return meta


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 3:
        print(__doc__)
        return 2
    src, dst = Path(args[0]), Path(args[1])
    if not (src / "formula" / "manifest.json").is_file():
        print(f"{src} holds no formula index (formula/manifest.json): give an index folder", file=sys.stderr)
        return 2
    if not args[2].isdigit() or int(args[2]) < 1:
        print(f"R must be a whole number >= 1, not {args[2]!r}", file=sys.stderr)
        return 2
    if dst.exists() and not dst.is_dir():
        print(f"{dst} is a file: give a new OUT_INDEX_DIR", file=sys.stderr)
        return 2
    if (dst / "formula").exists():  # never write over a formula folder this run did not make
        print(f"{dst / 'formula'} exists: give a new OUT_INDEX_DIR", file=sys.stderr)
        return 2
    meta = tile(src, dst, int(args[2]))
    print("| visual formulae | postings | instances |\n|---|---|---|")
    print(f"| {meta['formula_visual']:,} | {meta['formula_postings']:,} | {meta['formula_instances']:,} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
