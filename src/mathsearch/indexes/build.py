"""Build everything under an INDEX_DIR from a collection folder, atomically (``mathsearch index``).

First the collection store, then each search index step of :data:`INDEX_STEPS`, all into the
same temporary folder, which replaces INDEX_DIR only when every step has finished.  The search
index steps only read the store, so they run side by side: the first in this process, the others
in forked child processes (at full size the text and formula indexes each take many CPU minutes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..parallel import side_by_side
from ..readers.collection import detect_collection
from ..store import IngestCounts, Store, atomic_directory, build_store
from ..store.atomic import clean_stale_builds
from ..store.build import Progress
from .directory import check_index_target, write_manifest

# A step: (name, function(index_dir_being_built, progress) -> dict of counts); it opens the
# freshly built store from that folder itself.
IndexStep = Callable[[Path, Progress | None], dict]


def _text_step(building: Path, progress: Progress | None) -> dict:
    from .text_index import build_text_indexes

    with Store.open(building) as store:
        return build_text_indexes(store, building, progress)


def _dense_step(building: Path, progress: Progress | None, encoder: str | None = None,
                query_encoder: str | None = None, resume: str | None = None, device: str | None = None) -> dict:
    from .dense import build_dense_index

    with Store.open(building) as store:
        return build_dense_index(store, building, progress, encoder=encoder, query_encoder=query_encoder,
                                 resume=resume, device=device)


def _formula_step(building: Path, progress: Progress | None) -> dict:
    from .formula import build_formula_index

    with Store.open(building) as store:
        return build_formula_index(store, building, progress)


def _mirmu_step(building: Path, progress: Progress | None, name: str = "") -> dict:
    from .mirmu import builder

    with Store.open(building) as store:
        return builder(name)(store, building, progress)


# One line per index.
INDEX_STEPS: list[tuple[str, IndexStep]] = [("text", _text_step), ("formula", _formula_step)]
# Built only on request (``mathsearch index --dense``): embeddings cost minutes on a CPU.
OPTIONAL_STEPS: dict[str, IndexStep] = {"dense": _dense_step}
# MIRMU's systems (``mathsearch index --with mias,scm,formula2vec,compubert``): indexes/mirmu/.
MIRMU_STEPS = ("mias", "scm", "formula2vec", "compubert")
OPTIONAL_STEPS.update({name: partial(_mirmu_step, name=name) for name in MIRMU_STEPS})


def _timed(step: IndexStep, building: Path, progress: Progress | None) -> tuple[dict, float]:
    started = time.perf_counter()
    counts = step(building, progress)
    return counts, round(time.perf_counter() - started, 2)


def _run_steps(steps: list[tuple[str, IndexStep]], building: Path, progress: Progress | None) -> dict[str, Any]:
    """Run independent ``steps`` side by side; their counts merged, with ``NAME_seconds`` each."""
    results = side_by_side([(name, partial(_timed, step, building)) for name, step in steps], progress)
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


def check_optional_steps(optional: tuple[str, ...], encoder: str | None = None, query_encoder: str | None = None) -> None:
    """Fail before any work when an optional step is unknown or cannot run (its encoder unknown,
    its extras missing): an hour's build must not end in an import error."""
    for name in optional:
        if name not in OPTIONAL_STEPS:
            raise InputError(f"unknown optional index step {name!r}; known: {', '.join(OPTIONAL_STEPS)}")
    if any(name in MIRMU_STEPS for name in optional):
        from .mirmu import check_artifacts

        check_artifacts(tuple(n for n in optional if n in MIRMU_STEPS))
    if "dense" in optional:
        from ..encoders import DEFAULT_ENCODER, check_encoders

        try:
            check_encoders(DEFAULT_ENCODER if encoder is None else encoder, query_encoder)
        except InputError as exc:
            raise InputError(f"--dense: {exc} (nothing was built)") from None


def build_index(
    collection_dir: str | Path, index_dir: str | Path, progress: Progress | None = None, *, store_only: bool = False,
    optional: tuple[str, ...] = (), encoder: str | None = None, query_encoder: str | None = None,
    shards: int = 1, ray: str | None = None, dense_plan: str = "auto", dense_budget: float = 60.0,
    device: str = "auto",
) -> IndexCounts:
    """Read ``collection_dir`` (ARQMath or raw dump, detected) into ``index_dir``, with search indexes
    unless ``store_only``, and the ``optional`` ones named (``("dense",)``, its vectors made by
    ``encoder``, default :data:`mathsearch.encoders.DEFAULT_ENCODER`; topics encoded by
    ``query_encoder`` when given, e.g. ``minilm`` for a static student of MiniLM).  ``shards`` > 1
    builds a sharded index and ``ray`` (an address, or ``local``) runs the steps as Ray tasks
    (:func:`mathsearch.indexes.shards.build_partitioned`).  ``dense_plan`` (auto, minilm, student),
    ``dense_budget`` (minutes) and ``device`` (auto, cpu, cuda) choose how the vectors are made
    (:mod:`.dense_plan`); long embeddings resume after an interruption (:mod:`.resume`)."""
    if "dense" in optional:
        from .dense_plan import check_dense_options

        dense_plan = check_dense_options(dense_plan, dense_budget, device, encoder)
    if (shards != 1 or ray is not None) and not store_only:
        from .shards import build_partitioned

        if "dense" in optional and dense_plan not in ("auto", "minilm"):
            raise InputError(f"--dense {dense_plan} is not available with --shards or --ray yet: train a student with "
                             "`mathsearch train-encoder` and give it as --encoder NAME --query-encoder minilm "
                             "(nothing was built).")
        return build_partitioned(collection_dir, index_dir, progress, shards=shards, ray=ray, optional=optional,
                                 encoder=encoder, query_encoder=query_encoder, device=device)
    started = time.perf_counter()
    files = detect_collection(collection_dir)
    # Every check that can fail comes before the work, and nothing the user made is ever replaced.
    check_index_target(index_dir, files.root)
    check_optional_steps(optional, encoder, query_encoder)
    cleaned = [(str(path), size) for path, size in clean_stale_builds(index_dir)]
    with atomic_directory(index_dir) as building:
        store_counts = build_store(files, building, progress)
        if store_counts.questions + store_counts.answers == 0:
            raise InputError(
                f"{files.posts} holds no readable posts: nothing to index ({index_dir} was left as it was)."
            )
        counts = IndexCounts(**{f.name: getattr(store_counts, f.name) for f in fields(IngestCounts)})
        counts.cleaned = cleaned
        plan = None
        if "dense" in optional and not store_only:  # chosen and said before the long steps
            from ..encoders.device import choose_device
            from .dense_plan import choose_plan

            with Store.open(building) as store:
                plan = choose_plan(store, dense_plan, dense_budget, encoder, query_encoder, choose_device(device))
        if not store_only:
            counts.indexes.update(_run_steps(INDEX_STEPS, building, progress))
            # Optional steps (dense vectors) use every core themselves: one after the other.
            for name in optional:
                step = OPTIONAL_STEPS[name]
                if name == "dense":
                    from .dense_plan import run_plan
                    from .resume import resume_root

                    step = partial(run_plan, plan=plan, resume=resume_root(index_dir))
                counts.indexes.update(_run_steps([(name, step)], building, progress))
        counts.total_seconds = round(time.perf_counter() - started, 2)
        check_index_target(index_dir, files.root)  # again: the folder may have changed during the build
        read = {k: v for k, v in counts.as_json().items() if k not in ("indexes", "cleaned")}
        write_manifest(building, files.root, files.kind, {**read, **counts.indexes})
    if "dense" in optional:
        from .resume import remove_resume

        remove_resume(index_dir)  # the index is complete: its resumable chunks are not needed any more
    return counts
