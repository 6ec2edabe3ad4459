"""The assessment database: one SQLite file (WAL) holding a pool, its topics and every judgement.

Made by :func:`create_pool_db` (``mathsearch pool``), read and written by :class:`AssessDB` (the
assessment page, ``mathsearch qrels``).  Tables:

``meta``          key/value: what built the pool (task, depths, seed, runs, when)
``runs``          the pooled run files: name, path, task, role (primary / alternate / answers), depth
``topics``        topic id, natural position, title/question HTML and tags (from ``--topics``), the
                  topic's formulae (JSON ``[[id, latex], ...]``), Task 2's query formula, and whether
                  the topic is in the shared overlap set that every assessor judges (for agreement)
``items``         what to judge: topic, display position, kind (answer / formula / task3), doc id
                  (answer post id, formula id, Task 3 answer id), post id, visual id, votes, answer text
``contributions`` which run returned each item at which rank
``assessors``     the named assessors
``judgements``    one row per (item, assessor): grade 0-3, 5 (system failure) or 6 (do not know),
                  comment, when; ``first_seq`` orders who judged an item first
``history``       every judgement and every cleared judgement, in order (nothing is ever lost)

Every judgement is its own transaction, committed before the page hears back (``synchronous=FULL``),
so a server killed outright loses at most the judgement in flight; two assessors writing at once
wait for each other (``BEGIN IMMEDIATE`` with a busy timeout) and neither write is lost.

The file carries an application id (``PRAGMA application_id``): a ``--out`` that exists and is not
an assessment database made here is never touched, and one that holds judgements is never rebuilt.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import InputError, MathsearchError, NotFoundError
from ..records import Topic, topic_order
from ..runs.output import check_output
from .grades import KNOWN_RELEVANCE
from .pool import Pool, shuffle_key

APPLICATION_ID = 0x4D534153  # "MSAS": a mathsearch assessment database
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 30.0
ASSESSOR_NAME = re.compile(r"^[\w][\w .@'-]{0,39}$")

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(run_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, path TEXT NOT NULL, task INTEGER NOT NULL,
                  role TEXT NOT NULL, depth INTEGER NOT NULL, topics INTEGER NOT NULL, hits INTEGER NOT NULL,
                  pooled INTEGER NOT NULL, uniq INTEGER NOT NULL);
CREATE TABLE topics(topic_id TEXT PRIMARY KEY, position INTEGER NOT NULL, title TEXT, question TEXT, tags TEXT,
                    formulas TEXT NOT NULL DEFAULT '[]', formula_id TEXT, latex TEXT,
                    overlap INTEGER NOT NULL DEFAULT 0);
CREATE TABLE items(item_id INTEGER PRIMARY KEY, topic_id TEXT NOT NULL REFERENCES topics(topic_id),
                   position INTEGER NOT NULL, kind TEXT NOT NULL, doc_id TEXT NOT NULL, post_id TEXT,
                   visual_id TEXT, votes REAL NOT NULL DEFAULT 0, answer TEXT, sources TEXT,
                   UNIQUE(topic_id, kind, doc_id));
CREATE INDEX items_topic ON items(topic_id, position);
CREATE TABLE contributions(item_id INTEGER NOT NULL REFERENCES items(item_id),
                           run_id INTEGER NOT NULL REFERENCES runs(run_id), rank INTEGER NOT NULL,
                           PRIMARY KEY(item_id, run_id));
CREATE TABLE assessors(name TEXT PRIMARY KEY, created TEXT NOT NULL);
CREATE TABLE judgements(item_id INTEGER NOT NULL REFERENCES items(item_id),
                        assessor TEXT NOT NULL REFERENCES assessors(name),
                        grade INTEGER NOT NULL CHECK (grade IN (0, 1, 2, 3, 5, 6)),
                        comment TEXT NOT NULL DEFAULT '', judged_at TEXT NOT NULL, first_seq INTEGER NOT NULL,
                        PRIMARY KEY(item_id, assessor));
CREATE TABLE history(seq INTEGER PRIMARY KEY AUTOINCREMENT, item_id INTEGER NOT NULL, assessor TEXT NOT NULL,
                     grade INTEGER, comment TEXT NOT NULL DEFAULT '', at TEXT NOT NULL);
"""


class AssessmentError(MathsearchError):
    """A request the assessment database cannot honour (unknown item, bad grade or name)."""


class NotInPool(AssessmentError, NotFoundError):
    """A topic or item id the pool does not hold (a 404 on the web)."""


@dataclass(frozen=True, slots=True)
class TopicRow:
    topic_id: str
    position: int
    title: str | None
    question: str | None
    tags: tuple[str, ...]
    formulas: tuple[tuple[str, str], ...]  # (formula id, LaTeX) of the topic's title and question
    formula_id: str | None  # Task 2: the query formula
    latex: str | None
    overlap: bool
    items: int


@dataclass(frozen=True, slots=True)
class ItemRow:
    item_id: int
    topic_id: str
    position: int
    kind: str
    doc_id: str
    post_id: str | None
    visual_id: str | None
    votes: float
    answer: str | None
    sources: str | None


@dataclass(frozen=True, slots=True)
class Judgement:
    item_id: int
    assessor: str
    grade: int
    comment: str
    judged_at: str
    first_seq: int


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA synchronous=FULL")
    return db


def is_assessment_db(path: str | Path) -> bool:
    """Whether ``path`` is an assessment database made here (its SQLite application id says so)."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        return False
    return len(header) == 100 and header[:16] == b"SQLite format 3\x00" and int.from_bytes(header[68:72], "big") == APPLICATION_ID


def _judgement_count(path: Path) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
    try:
        return db.execute("SELECT count(*) FROM history").fetchone()[0]
    finally:
        db.close()


def _pool_problem(path: Path) -> str | None:
    # An assessment database made here is ours; any other file is not (see check_pool_out).
    return None if is_assessment_db(path) else "is not an assessment database made by mathsearch pool"


def as_umask_allows(path: Path) -> None:
    """Give a file made by :func:`tempfile.mkstemp` (mode 0600) the mode any new file gets here
    (0666 less the umask): qrels and a pool are shared with assessors and colleagues."""
    mask = os.umask(0o022)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def check_pool_out(path: str | Path, force: bool = False, inputs: Iterable[str | Path | None] = ()) -> Path:
    """Refuse a ``--out`` that must not be (re)written, before any pooling is done.

    A new path is fine (missing folders are created when written); an existing file must be an
    assessment database made here (any file with ``force``), and never one that holds a judgement:
    assessors' work is not ours to drop, even with ``force``.  Anything else is refused with one
    sentence (:func:`mathsearch.runs.output.check_output`, the check of every output), and nothing
    is changed.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"--out {path} is a folder; give the name of the assessment database to write "
                         f"(e.g. {path / 'pool.sqlite'}).")
    if (path.exists() or path.is_symlink()) and not path.is_file():
        raise InputError(f"--out {path} exists and is not a regular file; refusing to write to it.")
    check_output(path, inputs, force=force, ours=_pool_problem)  # never an input of the command, even with force
    if is_assessment_db(path):
        n = _judgement_count(path)
        if n:
            raise InputError(f"--out {path} already holds {n:,} judgement(s); refusing to replace its pool "
                             "(give another --out).")
    return path


def create_pool_db(
    path: str | Path,
    pool: Pool,
    topics: Sequence[Topic] = (),
    *,
    overlap: int | Sequence[str] = 0,
    meta: dict[str, str] | None = None,
    force: bool = False,
) -> list[str]:
    """Write ``pool`` (and what ``topics`` say of its topics) to the assessment database ``path``.

    ``overlap``: the topics of the shared overlap set, or how many to draw (seeded) from the pool's
    topics.  An existing database is replaced only when :func:`check_pool_out` allows it (ours, no
    judgements): in one transaction.  A new one, or another file replaced with ``force``, is written beside and renamed into place, so a
    half-written database never appears.  Returns the overlap topics.
    """
    path = check_pool_out(path, force, [r.path for r in pool.runs])  # a pooled run is never written over
    by_id = {t.topic_id: t for t in topics}
    if isinstance(overlap, int):
        if overlap < 0:
            raise InputError("--overlap must be 0 or more")
        if overlap > len(pool.topics):  # every topic shared: say so rather than take them all silently
            raise InputError(f"--overlap {overlap} is more than the pool's {len(pool.topics)} topics; "
                             f"give at most {len(pool.topics)}")
        chosen = sorted(pool.topics, key=lambda t: shuffle_key(pool.seed, "overlap", t))[:overlap]
    else:
        chosen = list(overlap)
        unknown = [t for t in chosen if t not in pool.topics]
        if unknown:
            raise InputError(f"overlap topic(s) {', '.join(unknown)} are not in the pool")
    chosen = sorted(set(chosen), key=topic_order)
    if path.exists() and is_assessment_db(path):  # ours: replaced in one transaction
        db = _connect(path)
        db.execute("PRAGMA foreign_keys=OFF")  # the old tables are dropped in any order
        try:
            db.execute("BEGIN IMMEDIATE")
            if db.execute("SELECT count(*) FROM history").fetchone()[0]:
                raise InputError(f"--out {path} received judgements meanwhile; refusing to replace its pool.")
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                      "AND name NOT LIKE 'sqlite_%'").fetchall():
                db.execute(f'DROP TABLE "{name}"')
            _fill(db, pool, by_id, chosen, meta or {})
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        finally:
            db.close()
        return chosen
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    as_umask_allows(tmp)
    try:
        db = _connect(tmp)
        try:
            db.execute(f"PRAGMA application_id={APPLICATION_ID}")
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            db.execute("BEGIN")
            _fill(db, pool, by_id, chosen, meta or {})
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode=WAL")
        finally:
            db.close()
        os.replace(tmp, path)
    except BaseException:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        raise
    return chosen


def _fill(db: sqlite3.Connection, pool: Pool, topics: dict[str, Topic], overlap: list[str], meta: dict[str, str]) -> None:
    # (the caller holds the transaction)
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)
    info = {"task": str(pool.task), "depth": str(pool.depth), "alternate_depth": str(pool.alternate_depth),
            "seed": str(pool.seed), "instances": str(pool.instances), "created": _now(),
            "schema_version": str(SCHEMA_VERSION), "notes": json.dumps(pool.notes), **meta}
    db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", info.items())
    run_ids: dict[str, int] = {}
    for r in pool.runs:
        cur = db.execute("INSERT INTO runs(name, path, task, role, depth, topics, hits, pooled, uniq) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (r.name, r.path, r.task, r.role, r.depth, r.topics, r.hits, r.pooled, r.unique))
        run_ids[r.name] = cur.lastrowid  # type: ignore[assignment]
    in_overlap = set(overlap)
    for position, (topic_id, items) in enumerate(pool.topics.items()):
        t = topics.get(topic_id)
        formulas = [[f.formula_id, f.latex] for f in t.formulas] if t is not None else []
        db.execute("INSERT INTO topics(topic_id, position, title, question, tags, formulas, formula_id, latex, overlap) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (topic_id, position, t.title if t else None, t.question if t else None,
                    " ".join(t.tags) if t else None, json.dumps(formulas), t.formula_id if t else None,
                    t.latex if t else None, int(topic_id in in_overlap)))
        for i, item in enumerate(items):
            cur = db.execute("INSERT INTO items(topic_id, position, kind, doc_id, post_id, visual_id, votes, answer, sources) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (topic_id, i, item.kind, item.doc_id, item.post_id, item.visual_id, item.votes,
                              item.answer, item.sources))
            db.executemany("INSERT INTO contributions(item_id, run_id, rank) VALUES (?, ?, ?)",
                           [(cur.lastrowid, run_ids[n], rank) for n, rank in item.ranks.items()])


def check_assessor(name: str) -> str:
    """An assessor's name, trimmed; refused unless 1-40 letters, digits, spaces or ``.@'-_``."""
    name = (name or "").strip()
    if not ASSESSOR_NAME.match(name):
        raise AssessmentError("an assessor's name is 1 to 40 letters, digits, spaces or . @ ' - _ "
                              "(starting with a letter or digit)")
    return name


class AssessDB:
    """An open assessment database (one connection; open one per thread or request)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(f"assessment database {self.path} does not exist (make one with mathsearch pool)")
        if not is_assessment_db(self.path):
            raise InputError(f"{self.path} is not an assessment database made by mathsearch pool")
        self.db = _connect(self.path)
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            self.db.close()
            raise InputError(f"assessment database {self.path} has schema version {version}; this mathsearch reads "
                             f"version {SCHEMA_VERSION}")
        self._meta: dict[str, str] | None = None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> AssessDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- the pool -------------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        if self._meta is None:
            self._meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        return self._meta

    @property
    def task(self) -> int:
        return int(self.meta()["task"])

    def runs(self) -> list[dict]:
        cols = ("name", "path", "task", "role", "depth", "topics", "hits", "pooled", "unique")
        rows = self.db.execute("SELECT name, path, task, role, depth, topics, hits, pooled, uniq FROM runs ORDER BY run_id")
        return [dict(zip(cols, row, strict=True)) for row in rows]

    def topics(self) -> list[TopicRow]:
        rows = self.db.execute(
            "SELECT t.topic_id, t.position, t.title, t.question, t.tags, t.formulas, t.formula_id, t.latex, t.overlap, "
            "(SELECT count(*) FROM items i WHERE i.topic_id = t.topic_id) FROM topics t ORDER BY t.position")
        return [self._topic(r) for r in rows]

    def topic(self, topic_id: str) -> TopicRow:
        row = self.db.execute(
            "SELECT t.topic_id, t.position, t.title, t.question, t.tags, t.formulas, t.formula_id, t.latex, t.overlap, "
            "(SELECT count(*) FROM items i WHERE i.topic_id = t.topic_id) FROM topics t WHERE t.topic_id = ?",
            (topic_id,)).fetchone()
        if row is None:
            raise NotInPool(f"topic {topic_id} is not in the pool")
        return self._topic(row)

    @staticmethod
    def _topic(r: tuple) -> TopicRow:
        formulas = tuple((str(f), str(latex)) for f, latex in json.loads(r[5] or "[]"))
        return TopicRow(r[0], r[1], r[2], r[3], tuple((r[4] or "").split()), formulas, r[6], r[7], bool(r[8]), r[9])

    _ITEM = "SELECT item_id, topic_id, position, kind, doc_id, post_id, visual_id, votes, answer, sources FROM items"

    def items(self, topic_id: str | None = None) -> list[ItemRow]:
        if topic_id is None:
            rows = self.db.execute(self._ITEM + " ORDER BY topic_id, position")
        else:
            rows = self.db.execute(self._ITEM + " WHERE topic_id = ? ORDER BY position", (topic_id,))
        return [ItemRow(*r) for r in rows]

    def item(self, item_id: int) -> ItemRow:
        row = self.db.execute(self._ITEM + " WHERE item_id = ?", (item_id,)).fetchone()
        if row is None:
            raise NotInPool(f"item {item_id} is not in the pool")
        return ItemRow(*row)

    def contributions(self, item_id: int) -> dict[str, int]:
        """Which runs returned the item, at which rank (kept from assessors: it would show run order)."""
        rows = self.db.execute("SELECT r.name, c.rank FROM contributions c JOIN runs r USING (run_id) "
                               "WHERE c.item_id = ? ORDER BY c.rank, r.name", (item_id,))
        return dict(rows.fetchall())

    def run_answers(self) -> list[tuple[str, str, str]]:
        """(run name, topic, answer id) of every Task 3 answer in the pool: the lab's answer map."""
        rows = self.db.execute("SELECT r.name, i.topic_id, i.doc_id FROM contributions c JOIN runs r USING (run_id) "
                               "JOIN items i USING (item_id) WHERE i.kind = 'task3' ORDER BY r.name, i.topic_id")
        return [(Path(n).stem, t, d) for n, t, d in rows]

    def overlap(self) -> list[str]:
        rows = self.db.execute("SELECT topic_id FROM topics WHERE overlap = 1 ORDER BY position")
        return [r[0] for r in rows]

    # -- assessors and judgements ---------------------------------------------------------------

    def assessors(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT name FROM assessors ORDER BY created, name")]

    def judge(self, item_id: int, assessor: str, grade: int, comment: str = "") -> Judgement:
        """Record (or change) ``assessor``'s grade of an item, committed before returning."""
        assessor = check_assessor(assessor)
        if isinstance(grade, bool) or not isinstance(grade, int) or grade not in KNOWN_RELEVANCE:
            raise AssessmentError(f"grade {grade!r} is not one of 0, 1, 2, 3, 5 (system failure), 6 (do not know)")
        comment = (comment or "")[:2000]
        at = _now()
        with self._write() as db:
            if db.execute("SELECT 1 FROM items WHERE item_id = ?", (item_id,)).fetchone() is None:
                raise NotInPool(f"item {item_id} is not in the pool")
            db.execute("INSERT OR IGNORE INTO assessors(name, created) VALUES (?, ?)", (assessor, at))
            seq = db.execute("INSERT INTO history(item_id, assessor, grade, comment, at) VALUES (?, ?, ?, ?, ?)",
                             (item_id, assessor, grade, comment, at)).lastrowid
            db.execute("INSERT INTO judgements(item_id, assessor, grade, comment, judged_at, first_seq) "
                       "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(item_id, assessor) DO UPDATE SET "
                       "grade = excluded.grade, comment = excluded.comment, judged_at = excluded.judged_at",
                       (item_id, assessor, grade, comment, at, seq))
            row = db.execute("SELECT item_id, assessor, grade, comment, judged_at, first_seq FROM judgements "
                             "WHERE item_id = ? AND assessor = ?", (item_id, assessor)).fetchone()
        return Judgement(*row)

    def clear(self, item_id: int, assessor: str) -> bool:
        """Withdraw ``assessor``'s judgement of an item (kept in the history); whether there was one."""
        assessor = check_assessor(assessor)
        with self._write() as db:
            cur = db.execute("DELETE FROM judgements WHERE item_id = ? AND assessor = ?", (item_id, assessor))
            if cur.rowcount:
                db.execute("INSERT INTO history(item_id, assessor, grade, comment, at) VALUES (?, ?, NULL, '', ?)",
                           (item_id, assessor, _now()))
        return bool(cur.rowcount)

    _JUDGEMENT = "SELECT j.item_id, j.assessor, j.grade, j.comment, j.judged_at, j.first_seq FROM judgements j"

    def judgements(self, assessor: str | None = None, topic_id: str | None = None) -> list[Judgement]:
        sql, args = self._JUDGEMENT, []
        where = []
        if topic_id is not None:
            sql += " JOIN items i USING (item_id)"
            where.append("i.topic_id = ?")
            args.append(topic_id)
        if assessor is not None:
            where.append("j.assessor = ?")
            args.append(assessor)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY j.first_seq"
        return [Judgement(*r) for r in self.db.execute(sql, args)]

    def progress(self, assessor: str | None = None) -> dict[str, dict[str, int]]:
        """Per topic: ``items``, ``judged`` (by ``assessor``; by anyone when ``None``), ``judged_any``."""
        out = {t: {"items": n, "judged": 0, "judged_any": 0}
               for t, n in self.db.execute("SELECT t.topic_id, count(i.item_id) FROM topics t LEFT JOIN items i "
                                           "USING (topic_id) GROUP BY t.topic_id ORDER BY t.position")}
        for t, n in self.db.execute("SELECT i.topic_id, count(DISTINCT j.item_id) FROM judgements j JOIN items i "
                                    "USING (item_id) GROUP BY i.topic_id"):
            out[t]["judged_any"] = n
            if assessor is None:
                out[t]["judged"] = n
        if assessor is not None:
            for t, n in self.db.execute("SELECT i.topic_id, count(*) FROM judgements j JOIN items i USING (item_id) "
                                        "WHERE j.assessor = ? GROUP BY i.topic_id", (assessor,)):
                out[t]["judged"] = n
        return out

    def history_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM history").fetchone()[0]
