"""Readers for run files of the three ARQMath tasks.

* Task 1, TREC layout: ``topic Q0 doc rank score tag`` (tab or spaces); the ARQMath-2 variant
  without the ``Q0`` column (``topic doc rank score tag``) is accepted too.
* Task 2, ARQMath layout: ``Query_Id Formula_Id Post_Id Rank Score Run_Id``.
* Task 3: ``Query_Id Rank Score Run_Id Sources Answer``, tab-separated with csv quoting (answers
  may hold quotes, tabs and newlines).

A malformed line is reported in the :class:`ReadReport` with file:line and skipped.  A document
(formula, answer) listed twice for one topic is reported and only its first line is kept: trec_eval
refuses such runs, the lab's scripts kept one line.  Scores are kept as read; ordering is the
evaluator's business (trec_eval order: score descending, then id descending), never the rank column.

Two access paths: records (:func:`read_trec_run`, :func:`read_formula_run`, :func:`read_task3_run`)
and, for scoring many large runs fast, plain ``{topic: {id: score}}`` dicts (:func:`read_run_scores`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..ranking import Ranking
from ..records import FormulaHit, ReadReport, ScoredDoc, Task3Answer, warns_of_skips


@dataclass(frozen=True, slots=True)
class _Row:
    query_id: str
    doc_id: str
    post_id: str
    rank: int
    score: float
    run_tag: str


def _open_text(path: Path, what: str):
    try:
        return path.open(encoding="utf-8", newline="")
    except FileNotFoundError:
        raise InputError(f"{what} file {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{what} path {path} is a directory, not a file") from None


def _parse_line(fields: list[str], task: int) -> tuple[str, str, str, str, str, str] | str:
    """(topic, doc, post, rank, score, tag) or the reason the line is malformed."""
    n = len(fields)
    if task == 2:
        if n < 6:
            return f"expected 6 fields (Query_Id Formula_Id Post_Id Rank Score Run_Id), found {n}"
        topic, doc, post, rank, score, tag = fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]
        return topic, doc, post, rank, score, tag
    if n >= 6 and fields[1] in ("Q0", "q0", "0"):
        return fields[0], fields[2], "", fields[3], fields[4], fields[5]
    if n == 5:  # ARQMath-2 Task 1 layout, no Q0 column
        return fields[0], fields[1], "", fields[2], fields[3], fields[4]
    if n >= 6:
        return f"second field {fields[1]!r} should be Q0 in the TREC layout (topic Q0 doc rank score tag)"
    return f"expected 6 fields (topic Q0 doc rank score tag), found {n}"


def _iter_rows(path: str | Path, task: int, report: ReadReport) -> Iterator[tuple[int, _Row]]:
    path = Path(path)
    seen: set[tuple[str, str]] = set()
    with _open_text(path, "run") as handle:
        try:
            for line_no, line in enumerate(handle, 1):
                # A tag may hold spaces: split off at most 5 fields.
                fields = line.split(None, 5)
                if not fields:
                    continue
                where = f"{path}:{line_no}"
                parsed = _parse_line(fields, task)
                if isinstance(parsed, str):
                    report.skip(parsed, where)
                    continue
                topic, doc, post, rank_s, score_s, tag = parsed
                try:
                    rank = int(rank_s)
                except ValueError:
                    report.skip(f"rank {rank_s!r} is not an integer", where)
                    continue
                try:
                    score = float(score_s)
                except ValueError:
                    report.skip(f"score {score_s!r} is not a number", where)
                    continue
                if not math.isfinite(score):
                    report.skip(f"score {score_s!r} is not a finite number", where)
                    continue
                key = (topic, doc)
                if key in seen:
                    report.skip("duplicate document for the topic (first line kept)", where)
                    continue
                seen.add(key)
                report.rows += 1
                yield line_no, _Row(topic, doc, post, rank, score, tag.strip())
        except UnicodeDecodeError:
            raise InputError(f"run file {path} is not UTF-8 text") from None


@warns_of_skips
def read_trec_run(path: str | Path, report: ReadReport | None = None) -> list[ScoredDoc]:
    """Hits of a Task 1 (TREC layout) run, in file order."""
    report = report if report is not None else ReadReport(source=str(path))
    return [ScoredDoc(r.query_id, r.doc_id, r.score, r.rank, r.run_tag) for _, r in _iter_rows(path, 1, report)]


@warns_of_skips
def read_formula_run(path: str | Path, report: ReadReport | None = None) -> list[FormulaHit]:
    """Hits of a Task 2 run (``Query_Id Formula_Id Post_Id Rank Score Run_Id``), in file order."""
    report = report if report is not None else ReadReport(source=str(path))
    return [
        FormulaHit(r.query_id, r.doc_id, r.post_id, r.score, r.rank, r.run_tag)
        for _, r in _iter_rows(path, 2, report)
    ]


@warns_of_skips
def read_formula_rankings(path: str | Path, report: ReadReport | None = None) -> dict[str, Ranking]:
    """``{topic: Ranking}`` of a Task 2 run: formula ids with their scores and the post of each
    (what fusion needs, in one pass: the post travels with its hit)."""
    report = report if report is not None else ReadReport(source=str(path))
    scores: dict[str, dict[str, float]] = {}
    posts: dict[str, dict[str, str]] = {}
    for _, r in _iter_rows(path, 2, report):
        scores.setdefault(r.query_id, {})[r.doc_id] = r.score
        posts.setdefault(r.query_id, {})[r.doc_id] = r.post_id
    return {topic: Ranking(docs, posts[topic]) for topic, docs in scores.items()}


@warns_of_skips
def read_run_scores(path: str | Path, task: int = 1, report: ReadReport | None = None) -> dict[str, dict[str, float]]:
    """``{topic: {doc: score}}`` of a Task 1 run or ``{topic: {formula_id: score}}`` of a Task 2 run.

    The fast path for evaluation: no record per hit.  Same checks and reports as the record
    readers: a well-formed tab-separated file is parsed by Arrow's CSV reader; any anomaly
    (a short line, a duplicate, a bad number) sends the file through the line-by-line reader,
    which names the lines.
    """
    report = report if report is not None else ReadReport(source=str(path))
    path = Path(path)
    fast = _read_scores_arrow(path, task)
    if fast is not None:
        out, rows = fast
        report.rows += rows
        return out
    return _read_scores_lines(path, task, report)


_ARROW_COLUMNS = {1: ("topic", "q0", "doc", "rank", "score", "tag"), 2: ("topic", "doc", "post", "rank", "score", "tag")}


def _read_scores_arrow(path: Path, task: int) -> tuple[dict[str, dict[str, float]], int] | None:
    """Arrow-parsed ``{topic: {doc: score}}`` and the row count, or ``None`` when the file is not
    a clean tab-separated run (the caller then reads it line by line and reports)."""
    try:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc  # a submodule: `import pyarrow` alone does not load it
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - both are dependencies
        return None
    names = _ARROW_COLUMNS[task]
    try:
        with _open_text(path, "run") as handle:
            first = handle.readline()
        if first.count("\t") != 5 or (task == 1 and first.split("\t")[1] != "Q0"):
            return None
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=list(names), use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, double_quote=False),
            convert_options=pacsv.ConvertOptions(
                include_columns=["topic", "doc", "rank", "score"] + (["q0"] if task == 1 else []),
                column_types={n: pa.string() for n in names} | {"rank": pa.int64(), "score": pa.float64()},
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError, ValueError):
        return None
    n = table.num_rows
    if n == 0:
        return {}, 0
    scores_np = table.column("score").to_numpy()
    if not np.isfinite(scores_np).all():
        return None
    if task == 1 and not pc.all(pc.equal(table.column("q0"), pa.scalar("Q0"))).as_py():
        return None
    topic_col = table.column("topic").combine_chunks().dictionary_encode()
    index = topic_col.indices.to_numpy(zero_copy_only=False)
    topic_names = topic_col.dictionary.to_pylist()
    docs = table.column("doc").to_numpy(zero_copy_only=False).tolist()
    scores = scores_np.tolist()
    cuts = (np.flatnonzero(np.diff(index)) + 1).tolist()
    out: dict[str, dict[str, float]] = {}
    for start, end in zip([0, *cuts], [*cuts, n], strict=True):
        topic = topic_names[index[start]]
        block = dict(zip(docs[start:end], scores[start:end], strict=True))
        if len(block) != end - start or (topic in out and not out[topic].keys().isdisjoint(block)):
            return None  # duplicates: let the line reader report them
        if topic in out:
            out[topic].update(block)
        else:
            out[topic] = block
    return out, n


def _read_scores_lines(path: Path, task: int, report: ReadReport) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    with _open_text(path, "run") as handle:
        try:
            for line_no, line in enumerate(handle, 1):
                fields = line.split(None, 5)
                n = len(fields)
                # Fast path for the well-formed common case; anything else goes through _parse_line.
                if n == 6 and task == 1 and fields[1] == "Q0":
                    topic, doc, rank_s, score_s = fields[0], fields[2], fields[3], fields[4]
                elif n == 6 and task == 2:
                    topic, doc, rank_s, score_s = fields[0], fields[1], fields[3], fields[4]
                elif n == 0:
                    continue
                else:
                    parsed = _parse_line(fields, task)
                    if isinstance(parsed, str):
                        report.skip(parsed, f"{path}:{line_no}")
                        continue
                    topic, doc, _, rank_s, score_s, _ = parsed
                try:
                    score = float(score_s)
                    int(rank_s)
                except ValueError:
                    report.skip(f"rank {rank_s!r} or score {score_s!r} is not a number", f"{path}:{line_no}")
                    continue
                if not math.isfinite(score):
                    report.skip(f"score {score_s!r} is not a finite number", f"{path}:{line_no}")
                    continue
                docs = out.get(topic)
                if docs is None:
                    docs = out[topic] = {}
                if doc in docs:
                    report.skip("duplicate document for the topic (first line kept)", f"{path}:{line_no}")
                    continue
                docs[doc] = score
                report.rows += 1
        except UnicodeDecodeError:
            raise InputError(f"run file {path} is not UTF-8 text") from None
    return out


TASK3_FIELDS = ("Query_Id", "Rank", "Score", "Run_Id", "Sources", "Answer")


def first_line_problem(path: str | Path, task: int) -> str | None:
    """Why the first non-empty line of ``path`` is not a run line of ``task`` (None: it is, or the
    file is empty).  A file that is not a run at all (a topics XML, a qrels file) is told by its
    first line, before any scoring prints a table of zeros and a warning a line."""
    path = Path(path)
    with _open_text(path, "run") as handle:
        try:
            if task == 3:
                row = next((r for r in csv.reader(handle, delimiter="\t", quotechar='"') if any(f.strip() for f in r)), None)
                if row is None:
                    return None
                if len(row) == 1:
                    row = _task3_fields(row[0])
                if len(row) != 6:
                    return f"expected 6 fields ({' '.join(TASK3_FIELDS)}), found {len(row)}"
                rank_s, score_s = row[1].strip(), row[2].strip()
            else:
                line = next((x for x in handle if x.strip()), None)
                if line is None:
                    return None
                parsed = _parse_line(line.split(None, 5), task)
                if isinstance(parsed, str):
                    return parsed
                if task == 2 and parsed[1] in ("Q0", "q0"):  # read as Task 2: a run of formula "Q0"
                    return "its second field is Q0, the layout of a Task 1 run: --task 1?"
                rank_s, score_s = parsed[3], parsed[4]
        except UnicodeDecodeError:
            return "not UTF-8 text"
        except csv.Error as exc:
            return str(exc)
    try:
        int(rank_s)
        float(score_s)
    except ValueError:
        return f"rank {rank_s[:20]!r} or score {score_s[:20]!r} is not a number"
    return None


def _task3_fields(line: str) -> list[str]:
    """Split one physical line that the tab-separated csv reading could not split in six."""
    # The guidelines' own example separates fields by spaces and quotes the free-text ones.
    return next(csv.reader([line], delimiter=" ", skipinitialspace=True))


@warns_of_skips
def read_task3_run(path: str | Path, report: ReadReport | None = None) -> list[Task3Answer]:
    """Answers of a Task 3 run, one per topic (a repeated topic is reported, the first kept)."""
    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    out: list[Task3Answer] = []
    seen: set[str] = set()
    with _open_text(path, "run") as handle:
        reader = csv.reader(handle, delimiter="\t", quotechar='"')
        start = 1
        try:
            for row in reader:
                where = f"{path}:{start}"
                start = reader.line_num + 1
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) < 6 and len(row) == 1:
                    row = _task3_fields(row[0])
                if len(row) != 6:
                    report.skip(f"expected 6 fields ({' '.join(TASK3_FIELDS)}), found {len(row)}", where)
                    continue
                topic, rank_s, score_s, tag, sources, answer = (f if i == 5 else f.strip() for i, f in enumerate(row))
                try:
                    rank = int(rank_s)
                    score = float(score_s)
                except ValueError:
                    report.skip(f"rank {rank_s!r} or score {score_s!r} is not a number", where)
                    continue
                if topic in seen:
                    report.skip("more than one answer for the topic (first kept)", where)
                    continue
                seen.add(topic)
                report.rows += 1
                out.append(Task3Answer(topic, answer, score, rank, tag, sources))
        except csv.Error as exc:
            raise InputError(f"{path}, line {reader.line_num}: cannot read the Task 3 run: {exc}") from None
        except UnicodeDecodeError:
            raise InputError(f"run file {path} is not UTF-8 text") from None
    return out
