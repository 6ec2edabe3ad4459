"""Where the tasks of a build run: here (:class:`LocalEngine`, one after the other, each timed by
:func:`run_task`), or as Ray tasks on a cluster (:class:`RayEngine`, the optional extra
``mathsearch[ray]``; ray is imported only when one is made).

A task is anything with a ``key``, an ``all_cores`` wish and an idempotent ``run(workers)``
(:class:`Task`): the engine knows nothing of what it does.  The index build
describes itself as such tasks (:class:`mathsearch.building.steps.StepTask`: one step of one
INDEX_DIR, a whole index or a shard) and is handed an engine by its caller (``mathsearch index
--ray``).

:class:`RayEngine` submits every task at once (one CPU each, the analysis inside a task in one
process: Ray spreads the tasks over the cluster's workers) and retries a task whose worker died
(``max_retries``); an error raised by a step is not retried and comes back as itself.  A task
that wants ``all_cores`` (the embedding of an unsharded index) asks for every CPU; others, for one.  Every path
is absolute: on a cluster of several machines the index's parent folder must be on storage every
node mounts at the same path (NFS, a shared volume), and every node needs mathsearch installed.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..errors import InputError, MathsearchError
from ..parallel import default_workers

Progress = Callable[[str, int, int], None]
RETRIES = 3


# -- the tasks of a plan, run by an engine -------------------------------------------------------------
CPU_KEY = "cpu_seconds"  # in a task's counts: the CPU it used (its process and the pool workers it reaped)


class Task(Protocol):
    """One task of a plan: a name unique in it (``key``), whether it wants every core of its
    machine (``all_cores``), and ``run(workers) -> counts``, idempotent (a retried task neither
    loses nor duplicates what it makes)."""

    @property
    def key(self) -> str: ...

    @property
    def all_cores(self) -> bool: ...

    def run(self, workers: int) -> dict: ...


def run_task(task: Task, workers: int = 1, kill_marker: str | None = None,
             kill_plan: Callable[[str], None] | None = None) -> tuple[dict, float]:
    """Do ``task``; return its counts (with its CPU seconds under :data:`CPU_KEY`) and seconds.
    ``kill_marker`` (tests of retries only): the first attempt, finding no file there, makes it and
    kills its own process once the task's output is written, as a worker lost at the worst moment;
    with ``kill_plan``, that is called with the marker before every attempt instead, to kill the
    process where it chooses (e.g. half way through an embedding) and make the marker itself."""
    started, cpu = time.perf_counter(), _cpu_seconds()
    if kill_marker is not None and kill_plan is not None:
        kill_plan(kill_marker)
    counts = task.run(workers)
    if kill_marker is not None and kill_plan is None and not os.path.exists(kill_marker):
        Path(kill_marker).write_text(f"{task.key} killed in process {os.getpid()}\n")
        os.kill(os.getpid(), signal.SIGKILL)
    counts = {**counts, CPU_KEY: round(_cpu_seconds() - cpu, 2)}
    return counts, round(time.perf_counter() - started, 2)


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children reaped so far (a step's fork pools): a Ray
    worker's CPU, which the build process never sees, measured where the step runs."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class Engine(Protocol):
    workers: int

    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[tuple[dict, float]]: ...

    def close(self) -> None: ...


class LocalEngine:
    """Every task here, one after the other, each spreading its analysis over ``workers`` processes."""

    def __init__(self, workers: int | None = None):
        self.workers = default_workers() if workers is None else workers

    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[tuple[dict, float]]:
        out = []
        for i, task in enumerate(tasks):
            out.append(run_task(task, self.workers))
            if progress:
                progress("shard steps", i + 1, len(tasks))
        return out

    def close(self) -> None:
        pass


def import_ray():
    """ray, or an InputError that says how to install it."""
    os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
    try:
        import ray
    except ImportError:
        raise InputError("--ray needs Ray: install mathsearch with the ray extra (pip install -e '.[ray]').") from None
    return ray


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """A HOST:PORT address (``ray://`` or not) must accept a connection: Ray itself retries an
    unreachable one for minutes, printing warnings, before it gives up."""
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if address == "auto" or not sep or not port.isdigit():
        return  # ``auto`` and other forms: Ray's own checks
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"--ray {address}: no Ray cluster answers there ({exc}).") from None


class RayEngine:
    """Tasks on a Ray cluster: ``address`` ``local`` starts one on this machine (``num_cpus``
    workers, default every core), anything else is the address of a running cluster (``auto``,
    ``ray://HOST:10001``, ``HOST:6379``).  A Ray already initialised in this process is used as it
    is and left running."""

    def __init__(self, address: str = "local", num_cpus: int | None = None, kill_once: tuple[str, str] | None = None,
                 kill_plan: Callable[[str], None] | None = None):
        ray = import_ray()
        self.workers = 1
        self._ray = ray
        self._kill_once = kill_once  # (task key, marker file): tests of retries (see run_task)
        self._kill_plan = kill_plan
        self._owned = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            try:
                if address == "local":
                    ray.init(num_cpus=num_cpus, **kwargs)
                else:
                    _check_reachable(address)
                    ray.init(address=address, **kwargs)
            except InputError:
                raise
            except Exception as exc:  # ConnectionError, ValueError, RuntimeError: Ray's words, one sentence
                raise InputError(f"--ray {address}: could not start or reach a Ray cluster ({exc}).") from None
            self._owned = True
        self._step = ray.remote(max_retries=RETRIES, retry_exceptions=False, num_cpus=1)(run_task)

    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[tuple[dict, float]]:
        ray = self._ray
        refs = []
        for task in tasks:
            marker = self._kill_once[1] if self._kill_once and self._kill_once[0] == task.key else None
            opts: dict[str, Any] = {"name": f"mathsearch {task.key}"}
            if task.all_cores:  # e.g. the one embedding of an unsharded index
                opts["num_cpus"] = max(1, int(ray.available_resources().get("CPU", 1)))
            if wants_gpu(task, ray.cluster_resources()):
                opts["num_gpus"] = 1  # Ray hides the GPUs from a task that asked for none
            refs.append(self._step.options(**opts).remote(task, 1, marker, self._kill_plan if marker else None))
        pending = list(refs)
        done = 0
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                ray.get(ready)  # raises a step's error now
                done += 1
                if progress:
                    progress("shard steps", done, len(tasks))
            return ray.get(refs)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, MathsearchError):
                raise cause from None
            raise MathsearchError(f"a build step failed on Ray: {exc}") from None
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
            raise MathsearchError(f"a build step's worker died {RETRIES + 1} times; last: {exc}") from None
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._owned:
            self._ray.shutdown()
            self._owned = False


def wants_gpu(task: Task, resources: dict[str, float]) -> bool:
    """A task asks Ray for a GPU when it may use one (its ``may_use_gpu``, e.g. an embedding whose
    ``--device`` allows one) and the cluster has one."""
    return bool(getattr(task, "may_use_gpu", False)) and resources.get("GPU", 0) >= 1


def make_engine(ray: str | None, num_cpus: int | None = None) -> Engine:
    """:class:`RayEngine` at address ``ray`` (``local``: a cluster started here), else :class:`LocalEngine`."""
    if ray is None:
        return LocalEngine()
    return RayEngine(ray or "local", num_cpus=num_cpus)
