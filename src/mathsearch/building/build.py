"""Build everything under an INDEX_DIR from a collection folder, atomically (``mathsearch index``).

First the collection store, then each search index step (the kinds of
:data:`mathsearch.indexes.kinds.INDEX_KINDS` built always, and those asked for), all into the same
temporary folder, which replaces INDEX_DIR only when every step has finished.  The search index
steps only read the store, so they run side by side: the first in this process, the others in
forked child processes (at full size the text and formula indexes each take many CPU minutes).
A sharded index, or steps run by an engine (Ray), is :func:`build_partitioned`: the build as
:class:`~.steps.StepTask` lists that the engine it is given runs.  Both share what makes a build
safe (:func:`_checked`, :func:`_atomic_build`): every check before the work, stale builds cleaned,
the store read once, the manifest written last, the target replaced only when complete.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..indexes.directory import check_dense_kept, check_index_target, write_manifest
from ..indexes.kinds import ALWAYS_BUILT, INDEX_KINDS, check_mirmu
from ..indexes.shards import HASH, shard_name
from ..parallel import side_by_side
from ..readers.collection import CollectionFiles, detect_collection
from ..store import IngestCounts, Store, atomic_directory, build_store
from ..store.atomic import clean_stale_builds
from ..store.build import Progress
from .engine import CPU_KEY, Engine, LocalEngine
from .shard_build import write_global_formula_stats, write_global_text_stats, write_sharded_dense_manifest
from .steps import IndexStep, StepTask, check_optional_steps, kind_step

# The steps of every build, in the order they start (the first runs in this process).
INDEX_STEPS: list[tuple[str, IndexStep]] = [(name, kind_step(name)) for name in ALWAYS_BUILT]
# Niceness of the text and formula steps beside the student plan's dense part (see build_index).
LEXICAL_NICE = 10
# How the text and formula steps' processes start beside the student plan's dense part (see build_index).
LEXICAL_START = "spawn"


def _timed(step: IndexStep, building: Path, progress: Progress | None) -> tuple[dict, float]:
    started = time.perf_counter()
    counts = step(building, progress)
    return counts, round(time.perf_counter() - started, 2)


def _run_steps(steps: list[tuple[str, IndexStep]], building: Path, progress: Progress | None,
               nice: int = 0, context: str = "fork") -> dict[str, Any]:
    """Run independent ``steps`` side by side (the first in this process, the others ``nice``d, their
    processes started by ``context``); their counts merged, with ``NAME_seconds`` each."""
    results = side_by_side([(name, partial(_timed, step, building)) for name, step in steps], progress,
                           context=context, nice=nice)
    out: dict[str, Any] = {}
    for name, _ in steps:
        counts, seconds = results[name]
        out.update(counts)
        out[f"{name}_seconds"] = seconds
    return out


@dataclass
class IndexCounts(IngestCounts):
    """What the store read, plus the counts and build seconds of each search index step.

    ``seconds`` times the store alone; ``total_seconds`` the whole build.  ``cleaned`` lists the
    building folders of dead builds removed before this one started, with their sizes in bytes.
    """

    indexes: dict[str, Any] = field(default_factory=dict)
    total_seconds: float = 0.0
    cleaned: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class _Build:
    """A build under way: its temporary folder, its counts so far, what its manifest adds."""

    building: Path
    counts: IndexCounts
    files: CollectionFiles
    extra: dict[str, Any] | None = None


def _checked(collection_dir: str | Path, index_dir: str | Path, optional: tuple[str, ...], encoder: str | None,
             query_encoder: str | None) -> CollectionFiles:
    """The collection's files, once every check that can fail has passed: nothing the user made is
    ever replaced, an hour's build never ends in an unknown step or a missing extra."""
    files = detect_collection(collection_dir)
    check_index_target(index_dir, files.root)
    check_optional_steps(optional, encoder, query_encoder)
    return files


@contextmanager
def _atomic_build(files: CollectionFiles, index_dir: str | Path, progress: Progress | None, started: float,
                  store_in: str = "", meanwhile: Callable[[Path, Callable[[], bool]], Any] | None = None,
                  ) -> Iterator[_Build]:
    """Clean dead builds, read the store into a temporary folder (its ``store_in`` sub-folder), hand
    the build to the caller's steps, then write the manifest and put the folder in place of
    ``index_dir``; an error or an interruption leaves ``index_dir`` as it was.  ``meanwhile``: the
    store's (:func:`~mathsearch.store.build.build_store`), its result in the counts' indexes."""
    cleaned = [(str(path), size) for path, size in clean_stale_builds(index_dir)]
    with atomic_directory(index_dir) as building:
        full = building / store_in if store_in else building
        full.mkdir(exist_ok=True)
        done: list[Any] = []
        store_counts = build_store(files, full, progress,
                                   meanwhile=(lambda d, w: done.append(meanwhile(d, w))) if meanwhile else None)
        if store_counts.questions + store_counts.answers == 0:
            raise InputError(
                f"{files.posts} holds no readable posts: nothing to index ({index_dir} was left as it was)."
            )
        counts = IndexCounts(**{f.name: getattr(store_counts, f.name) for f in fields(IngestCounts)})
        counts.cleaned = cleaned
        for found in done:
            counts.indexes.update(found)
        build = _Build(building, counts, files)
        yield build
        counts.total_seconds = round(time.perf_counter() - started, 2)
        check_index_target(index_dir, files.root)  # again: the folder may have changed during the build
        read = {k: v for k, v in counts.as_json().items() if k not in ("indexes", "cleaned")}
        write_manifest(building, files.root, files.kind, {**read, **counts.indexes}, extra=build.extra)


def _done(index_dir: str | Path, optional: tuple[str, ...]) -> None:
    if "dense" in optional:
        from .resume import remove_resume

        remove_resume(index_dir)  # the index is complete: its resumable chunks are not needed any more


def build_index(
    collection_dir: str | Path, index_dir: str | Path, progress: Progress | None = None, *, store_only: bool = False,
    optional: tuple[str, ...] = (), encoder: str | None = None, query_encoder: str | None = None,
    shards: int = 1, engine: Engine | Callable[[], Engine] | None = None, dense_plan: str = "auto",
    dense_budget: float = 60.0, device: str = "auto", drop_dense: bool = False,
) -> IndexCounts:
    """Read ``collection_dir`` (ARQMath or raw dump, detected) into ``index_dir``, with search indexes
    unless ``store_only``, and the ``optional`` ones named (``("dense",)``, its vectors made by
    ``encoder``, default :data:`mathsearch.encoders.DEFAULT_ENCODER`; topics encoded by
    ``query_encoder`` when given, e.g. ``minilm`` for a static student of MiniLM).  ``shards`` > 1
    builds a sharded index and ``engine`` (or a function that makes one, e.g. ``partial(RayEngine,
    "local")``) runs the steps (:func:`build_partitioned`).  ``dense_plan`` (auto, minilm, student),
    ``dense_budget`` (minutes) and ``device`` (auto, cpu, cuda) choose how the vectors are made
    (:mod:`.dense_plan`); long embeddings resume after an interruption (:mod:`.resume`).  An index
    that holds vectors is rebuilt without them only with ``drop_dense`` (:func:`check_dense_kept`)."""
    from ..encoders.device import check_device
    from .dense_plan import check_dense_options, check_plan

    check_dense_kept(index_dir, "dense" in optional and not store_only, drop_dense)

    if "dense" in optional:
        from .resume import check_resume_root

        dense_plan = check_dense_options(dense_plan, dense_budget, device, encoder)
        check_resume_root(index_dir)
    else:  # a bad --dense-budget or --device is said even when nothing dense is asked for
        check_plan(dense_plan, dense_budget)
        check_device(device)
    if (shards != 1 or engine is not None) and not store_only:
        if "dense" in optional and dense_plan not in ("auto", "minilm"):
            raise InputError(f"--dense {dense_plan} is not available with --shards or --ray yet: train a student with "
                             "`mathsearch train-encoder` and give it as --encoder NAME --query-encoder minilm "
                             "(nothing was built).")
        return build_partitioned(collection_dir, index_dir, progress, shards=shards, optional=optional,
                                 encoder=encoder, query_encoder=query_encoder, engine=engine, device=device)
    started = time.perf_counter()
    files = _checked(collection_dir, index_dir, optional, encoder, query_encoder)
    head_start = None
    if "dense" in optional and not store_only and encoder is None and dense_plan in ("auto", "student"):
        # the student's teacher can start on the core the store leaves idle (dense_plan's module)
        from ..encoders.device import choose_device
        from .dense_plan import teacher_head_start
        from .resume import resume_root

        head_start = partial(teacher_head_start, asked=dense_plan, budget_minutes=dense_budget,
                             device=choose_device(device, quiet=True), resume=resume_root(index_dir))
    with _atomic_build(files, index_dir, progress, started, meanwhile=head_start) as build:
        building, counts = build.building, build.counts
        plan = None
        if "dense" in optional and not store_only:  # chosen and said before the long steps
            from ..encoders.device import choose_device
            from .dense_plan import choose_plan

            with Store.open(building) as store:
                plan = choose_plan(store, dense_plan, dense_budget, encoder, query_encoder, choose_device(device))
        if not store_only:
            steps = list(INDEX_STEPS)
            nice, context = 0, "fork"
            if plan is not None and plan.plan == "student":
                # The student's teacher is MiniLM on one thread: it fills the cores the text and
                # formula steps leave, and the student trains and encodes as soon as it is done.  It
                # runs here (torch is loaded here by the rate probe), the others in children of their
                # own that never touch torch.
                from .dense_plan import run_plan
                from .resume import resume_root

                beside = tuple(name for name, _ in INDEX_STEPS)
                steps.insert(0, ("dense", partial(run_plan, plan=plan, resume=resume_root(index_dir), beside=beside)))
                # The dense part is the longest chain (the teacher alone is ~28 CPU min at 1.4M
                # answers): the lexical steps yield it its core and take every cycle it leaves,
                # so they still have work when its tail (training, the student) leaves a core idle.
                nice = counts.indexes["lexical_nice"] = LEXICAL_NICE
                # ...and they start in fresh interpreters, not forks of this process: at 1.4M
                # answers this process held ~2.6 GiB when they were forked, which a fork shares with
                # the two children and their four workers until each one's writes make the pages
                # its own; the workers grew to ~1.5-1.9 GiB each (a worker alone ~0.45 GiB) and
                # the machine peaked at 14.0 GiB (docs/log/compiled.md, fifteenth step).
                context = counts.indexes["lexical_start"] = LEXICAL_START
            counts.indexes.update(_run_steps(steps, building, progress, nice=nice, context=context))
            # Other optional steps (vectors of MiniLM or a named encoder) use every core themselves:
            # after the lexical ones (beside the formula step, a static encoder was slower at 100k).
            for name in optional:
                if name == "dense" and "dense" in dict(steps):
                    continue
                step = kind_step(name)
                if name == "dense":
                    from .dense_plan import run_plan
                    from .resume import resume_root

                    step = partial(run_plan, plan=plan, resume=resume_root(index_dir))
                counts.indexes.update(_run_steps([(name, step)], building, progress))
    _done(index_dir, optional)
    return counts


def build_partitioned(
    collection_dir: str | Path, index_dir: str | Path, progress: Progress | None = None, *, shards: int = 1,
    optional: tuple[str, ...] = (), encoder: str | None = None, query_encoder: str | None = None,
    engine: Engine | Callable[[], Engine] | None = None, device: str = "auto",
) -> IndexCounts:
    """:func:`build_index` with its steps run by an engine (see :class:`~.steps.StepTask`) and, with
    ``shards`` > 1, a sharded index: the store read once, split by thread into ``shards`` complete
    INDEX_DIRs, each indexed, then given the collection's formula statistics.  ``engine``: one that
    runs the tasks (left open), or a function that makes one once every check has passed (closed
    at the end; e.g. ``partial(RayEngine, "local")``, see :mod:`.engine`); default
    :class:`~.engine.LocalEngine`.  The same guarantees: every check first, the target
    replaced only when complete and only when mathsearch made it."""
    started = time.perf_counter()
    if shards < 1:
        raise InputError(f"--shards must be at least 1, not {shards}")
    others = [name for name in optional if name != "dense"]
    if shards > 1 and others:
        raise InputError(f"{', '.join(others)} cannot be combined with --shards yet: build the shards without "
                         "them (nothing was built).")
    files = _checked(collection_dir, index_dir, optional, encoder, query_encoder)
    own_engine = engine is None or callable(engine)  # made here, after the checks: closed here
    runner: Engine = (engine or LocalEngine)() if own_engine else engine  # type: ignore[operator,assignment]
    try:
        with _atomic_build(files, index_dir, progress, started, store_in="" if shards == 1 else ".full-store") as build:
            _run_partitioned(build, runner, index_dir, progress, shards, optional,
                             {"encoder": encoder, "query_encoder": query_encoder, "device": device})
    finally:
        if own_engine:
            runner.close()
    _done(index_dir, optional)
    return build.counts


def _run_partitioned(build: _Build, engine: Engine, index_dir: str | Path, progress: Progress | None, shards: int,
                     optional: tuple[str, ...], dense: dict[str, Any]) -> None:
    """The steps of :func:`build_partitioned` as tasks of ``engine``: the counts go into ``build``."""
    from ..indexes.dense_chunks import mark
    from .resume import resume_root

    building, counts = build.building, build.counts
    resume = resume_root(index_dir)  # the vectors of a killed task or build, read back by the next
    if "dense" in optional:
        mark(resume)
    dense_opts = {**dense, "resume": str(resume)}
    if shards == 1:
        tasks = [StepTask(str(building), name) for name, _ in INDEX_STEPS]
        tasks += [StepTask(str(building), name, options=dense_opts if name == "dense" else {}) for name in optional]
        for task, (step_counts, seconds) in zip(tasks, engine.run(tasks, progress), strict=True):
            step_counts = dict(step_counts)
            counts.indexes[f"{task.step}_cpu_seconds"] = step_counts.pop(CPU_KEY, None)
            counts.indexes.update(step_counts)
            counts.indexes[f"{task.step}_seconds"] = seconds
        return
    full = building / ".full-store"
    dirs = [building / shard_name(i) for i in range(shards)]
    split = [StepTask(str(d), "split", i, shards, str(full)) for i, d in enumerate(dirs)]
    shard_counts: list[dict[str, Any]] = []
    for c, _ in engine.run(split, progress):
        c = dict(c)
        c["split_cpu"] = c.pop(CPU_KEY, 0.0)
        shard_counts.append(c)
    shutil.rmtree(full)
    tasks = [StepTask(str(d), name) for d in dirs for name, _ in INDEX_STEPS]
    if "dense" in optional:  # each shard's posts embedded by the same encoder, one task a shard
        tasks += [StepTask(str(d), "dense", i, shards, options={**dense_opts, "resume": str(resume / d.name)})
                  for i, d in enumerate(dirs)]
    for task, (step_counts, seconds) in zip(tasks, engine.run(tasks, progress), strict=True):
        mine = shard_counts[dirs.index(Path(task.path))]
        step_counts = dict(step_counts)
        mine[f"{task.step}_cpu"] = step_counts.pop(CPU_KEY, 0.0)  # summed over the shards below
        mine.update(step_counts)
        mine[f"{task.step}_seconds"] = seconds
    step_started = time.perf_counter()
    counts.indexes.update(write_global_formula_stats(dirs))
    counts.indexes.update(write_global_text_stats(dirs))
    if "dense" in optional:
        write_sharded_dense_manifest(building, dirs)
    counts.indexes["global_seconds"] = round(time.perf_counter() - step_started, 2)
    for key in sorted({k for c in shard_counts for k in c}):
        values = [c.get(key, 0) for c in shard_counts]
        if not all(isinstance(v, int | float) for v in values):  # e.g. dense_encoder: one name
            counts.indexes[key] = values[0] if len(set(map(str, values))) == 1 else values
        elif key.endswith("_seconds"):
            counts.indexes[f"{key[:-8]}_seconds_max_shard"] = max(values)
        elif key.endswith("_cpu"):  # CPU seconds of a step, all shards together
            counts.indexes[f"{key}_seconds"] = round(sum(values), 2)
        elif key not in ("questions", "answers", "comments", "links", "formulas"):
            counts.indexes[key] = sum(values)
    counts.indexes["shards"] = shards
    for d, c in zip(dirs, shard_counts, strict=True):
        write_manifest(d, build.files.root, build.files.kind, c)
    build.extra = {"shards": {"count": shards, "hash": HASH, "dirs": [d.name for d in dirs]}}


def build_artifacts(index_dir: str | Path, names: tuple[str, ...], progress: Progress | None = None) -> dict[str, Any]:
    """Build MIRMU's artifacts ``names`` into an existing INDEX_DIR (its store must be there): what
    ``--with`` runs on an index already built."""
    check_mirmu(names)
    out: dict[str, Any] = {}
    with Store.open(index_dir) as store:
        for name in names:
            out.update(INDEX_KINDS[name].build(store, Path(index_dir), progress))
    return out
