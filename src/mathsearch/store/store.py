"""Read access to the collection store of an INDEX_DIR.

The store answers the questions that systems, run validation and evaluation ask
of a collection: posts and threads, formula instances and their visual ids,
links between questions.  Post and formula ids are handed out as strings, as
they appear in run and qrels files.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..records import LinkType
from .schema import SCHEMA_VERSION, SIDE_FILE, STORE_FILE


@dataclass(frozen=True, slots=True)
class StoredPost:
    post_id: int
    post_type: int
    thread_id: int
    parent_id: int | None
    title: str | None  # plain text, formulae as $LaTeX$ (questions only)
    tags: tuple[str, ...]
    body: str  # HTML
    text: str  # plain text, formulae as $LaTeX$
    score: int | None


@dataclass(frozen=True, slots=True)
class StoredFormula:
    formula_id: int
    post_id: int
    thread_id: int
    kind: str
    comment_id: int | None
    visual_id: str | None
    latex: str


_POST_COLS = "post_id, post_type, thread_id, parent_id, title, tags, body, text, score"
_FORMULA_COLS = "formula_id, post_id, thread_id, kind, comment_id, visual_id, latex"


def _post(row: tuple) -> StoredPost:
    return StoredPost(row[0], row[1], row[2], row[3], row[4], tuple(row[5].split()) if row[5] else (), row[6], row[7], row[8])


def _chunks(ids: list[int], n: int = 900) -> Iterator[list[int]]:
    for i in range(0, len(ids), n):
        yield ids[i : i + n]


def _ints(ids: Iterable[Any]) -> list[int]:
    out = []
    for x in ids:
        try:
            out.append(int(x))
        except (TypeError, ValueError):
            continue
    return out


class Store:
    """A read-only view of ``INDEX_DIR/store.sqlite`` with ``store-side.sqlite`` attached."""

    def __init__(self, index_dir: Path, db: sqlite3.Connection):
        self.index_dir = index_dir
        self.db = db

    @classmethod
    def open(cls, index_dir: str | Path) -> Store:
        index_dir = Path(index_dir)
        path = index_dir / STORE_FILE
        if not path.is_file():
            raise InputError(f"{index_dir} holds no collection store ({STORE_FILE}): build it with `mathsearch index`.")
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        try:
            version = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{path} is not a mathsearch store ({exc}).") from None
        if version is None or int(version[0]) != SCHEMA_VERSION:
            raise InputError(
                f"{path} was built with store schema {version[0] if version else '?'}, this mathsearch reads "
                f"schema {SCHEMA_VERSION}: rebuild it with `mathsearch index`."
            )
        side = index_dir / SIDE_FILE
        if not side.is_file():
            raise InputError(f"{index_dir} lacks {SIDE_FILE}: rebuild it with `mathsearch index`.")
        db.execute("ATTACH DATABASE ? AS side", (f"file:{side}?mode=ro",))
        return cls(index_dir, db)

    @classmethod
    def open_posts(cls, index_dir: str | Path) -> Store:
        """The posts of a store still being built (:func:`.build.build_store`'s ``meanwhile``): its
        posts table, written and indexed, and nothing else (no meta, no side file yet)."""
        path = Path(index_dir) / STORE_FILE
        if not path.is_file():
            raise InputError(f"{index_dir} holds no collection store ({STORE_FILE}) yet.")
        return cls(Path(index_dir), sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the store holds -------------------------------------------------------------
    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    def counts(self) -> dict[str, Any]:
        return json.loads(self.meta().get("counts", "{}"))

    def post_count(self, post_types: tuple[int, ...] = (1, 2)) -> int:
        """Posts of these types, by default questions and answers (what :meth:`counts` records, read
        from the posts themselves: a store still being built has no counts yet)."""
        marks = ",".join("?" * len(post_types))
        return int(self.db.execute(f"SELECT count(*) FROM posts WHERE post_type IN ({marks})", post_types).fetchone()[0])

    # -- posts ----------------------------------------------------------------------------
    def post(self, post_id: int | str) -> StoredPost | None:
        row = self.db.execute(f"SELECT {_POST_COLS} FROM posts WHERE post_id=?", (int(post_id),)).fetchone()
        return _post(row) if row else None

    def _rows_in(self, sql: str, ids: Iterable[Any]) -> Iterator[tuple]:
        """Rows of ``sql`` with ``{ids}`` standing for the ids, a few hundred ids a query (SQLite
        caps a statement's parameters); an ORDER BY holds within each chunk."""
        for chunk in _chunks(_ints(ids)):
            yield from self.db.execute(sql.format(ids=",".join("?" * len(chunk))), chunk)

    def posts(self, post_ids: Iterable[int | str]) -> dict[int, StoredPost]:
        return {row[0]: _post(row) for row in self._rows_in(f"SELECT {_POST_COLS} FROM posts WHERE post_id IN ({{ids}})", post_ids)}

    def thread_ids(self, post_ids: Iterable[int | str]) -> dict[str, int]:
        """``{post id: its thread's id}`` (ids as strings, as in a ranking) of the posts present."""
        sql = "SELECT post_id, thread_id FROM posts WHERE post_id IN ({ids})"
        return {str(pid): tid for pid, tid in self._rows_in(sql, post_ids)}

    def iter_posts(self, post_type: int | None = None) -> Iterator[StoredPost]:
        if post_type is None:
            rows = self.db.execute(f"SELECT {_POST_COLS} FROM posts ORDER BY post_id")
        else:
            rows = self.db.execute(f"SELECT {_POST_COLS} FROM posts WHERE post_type=? ORDER BY post_id", (post_type,))
        for row in rows:
            yield _post(row)

    def iter_answers(self) -> Iterator[StoredPost]:
        return self.iter_posts(2)

    def answers_of(self, thread_id: int) -> list[StoredPost]:
        rows = self.db.execute(f"SELECT {_POST_COLS} FROM posts WHERE thread_id=? AND post_type=2", (thread_id,))
        return [_post(r) for r in rows]

    def comments_of(self, post_id: int) -> list[tuple[int, str]]:
        return self.db.execute("SELECT comment_id, text FROM comments WHERE post_id=? ORDER BY comment_id", (post_id,)).fetchall()

    # Batched reads: one query per few hundred ids instead of one per post (index builds).
    def answers_of_threads(self, thread_ids: Iterable[int]) -> dict[int, list[StoredPost]]:
        """``{thread id: its answers by post id}`` for the threads that have answers."""
        out: dict[int, list[StoredPost]] = {}
        sql = f"SELECT {_POST_COLS} FROM posts WHERE post_type=2 AND thread_id IN ({{ids}}) ORDER BY thread_id, post_id"
        for row in self._rows_in(sql, thread_ids):
            out.setdefault(row[2], []).append(_post(row))
        return out

    def comments_of_posts(self, post_ids: Iterable[int]) -> dict[int, list[tuple[int, str]]]:
        """``{post id: [(comment id, text)] by comment id}`` for the posts that have comments."""
        out: dict[int, list[tuple[int, str]]] = {}
        sql = "SELECT post_id, comment_id, text FROM comments WHERE post_id IN ({ids}) ORDER BY post_id, comment_id"
        for post_id, comment_id, text in self._rows_in(sql, post_ids):
            out.setdefault(post_id, []).append((comment_id, text))
        return out

    def answer_ids_of_threads(self, thread_ids: Iterable[int]) -> dict[int, list[int]]:
        """``{thread id: its answer ids}`` without reading texts (query time: signals that pass a
        question's score to its answers ask this for tens of threads a query)."""
        out: dict[int, list[int]] = {}
        sql = "SELECT thread_id, post_id FROM posts WHERE post_type=2 AND thread_id IN ({ids}) ORDER BY thread_id, post_id"
        for thread_id, post_id in self._rows_in(sql, thread_ids):
            out.setdefault(thread_id, []).append(post_id)
        return out

    def accepted_answers(self, thread_ids: Iterable[int]) -> dict[int, int]:
        """``{thread id: its accepted answer's id}`` for the threads whose question names one
        (collections without the AcceptedAnswerId attribute name none)."""
        sql = "SELECT post_id, accepted_answer_id FROM posts WHERE post_type=1 AND accepted_answer_id IS NOT NULL AND post_id IN ({ids})"
        return {thread_id: answer_id for thread_id, answer_id in self._rows_in(sql, thread_ids)}

    def filter_facts(self, post_ids: Iterable[int | str]) -> dict[int, tuple[int, int | None, tuple[str, ...], int | None, int | None]]:
        """``{post id: (thread id, post score, thread tags, thread answer count, thread's accepted
        answer)}`` of the posts present: what the query filters (``[tag]``, ``score:N``...) read."""
        sql = ("SELECT p.post_id, p.thread_id, p.score, q.tags, q.answer_count, q.accepted_answer_id FROM posts p "
               "LEFT JOIN posts q ON q.post_id = p.thread_id WHERE p.post_id IN ({ids})")
        return {pid: (tid, score, tuple(tags.split()) if tags else (), answers, accepted)
                for pid, tid, score, tags, answers, accepted in self._rows_in(sql, post_ids)}

    def holds_field(self, column: str) -> bool:
        """Whether any post has a value for ``column`` (``score``, ``answer_count``,
        ``accepted_answer_id``): raw dumps have them all, the ARQMath files only some."""
        if column not in ("score", "answer_count", "accepted_answer_id"):
            raise ValueError(column)
        return self.db.execute(f"SELECT 1 FROM posts WHERE {column} IS NOT NULL LIMIT 1").fetchone() is not None

    def tag_count(self, tag: str) -> int:
        """How many threads carry ``tag``."""
        sql = "SELECT COUNT(*) FROM posts WHERE post_type=1 AND (' ' || tags || ' ') LIKE ? ESCAPE '\\'"
        pattern = "% " + tag.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + " %"
        return int(self.db.execute(sql, (pattern,)).fetchone()[0])

    def iter_post_ids(self, post_type: int) -> Iterator[tuple[int, int]]:
        """``(post id, thread id)`` of every post of a type, by post id, without reading texts."""
        yield from self.db.execute("SELECT post_id, thread_id FROM posts WHERE post_type=? ORDER BY post_id", (post_type,))

    def post_type(self, post_id: int | str) -> int | None:
        """1 question, 2 answer, None when the post is not in the collection."""
        try:
            row = self.db.execute("SELECT post_type FROM posts WHERE post_id=?", (int(post_id),)).fetchone()
        except (TypeError, ValueError):
            return None
        return row[0] if row else None

    def answer_ids(self) -> set[str]:
        return {str(r[0]) for r in self.db.execute("SELECT post_id FROM posts WHERE post_type=2")}

    def post_ids(self) -> set[str]:
        return {str(r[0]) for r in self.db.execute("SELECT post_id FROM posts")}

    # -- links ----------------------------------------------------------------------------
    def linked(self, post_id: int, link_type: LinkType | None = None) -> list[int]:
        """Questions linked to ``post_id`` in either direction."""
        sql = (
            "SELECT related_post_id FROM links WHERE post_id=?{t} UNION SELECT post_id FROM links WHERE related_post_id=?{t}"
        ).format(t="" if link_type is None else f" AND link_type={int(link_type)}")
        return [r[0] for r in self.db.execute(sql, (post_id, post_id))]

    def linked_many(self, post_ids: Iterable[int], link_type: LinkType | None = None) -> dict[int, list[int]]:
        """:meth:`linked` of many posts in two queries: ``{post id: linked questions}``."""
        t = "" if link_type is None else f" AND link_type={int(link_type)}"
        ids = _ints(post_ids)
        out: dict[int, set[int]] = {}
        for sql in (f"SELECT post_id, related_post_id FROM links WHERE post_id IN ({{ids}}){t}",
                    f"SELECT related_post_id, post_id FROM links WHERE related_post_id IN ({{ids}}){t}"):
            for a, b in self._rows_in(sql, ids):
                out.setdefault(a, set()).add(b)
        return {k: sorted(v) for k, v in out.items()}

    # -- formulae -------------------------------------------------------------------------
    def formula(self, formula_id: int | str) -> StoredFormula | None:
        try:
            row = self.db.execute(f"SELECT {_FORMULA_COLS} FROM formulas WHERE formula_id=?", (int(formula_id),)).fetchone()
        except (TypeError, ValueError):
            return None
        return StoredFormula(*row) if row else None

    def formula_kind(self, formula_id: int | str) -> str | None:
        f = self.formula(formula_id)
        return f.kind if f else None

    def visual_id(self, formula_id: int | str) -> str | None:
        f = self.formula(formula_id)
        return f.visual_id if f else None

    def visual_ids(self, formula_ids: Iterable[int | str]) -> dict[str, str | None]:
        sql = "SELECT formula_id, visual_id FROM formulas WHERE formula_id IN ({ids})"
        return {str(fid): vid for fid, vid in self._rows_in(sql, formula_ids)}

    def formulas_with_visual_id(self, visual_id: str, limit: int = 100) -> list[StoredFormula]:
        """At most ``limit`` instances of one visual id, by formula id (the visual id is indexed)."""
        rows = self.db.execute(f"SELECT {_FORMULA_COLS} FROM formulas WHERE visual_id=? ORDER BY formula_id LIMIT ?",
                               (visual_id, int(limit)))
        return [StoredFormula(*r) for r in rows]

    def formulas_of(self, post_id: int) -> list[StoredFormula]:
        rows = self.db.execute(f"SELECT {_FORMULA_COLS} FROM formulas WHERE post_id=? ORDER BY formula_id", (post_id,))
        return [StoredFormula(*r) for r in rows]

    def iter_formulas(self, kinds: Iterable[str] | None = None) -> Iterator[StoredFormula]:
        for rows in self.formula_rows(kinds):
            for r in rows:
                yield StoredFormula(*r)

    def formula_rows(self, kinds: Iterable[str] | None = None, batch: int = 10_000) -> Iterator[list[tuple]]:
        """:meth:`iter_formulas` as plain rows (a :class:`StoredFormula`'s fields in order), ``batch``
        at a time: the formula index's build reads all of them (28M at full size), where a record
        per row cost more than the read."""
        if kinds is None:
            rows = self.db.execute(f"SELECT {_FORMULA_COLS} FROM formulas ORDER BY formula_id")
        else:
            kinds = list(kinds)
            marks = ",".join("?" * len(kinds))
            rows = self.db.execute(f"SELECT {_FORMULA_COLS} FROM formulas WHERE kind IN ({marks}) ORDER BY formula_id", kinds)
        while chunk := rows.fetchmany(batch):
            yield chunk
