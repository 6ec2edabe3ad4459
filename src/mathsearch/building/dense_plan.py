"""Which dense vectors a build makes (``mathsearch index --dense``): the plan, chosen before any
embedding, said with its reason and estimated time, and recorded in the index's manifest.

* ``minilm``: MiniLM embeds every post: the best vectors measured, at ~12 posts per CPU second
  here; chosen where that fits the time budget (``--dense-budget``, minutes for the dense part):
  small collections, or a GPU.
* ``student``: the measured full-size recipe in the same command.  MiniLM embeds a seeded sample of
  :data:`TEACHER_POSTS` posts as teacher, a static student trains on them with
  :class:`~mathsearch.building.train.TrainConfig`'s defaults (the README's static row), then
  encodes every post (thousands a second); topics are encoded by MiniLM.  The whole dense part runs
  beside the text and formula steps (:func:`mathsearch.building.build.build_index`): the teacher on
  one thread while they build, where MiniLM does the most per CPU second, and those steps at a
  lower priority (:data:`~mathsearch.building.build.LEXICAL_NICE`), so that it keeps its core.
* ``encoder``: ``--encoder NAME`` (and ``--query-encoder``) as given.

The teacher starts early: while the store's second process still writes comments, links and
formulae, the first, its posts written, would wait with a core idle; there it embeds teacher posts
(:func:`teacher_head_start`, on one thread, chunk by chunk into the resume folder) until the other
is done, and the dense step later reads those chunks back.

The MiniLM rate is measured on the collection's first posts (:data:`PROBE_POSTS`) on the device the
build will use.  Every long part writes into the resume folder beside the target
(:mod:`.resume`): the teacher's and the student's vectors chunk by chunk, the trained student
itself, so a build stopped at any point resumes where it was.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..indexes.dense_chunks import ChunkedEmbedding, mark, say
from .train import TEACHER_MAX_TOKENS, TEACHER_PRECISION

PLANS = ("auto", "minilm", "student")
DEFAULT_BUDGET_MINUTES = 60.0
# The teacher of the measured recipe.  Fixed rather than grown to fill the budget: it shares the
# cores with the text and formula steps, so every post more lengthens the whole build (~1/12 CPU s
# a post), and more teacher posts helped only slowly (docs/log/dense-encoders.md).
TEACHER_POSTS = 20_000
PROBE_POSTS = 128  # timed after a warm-up batch of 16
# The teacher's chunks (MiniLM's window of 256, sorted by length within it): ~20 s each on one thread, so that the
# head start stops within that of the store's end.
TEACHER_CHUNK = 256
# MiniLM posts per second that no CPU measured here comes near (12-15 on two cores): a collection
# that would take longer than the budget even at this rate gets the student whatever the probe
# says, so the head start needs no probe of its own.
CPU_RATE_CEILING = 50.0
# The student's own costs, measured on this machine's two cores (README): training ~5.5 min at 2.4M
# posts, reading them included; encoding ~4,000 posts a second (2,000 per CPU second).
TRAIN_SECONDS_PER_POST = 330 / 2_400_000
STUDENT_POSTS_PER_SECOND = 4_000.0


@dataclass
class DensePlan:
    plan: str  # minilm | student | encoder
    reason: str
    posts: int
    encoder: str | None = None
    query_encoder: str | None = None
    teacher_posts: int = 0
    minilm_posts_per_second: float | None = None
    estimated_seconds: float | None = None
    budget_minutes: float = DEFAULT_BUDGET_MINUTES
    device: str = "cpu"
    rates: dict[str, float] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        eta = f", about {_minutes(self.estimated_seconds)}" if self.estimated_seconds is not None else ""
        what = {"minilm": f"MiniLM on every post ({self.posts:,})",
                "student": f"the static student: MiniLM teaches on {self.teacher_posts:,} of {self.posts:,} posts, "
                           "the student encodes every post, MiniLM the topics",
                "encoder": f"encoder {self.encoder} on every post ({self.posts:,})"
                           + (f", topics by {self.query_encoder}" if self.query_encoder else "")}[self.plan]
        return f"dense plan: {what}{eta} on {self.device}; {self.reason}"


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds >= 5400:
        return f"{seconds / 3600:.1f} h"
    return f"{max(seconds / 60, 0.1):.1f} min" if seconds < 600 else f"{seconds / 60:.0f} min"


def check_plan(plan: str | None, budget_minutes: float) -> str:
    plan = (plan or "auto").strip().lower()
    if plan not in PLANS:
        raise InputError(f"--dense {plan!r}: give one of {', '.join(PLANS)} (or --encoder NAME).")
    if not budget_minutes > 0:
        raise InputError(f"--dense-budget must be a number of minutes above 0, not {budget_minutes}.")
    return plan


def check_dense_options(plan: str | None, budget_minutes: float, device: str | None, encoder: str | None) -> str:
    """Every dense option checked before any work (the plan's name, the budget, the device, the
    student's extras); the plan's name, normalised."""
    from ..encoders import check_encoder
    from ..encoders.device import check_device

    plan = check_plan(plan, budget_minutes)
    check_device(device)
    if encoder is not None and plan != "auto":
        raise InputError(f"--dense {plan} and --encoder {encoder} name two plans: give one (nothing was built).")
    if encoder is None:
        try:
            check_encoder("minilm")  # the teacher, or the encoder, and the rate probe
            if plan != "minilm":  # the student may be chosen: its start is MiniLM distilled by model2vec
                check_encoder("static-minilm")
        except InputError as exc:
            raise InputError(f"--dense: {exc} (nothing was built)") from None
    return plan


def measure_minilm(texts: list[str], device: str) -> float:
    """MiniLM's posts per second on ``texts`` (a warm-up batch first)."""
    from ..encoders.builtin import MiniLMEncoder

    model = MiniLMEncoder(device=device)
    model.encode(texts[:16], stage="probe")
    probe = texts[16 : 16 + PROBE_POSTS] or texts[:PROBE_POSTS]
    started = time.perf_counter()
    model.encode(probe, stage="probe")
    return len(probe) / max(time.perf_counter() - started, 1e-9)


def first_passages(store, n: int) -> list[str]:
    from ..indexes.dense import iter_passages

    out = []
    for _, _, text, _ in iter_passages(store):
        out.append(text)
        if len(out) >= n:
            break
    return out


def choose_plan(store, asked: str = "auto", budget_minutes: float = DEFAULT_BUDGET_MINUTES,
                encoder: str | None = None, query_encoder: str | None = None, device: str = "cpu",
                rate: float | None = None, quiet: bool = False) -> DensePlan:
    """The plan for ``store``'s posts (see the module).  ``rate``: MiniLM's posts per second, measured
    on the first posts when not given.  Says the plan on stderr unless ``quiet``."""
    asked = check_plan(asked, budget_minutes)
    counts = store.counts()
    posts = int(counts.get("questions", 0)) + int(counts.get("answers", 0))
    budget = budget_minutes * 60
    if encoder is not None and encoder != "minilm":
        plan = DensePlan("encoder", "--encoder named it", posts, encoder, query_encoder, budget_minutes=budget_minutes,
                         device=device)
    else:
        if rate is None:
            rate = measure_minilm(first_passages(store, 16 + PROBE_POSTS), device)
        minilm_seconds = posts / rate
        fits = minilm_seconds <= budget
        if encoder == "minilm" or asked == "minilm" or (asked == "auto" and fits):
            why = ("--encoder minilm" if encoder == "minilm" else "--dense minilm" if asked == "minilm" else
                   f"it fits the {budget_minutes:g}-minute budget at {rate:,.1f} posts/s")
            plan = DensePlan("minilm", why, posts, "minilm", query_encoder, minilm_posts_per_second=round(rate, 2),
                             estimated_seconds=round(minilm_seconds, 1), budget_minutes=budget_minutes, device=device)
        else:
            own = posts * (TRAIN_SECONDS_PER_POST + 1 / STUDENT_POSTS_PER_SECOND)
            teacher = min(posts, TEACHER_POSTS)
            why = ("--dense student" if asked == "student" else
                   f"MiniLM on every post would take {_minutes(minilm_seconds)} at {rate:,.1f} posts/s, over the "
                   f"{budget_minutes:g}-minute budget")
            if teacher / rate + own > budget:
                why += f" (the teacher, {teacher:,} posts, does not fit it either at this rate)"
            plan = DensePlan("student", why, posts, None, "minilm", teacher_posts=teacher,
                             minilm_posts_per_second=round(rate, 2), estimated_seconds=round(teacher / rate + own, 1),
                             budget_minutes=budget_minutes, device=device)
    if not quiet:
        say(plan.line())
    return plan


def teacher_positions(n: int, budget: int, seed: int) -> np.ndarray:
    """Positions (into the posts as :func:`mathsearch.building.train.posts_of` lists them) the teacher
    embeds: every post when they are at most ``budget``, else a seeded, sorted choice of ``budget``."""
    if n <= budget:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, budget, replace=False))


def passages_at(store, positions: np.ndarray) -> dict[int, tuple[int, str]]:
    """``{position: (post id, passage)}`` of the posts at ``positions`` (into the posts as
    :func:`mathsearch.building.train.posts_of` lists them), read in one pass that keeps no other
    passage: at full size the teacher runs for half an hour beside the text and formula steps, and
    reading every passage first (2.4M of them) left this process ~2 GB of heap it kept after they
    were let go."""
    from ..indexes.dense import iter_passages

    wanted = set(positions.tolist())
    got: dict[int, tuple[int, str]] = {}
    if not wanted:
        return got
    for k, (_, post_id, text, _) in enumerate(iter_passages(store)):
        if k in wanted:
            got[k] = (post_id, text)
            if len(got) == len(wanted):
                break  # the posts after the last chosen one are not read
    return got


class PacedEncoder:
    """MiniLM on one CPU thread while the steps of ``building`` named by ``beside`` have not yet
    written their manifests, on every thread after (checked before each chunk).  MiniLM does the
    most per CPU second on one thread (12 posts against 7 on each of two), and the vectors are the
    same whatever the thread count (tested)."""

    def __init__(self, model, building: Path | None, beside: tuple[str, ...], one_thread: bool = False):
        import torch

        self.model, self.building, self.beside, self.one_thread = model, building, beside, one_thread
        self.dim, self.device = model.dim, model.device
        self.threads = torch.get_num_threads()
        self.one_thread_posts = 0  # posts embedded on one thread, beside the other steps

    def busy(self) -> bool:
        return self.one_thread or self.building is not None and any(not (self.building / step / "manifest.json").is_file()
                                                 for step in self.beside)

    def encode(self, texts, progress=None, stage="dense"):
        import torch

        if self.model.device == "cpu":
            one = self.busy()
            torch.set_num_threads(1 if one else self.threads)
            self.one_thread_posts += len(texts) if one else 0
        return self.model.encode(texts, progress, stage)

    def restore(self) -> None:
        import torch

        torch.set_num_threads(self.threads)


def embed_teacher(store, folder: Path, resume: Path, positions_budget: int, seed: int, device: str,
                  progress=None, building: Path | None = None, beside: tuple[str, ...] = (),
                  stop=None, tokens: int = TEACHER_MAX_TOKENS, precision: str = TEACHER_PRECISION) -> dict[str, Any]:
    """MiniLM's vectors of the teacher's posts (each post's first ``tokens`` word pieces), written as
    a dense index under ``folder`` (what ``train(teacher_index=...)`` reads), chunk by chunk into
    ``resume`` (chunks of another length are never mixed in: their name says it).  ``beside``: the steps of
    ``building`` that run at the same time (MiniLM keeps to one thread until they are done).
    ``stop()`` (the head start's): asked before each chunk, on one thread; once true, nothing more
    is embedded and no index is written (``teacher_stopped``), the chunks made stay in ``resume``.
    ``precision``: MiniLM's arithmetic (:data:`~mathsearch.building.train.TEACHER_PRECISION`)."""
    from ..indexes.dense import DENSE_DIR
    from .train import teacher_encoder

    n_questions = store.post_count((1,))
    chosen = teacher_positions(store.post_count(), positions_budget, seed)
    chosen_posts = passages_at(store, chosen)
    teacher = teacher_encoder(tokens, device, precision)
    model = PacedEncoder(teacher, building, beside, one_thread=stop is not None)
    # 256 word pieces in float32 keep the name that chunks had before the length and the precision
    # were settings; chunks of another precision are never mixed in either
    stem = ("teacher-minilm" + (f"{tokens}" if tokens != TEACHER_MAX_TOKENS else "")
            + ("-bf16" if teacher.precision == "bfloat16" else "") + "-v1")
    counts = {"resumed": 0, "encoded": 0}
    made = []
    try:
        for part, key, mine in (("questions", "question_ids", chosen[chosen < n_questions]),
                                ("answers", "answer_ids", chosen[chosen >= n_questions])):
            chunks = ChunkedEmbedding(resume, stem, part, TEACHER_CHUNK)
            got, vectors = chunks.embed(model, (chosen_posts[k] for k in mine.tolist()), len(mine), f"teacher {part}",
                                        progress, stop)
            counts["resumed"] += chunks.resumed
            counts["encoded"] += chunks.encoded
            if chunks.stopped:
                return {"teacher_stopped": True, "teacher_resumed_posts": counts["resumed"],
                        "teacher_encoded_posts": counts["encoded"]}
            made.append((part, key, got, vectors))
    finally:
        model.restore()
    root = folder / DENSE_DIR
    root.mkdir(parents=True, exist_ok=True)
    for part, key, got, vectors in made:
        np.save(root / f"{part}.npy", vectors)
        np.save(root / f"{key}.npy", np.asarray(got, dtype=np.int64))
    encoder: dict[str, Any] = {"name": "minilm", "kind": "minilm", "version": 1}
    config = {k: v for k, v in teacher.info()["config"].items() if k in ("max_tokens", "precision")}
    if config:  # max_tokens: what train() checks against the recipe's teacher_tokens
        encoder["config"] = config
    (root / "manifest.json").write_text(json.dumps({"encoder": encoder, "teacher_posts": len(chosen)}))
    return {"teacher_posts": len(chosen), "teacher_resumed_posts": counts["resumed"],
            "teacher_encoded_posts": counts["encoded"], "teacher_device": model.device,
            "teacher_precision": teacher.precision,
            "teacher_one_thread_posts": model.one_thread_posts, "dense_beside": list(beside)}


def teacher_head_start(posts_dir: Path, waiting, *, asked: str, budget_minutes: float, device: str,
                       resume: Path) -> dict[str, Any]:
    """:func:`mathsearch.store.build.build_store`'s ``meanwhile``: where the plan will surely be the
    student's (asked for, or too many posts for MiniLM at :data:`CPU_RATE_CEILING`), the teacher's
    first chunks embedded into ``resume`` on one thread while ``waiting()`` (the store's other
    process still writing).  Optional work: a failure is said in one line and
    left to the dense step, which makes whatever is missing.  What it did, for the manifest."""
    from ..store import Store
    from .train import TrainConfig

    started = time.perf_counter()
    if device != "cpu":  # a GPU embeds every post itself, in minutes
        return {"teacher_head_start_posts": 0, "teacher_head_start_seconds": 0.0}
    try:
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the other core is the store's
        try:
            with Store.open_posts(posts_dir) as store:
                posts = store.post_count()
                student = asked == "student" or posts / CPU_RATE_CEILING > budget_minutes * 60
                if not student or not waiting():
                    return {"teacher_head_start_posts": 0, "teacher_head_start_seconds": 0.0}
                mark(resume)
                config = TrainConfig(teacher_budget=max(1, min(posts, TEACHER_POSTS)))
                done = embed_teacher(store, resume / "teacher", resume, config.teacher_budget, config.seed, device,
                                     stop=lambda: not waiting(), tokens=config.teacher_tokens)
        finally:
            torch.set_num_threads(threads)
    except Exception as exc:  # noqa: BLE001 - a head start only: the dense step does the work anyway
        say(f"dense plan: the teacher's head start stopped ({type(exc).__name__}: {exc}); the dense step makes its vectors")
        return {"teacher_head_start_posts": 0, "teacher_head_start_error": f"{type(exc).__name__}: {exc}"}
    posts = done["teacher_encoded_posts"]
    seconds = round(time.perf_counter() - started, 1)
    say(f"dense plan: the teacher embedded {posts:,} posts while the store was written ({seconds:.0f} s)")
    return {"teacher_head_start_posts": posts, "teacher_head_start_seconds": seconds}


def _student_ready(folder: Path, config, posts: int) -> bool:
    """A student trained by an earlier, interrupted run of the same plan (complete: encoder.json is
    written last) on the same posts with the same config."""
    try:
        info = json.loads((folder / "encoder.json").read_text())
    except (OSError, ValueError):
        return False
    wanted = asdict(config)
    return (info.get("trained_on", {}).get("posts") == posts
            and all(info.get("config", {}).get(k) == v for k, v in wanted.items()))


def run_plan(building: Path, progress=None, plan: DensePlan | None = None, resume: str | Path | None = None,
             beside: tuple[str, ...] = ()) -> dict:
    """The dense step of a build: ``plan``'s vectors into ``building/dense`` (counts for the manifest).
    ``beside``: the steps running at the same time (see :func:`embed_teacher`)."""
    from ..indexes.dense import build_dense_index
    from ..indexes.dense_chunks import mark
    from ..store import Store

    assert plan is not None
    resume = Path(resume) if resume is not None else None
    if resume is not None:
        # marked before anything is made in it: a build killed before its first chunk (the teacher
        # makes its folders first) must leave a folder the next build knows as its own, not one
        # that stops it as a user's
        mark(resume)
    out: dict[str, Any] = {}
    with Store.open(building) as store:
        if plan.plan != "student":
            out.update(build_dense_index(store, building, progress, encoder=plan.encoder, query_encoder=plan.query_encoder,
                                         resume=resume, device=plan.device))
        else:
            out.update(_student(store, building, progress, plan, resume or building / ".resume", beside))
    out["dense_plan"] = plan.as_json()
    return out


def _student(store, building: Path, progress, plan: DensePlan, resume: Path, beside: tuple[str, ...] = ()) -> dict:
    from ..indexes.dense import build_dense_index
    from .train import TrainConfig, train

    config = TrainConfig(teacher_budget=max(1, plan.teacher_posts))
    started = time.perf_counter()
    teacher = embed_teacher(store, resume / "teacher", resume, config.teacher_budget, config.seed, plan.device, progress,
                            building, beside, tokens=config.teacher_tokens)
    teacher_seconds = time.perf_counter() - started
    student = resume / "student"
    started = time.perf_counter()
    reused = _student_ready(student, config, plan.posts)
    if reused:
        say(f"dense plan: the student trained by an interrupted build is reused ({student})")
    else:
        train(store, student, "student", config, teacher_index=resume / "teacher",
              source="mathsearch index --dense student", progress=progress)
    train_seconds = time.perf_counter() - started
    started = time.perf_counter()
    out = build_dense_index(store, building, progress, encoder=str(student), query_encoder="minilm", resume=resume)
    rate = plan.posts / max(time.perf_counter() - started, 1e-9)
    out.update(teacher)
    out.update({"teacher_seconds": round(teacher_seconds, 1), "train_seconds": round(train_seconds, 1),
                "student_reused": reused, "student_posts_per_second": round(rate, 1)})
    plan.rates["student_posts_per_second"] = round(rate, 1)
    if teacher["teacher_encoded_posts"]:
        plan.rates["teacher_posts_per_second"] = round(teacher["teacher_encoded_posts"] / max(teacher_seconds, 1e-9), 2)
    return out
