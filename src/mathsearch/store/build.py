"""Read a collection folder into the SQLite store (one pass over each file).

Formula instances come from the collection's formula TSV when it has one (the
official instances, with visual ids); otherwise from the id'd math spans of posts
and comments (raw dumps get those ids from :mod:`mathsearch.readers.dollar_math`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from ..readers.arqmath import iter_post_links
from ..readers.collection import CollectionFiles, CollectionReader
from ..readers.formula_tsv import iter_formula_tsv
from ..records import FormulaRecord, ReadReport
from .schema import INDEXES, SCHEMA_VERSION, STORE_FILE, TABLES

BATCH = 5000

# (stage name, bytes done so far, total bytes of the stage)
Progress = Callable[[str, int, int], None]


@dataclass
class IngestCounts:
    questions: int = 0
    answers: int = 0
    comments: int = 0
    links: int = 0
    formulas: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    bytes_read: int = 0

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("problems")
        return d


def _batched(rows: Iterable[tuple], n: int = BATCH) -> Iterator[list[tuple]]:
    it = iter(rows)
    while chunk := list(islice(it, n)):
        yield chunk


def _formula_row(f: FormulaRecord) -> tuple:
    return (int(f.formula_id), f.post_id, f.thread_id, f.kind.value, f.comment_id, f.visual_id, f.formula, f.issue)


def build_store(files: CollectionFiles, out_dir: Path, progress: Progress | None = None) -> IngestCounts:
    """Write ``out_dir/store.sqlite`` from ``files``; returns what was read and skipped."""
    started = time.perf_counter()
    counts = IngestCounts()
    db = sqlite3.connect(out_dir / STORE_FILE, isolation_level=None)
    for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=MEMORY", "cache_size=-262144", "locking_mode=EXCLUSIVE"):
        db.execute(f"PRAGMA {pragma}")
    db.executescript(TABLES)
    db.execute("BEGIN")
    reader = CollectionReader(files)
    use_tsv = files.formulas_tsv is not None
    sizes = {p: p.stat().st_size for p in (files.posts, files.comments, files.links, files.formulas_tsv) if p is not None}
    counts.bytes_read = sum(sizes.values())

    def ticker(stage: str, path: Path) -> Callable[[int], None] | None:
        if progress is None:
            return None
        done = 0

        def tick(n: int) -> None:
            nonlocal done
            done += n
            progress(stage, done, sizes[path])

        return tick

    formula_rows: list[tuple] = []
    comment_spans: list[tuple[int, int]] = []

    def insert(sql: str, rows: list[tuple], source: Path | None, what: str) -> None:
        """INSERT OR IGNORE, counting the rows a duplicate id kept out (the first one stays)."""
        before = db.total_changes
        db.executemany(sql, rows)
        ignored = len(rows) - (db.total_changes - before)
        if ignored:
            key = f"{source.name if source else '?'}: duplicate {what} id"
            counts.skipped[key] = counts.skipped.get(key, 0) + ignored

    formula_source = files.formulas_tsv or files.posts

    def flush_formulas() -> None:
        insert("INSERT OR IGNORE INTO formulas VALUES (?,?,?,?,?,?,?,?)", formula_rows, formula_source, "formula")
        formula_rows.clear()

    def add_span_formulas(found: list[FormulaRecord], source: Path | None) -> None:
        for f in found:
            if f.formula_id.isdigit():
                formula_rows.append(_formula_row(f))
            else:
                key = f"{source.name if source else '?'}: formula id is not an integer"
                counts.skipped[key] = counts.skipped.get(key, 0) + 1

    def post_rows() -> Iterator[tuple]:
        for tp in reader.posts(ticker("posts", files.posts)):
            p = tp.post
            if not use_tsv:
                add_span_formulas(tp.formulas, files.posts)
                if len(formula_rows) >= BATCH:
                    flush_formulas()
            yield (
                p.post_id, int(p.post_type), p.thread_id, p.parent_id, tp.title_text if p.title is not None else None,
                " ".join(p.tags), p.body, tp.text, p.score, p.creation_date, p.answer_count,
                p.accepted_answer_id, p.owner_user_id, p.view_count,
            )

    for chunk in _batched(post_rows()):
        insert("INSERT OR IGNORE INTO posts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", chunk, files.posts, "post")

    def comment_rows() -> Iterator[tuple]:
        for tc in reader.comments(ticker("comments", files.comments) if files.comments else None):
            c = tc.comment
            if use_tsv:
                comment_spans.extend((int(f.formula_id), c.comment_id) for f in tc.formulas if f.formula_id.isdigit())
            else:
                add_span_formulas(tc.formulas, files.comments)
            if len(formula_rows) >= BATCH:
                flush_formulas()
            yield (c.comment_id, c.post_id, c.text, tc.text, c.score, c.creation_date, c.user_id)

    db.execute("CREATE TEMP TABLE comment_spans (formula_id INTEGER PRIMARY KEY, comment_id INTEGER)")
    for chunk in _batched(comment_rows()):
        insert("INSERT OR IGNORE INTO comments VALUES (?,?,?,?,?,?,?)", chunk, files.comments, "comment")
        if comment_spans:
            db.executemany("INSERT OR IGNORE INTO comment_spans VALUES (?,?)", comment_spans)
            comment_spans.clear()
    flush_formulas()

    if files.links is not None:
        links_report = reader.reports.setdefault(files.links.name, ReadReport(source=str(files.links)))
        rows = (
            (lk.link_id, lk.post_id, lk.related_post_id, int(lk.link_type), lk.creation_date)
            for lk in iter_post_links(files.links, links_report, ticker("links", files.links))
        )
        for chunk in _batched(rows):
            insert("INSERT OR IGNORE INTO links VALUES (?,?,?,?,?)", chunk, files.links, "link")

    if use_tsv:
        assert files.formulas_tsv is not None
        tsv_report = reader.reports.setdefault(files.formulas_tsv.name, ReadReport(source=str(files.formulas_tsv)))
        tick = ticker("formulas", files.formulas_tsv)
        for chunk in _batched(iter_formula_tsv(files.formulas_tsv, tsv_report)):
            rows = []
            for f in chunk:
                if not f.formula_id.isdigit():
                    tsv_report.rows -= 1
                    tsv_report.skip("formula id is not an integer", f"{files.formulas_tsv}:{f.line}")
                    continue
                rows.append(_formula_row(f))
            insert("INSERT OR IGNORE INTO formulas VALUES (?,?,?,?,?,?,?,?)", rows, files.formulas_tsv, "formula")
            if tick is not None:
                tick(sum(len(r[6]) + 40 for r in rows))
        # The 6-column layout has no comment_id: take it from the comment that holds the span.
        db.execute(
            "UPDATE formulas SET comment_id = (SELECT s.comment_id FROM comment_spans s "
            "WHERE s.formula_id = formulas.formula_id) WHERE kind = 'comment' AND comment_id IS NULL"
        )
    by_type = dict(db.execute("SELECT post_type, count(*) FROM posts GROUP BY post_type").fetchall())
    counts.questions, counts.answers = by_type.get(1, 0), by_type.get(2, 0)
    counts.comments = db.execute("SELECT count(*) FROM comments").fetchone()[0]
    counts.links = db.execute("SELECT count(*) FROM links").fetchone()[0]
    counts.formulas = db.execute("SELECT count(*) FROM formulas").fetchone()[0]
    for name, rep in reader.reports.items():
        for reason, n in rep.skipped.items():
            counts.skipped[f"{name}: {reason}"] = counts.skipped.get(f"{name}: {reason}", 0) + n
        counts.problems.extend(rep.problems)
    db.execute("COMMIT")
    if progress is not None:
        progress("indexing", 0, 1)
    db.executescript(INDEXES)
    counts.seconds = time.perf_counter() - started
    meta = {
        "schema_version": str(SCHEMA_VERSION),
        "collection": str(files.root.resolve()),
        "collection_kind": files.kind,
        "counts": json.dumps(counts.as_json()),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    db.executemany("INSERT INTO meta VALUES (?,?)", meta.items())
    db.execute("ANALYZE")
    db.close()
    return counts
