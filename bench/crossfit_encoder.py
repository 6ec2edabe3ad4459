"""How a static student does on posts whose teacher vectors it never saw: cross-fitting on the sample.

    python bench/crossfit_encoder.py --index MINILM_INDEX --work DIR [--folds 2] [--contrastive 0.3]
                                     [--anchor mixed|teacher|student] [--epochs 15] [--seed 13] [--systems bm25-thread,ours]
                                     [--links 0.3] [--hard-negatives 1] [--bigrams 131072]

At full size the teacher (MiniLM, 8.6 posts per CPU second) embeds a budget of posts (tens of
thousands of 2.4M); the student then encodes millions of posts it was never fitted on.  On the
sample, training on every post's teacher vector and measuring on the same posts flatters it.  Here
the threads are split into ``--folds`` folds (by thread id); student *f* is trained with the teacher
vectors of every fold but *f* (question -> answer pairs of all threads: they need no teacher), and
encodes the posts of fold *f*.  The index built in ``DIR/index`` holds those vectors (its dense
manifest says ``crossfit``), topics are encoded by MiniLM, and the Task 1 table of
``bench/task1_table.py`` is printed for it.  ``MINILM_INDEX`` is an index of the sample built with
``--dense --encoder minilm`` (the teacher's vectors are read from it).  Only 2020 and 2021 topics.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from mathsearch.building import build_index  # noqa: E402
from mathsearch.building.train import ANCHORS, TrainConfig, checked, train  # noqa: E402
from mathsearch.encoders.static import StaticEncoder  # noqa: E402
from mathsearch.errors import InputError  # noqa: E402
from mathsearch.indexes.dense import post_passages  # noqa: E402
from mathsearch.indexes.directory import read_manifest  # noqa: E402
from mathsearch.store import Store  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import task1_table  # noqa: E402


def fold_of(thread_id: int, folds: int) -> int:
    return (thread_id * 2654435761 % 2**32) % folds  # Knuth's multiplicative hash: ids are not random


def crossfit(index: Path, work: Path, config: TrainConfig, folds: int, passages=None, teacher: Path | None = None) -> Path:
    """``work/index``: the sample's index whose post vectors are each made by the student of the
    other folds (trained with ``config``); each student and the index are kept and reused when
    there.  ``passages``: :func:`post_passages` of ``index``'s store, when already read;
    ``teacher``: the folder whose MiniLM vectors teach (default ``index``'s own)."""
    if passages is None:
        with Store.open(index) as store:
            passages = post_passages(store)
    q_ids, q_texts, a_ids, a_texts, parent = passages
    work.mkdir(parents=True, exist_ok=True)
    thread = {q: q for q in q_ids} | {a: parent.get(a, a) for a in a_ids}
    students = []
    for f in range(folds):
        out = work / f"student-{f}"
        if not (out / "encoder.json").is_file():
            seen = {p for p, t in thread.items() if fold_of(t, folds) != f}
            with Store.open(index) as store:
                info = train(store, out, f"crossfit-{f}", config, teacher_index=teacher or index, teacher_posts=seen,
                             source=str(index), text_index=index)
            print(f"student {f}: {info['trained_on']['teacher_posts']} teacher posts, "
                  f"{info['training']['seconds']} s", file=sys.stderr)
        students.append(StaticEncoder.load(out))
    built = work / "index"
    dense = built / "dense"
    manifest_file = dense / "manifest.json"
    if manifest_file.is_file() and "crossfit" in json.loads(manifest_file.read_text()):
        return built  # its vectors were all written before the manifest said so
    if not manifest_file.is_file():
        collection = read_manifest(index)["collection"]
        build_index(collection, built, optional=("dense",), encoder=str(work / "student-0"), query_encoder="minilm")
    for name, ids_file, texts in (("answers", "answer_ids", a_texts), ("questions", "question_ids", q_texts)):
        ids = np.load(dense / f"{ids_file}.npy")
        vectors = np.load(dense / f"{name}.npy")
        row = {int(p): i for i, p in enumerate(ids)}
        by_id = dict(zip(a_ids if name == "answers" else q_ids, texts, strict=True))
        for f, student in enumerate(students):
            mine = [p for p in row if fold_of(thread[p], folds) == f]
            vectors[[row[p] for p in mine]] = student.encode([by_id[p] for p in mine]).astype(vectors.dtype)
        np.save(dense / f"{name}.npy", vectors)
    manifest = json.loads(manifest_file.read_text())
    manifest["crossfit"] = {"folds": folds, "students": [str(work / f"student-{f}") for f in range(folds)]}
    manifest_file.write_text(json.dumps(manifest, indent=1) + "\n")
    return built


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True, help="sample index with MiniLM vectors (the teacher)")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--folds", type=int, default=2)
    ap.add_argument("--contrastive", type=float, default=0.3)
    ap.add_argument("--anchor", default="mixed", choices=ANCHORS)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--links", type=float, default=0.0, help="train-encoder --links: duplicate / related questions")
    ap.add_argument("--hard-negatives", type=int, default=0, help="train-encoder --hard-negatives: BM25 negatives")
    ap.add_argument("--bigrams", type=int, default=0, help="train-encoder --bigrams: hashed word-piece pair buckets")
    ap.add_argument("--systems", default="bm25-thread,ours")
    args = ap.parse_args(argv)
    config = TrainConfig(seed=args.seed, epochs=args.epochs, contrastive=args.contrastive, anchor=args.anchor,
                         links=args.links, hard_negatives=args.hard_negatives, bigrams=args.bigrams)
    try:  # a wrong --index or option is said before --work is made, not as a traceback
        checked(config, args.index)
        with Store.open(args.index) as store:
            q_ids, q_texts, a_ids, a_texts, parent = post_passages(store)
    except InputError as exc:
        print(f"crossfit_encoder: {exc}", file=sys.stderr)
        return 2
    crossfit(args.index, args.work, config, args.folds, (q_ids, q_texts, a_ids, a_texts, parent))
    return task1_table.main(["--index", str(args.work / "index"), "--systems", args.systems])


if __name__ == "__main__":
    sys.exit(main())
