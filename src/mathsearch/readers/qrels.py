"""Reader for relevance judgements (qrels) in the TREC layout ``topic iteration id relevance``.

One layout serves every ARQMath task: Task 1 ids are answer post ids, Task 2 ids are visual ids
(or, in the 2020 lab file, formula instance ids), Task 3 ids are the lab's answer ids.
Fields are separated by a tab or by spaces.  Relevance is graded 0-3; the assessors could also
answer 5 ("system failure") or 6 ("do not know").  A line that cannot be parsed is reported and
skipped; a relevance value outside that set means the file is not what we think it is, so the
whole file is refused with the offending line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from ..errors import FormatError, InputError
from ..records import Qrel, ReadReport, warns_of_skips

SYSTEM_FAILURE = 5
DO_NOT_KNOW = 6
GRADED = frozenset({0, 1, 2, 3})
KNOWN_RELEVANCE = GRADED | {SYSTEM_FAILURE, DO_NOT_KNOW}


def iter_qrels(path: str | Path, report: ReadReport | None = None) -> Iterator[Qrel]:
    """Judgements of a qrels file in file order.

    Malformed lines (wrong field count, non-integer relevance) and repeated (topic, id) pairs
    are counted in ``report`` with file:line and skipped (the first judgement is kept).
    Raises :class:`FormatError` for a relevance value outside 0-3, 5, 6.
    """
    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    seen: set[tuple[str, str]] = set()
    try:
        handle = path.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"qrels file {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"qrels path {path} is a directory, not a file") from None
    with handle:
        try:
            for line_no, line in enumerate(handle, 1):
                fields = line.split()
                if not fields:
                    continue
                where = f"{path}:{line_no}"
                if len(fields) != 4:
                    report.skip(f"expected 4 fields (topic iteration id relevance), found {len(fields)}", where)
                    continue
                topic, iteration, doc_id, value = fields
                try:
                    relevance = int(value)
                except ValueError:
                    report.skip(f"relevance {value!r} is not an integer", where)
                    continue
                if relevance not in KNOWN_RELEVANCE:
                    raise FormatError(
                        str(path),
                        line_no,
                        f"unknown relevance value {relevance} (expected 0-3, 5 = system failure or "
                        f"6 = do not know): {line.rstrip()!r}",
                    )
                key = (topic, doc_id)
                if key in seen:
                    report.skip("repeated judgement for the same topic and id (first kept)", where)
                    continue
                seen.add(key)
                report.rows += 1
                yield Qrel(topic, doc_id, relevance, iteration)
        except UnicodeDecodeError:
            raise InputError(f"qrels file {path} is not UTF-8 text") from None


@warns_of_skips
def read_qrels(path: str | Path, report: ReadReport | None = None) -> list[Qrel]:
    """All judgements of a qrels file (see :func:`iter_qrels`)."""
    return list(iter_qrels(path, report))


def qrels_to_dict(qrels: Iterable[Qrel], *, graded_only: bool = True) -> dict[str, dict[str, int]]:
    """``{topic: {id: relevance}}`` as trec_eval sees it.

    With ``graded_only`` the codes 5 and 6 are left out: for Tasks 1 and 2 the lab treated them
    as "not assessed" (the id becomes unjudged).  Task 3 maps them to 0 instead, see
    :func:`task3_relevance`.
    """
    out: dict[str, dict[str, int]] = {}
    for q in qrels:
        if graded_only and q.relevance not in GRADED:
            continue
        out.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    return out


def task3_relevance(relevance: int) -> int:
    """Task 3 reading of a judgement: "system failure" and "do not know" count as not relevant."""
    return 0 if relevance in (SYSTEM_FAILURE, DO_NOT_KNOW) else relevance
