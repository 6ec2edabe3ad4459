"""Tantivy indexes of answers (with thread context) and of questions, scored by BM25.

Layout under INDEX_DIR: ``text/answers/`` and ``text/questions/`` (tantivy), ``text/manifest.json``.
Fields hold pre-analysed tokens (:mod:`.documents`) under tantivy's ``whitespace`` tokenizer, and
queries are built in code from term queries (tantivy's query parser rejects symbol-heavy tokens
such as ``m:\\frac``), so what is matched is exactly what :mod:`mathsearch.text.analysis` made.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tantivy

from ..errors import InputError
from ..parallel import batched, cyclic_gc_paused, default_workers, ordered_map
from ..store import Store
from ..text.analysis import LATEX_WORDS_SOURCE
from .documents import ANSWER_FIELDS, QUESTION_FIELDS, QueryBags, QuestionBags, answer_fields, field_texts

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


# One analysed document: (post id, thread id or None, {field: tokens joined by spaces}).
Doc = tuple[int, int | None, dict[str, str]]
# A unit of analysis work: ("threads", question ids) or ("orphans", answer ids).
Job = tuple[str, list[int]]
_JOB_SIZE = 200  # posts per job: big enough to batch store reads, small enough to spread evenly


def _doc(doc: Doc) -> tantivy.Document:
    doc_id, thread, fields = doc
    out = tantivy.Document()
    out.add_unsigned("id", doc_id)
    if thread is not None:
        out.add_unsigned("thread", thread)
    for name, text in fields.items():
        out.add_text(name, text)
    return out


def thread_docs(store: Store, question_ids: list[int]) -> list[tuple[Doc, list[Doc]]]:
    """The question document and answer documents of each thread that has answers, in id order."""
    questions = store.posts(question_ids)
    answers = store.answers_of_threads(question_ids)
    comments = store.comments_of_posts([a.post_id for thread in answers.values() for a in thread])
    out: list[tuple[Doc, list[Doc]]] = []
    for qid in question_ids:
        q, thread = questions.get(qid), answers.get(qid)
        if q is None or q.post_type != 1 or not thread:
            continue  # a question without answers is never a Task 1 hit nor leads to one
        bags = QuestionBags.of(q.title, q.text, q.tags)
        docs: list[Doc] = [
            (a.post_id, a.thread_id, field_texts(answer_fields(a.text, [t for _, t in comments.get(a.post_id, ())], bags)))
            for a in thread
        ]
        out.append(((q.post_id, None, field_texts(bags.fields())), docs))
    return out


def orphan_docs(store: Store, answer_ids: list[int]) -> list[Doc]:
    """Documents of answers whose question is missing from the collection: no thread context."""
    answers = store.posts(answer_ids)
    comments = store.comments_of_posts(answer_ids)
    out: list[Doc] = []
    for aid in answer_ids:
        a = answers[aid]
        out.append((a.post_id, a.thread_id, field_texts(answer_fields(a.text, [t for _, t in comments.get(aid, ())], None))))
    return out


_JOBS: dict[str, Callable[[Store, list[int]], list]] = {"threads": thread_docs, "orphans": orphan_docs}
_worker_store: Store | None = None  # each worker process reads through its own connection


def _open_worker_store(index_dir: str) -> None:
    global _worker_store
    _worker_store = Store.open(index_dir)


def _run_job(job: Job) -> list:
    if _worker_store is None:
        raise RuntimeError("a text analysis worker runs without its store (no initializer)")
    return _job_on(_worker_store, job)


def _job_on(store: Store, job: Job) -> list:
    with cyclic_gc_paused():  # the documents hold no cycle; the collector's passes walked the analysis' caches
        return _JOBS[job[0]](store, job[1])


def _analysed(store: Store, jobs: Iterable[Job], workers: int) -> Generator[list, None, None]:
    """The results of ``jobs`` in order, analysed by ``workers`` forked processes (or here)."""
    return ordered_map(_run_job, jobs, workers, initializer=_open_worker_store, initargs=(str(store.index_dir),),
                       here=lambda job: _job_on(store, job))


def _jobs(store: Store) -> Iterator[Job]:
    question_ids = [pid for pid, _ in store.iter_post_ids(1)]
    for ids in batched(question_ids, _JOB_SIZE):
        yield ("threads", ids)
    questions = set(question_ids)
    orphans = [pid for pid, thread in store.iter_post_ids(2) if thread not in questions]
    for ids in batched(orphans, _JOB_SIZE):
        yield ("orphans", ids)


def build_text_indexes(
    store: Store, index_dir: Path, progress: Progress | None = None, heap: int = 256_000_000, workers: int | None = None
) -> dict:
    """Write ``index_dir/text`` from the store; return the counts for ``mathsearch index --json``.

    ``workers`` processes analyse the posts (default: up to 2 on a multi-core machine), this one
    feeds tantivy; the documents and their order are the same for any number of workers.
    """
    workers = default_workers() if workers is None else workers
    root = Path(index_dir) / TEXT_DIR
    (root / "answers").mkdir(parents=True, exist_ok=True)
    (root / "questions").mkdir(parents=True, exist_ok=True)
    total = int(store.counts().get("answers", 0) or 0)
    n_answers = n_questions = n_orphans = 0
    with contextlib.closing(_analysed(store, _jobs(store), workers)) as results:  # closing stops the workers
        first = next(results, None)  # the workers fork before tantivy starts its threads
        answers = tantivy.Index(_schema(ANSWER_FIELDS, parent=True), path=str(root / "answers"))
        questions = tantivy.Index(_schema(QUESTION_FIELDS, parent=False), path=str(root / "questions"))
        a_writer = answers.writer(heap_size=heap, num_threads=1)
        q_writer = questions.writer(heap_size=max(heap // 4, 16_000_000), num_threads=1)
        for batch in itertools.chain([] if first is None else [first], results):
            for item in batch:
                if len(item) == 2:  # a thread: (question document, answer documents)
                    question, docs = item
                    q_writer.add_document(_doc(question))
                    n_questions += 1
                else:  # an answer without its question
                    docs = [item]
                    n_orphans += 1
                for doc in docs:
                    a_writer.add_document(_doc(doc))
                n_answers += len(docs)
            if progress:
                progress("text index", n_answers, max(total, n_answers))
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


def query_terms(query: QueryBags, clauses: Iterable[Clause]) -> list[tuple[str, str, float]]:
    """The (field, token, boost) term queries of :meth:`TextIndex._query`, one per (field, token),
    in first-seen order; the sharded index weights the same terms per shard.

    Two clauses that put the same token on the same field (``words->question`` and
    ``title_words->question`` both hold the title's words) become one term with the boosts summed:
    BM25 is linear in the boost, so the scores are the same and the posting list is read once.
    """
    out: dict[tuple[str, str], float] = {}
    bags: dict[str, Counter[str]] = {}
    for c in clauses:
        if c.weight <= 0:
            continue
        if c.bag not in bags:
            bags[c.bag] = query.bag(c.bag)
        for token, tf in bags[c.bag].items():
            # Repeated query terms count more, sub-linearly (a long topic repeats its key words).
            boost = c.weight * (1.0 + 0.5 * (tf - 1)) if tf > 1 else c.weight
            out[(c.field, token)] = out.get((c.field, token), 0.0) + boost
    return [(fld, token, boost) for (fld, token), boost in out.items()]


def only_ids(schema: tantivy.Schema, ids: Sequence[int]) -> tantivy.Query:
    """A filter that matches the documents of ``ids`` and adds nothing to their score."""
    return tantivy.Query.const_score_query(tantivy.Query.term_set_query(schema, "id", list(ids)), 0.0)


def bm25_idf(df: int, n: int) -> float:
    """Tantivy's BM25 idf (``ln(1 + (N - df + 0.5) / (df + 0.5))``, in float32 as tantivy has it)."""
    x = np.float32((n - df) + 0.5) / np.float32(df + 0.5)
    return float(np.log(np.float32(1.0) + x, dtype=np.float32))


def select_terms(terms: list[tuple[str, str, float]], doc_freq: Callable[[str, str], int], n_docs: int,
                 max_terms: int, max_df: Mapping[str, float] | None = None) -> list[tuple[str, str, float]]:
    """The ``max_terms`` terms that can add most to a score (boost x idf), in their first order;
    terms no document holds are dropped.  ``max_terms`` <= 0 keeps every term that matches.
    ``max_df`` (``{field: share}``) drops the terms of a field held by more than that share of the
    documents: the commonest tokens (``=``, ``(``, ``x`` in three answers of four) have the longest
    posting lists and the smallest idf.

    A long topic makes hundreds of term queries (median ~190 with ``ours_static``'s answer fields);
    each one reads a posting list, so at 1.4M answers the answer BM25 is most of a query's time,
    while its many frequent, low-idf terms move the top of the ranking little.
    """
    kept = []
    shares = max_df or {}
    for i, (fld, token, boost) in enumerate(terms):
        df = doc_freq(fld, token)
        if df > 0 and (fld not in shares or df <= shares[fld] * n_docs):
            kept.append((boost * bm25_idf(df, n_docs), i))
    if 0 < max_terms < len(kept):
        # Query terms by weight (ties: the first in the query), not hits: ranking's order does not apply.
        kept = sorted(sorted(kept, key=lambda x: (-x[0], x[1]))[:max_terms], key=lambda x: x[1])
    return [terms[i] for _, i in kept]


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
    def _query(schema: tantivy.Schema, terms: list[tuple[str, str, float]],
               among: Sequence[int] = ()) -> tantivy.Query | None:
        subs = []
        for field, token, boost in terms:
            q = tantivy.Query.term_query(schema, field, token, index_option="freq")
            subs.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, boost)))
        if not subs:
            return None
        if among:
            subs.append((tantivy.Occur.Must, only_ids(schema, among)))
        return tantivy.Query.boolean_query(subs)

    def _search(self, searcher, schema, bags: QueryBags, clauses, limit, key: str, max_terms: int,
                among: Sequence[int] = (), max_df: Mapping[str, float] | None = None) -> dict[int, float]:
        if limit <= 0:
            return {}
        terms = query_terms(bags, clauses)
        if max_terms > 0 or max_df:
            terms = select_terms(terms, searcher.doc_freq, searcher.num_docs, max_terms, max_df)
        query = self._query(schema, terms, among)
        if query is None:
            return {}
        hits = searcher.search(query, limit=limit, count=False).hits
        if not hits:
            return {}
        ids = searcher.fast_field_values(key, [addr for _, addr in hits])
        return {int(i): float(s) for (s, _), i in zip(hits, ids, strict=True)}

    def search_answers(self, bags: QueryBags, clauses: Iterable[Clause], limit: int = 1000,
                       max_terms: int = 0, max_df: Mapping[str, float] | None = None) -> dict[int, float]:
        """``{answer id: BM25 score}`` of the best ``limit`` answers (``max_terms``, ``max_df``:
        :func:`select_terms`)."""
        return self._search(self._a_searcher, self.answers.schema, bags, clauses, limit, "id", max_terms, max_df=max_df)

    def score_answers(self, bags: QueryBags, clauses: Iterable[Clause], answer_ids: Sequence[int],
                      max_terms: int = 0, max_df: Mapping[str, float] | None = None) -> dict[int, float]:
        """``{answer id: BM25 score}`` of ``answer_ids`` alone, those any term matches: the scores
        :meth:`search_answers` gives them (the collection's statistics), whatever else would rank."""
        ids = sorted(set(answer_ids))
        found = self._search(self._a_searcher, self.answers.schema, bags, clauses, len(ids), "id", max_terms, ids,
                             max_df=max_df)
        return {a: s for a, s in found.items() if s > 0}  # the filter alone scores 0: no term matched

    def search_questions(self, bags: QueryBags, clauses: Iterable[Clause], limit: int = 100,
                         max_terms: int = 0, max_df: Mapping[str, float] | None = None) -> dict[int, float]:
        """``{question id: BM25 score}`` of the best ``limit`` questions (those with answers)."""
        return self._search(self._q_searcher, self.questions.schema, bags, clauses, limit, "id", max_terms,
                            max_df=max_df)

    @property
    def num_answers(self) -> int:
        return self._a_searcher.num_docs

    def answer_doc_freq(self, field: str, token: str) -> int:
        """How many answers hold ``token`` in ``field`` (the idf of "no close match" evidence)."""
        return self._a_searcher.doc_freq(field, token)

    def answers_near(self, field: str, token: str, distance: int, limit: int = 50,
                     context: Sequence[str] = ()) -> list[int]:
        """Ids of up to ``limit`` answers holding, in ``field``, a term within ``distance`` edits of
        ``token`` (a swap of two letters is one edit): where a misspelt word's meaning is found.
        With ``context`` (the query's other terms), only answers holding one of them too, where any
        does: the near word that answers about the rest of the query use."""
        schema, searcher = self.answers.schema, self._a_searcher
        near = tantivy.Query.fuzzy_term_query(schema, field, token, distance=distance, transposition_cost_one=True)
        queries = [near]
        if context:
            about = tantivy.Query.boolean_query([(tantivy.Occur.Should, tantivy.Query.term_query(schema, field, t))
                                                 for t in context])
            queries.insert(0, tantivy.Query.boolean_query([(tantivy.Occur.Must, near), (tantivy.Occur.Must, about)]))
        for query in queries:
            hits = searcher.search(query, limit=limit, count=False).hits
            if hits:
                ids = searcher.fast_field_values("id", [addr for _, addr in hits])
                return [i for i in ids if isinstance(i, int)]
        return []
