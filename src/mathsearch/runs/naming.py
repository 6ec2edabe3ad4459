"""The run-file naming convention of the ARQMath participant guidelines.

``[group]-[task]-[id]-[run-type]-[data-used]-[*ans-type]-[eval].tsv`` where task is task1/2/3,
run-type manual/auto, data-used text/math/both, ans-type extract/generate (Task 3 only) and eval
P (primary) or A (alternate).  The id is free text and may itself hold spaces or hyphens
("TeamA-task2-browser search-manual-both-P.tsv"), so the name is parsed from both ends.
The lab's evaluation copies carry a ``prim_`` prefix (prime runs); it is recognised and set aside.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TASKS = ("task1", "task2", "task3")
RUN_TYPES = ("manual", "auto")
DATA_USED = ("text", "math", "both")
ANS_TYPES = ("extract", "generate")
EVALS = ("P", "A")
PRIME_PREFIX = "prim_"
_CLEAN = re.compile(r"[^A-Za-z0-9_ ]+")


@dataclass(frozen=True, slots=True)
class RunName:
    group: str
    task: str
    id: str
    run_type: str
    data_used: str
    eval: str
    ans_type: str | None = None
    prime: bool = False  # the name carried the lab's "prim_" prefix

    @property
    def primary(self) -> bool:
        return self.eval == "P"

    def filename(self) -> str:
        parts = [self.group, self.task, self.id, self.run_type, self.data_used]
        if self.ans_type:
            parts.append(self.ans_type)
        parts.append(self.eval)
        return "-".join(parts) + ".tsv"


def _strip(name: str) -> tuple[str, bool]:
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    prime = name.startswith(PRIME_PREFIX)
    if prime:
        name = name[len(PRIME_PREFIX) :]
    return name, prime


def check_run_name(name: str, task: int | None = None) -> list[str]:
    """Problems of a run file name against the convention (empty list: the name is valid)."""
    return _parse(name, task)[1]


def parse_run_name(name: str, task: int | None = None) -> RunName | None:
    """The parts of a valid run file name, or ``None`` when it breaks the convention."""
    parsed, problems = _parse(name, task)
    return parsed if not problems else None


def _parse(name: str, task: int | None) -> tuple[RunName | None, list[str]]:
    base, prime = _strip(name)
    problems: list[str] = []
    if not base.endswith(".tsv"):
        problems.append("the file name must end in .tsv")
        stem = base.rsplit(".", 1)[0] if "." in base else base
    else:
        stem = base[: -len(".tsv")]
    parts = stem.split("-")
    task_at = next((i for i, p in enumerate(parts) if p in TASKS), None)
    if task_at is None:
        return None, [*problems, "no task field (task1, task2 or task3) between hyphens"]
    group = "-".join(parts[:task_at])
    task_name = parts[task_at]
    rest = parts[task_at + 1 :]
    n_tail = 4 if task_name == "task3" else 3
    if not group:
        problems.append("the group (team name) before the task field is missing")
    if len(rest) < n_tail + 1:
        return None, [*problems, f"too few fields after {task_name}: expected [id]-[run-type]-[data-used]-"
                      + ("[ans-type]-" if task_name == "task3" else "") + "[eval]"]
    tail = rest[-n_tail:]
    run_id = "-".join(rest[:-n_tail])
    if not run_id.strip():
        problems.append("the run id is empty")
    run_type, data_used = tail[0], tail[1]
    ans_type = tail[2] if task_name == "task3" else None
    ev = tail[-1]
    if run_type not in RUN_TYPES:
        problems.append(f"run type {run_type!r} should be one of {', '.join(RUN_TYPES)}")
    if data_used not in DATA_USED:
        problems.append(f"data used {data_used!r} should be one of {', '.join(DATA_USED)}")
    if task_name == "task3" and ans_type not in ANS_TYPES:
        problems.append(f"answer type {ans_type!r} should be one of {', '.join(ANS_TYPES)} (Task 3)")
    if ev not in EVALS:
        problems.append(f"evaluation field {ev!r} should be P (primary) or A (alternate)")
    if task is not None and task_name != f"task{task}":
        problems.append(f"the name says {task_name} but the run is checked as task{task}")
    return RunName(group, task_name, run_id, run_type, data_used, ev, ans_type, prime), problems


def _word(value: str, fallback: str, spaces: bool = True) -> str:
    # Hyphens separate the fields, so none may occur inside one.
    value = _CLEAN.sub("_", value.replace("-", "_")).strip(" _")
    if not spaces:
        value = value.replace(" ", "_")
    return value or fallback


def suggest_run_name(
    name: str = "",
    *,
    task: int,
    group: str | None = None,
    run_id: str | None = None,
    run_type: str | None = None,
    data_used: str | None = None,
    ans_type: str | None = None,
    primary: bool | None = None,
) -> str:
    """A valid file name for a run of ``task``, keeping what can be kept of ``name``.

    Explicit arguments win over what is read from ``name``; fields that cannot be read default to
    auto / both / extract (Task 3) / A.  ``suggest_run_name("bm25.tsv", task=1, group="TeamX")``
    gives ``TeamX-task1-bm25-auto-both-A.tsv``.
    """
    base, _ = _strip(name)
    stem = base[: -len(".tsv")] if base.endswith(".tsv") else base
    parsed, _ = _parse(stem + ".tsv", None) if stem else (None, [])
    if parsed is not None and parsed.id.strip():
        g, rid = parsed.group, parsed.id
        words = [parsed.run_type, parsed.data_used, parsed.ans_type or "", parsed.eval]
    else:
        words = [w for w in stem.split("-") if w.strip()]
        known = set(RUN_TYPES + DATA_USED + ANS_TYPES + EVALS + TASKS)
        free = [w for w in words if w not in known]
        g = free[0] if len(free) > 1 else ""
        rid = "_".join(free[1:]) if len(free) > 1 else (free[0] if free else "")
    rt = run_type or next((w for w in words if w in RUN_TYPES), "auto")
    du = data_used or next((w for w in words if w in DATA_USED), "both")
    at = (ans_type or next((w for w in words if w in ANS_TYPES), "extract")) if task == 3 else None
    if primary is None:
        ev = next((w for w in reversed(words) if w in EVALS), "A")
    else:
        ev = "P" if primary else "A"
    suggestion = RunName(_word(group or g, "team", spaces=False), f"task{task}", _word(run_id or rid, "run"), rt, du, ev, at)
    return suggestion.filename()
