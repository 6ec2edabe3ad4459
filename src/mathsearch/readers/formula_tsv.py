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
from typing import Any

from ..errors import InputError
from ..records import FormulaKind, FormulaRecord, ReadReport, TopicFormula, warns_of_skips

csv.field_size_limit(sys.maxsize)



def _open_tsv(path: Path):
    if not path.exists():
        raise InputError(f"{path} does not exist.")
    if not path.is_file():
        raise InputError(f"{path} is not a file.")
    return path.open(newline="", encoding="utf-8")


def _opt_int(value: str) -> int | None:
    return int(value) if value.strip() else None


_KINDS = {k.value: k for k in FormulaKind} | {"body": FormulaKind.QUESTION}


def _split_line(line: str) -> list[str]:
    """The csv row of one physical line (its line end already cut); raises ``csv.Error``."""
    if '"' not in line:  # csv would split it the same, slower
        return line.split("\t") if line else []
    row = next(csv.reader([line], delimiter="\t"), [])
    # A line of quotes alone ('"') is no blank line: kept whole, it is reported, not skipped.
    return row if row not in ([], [""]) or not line.strip() else [line]


class _LineRows:
    """csv rows one physical line at a time (``line_num`` as csv.reader's).  The ARQMath TSVs hold
    one row a line; read as one csv stream, a stray quote at the start of a damaged field would
    swallow every row up to the next quote, unreported (found by tests/test_fuzz.py)."""

    def __init__(self, fh: Any):
        self._lines = iter(fh)
        self.line_num = 0

    def __iter__(self) -> _LineRows:
        return self

    def __next__(self) -> list[str]:
        line = next(self._lines)
        self.line_num += 1
        return _split_line(line.rstrip("\r\n"))


def _rows(reader: Any, path: Path, report: ReadReport, malformed: str) -> Iterator[list[str]]:
    """The non-blank rows of a csv reader; a line csv cannot parse is reported (``reader.line_num``
    is the line of the row last given)."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            report.skip(malformed, f"{path}:{reader.line_num} ({exc})")
            continue
        if row and row != [""]:
            yield row


def iter_formula_tsv(path: str | Path, report: ReadReport | None = None) -> Iterator[FormulaRecord]:
    """Formula instances of a collection formula TSV (LaTeX, SLT or OPT file)."""
    for fields in iter_formula_fields(path, report):
        yield FormulaRecord(*fields)


def iter_formula_fields(path: str | Path, report: ReadReport | None = None) -> Iterator[tuple]:
    """:func:`iter_formula_tsv`'s records as plain tuples of their fields, in
    :class:`~mathsearch.records.FormulaRecord`'s order (``formula_id, post_id, thread_id, kind,
    formula, visual_id, comment_id, old_visual_id, issue, line``): the store reads every row of the
    collection's TSV (28M at full size), where making a record and reading it back cost more than
    the row's own parsing.  The same rows are read, skipped and reported."""
    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    with _open_tsv(path) as fh:
        nine: bool | None = None
        line_num = 0
        kinds = _KINDS
        for line in fh:  # one loop, not a reader object and a generator a row (a third of the read)
            line_num += 1
            try:
                row = _split_line(line.rstrip("\r\n"))
            except csv.Error as exc:
                report.skip("malformed TSV line", f"{path}:{line_num} ({exc})")
                continue
            if not row or row == [""]:
                continue
            if nine is None:
                nine = len(row) == 9
                if row[0].strip().lower() == "id" and len(row) > 3 and row[1].strip().lower() == "post_id":
                    continue  # header
            width = 9 if nine else 6
            if len(row) != width:
                report.skip(f"formula line with {len(row)} columns (expected {width})", f"{path}:{line_num}")
                continue
            kind = kinds.get(row[3]) or kinds.get(row[3].strip().lower())
            if kind is None:
                report.skip("formula line with an unknown type", f"{path}:{line_num} ({row[3]!r})")
                continue
            formula_id = row[0].strip()
            try:
                if nine:
                    fields = (formula_id, int(row[1]), int(row[2]), kind, row[8], row[6].strip() or None,
                              _opt_int(row[4]), row[5].strip() or None, row[7].strip() or None, line_num)
                else:
                    fields = (formula_id, int(row[1]), int(row[2]), kind, row[5], row[4].strip() or None,
                              None, None, None, line_num)
            except ValueError as exc:
                report.skip("formula line with a bad field", f"{path}:{line_num} ({exc})")
                continue
            if not formula_id:
                report.skip("formula line without id", f"{path}:{line_num}")
                continue
            report.rows += 1
            yield fields


@warns_of_skips
def read_topic_formulas(path: str | Path, report: ReadReport | None = None) -> list[TopicFormula]:
    """Rows of a topic formula TSV (``id topic_id thread_id type formula``)."""
    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    out: list[TopicFormula] = []
    with _open_tsv(path) as fh:
        reader = _LineRows(fh)
        for row in _rows(reader, path, report, "malformed topic formula line"):
            line = reader.line_num
            if row[0].strip().lower() == "id" and len(row) > 1 and row[1].strip().lower() == "topic_id":
                continue
            if len(row) != 5:
                report.skip(f"topic formula line with {len(row)} columns (expected 5)", f"{path}:{line}")
                continue
            fid, topic_id, thread_id, kind, formula = row
            if not fid.strip() or not topic_id.strip():
                report.skip("topic formula line without formula id or topic id", f"{path}:{line}")
                continue
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
