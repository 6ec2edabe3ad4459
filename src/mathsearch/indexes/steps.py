"""The steps of an index build: what each makes from what (the store in the folder being built),
and the build of an INDEX_DIR or of a shard as a list of :class:`StepTask`, which an engine runs
(:class:`mathsearch.parallel.LocalEngine` here, :class:`mathsearch.distributed.engine.RayEngine`
on a cluster) without knowing what they do.

* :data:`INDEX_STEPS` (text, formula) are built always; :data:`OPTIONAL_STEPS` (dense vectors,
  MIRMU's artifacts) on request, checked first by :func:`check_optional_steps`.
* A :class:`StepTask` is one step of one INDEX_DIR (a whole index or a shard): ``split`` (the
  shard's store from the full store, :func:`mathsearch.indexes.shard_build.split_store`),
  ``text``, ``formula`` or an optional step.  Its :meth:`~StepTask.run` is idempotent: it first
  removes whatever an earlier, killed attempt of the same step left (inside the building folder
  only), so a retried task neither loses nor duplicates posts.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import InputError, MathsearchError
from ..store import Store
from ..store.build import Progress

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


@dataclass(frozen=True)
class StepTask:
    """One step: ``step`` of the INDEX_DIR ``path`` (``split`` also reads ``full`` as shard ``shard`` of ``of``)."""

    path: str
    step: str
    shard: int = 0
    of: int = 1
    full: str = ""
    options: dict[str, Any] = field(default_factory=dict)  # dense: encoder, query_encoder, resume, device

    @property
    def key(self) -> str:
        return f"{Path(self.path).name}/{self.step}"

    @property
    def all_cores(self) -> bool:
        """The one embedding of an unsharded index uses every core (the encoder does); a shard's, one."""
        return self.step == "dense" and self.of == 1

    @property
    def may_use_gpu(self) -> bool:
        """An embedding whose ``--device`` allows a GPU (auto, cuda): an engine gives it one where it
        has one (:func:`mathsearch.encoders.device.choose_device` then sees it inside the task)."""
        return self.step == "dense" and str(self.options.get("device") or "auto") in ("auto", "cuda")

    def run(self, workers: int = 1) -> dict:
        """Do the step (its analysis spread over ``workers`` processes); return its counts."""
        from ..store.atomic import clean_stale_builds

        path = Path(self.path)
        if self.step == "split":
            from .shard_build import split_store

            counts: dict = split_store(Path(self.full), path, self.shard, self.of)
        elif self.step == "text":
            from .text_index import TEXT_DIR, build_text_indexes

            remove_partial(path / TEXT_DIR)
            with Store.open(path) as store:
                counts = build_text_indexes(store, path, workers=workers)
        elif self.step == "formula":
            from .formula import FORMULA_DIR, build_formula_index

            clean_stale_builds(path / FORMULA_DIR)
            with Store.open(path) as store:
                counts = build_formula_index(store, path, workers=workers)
        else:  # an optional step: dense vectors (a killed attempt's vectors removed first), MIRMU's indexes
            if self.step not in OPTIONAL_STEPS:
                raise MathsearchError(f"unknown build step {self.step!r}")
            if self.step == "dense":
                from .dense import DENSE_DIR

                remove_partial(path / DENSE_DIR)
            counts = OPTIONAL_STEPS[self.step](path, None, **self.options)
        return counts


def remove_partial(path: Path) -> None:
    """Remove what a killed attempt of a build task left at ``path`` (inside our building folder)."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
