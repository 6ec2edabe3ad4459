"""What an evaluation reports: one :class:`RunResult` a run, in one :class:`EvalReport`, and the
steps every task's scoring shares (:func:`finish` a run's means, :func:`compare` runs to the first,
:func:`is_trec_layout` to tell a ranked run from a Task 3 answer run).  Below both
:mod:`.evaluate` (Tasks 1 and 2, and Task 3 with qrels) and :mod:`.task3` (the development
protocol), so that neither imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import InputError
from ..records import ReadReport
from ..runs.validate import CheckReport
from .categories import Categories, category_means
from .measures import RANKED_MEASURES, TASK3_MEASURES
from .stats import MeanCI, mean_ci, paired_t_test, randomisation_test

Test = Literal["t", "randomisation"]


@dataclass(slots=True)
class RunResult:
    """Scores of one run: per topic, means with intervals, and what was noticed on the way."""

    name: str  # the run file's name: the key of the JSON output
    path: str
    task: int
    per_topic: dict[str, dict[str, float]] = field(default_factory=dict)  # {measure: {topic: value}}
    means: dict[str, float] = field(default_factory=dict)
    ci: dict[str, MeanCI] = field(default_factory=dict)
    topics: int = 0
    judged_at: dict[int, float] = field(default_factory=dict)
    p_values: dict[str, float] = field(default_factory=dict)  # against the first run
    categories: dict[str, dict[str, dict[str, tuple[float, int]]]] = field(default_factory=dict)
    read: ReadReport = field(default_factory=ReadReport)
    checks: CheckReport | None = None
    notes: list[str] = field(default_factory=list)

    def topic_table(self) -> dict[str, dict[str, float]]:
        """``{topic: {measure: value}}`` (the JSON ``per_topic``)."""
        out: dict[str, dict[str, float]] = {}
        for measure, values in self.per_topic.items():
            for topic, v in values.items():
                out.setdefault(topic, {})[measure] = v
        return dict(sorted(out.items(), key=lambda kv: _topic_key(kv[0])))


@dataclass(slots=True)
class EvalReport:
    task: int
    qrels: str
    runs: list[RunResult] = field(default_factory=list)
    topics: int = 0
    topics_dropped: list[str] = field(default_factory=list)  # sub-collection protocol
    judgements_removed: int = 0
    qrels_key: str = ""  # Task 2: "visual" or "formula"
    qrels_read: ReadReport = field(default_factory=ReadReport)
    test: str = "t"
    notes: list[str] = field(default_factory=list)

    @property
    def measures(self) -> tuple[str, ...]:
        names = TASK3_MEASURES if self.task == 3 else tuple(m.name for m in RANKED_MEASURES)
        present = {m for r in self.runs for m in r.means}
        return tuple(m for m in names if m in present)


def _topic_key(topic: str) -> tuple:
    head, _, num = topic.rpartition(".")
    return (head, int(num)) if num.isdigit() else (topic, 0)


def finish(result: RunResult, topics: Sequence[str], categories: Categories | None) -> None:
    for measure, values in result.per_topic.items():
        scores = [values[t] for t in topics if t in values]
        ci = mean_ci(scores)
        result.ci[measure] = ci
        result.means[measure] = ci.mean
        if categories:
            result.categories[measure] = category_means(values, categories)
    result.topics = len(topics)


def compare(report: EvalReport, test: Test) -> None:
    if len(report.runs) < 2:
        return
    first = report.runs[0]
    for other in report.runs[1:]:
        for measure, values in other.per_topic.items():
            base = first.per_topic.get(measure, {})
            common = [t for t in values if t in base]
            a = [base[t] for t in common]
            b = [values[t] for t in common]
            p = randomisation_test(a, b) if test == "randomisation" else paired_t_test(a, b)
            other.p_values[measure] = p


def is_trec_layout(path: Path) -> bool:
    """Whether a file given for Task 3 is a ranked (TREC) run rather than a Task 3 answer run."""
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                if fields:
                    return len(fields) >= 6 and fields[1] == "Q0"
    except FileNotFoundError:
        raise InputError(f"run file {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"run path {path} is a directory, not a file") from None
    except UnicodeDecodeError:
        raise InputError(f"run file {path} is not UTF-8 text") from None
    return False
