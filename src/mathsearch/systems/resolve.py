"""The one path from a face (the CLI, the web page, a batch run) to a configured system: the task
checked, the task's default chosen where no system is named, the system checked against the task.

Defaults are configurations measured best: Task 1 ``ours`` as the index allows (with its dense
signals where the index has vectors, :func:`~.ours.default_spec`), Task 2 ``formula``, Task 3
``extract`` (:data:`~.task3.DEFAULT_SYSTEM`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from .base import System, make_system, system_class, system_names

TASKS = (1, 2, 3)
DEFAULT_FORMULA_SYSTEM = "formula"  # Task 2


def _either(values: Sequence[int]) -> str:
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def check_task(task: int, tasks: Sequence[int] = TASKS) -> None:
    """Raise InputError (one sentence) unless ``task`` is one of ``tasks`` (what the face serves)."""
    if task not in tasks:
        hint = " (a Task 3 answer: `mathsearch answer`)" if task == 3 and task in TASKS else ""
        raise InputError(f"--task must be {_either(tasks)}, not {task}{hint}")


def default_system(task: int, index: str | Path | None = None) -> str:
    """The spec a face runs for ``task`` when none is named (Task 1 reads ``index`` to see whether it
    has dense vectors)."""
    if task == 1:
        from .ours import default_spec

        if index is None:
            raise InputError("the default Task 1 system depends on the index: give an index folder")
        return default_spec(index)
    if task == 2:
        return DEFAULT_FORMULA_SYSTEM
    from .task3 import DEFAULT_SYSTEM

    return DEFAULT_SYSTEM


def resolve(task: int, spec: str | None = None, index: str | Path | None = None, *,
            tasks: Sequence[int] = TASKS) -> System:
    """The configured system a face runs for ``task``: ``spec`` (``name`` or ``name:k=v,...``) or the
    task's default on ``index``; InputError when ``task`` is not one of ``tasks`` or the system
    answers another task.

    Examples:
        >>> resolve(2).NAME
        'formula'
        >>> resolve(1, "bm25-thread").TASK
        1
    """
    check_task(task, tasks)
    name = spec or default_system(task, index)
    cls = system_class(name.partition(":")[0].strip())
    if cls.TASK != task:
        raise InputError(f"system {cls.NAME} answers task {cls.TASK}; task {task} systems: {', '.join(system_names(task))}")
    return make_system(name)
