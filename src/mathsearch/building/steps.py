"""The steps of an index build: what each makes from what (the store in the folder being built),
and the build of an INDEX_DIR or of a shard as a list of :class:`StepTask`, which an engine runs
(:class:`~.engine.LocalEngine` here, :class:`~.engine.RayEngine` on a
cluster) without knowing what they do.

* Which steps there are is :data:`mathsearch.indexes.kinds.INDEX_KINDS`: ``ALWAYS_BUILT`` (text,
  formula) always, ``ON_REQUEST`` (dense vectors, MIRMU's artifacts) on request, checked first by
  :func:`check_optional_steps`; :func:`kind_step` is the step of one kind.
* A :class:`StepTask` is one step of one INDEX_DIR (a whole index or a shard): ``split`` (the
  shard's store from the full store, :func:`.shard_build.split_store`),
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
from ..indexes.kinds import INDEX_KINDS, MIRMU_KINDS, ON_REQUEST, check_mirmu
from ..store import Store
from ..store.build import Progress

# A step run in this process or a forked child: function(index_dir_being_built, progress) -> counts;
# it opens the freshly built store from that folder itself.
IndexStep = Callable[[Path, Progress | None], dict]


def kind_step(name: str, **options: Any) -> IndexStep:
    """The step that builds the index kind ``name`` (:data:`~mathsearch.indexes.kinds.INDEX_KINDS`)."""
    return partial(_build_kind, name, options=options)


def _build_kind(name: str, building: Path, progress: Progress | None, workers: int | None = None,
                options: dict[str, Any] | None = None) -> dict:
    with Store.open(building) as store:
        return INDEX_KINDS[name].build(store, building, progress, workers=workers, **(options or {}))


def check_optional_steps(optional: tuple[str, ...], encoder: str | None = None, query_encoder: str | None = None) -> None:
    """Fail before any work when an optional step is unknown or cannot run (its encoder unknown,
    its extras missing): an hour's build must not end in an import error."""
    for name in optional:
        if name not in ON_REQUEST:
            raise InputError(f"unknown optional index step {name!r}; known: {', '.join(ON_REQUEST)}")
    if any(name in MIRMU_KINDS for name in optional):
        check_mirmu(tuple(n for n in optional if n in MIRMU_KINDS))
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

            return split_store(Path(self.full), path, self.shard, self.of)
        kind = INDEX_KINDS.get(self.step)
        if kind is None or kind.builder is None:
            raise MathsearchError(f"unknown build step {self.step!r}")
        if kind.retry == "folder":  # what a killed attempt left
            remove_partial(path / kind.folder)
        elif kind.retry == "stale":
            clean_stale_builds(path / kind.folder)
        return _build_kind(self.step, path, None, workers=workers if kind.parallel else None, options=self.options)


def remove_partial(path: Path) -> None:
    """Remove what a killed attempt of a build task left at ``path`` (inside our building folder)."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()
