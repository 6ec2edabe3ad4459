"""Formula index TSV files: collection files (6 or 9 columns) and topic formula files.

Layouts (read with ``csv``: fields holding ``"`` are quoted with doubled quotes):

* 6 columns, ARQMath-1 sample / our sample: ``id post_id thread_id type visual_id formula``
* 9 columns, official v3: ``id post_id thread_id type comment_id old_visual_id visual_id issue formula``
* topics: ``id topic_id thread_id type formula`` (the 2020 SLT/OPT files name the last column slt/opt)

The layout is taken from the header when there is one, otherwise from the column count.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
from ..records import FormulaKind, FormulaRecord, ReadReport, TopicFormula

csv.field_size_limit(sys.maxsize)

SIX = ("id", "post_id", "thread_id", "type", "visual_id", "formula")
NINE = ("id", "post_id", "thread_id", "type", "comment_id", "old_visual_id", "visual_id", "issue", "formula")


def _open_tsv(path: Path):
    if not path.exists():
        raise InputError(f"{path} does not exist.")
    if not path.is_file():
        raise InputError(f"{path} is not a file.")
    return path.open(newline="", encoding="utf-8")


def _opt_int(value: str) -> int | None:
    return int(value) if value.strip() else None


def iter_formula_tsv(path: str | Path, report: ReadReport | None = None) -> Iterator[FormulaRecord]:
    """Formula instances of a collection formula TSV (LaTeX, SLT or OPT file)."""
    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    with _open_tsv(path) as fh:
        reader = csv.reader(fh, delimiter="\t")
        layout: tuple[str, ...] | None = None
        line = 0
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                report.skip("malformed TSV line", f"{path}:{reader.line_num} ({exc})")
                continue
            line = reader.line_num
            if not row or row == [""]:
                continue
            if layout is None:
                header = tuple(c.strip().lower() for c in row)
                if header[:4] == ("id", "post_id", "thread_id", "type"):
                    layout = NINE if len(row) == 9 else SIX
                    continue
                layout = NINE if len(row) == 9 else SIX
            if len(row) != len(layout):
                report.skip(f"formula line with {len(row)} columns (expected {len(layout)})", f"{path}:{line}")
                continue
            r = dict(zip(layout, row, strict=True))
            try:
                kind = FormulaKind.parse(r["type"])
                rec = FormulaRecord(
                    formula_id=r["id"].strip(),
                    post_id=int(r["post_id"]),
                    thread_id=int(r["thread_id"]),
                    kind=kind,
                    formula=r["formula"],
                    visual_id=r["visual_id"].strip() or None,
                    comment_id=_opt_int(r["comment_id"]) if "comment_id" in r else None,
                    old_visual_id=(r.get("old_visual_id") or "").strip() or None,
                    issue=(r.get("issue") or "").strip() or None,
                    line=line,
                )
            except ValueError as exc:
                report.skip("formula line with a bad field", f"{path}:{line} ({exc})")
                continue
            if not rec.formula_id:
                report.skip("formula line without id", f"{path}:{line}")
                continue
            report.rows += 1
            yield rec


def read_topic_formulas(path: str | Path, report: ReadReport | None = None) -> list[TopicFormula]:
    """Rows of a topic formula TSV (``id topic_id thread_id type formula``)."""
    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    out: list[TopicFormula] = []
    with _open_tsv(path) as fh:
        reader = csv.reader(fh, delimiter="\t")
        for row in reader:
            line = reader.line_num
            if not row:
                continue
            if row[0].strip().lower() == "id" and len(row) > 1 and row[1].strip().lower() == "topic_id":
                continue
            if len(row) != 5:
                report.skip(f"topic formula line with {len(row)} columns (expected 5)", f"{path}:{line}")
                continue
            fid, topic_id, thread_id, kind, formula = row
            try:
                out.append(
                    TopicFormula(
                        formula_id=fid.strip(),
                        topic_id=topic_id.strip(),
                        latex=formula,
                        kind=FormulaKind.parse(kind),
                        thread_id=_opt_int(thread_id),
                    )
                )
            except ValueError as exc:
                report.skip("topic formula line with a bad field", f"{path}:{line} ({exc})")
                continue
            report.rows += 1
    return out
