"""What the student plan's teacher costs: MiniLM's posts per CPU second on the posts the teacher of
an index's build embeds, at each word-piece length, in one run.

    python bench/bench_teacher.py --index IDX [--posts 512] [--tokens 256,128] [--rounds 2]
    python bench/bench_teacher.py --index IDX --tokens 256 --batches 64/64,4/256   # how MiniLM batches
    python bench/bench_teacher.py --index IDX --tokens 256 --precisions float32,bfloat16   # its arithmetic

IDX: any index with a store (``--store-only`` will do).  The posts are the first ``--posts`` of
those :func:`~mathsearch.building.dense_plan.teacher_positions` chooses with the recipe's seed and
budget (``TrainConfig``), the passages the teacher reads; each length encodes the same posts, on one
thread as the teacher does beside the lexical steps, lengths alternating for ``--rounds`` rounds so
that a machine that speeds up or slows down during the run does not favour one.  Printed: per length
the median posts per CPU second (this process's CPU time), the ratio to the first length, and the
projected CPU seconds for the plan's whole teacher.  ``--batches B/W,...``: MiniLM's batch and
window (``MiniLMEncoder``: passages sorted by length within each window of W, batches of B; 64/64 is
batches of 64 as read, the way before 2026-11-30), each row a length and a batching.  ``--precisions``:
MiniLM's arithmetic (``float32``, ``bfloat16``, ``auto``: the teacher's own, bfloat16 where the CPU
multiplies it natively); the rows then give each one's smallest cosine to the first's vectors, which
must be float32 for that column.  Quality is another script's:
``bench/tune_student.py --candidates packaged,bench/candidates/student/s4-teacher-128.toml``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from mathsearch.building.dense_plan import TEACHER_POSTS, teacher_positions
from mathsearch.building.train import (
    TEACHER_MAX_TOKENS,
    TEACHER_PRECISION,
    TrainConfig,
    posts_of,
    teacher_encoder,
)
from mathsearch.encoders.builtin import PRECISIONS, resolve_precision
from mathsearch.errors import InputError
from mathsearch.store import Store


def lengths(text: str) -> list[int]:
    try:
        out = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise InputError(f"--tokens {text!r}: give word-piece counts separated by commas") from None
    if not out or any(not 1 <= n <= TEACHER_MAX_TOKENS for n in out):
        raise InputError(f"--tokens {text!r}: each count 1 to {TEACHER_MAX_TOKENS} (MiniLM's word pieces)")
    return out


def batchings(text: str) -> list[tuple[int, int] | None]:
    """``[(batch, window), ...]`` of ``--batches`` (``[None]``: the encoder's own)."""
    if not text.strip():
        return [None]
    try:
        out = [tuple(int(x) for x in part.split("/")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"--batches {text!r}: give batch/window pairs separated by commas, e.g. 64/64,4/256") from None
    if not out or any(len(p) != 2 or not 1 <= p[0] <= p[1] for p in out):
        raise InputError(f"--batches {text!r}: each pair batch/window with 1 <= batch <= window")
    return [(p[0], p[1]) for p in out]


def precisions(text: str) -> list[str]:
    out = [p.strip() for p in text.split(",") if p.strip()]
    if not out or any(p not in PRECISIONS for p in out):
        raise InputError(f"--precisions {text!r}: give some of {', '.join(PRECISIONS)} separated by commas")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--posts", type=int, default=512, help="of the teacher's posts, this many timed")
    ap.add_argument("--tokens", default="256,128", help="word pieces a post, the first the reference")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batches", default="", help="MiniLM's batch/window pairs to compare, e.g. 64/64,4/256")
    ap.add_argument("--precisions", default=TEACHER_PRECISION, help="MiniLM's arithmetic to compare, e.g. float32,bfloat16")
    args = ap.parse_args(argv)
    tokens = lengths(args.tokens)
    plans = batchings(args.batches)
    arithmetic = precisions(args.precisions)
    if args.posts < 16 or args.rounds < 1:
        raise InputError("--posts must be at least 16 and --rounds at least 1")
    import torch

    torch.set_num_threads(1)  # the teacher's thread beside the lexical steps
    recipe = TrainConfig()
    with Store.open(args.index) as store:
        ids, texts, _ = posts_of(store)
    chosen = teacher_positions(len(ids), min(len(ids), TEACHER_POSTS), recipe.seed)
    timed = [texts[k] for k in chosen[: args.posts].tolist()]
    del ids, texts
    encoders = {}
    for n in tokens:
        for plan in plans:
            for precision in arithmetic:
                model = teacher_encoder(n, precision=precision)
                if plan is not None:
                    model.batch, model.window = plan
                encoders[(n, plan, precision)] = model
    for model in encoders.values():
        model.encode(timed[:16], stage="warm-up")
    keys = list(encoders)
    rates: dict = {k: [] for k in keys}
    vectors: dict = {}
    for r in range(args.rounds):
        for key in keys if r % 2 == 0 else keys[::-1]:
            started = time.process_time()
            vectors[key] = encoders[key].encode(timed, stage="teacher")
            rates[key].append(len(timed) / (time.process_time() - started))
            print(f"  round {r + 1}, {label(key)}: {rates[key][-1]:.2f} posts per CPU s", file=sys.stderr, flush=True)
    teacher = len(chosen)
    print(f"{len(timed):,} of the teacher's {teacher:,} posts of {args.index}, one thread, {args.rounds} rounds\n")
    print(f"| teacher | posts per CPU s (median) | against {label(keys[0])} | the whole teacher, CPU s | smallest cosine to the first |")
    print("|---|---|---|---|---|")
    first = statistics.median(rates[keys[0]])
    for key in keys:
        rate = statistics.median(rates[key])
        cosine = float((vectors[key] * vectors[keys[0]]).sum(axis=1).min())  # both unit length
        print(f"| {label(key)} | {rate:.2f} | {rate / first:.2f}x | {teacher / rate:,.0f} | {cosine:.6f} |")
    return 0


def label(key) -> str:
    n, plan, precision = key
    return (f"{n} word pieces" + (f", batches of {plan[0]} in windows of {plan[1]}" if plan else "")
            + f", {precision_label(precision)}")


def precision_label(precision: str) -> str:
    resolved = resolve_precision(precision)
    return resolved if resolved == precision else f"{precision} ({resolved})"


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
