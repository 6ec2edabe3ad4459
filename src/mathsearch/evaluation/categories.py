"""Topic categories (e.g. the lab's computation / concept / proof, difficulty, dependency) and
per-category means.

A category file is CSV or TSV.  With a header line, the first column is the topic id and every
other column is one categorisation (``Topic,Category,Difficulty,Dependency`` as the lab's topic
information files); without one, two columns ``topic category``.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

from ..errors import InputError
from ..records import ReadReport

Categories = dict[str, dict[str, str]]  # {dimension: {topic: value}}


def read_categories(path: str | Path, report: ReadReport | None = None) -> Categories:
    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"category file {path} does not exist") from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise InputError(f"category file {path} is not a UTF-8 text file") from None
    delimiter = "\t" if "\t" in text.split("\n", 1)[0] else ","
    rows = list(csv.reader(text.splitlines(), delimiter=delimiter))
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise InputError(f"category file {path} is empty")
    first = [c.strip() for c in rows[0]]
    has_header = not any(c[:2] in ("A.", "B.") for c in first[:1])
    names = first[1:] if has_header else ["category"]
    body = rows[1:] if has_header else rows
    out: Categories = {name or f"column {i + 2}": {} for i, name in enumerate(names)}
    dims = list(out)
    if not dims:  # one column: no category to group by (a notes file, a list of topics)
        raise InputError(f"category file {path} has no category column: each line should be a topic id and its "
                         "categories (A.1<TAB>Computation<TAB>Easy), under a header naming them")
    for i, row in enumerate(body, 2 if has_header else 1):
        if len(row) < len(dims) + 1:
            report.skip(f"expected {len(dims) + 1} fields", f"{path}:{i}")
            continue
        report.rows += 1
        topic = row[0].strip()
        for dim, value in zip(dims, row[1:], strict=False):
            if value.strip():
                out[dim][topic] = value.strip()
    if not report.rows:
        raise InputError(f"category file {path} has no topic line with {len(dims) + 1} fields")
    return out


def category_means(per_topic: Mapping[str, float], categories: Categories) -> dict[str, dict[str, tuple[float, int]]]:
    """``{dimension: {value: (mean, topics)}}`` over the topics of ``per_topic``."""
    out: dict[str, dict[str, tuple[float, int]]] = {}
    for dim, labels in categories.items():
        groups: dict[str, list[float]] = {}
        for topic, score in per_topic.items():
            label = labels.get(topic)
            if label is not None:
                groups.setdefault(label, []).append(score)
        out[dim] = {label: (sum(v) / len(v), len(v)) for label, v in sorted(groups.items())}
    return out
