"""What the student plan's teacher costs: MiniLM's posts per CPU second on the posts the teacher of
an index's build embeds, at each word-piece length, in one run.

    python bench/bench_teacher.py --index IDX [--posts 512] [--tokens 256,128] [--rounds 2]

IDX: any index with a store (``--store-only`` will do).  The posts are the first ``--posts`` of
those :func:`~mathsearch.building.dense_plan.teacher_positions` chooses with the recipe's seed and
budget (``TrainConfig``), the passages the teacher reads; each length encodes the same posts, on one
thread as the teacher does beside the lexical steps, lengths alternating for ``--rounds`` rounds so
that a machine that speeds up or slows down during the run does not favour one.  Printed: per length
the median posts per CPU second (this process's CPU time), the ratio to the first length, and the
projected CPU seconds for the plan's whole teacher.  Quality is another script's:
``bench/tune_student.py --candidates packaged,bench/candidates/student/s4-teacher-128.toml``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from mathsearch.building.dense_plan import TEACHER_POSTS, teacher_positions
from mathsearch.building.train import TEACHER_MAX_TOKENS, TrainConfig, posts_of, teacher_encoder
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--posts", type=int, default=512, help="of the teacher's posts, this many timed")
    ap.add_argument("--tokens", default="256,128", help="word pieces a post, the first the reference")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    tokens = lengths(args.tokens)
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
    encoders = {n: teacher_encoder(n) for n in tokens}
    for model in encoders.values():
        model.encode(timed[:16], stage="warm-up")
    rates: dict[int, list[float]] = {n: [] for n in tokens}
    for r in range(args.rounds):
        for n in tokens if r % 2 == 0 else tokens[::-1]:
            started = time.process_time()
            encoders[n].encode(timed, stage="teacher")
            rates[n].append(len(timed) / (time.process_time() - started))
            print(f"  round {r + 1}, {n} word pieces: {rates[n][-1]:.2f} posts per CPU s", file=sys.stderr, flush=True)
    teacher = len(chosen)
    print(f"{len(timed):,} of the teacher's {teacher:,} posts of {args.index}, one thread, {args.rounds} rounds\n")
    print(f"| word pieces a post | posts per CPU s (median) | against {tokens[0]} | the whole teacher, CPU s |")
    print("|---|---|---|---|")
    first = statistics.median(rates[tokens[0]])
    for n in tokens:
        rate = statistics.median(rates[n])
        print(f"| {n} | {rate:.2f} | {rate / first:.2f}x | {teacher / rate:,.0f} |")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
