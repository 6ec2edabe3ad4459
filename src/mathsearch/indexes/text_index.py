"""Tantivy indexes of answers (with thread context) and of questions, scored by BM25.

Layout under INDEX_DIR: ``text/answers/`` and ``text/questions/`` (tantivy), ``text/manifest.json``.
Fields hold pre-analysed tokens (:mod:`.documents`) under tantivy's ``whitespace`` tokenizer, and
queries are built in code from term queries (tantivy's query parser rejects symbol-heavy tokens
such as ``m:\\frac``), so what is matched is exactly what :mod:`mathsearch.text.analysis` made.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import tantivy

from ..errors import InputError
from ..store import Store
from ..text.analysis import LATEX_WORDS_SOURCE
from .documents import ANSWER_FIELDS, QUESTION_FIELDS, QueryBags, QuestionBags, answer_fields

TEXT_DIR = "text"
MANIFEST = "manifest.json"
ANALYSIS_VERSION = 1  # bump when analysis changes: old indexes must be rebuilt
_TOKENIZER = "whitespace"
Progress = Callable[[str, int, int], None]


def _schema(fields: Iterable[str], parent: bool) -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("id", stored=True, indexed=True, fast=True)
    if parent:
        sb.add_unsigned_field("thread", stored=True, indexed=True, fast=True)
    for name in fields:
        # freq, not positions: BM25 needs term frequencies only, and positions double the size.
        sb.add_text_field(name, stored=False, tokenizer_name=_TOKENIZER, index_option="freq")
    return sb.build()


def _doc(doc_id: int, thread: int | None, fields: Mapping[str, list[str]]) -> tantivy.Document:
    doc = tantivy.Document()
    doc.add_unsigned("id", doc_id)
    if thread is not None:
        doc.add_unsigned("thread", thread)
    for name, tokens in fields.items():
        if tokens:
            doc.add_text(name, " ".join(tokens))
    return doc


def build_text_indexes(store: Store, index_dir: Path, progress: Progress | None = None, heap: int = 256_000_000) -> dict:
    """Write ``index_dir/text`` from the store; return the counts for ``mathsearch index --json``."""
    root = Path(index_dir) / TEXT_DIR
    (root / "answers").mkdir(parents=True, exist_ok=True)
    (root / "questions").mkdir(parents=True, exist_ok=True)
    answers = tantivy.Index(_schema(ANSWER_FIELDS, parent=True), path=str(root / "answers"))
    questions = tantivy.Index(_schema(QUESTION_FIELDS, parent=False), path=str(root / "questions"))
    a_writer = answers.writer(heap_size=heap, num_threads=1)
    q_writer = questions.writer(heap_size=max(heap // 4, 16_000_000), num_threads=1)
    counts = store.counts()
    total = int(counts.get("answers", 0) or 0)
    n_answers = n_questions = n_orphans = 0
    seen: set[int] = set()
    for q in store.iter_posts(1):
        thread_answers = store.answers_of(q.post_id)
        if not thread_answers:
            continue  # a question without answers is never a Task 1 hit nor leads to one
        bags = QuestionBags.of(q.title, q.text, q.tags)
        q_writer.add_document(_doc(q.post_id, None, bags.fields()))
        n_questions += 1
        for a in thread_answers:
            comments = [text for _, text in store.comments_of(a.post_id)]
            a_writer.add_document(_doc(a.post_id, a.thread_id, answer_fields(a.text, comments, bags)))
            seen.add(a.post_id)
            n_answers += 1
            if progress and n_answers % 500 == 0:
                progress("text index", n_answers, total)
    # Answers whose question is missing from the collection still get indexed, without context.
    for a in store.iter_answers():
        if a.post_id in seen:
            continue
        comments = [text for _, text in store.comments_of(a.post_id)]
        a_writer.add_document(_doc(a.post_id, a.thread_id, answer_fields(a.text, comments, None)))
        n_answers += 1
        n_orphans += 1
    for w in (a_writer, q_writer):
        w.commit()
        w.wait_merging_threads()
    if progress:
        progress("text index", n_answers, max(total, n_answers))
    out = {"text_answers": n_answers, "text_questions": n_questions, "text_answers_without_question": n_orphans}
    (root / MANIFEST).write_text(json.dumps({"analysis_version": ANALYSIS_VERSION, "latex_words": LATEX_WORDS_SOURCE, **out}))
    return out


@dataclass(frozen=True, slots=True)
class Clause:
    """Match the query tokens of ``bag`` against index field ``field`` with weight ``weight``."""

    bag: str
    field: str
    weight: float = 1.0


class TextIndex:
    """Search side of the text indexes: weighted BM25 over chosen (query bag, field) pairs."""

    def __init__(self, root: Path):
        manifest = root / MANIFEST
        if not manifest.is_file():
            raise InputError(f"{root.parent} has no text index ({TEXT_DIR}/{MANIFEST}): rebuild it with `mathsearch index`.")
        meta = json.loads(manifest.read_text())
        if meta.get("analysis_version") != ANALYSIS_VERSION or meta.get("latex_words") != LATEX_WORDS_SOURCE:
            raise InputError(f"the text index in {root.parent} is out of date: rebuild it with `mathsearch index`.")
        self.meta = meta
        self.answers = tantivy.Index.open(str(root / "answers"))
        self.questions = tantivy.Index.open(str(root / "questions"))
        self._a_searcher = self.answers.searcher()
        self._q_searcher = self.questions.searcher()

    @classmethod
    def open(cls, index_dir: str | Path) -> TextIndex:
        return cls(Path(index_dir) / TEXT_DIR)

    @staticmethod
    def _query(schema: tantivy.Schema, query: QueryBags, clauses: Iterable[Clause]) -> tantivy.Query | None:
        subs = []
        bags: dict[str, Counter[str]] = {}
        for c in clauses:
            if c.weight <= 0:
                continue
            if c.bag not in bags:
                bags[c.bag] = query.bag(c.bag)
            for token, tf in bags[c.bag].items():
                # Repeated query terms count more, sub-linearly (a long topic repeats its key words).
                boost = c.weight * (1.0 + 0.5 * (tf - 1)) if tf > 1 else c.weight
                q = tantivy.Query.term_query(schema, c.field, token, index_option="freq")
                subs.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, boost)))
        if not subs:
            return None
        return tantivy.Query.boolean_query(subs)

    def _search(self, searcher, schema, bags: QueryBags, clauses, limit, key: str) -> dict[int, float]:
        query = self._query(schema, bags, clauses)
        if query is None or limit <= 0:
            return {}
        hits = searcher.search(query, limit=limit, count=False).hits
        if not hits:
            return {}
        ids = searcher.fast_field_values(key, [addr for _, addr in hits])
        return {int(i): float(s) for (s, _), i in zip(hits, ids, strict=True)}

    def search_answers(self, bags: QueryBags, clauses: Iterable[Clause], limit: int = 1000) -> dict[int, float]:
        """``{answer id: BM25 score}`` of the best ``limit`` answers."""
        return self._search(self._a_searcher, self.answers.schema, bags, clauses, limit, "id")

    def search_questions(self, bags: QueryBags, clauses: Iterable[Clause], limit: int = 100) -> dict[int, float]:
        """``{question id: BM25 score}`` of the best ``limit`` questions (those with answers)."""
        return self._search(self._q_searcher, self.questions.schema, bags, clauses, limit, "id")

    def threads_of(self, answer_ids: list[int]) -> dict[int, int]:
        """The thread (question id) of each answer found in the index."""
        out: dict[int, int] = {}
        schema = self.answers.schema
        for aid in answer_ids:
            hits = self._a_searcher.search(tantivy.Query.term_query(schema, "id", aid), limit=1, count=False).hits
            if hits:
                out[aid] = int(self._a_searcher.fast_field_values("thread", [hits[0][1]])[0])
        return out

    @property
    def num_answers(self) -> int:
        return self._a_searcher.num_docs
