"""Read a collection folder into the SQLite store (one pass over each file).

Formula instances come from the collection's formula TSV when it has one (the
official instances, with visual ids); otherwise from the id'd math spans of posts
and comments (raw dumps get those ids from :mod:`mathsearch.text.dollar_math`).

The store is two files (see :mod:`.schema`): posts in ``store.sqlite``, comments, links
and formula instances in ``store-side.sqlite``.  An ARQMath collection with a formula TSV
is read by two processes, one per file, each building its own indexes; a raw dump is read
by one process, because its formula ids are numbered in file order across posts and comments.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import MathsearchError
from ..parallel import batched, side_by_side
from ..readers.arqmath import iter_post_links
from ..readers.collection import CollectionFiles, CollectionReader
from ..readers.formula_tsv import iter_formula_fields
from ..records import FormulaKind, FormulaRecord, ReadReport
from .atomic import die_with_parent
from .schema import (
    POSTS_INDEXES,
    POSTS_TABLES,
    SCHEMA_VERSION,
    SIDE_FILE,
    SIDE_INDEXES,
    SIDE_TABLES,
    STORE_FILE,
)

BATCH = 5000
# The stages whose progress counts bytes of a file read (the others of a build count posts or formulae).
BYTE_STAGES = ("posts", "comments", "links", "formulas")

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
    notes: list[str] = field(default_factory=list)  # read, but worth a line: a file absent, answers without their question
    seconds: float = 0.0
    bytes_read: int = 0

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("problems")
        return d


def _formula_row(f: FormulaRecord) -> tuple:
    return (int(f.formula_id), f.post_id, f.thread_id, f.kind.value, f.comment_id, f.visual_id, f.formula, f.issue)


def _connect(path: Path, tables: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=OFF", "synchronous=OFF", "temp_store=MEMORY", "cache_size=-262144", "locking_mode=EXCLUSIVE"):
        db.execute(f"PRAGMA {pragma}")
    db.executescript(tables)
    db.execute("BEGIN")
    return db


def _finish_side(db: sqlite3.Connection) -> None:
    """Comment ids for the comment formulae (the 6-column TSV lacks them), then the indexes."""
    db.execute(
        "UPDATE formulas SET comment_id = (SELECT s.comment_id FROM comment_spans s "
        "WHERE s.formula_id = formulas.formula_id) WHERE kind = 'comment' AND comment_id IS NULL"
    )
    db.execute("DROP TABLE comment_spans")
    db.execute("COMMIT")
    db.executescript(SIDE_INDEXES)


class _Loader:
    """Writes records of one or more files into one database, counting what it must leave out."""

    def __init__(
        self,
        db: sqlite3.Connection | None,
        side: sqlite3.Connection | None,
        files: CollectionFiles,
        tick: Callable[[str, Path, int], None] | None,
    ):
        self.db = db  # posts (None in the second process)
        self.side = side  # comments, links, formulae (None in the posts process of a parallel build)
        self.files = files
        self.reader = CollectionReader(files)
        self.skipped: dict[str, int] = {}
        self.problems: list[str] = []
        self._tick = tick
        self._formulas: list[tuple] = []

    def _skip(self, source: Path | None, reason: str, n: int = 1) -> None:
        key = f"{source.name if source else '?'}: {reason}"
        self.skipped[key] = self.skipped.get(key, 0) + n

    def _ticker(self, stage: str, path: Path | None) -> Callable[[int], None] | None:
        if self._tick is None or path is None:
            return None
        tick = self._tick
        return lambda n: tick(stage, path, n)

    def insert(self, sql: str, rows: list[tuple], source: Path | None, what: str) -> None:
        """INSERT OR IGNORE, counting the rows a duplicate id kept out (the first one stays)."""
        db = self.db if what == "post" else self.side
        if db is None:
            raise RuntimeError(f"a loader without the database for {what} rows")
        before = db.total_changes
        db.executemany(sql, rows)
        ignored = len(rows) - (db.total_changes - before)
        if ignored:
            self._skip(source, f"duplicate {what} id", ignored)

    def _span_formulas(self, found: list[FormulaRecord], source: Path | None) -> None:
        for f in found:
            if f.formula_id.isdigit():
                self._formulas.append(_formula_row(f))
            else:
                self._skip(source, "formula id is not an integer")
        if len(self._formulas) >= BATCH:
            self._flush_formulas(source)

    def _flush_formulas(self, source: Path | None) -> None:
        if not self._formulas:
            return
        self.insert("INSERT OR IGNORE INTO formulas VALUES (?,?,?,?,?,?,?,?)", self._formulas, source, "formula")
        self._formulas.clear()

    def posts(self, span_formulas: bool) -> None:
        def rows() -> Iterator[tuple]:
            for tp in self.reader.posts(self._ticker("posts", self.files.posts), formulas=span_formulas):
                p = tp.post
                if span_formulas:
                    self._span_formulas(tp.formulas, self.files.posts)
                yield (
                    p.post_id, int(p.post_type), p.thread_id, p.parent_id, tp.title_text if p.title is not None else None,
                    " ".join(p.tags), p.body, tp.text, p.score, p.creation_date, p.answer_count,
                    p.accepted_answer_id, p.owner_user_id, p.view_count,
                )

        for chunk in batched(rows(), BATCH):
            self.insert("INSERT OR IGNORE INTO posts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", chunk, self.files.posts, "post")
        self._flush_formulas(self.files.posts)

    def comments(self, span_formulas: bool) -> None:
        if self.files.comments is None:
            return
        spans: list[tuple[int, int]] = []

        def rows() -> Iterator[tuple]:
            for tc in self.reader.comments(self._ticker("comments", self.files.comments), formulas=span_formulas):
                c = tc.comment
                if span_formulas:
                    self._span_formulas(tc.formulas, self.files.comments)
                else:  # the TSV holds the instances; remember which comment holds each span
                    spans.extend((int(f.formula_id), c.comment_id) for f in tc.formulas if f.formula_id.isdigit())
                yield (c.comment_id, c.post_id, c.text, tc.text, c.score, c.creation_date, c.user_id)

        for chunk in batched(rows(), BATCH):
            self.insert("INSERT OR IGNORE INTO comments VALUES (?,?,?,?,?,?,?)", chunk, self.files.comments, "comment")
            if self.side is None:
                raise RuntimeError("a loader without the side database read comments")
            self.side.executemany("INSERT OR IGNORE INTO comment_spans VALUES (?,?)", spans)
            spans.clear()
        self._flush_formulas(self.files.comments)

    def links(self) -> None:
        path = self.files.links
        if path is None:
            return
        report = self.reader.reports.setdefault(path.name, ReadReport(source=str(path)))
        rows = (
            (lk.link_id, lk.post_id, lk.related_post_id, int(lk.link_type), lk.creation_date)
            for lk in iter_post_links(path, report, self._ticker("links", path))
        )
        for chunk in batched(rows, BATCH):
            self.insert("INSERT OR IGNORE INTO links VALUES (?,?,?,?,?)", chunk, path, "link")

    def formula_tsv(self) -> None:
        path = self.files.formulas_tsv
        if path is None:
            return
        report = self.reader.reports.setdefault(path.name, ReadReport(source=str(path)))
        tick = self._ticker("formulas", path)
        value = {k: k.value for k in FormulaKind}  # an enum's .value is a descriptor call a row
        for chunk in batched(iter_formula_fields(path, report), BATCH):
            rows = []
            # The row of _formula_row, from the record's fields (28M rows at full size: no record each).
            for fid, post, thread, kind, formula, visual, comment, _old_visual, issue, line in chunk:
                if fid.isdigit():
                    rows.append((int(fid), post, thread, value[kind], comment, visual, formula, issue))
                else:
                    report.rows -= 1
                    report.skip("formula id is not an integer", f"{path}:{line}")
            self.insert("INSERT OR IGNORE INTO formulas VALUES (?,?,?,?,?,?,?,?)", rows, path, "formula")
            if tick is not None:
                tick(sum(len(r[6]) + 40 for r in rows))

    def collect(self) -> tuple[dict[str, int], list[str]]:
        """Skip counts of this loader and of every file its reader read."""
        skipped = dict(self.skipped)
        problems = list(self.problems)
        for name, rep in self.reader.reports.items():
            for reason, n in rep.skipped.items():
                skipped[f"{name}: {reason}"] = skipped.get(f"{name}: {reason}", 0) + n
            problems.extend(rep.problems)
        return skipped, problems


def _side_step(files: CollectionFiles, path: str, progress: Progress | None) -> tuple[dict[str, int], list[str]]:
    """The second process of a parallel build: comments, links and the formula TSV into the side
    database, with its indexes; returns what it skipped.  An error that stops it is raised (in the
    parent, by :func:`mathsearch.parallel.side_by_side`) as one sentence."""
    die_with_parent()  # a build killed outright takes this reader with it
    side = _connect(Path(path), SIDE_TABLES)
    sizes = {p: p.stat().st_size for p in (files.comments, files.links, files.formulas_tsv) if p is not None}
    done: dict[Path, int] = {}
    sent = [0.0]

    def tick(stage: str, p: Path, n: int) -> None:
        done[p] = done.get(p, 0) + n
        now = time.monotonic()
        if progress is not None and now - sent[0] > 0.2:  # a message a row would flood the parent
            sent[0] = now
            progress(stage, done[p], sizes[p])

    try:
        loader = _Loader(None, side, files, tick)
        loader.comments(span_formulas=False)
        loader.links()
        loader.formula_tsv()
        _finish_side(side)
        return loader.collect()
    except MathsearchError:
        raise
    except Exception as exc:
        raise MathsearchError(f"reading the comments, links and formulae stopped: {type(exc).__name__}: {exc}") from None
    finally:
        side.close()


def _notes(db: sqlite3.Connection, files: CollectionFiles) -> list[str]:
    """What a user should know of a collection read without error: a file it lacks, and answers
    whose question it does not hold (a slice of a dump: kept and searchable, with no thread title)."""
    notes = [f"no {what} file in {files.root}: no {rows} indexed"
             for what, rows, path in (("Comments", "comments", files.comments), ("PostLinks", "links", files.links))
             if path is None]
    orphans = db.execute("SELECT count(*) FROM posts a WHERE a.post_type = 2 AND NOT EXISTS "
                         "(SELECT 1 FROM posts q WHERE q.post_id = a.thread_id AND q.post_type = 1)").fetchone()[0]
    if orphans:
        notes.append(f"{orphans:,} answer{'s' if orphans != 1 else ''} whose question is not in the collection "
                     "(or was skipped): indexed, searchable, with no thread title")
    return notes


def build_store(files: CollectionFiles, out_dir: Path, progress: Progress | None = None,
                meanwhile: Callable[[Path, Callable[[], bool]], Any] | None = None) -> IngestCounts:
    """Write ``out_dir/store.sqlite`` from ``files``; returns what was read and skipped.

    ``meanwhile(out_dir, waiting)``: where the store is read by two processes, work for this one
    once its posts are written and indexed (:meth:`.Store.open_posts` reads them) while the other
    still writes comments, links and formulae; ``waiting()`` says whether it still does.  Never
    called where one process reads everything."""
    started = time.perf_counter()
    counts = IngestCounts()
    sizes = {p: p.stat().st_size for p in (files.posts, files.comments, files.links, files.formulas_tsv) if p is not None}
    counts.bytes_read = sum(sizes.values())
    done: dict[Path, int] = {}

    def tick(stage: str, path: Path, n: int) -> None:
        done[path] = done.get(path, 0) + n
        if progress is not None:
            progress(stage, done[path], sizes[path])

    db = _connect(out_dir / STORE_FILE, POSTS_TABLES)
    side_path = out_dir / SIDE_FILE
    parallel = files.kind == "arqmath" and files.formulas_tsv is not None
    if parallel:
        def posts_step(_progress: Progress | None) -> _Loader:  # this process writes posts only
            loader = _Loader(db, None, files, tick)
            loader.posts(span_formulas=False)
            db.execute("COMMIT")
            db.executescript(POSTS_INDEXES)
            if meanwhile is not None:  # others may read the posts now: the exclusive lock is let go
                db.execute("PRAGMA locking_mode=NORMAL")
                db.execute("SELECT count(*) FROM meta").fetchone()
            return loader

        # spawn, not fork: this process may run a progress-bar thread that a fork must not copy.
        done_steps = side_by_side([("posts", posts_step), ("side", partial(_side_step, files, str(side_path)))],
                                  progress, context="spawn",
                                  meanwhile=partial(meanwhile, out_dir) if meanwhile is not None else None)
        loader = done_steps["posts"]
        side_skipped, side_problems = done_steps["side"]
        skipped, problems = loader.collect()
        for k, v in side_skipped.items():
            skipped[k] = skipped.get(k, 0) + v
        problems.extend(side_problems)
    else:
        side = _connect(side_path, SIDE_TABLES)
        loader = _Loader(db, side, files, tick)
        use_tsv = files.formulas_tsv is not None
        loader.posts(span_formulas=not use_tsv)
        loader.comments(span_formulas=not use_tsv)
        loader.links()
        if use_tsv:
            loader.formula_tsv()
        db.execute("COMMIT")
        db.executescript(POSTS_INDEXES)
        _finish_side(side)
        side.close()
        skipped, problems = loader.collect()
    counts.skipped, counts.problems = skipped, problems
    db.execute("ATTACH DATABASE ? AS side", (str(side_path),))
    by_type = dict(db.execute("SELECT post_type, count(*) FROM posts GROUP BY post_type").fetchall())
    counts.questions, counts.answers = by_type.get(1, 0), by_type.get(2, 0)
    counts.comments = db.execute("SELECT count(*) FROM comments").fetchone()[0]
    counts.links = db.execute("SELECT count(*) FROM links").fetchone()[0]
    counts.formulas = db.execute("SELECT count(*) FROM formulas").fetchone()[0]
    counts.notes = _notes(db, files)
    # Sampled statistics: a full ANALYZE reads every index (minutes at full scale).
    db.execute("PRAGMA analysis_limit=1000")
    db.execute("ANALYZE main")
    db.execute("ANALYZE side")
    db.execute("DETACH DATABASE side")
    counts.seconds = time.perf_counter() - started
    meta = {
        "schema_version": str(SCHEMA_VERSION),
        "collection": str(files.root.resolve()),
        "collection_kind": files.kind,
        "counts": json.dumps(counts.as_json()),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    db.executemany("INSERT INTO meta VALUES (?,?)", meta.items())
    db.close()
    return counts
