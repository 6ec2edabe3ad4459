"""Scoring signals that systems combine: each maps a query to ``{answer id: score}``.

The functions:

* :func:`fielded_bm25` BM25 over weighted (query part, index field) pairs of the answer index.
* :func:`similar_questions` BM25 of collection questions against the topic (question-question
  similarity; topics are questions, and duplicates share vocabulary).
* :func:`thread_scores` spreads question scores onto their answers.
* :func:`linked_scores` answers of questions linked (as duplicates, related, or either) to the given
  questions.
* :func:`dense_answers` / :func:`dense_questions` cosine similarity of the dense index's vectors
  (needs the optional dense index).

The registry (:data:`SIGNAL_KINDS`): each kind of signal a config may name (``[signals.NAME]``
with ``kind``, by default ``NAME``) is a frozen dataclass of its parameters that refuses unknown
keys, with ``scores(ctx, query, similar)``; ``similar`` (:class:`SimilarQuestions`) gives the
collection questions most like the topic, by BM25 (``similar()``) and by vector
(``similar.dense(limit)``), each computed once per query for every signal that starts from them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

from .. import ranking
from ..indexes.documents import ANSWER_FIELDS, QUESTION_FIELDS
from ..indexes.formula import Scoring
from ..indexes.text_index import Clause
from ..records import LinkType
from .base import SearchContext, SearchQuery
from .formula_scores import TANGENT_S, Rescorer, answer_scores, largest_formulae
from .teacher import Teacher, applies, rescored


def clauses_from(weights: Mapping[str, float]) -> list[Clause]:
    """``{"bag->field": weight}`` (the config file's form) as clauses."""
    out = []
    for key, w in weights.items():
        bag, _, fld = key.partition("->")
        out.append(Clause(bag.strip(), fld.strip(), float(w)))
    return out


def fielded_bm25(ctx: SearchContext, query: SearchQuery, weights: Mapping[str, float], limit: int,
                 max_terms: int = 0, max_df: Mapping[str, float] | None = None) -> dict[int, float]:
    return ctx.text.search_answers(query.bags, clauses_from(weights), limit, max_terms, max_df)


def similar_questions(ctx: SearchContext, query: SearchQuery, weights: Mapping[str, float], limit: int,
                      max_terms: int = 0, max_df: Mapping[str, float] | None = None) -> dict[int, float]:
    return ctx.text.search_questions(query.bags, clauses_from(weights), limit, max_terms, max_df)


def thread_scores(ctx: SearchContext, questions: Mapping[int, float]) -> dict[int, float]:
    """Each answer of a scored question gets the question's score."""
    out: dict[int, float] = {}
    answers = ctx.store.answer_ids_of_threads(questions)
    for qid, score in questions.items():
        for a in answers.get(qid, ()):
            out[a] = max(out.get(a, 0.0), score)
    return out


# What a linked signal follows: PostLinks of type 3 (duplicate), 1 (related), or either.
LINK_TYPES: Mapping[str, LinkType | None] = MappingProxyType(
    {"duplicate": LinkType.DUPLICATE, "related": LinkType.RELATED, "any": None})


def linked_scores(ctx: SearchContext, questions: Mapping[int, float], decay: float = 1.0,
                  types: str = "duplicate") -> dict[int, float]:
    """Answers of questions linked (``types``: :data:`LINK_TYPES`) to scored questions, with that
    score times ``decay``."""
    out: dict[int, float] = {}
    store = ctx.store
    links = store.linked_many(questions, LINK_TYPES[types])
    answers = store.answer_ids_of_threads({o for others in links.values() for o in others})
    for qid, score in questions.items():
        for other in links.get(qid, ()):
            for a in answers.get(other, ()):
                out[a] = max(out.get(a, 0.0), score * decay)
    return out


def prefetch_query_vector(ctx: SearchContext, query: SearchQuery) -> None:
    """Start encoding the query on the context's worker thread, so that the lexical signals run
    meanwhile: MiniLM (torch) releases the GIL, so on two cores the encoding (~92 CPU ms) overlaps
    the answer BM25 (~159 CPU ms at 1.4M answers) instead of adding to it."""
    from ..indexes.dense import query_passage

    key = query_passage(query.title, query.question)
    if key not in ctx.query_vectors and key not in ctx.pending_vectors:
        dense = ctx.dense  # opened here, not on the worker: the index is read by one thread at a time
        ctx.pending_vectors[key] = ctx.worker().submit(dense.encode, key)


def query_vector(ctx: SearchContext, query: SearchQuery):
    from ..indexes.dense import query_passage

    # One embedding per query text, shared by the dense signals and kept for the context's life
    # (tuning runs the same topics many times); bounded so a long-lived server does not grow.
    cache = ctx.query_vectors
    key = query_passage(query.title, query.question)
    vector = cache.get(key)
    if vector is None:
        # both dense signals may ask at once (on the signal threads): each waits for the one encoding
        pending = ctx.pending_vectors.get(key)
        vector = pending.result() if pending is not None else ctx.dense.encode(key)
        if len(cache) >= 10_000:
            cache.clear()
        cache[key] = vector
        ctx.pending_vectors.pop(key, None)
    return vector


def dense_answers(ctx: SearchContext, query: SearchQuery, limit: int) -> dict[int, float]:
    return ctx.dense.search_answers(query_vector(ctx, query), limit)


def dense_questions(ctx: SearchContext, query: SearchQuery, limit: int) -> dict[int, float]:
    return ctx.dense.search_questions(query_vector(ctx, query), limit)


class SimilarQuestions:
    """The collection questions most like the topic, each way of finding them computed once per
    query and shared by the signals that start from them (on any thread): by BM25 over the
    ``questions`` signal's fields (``similar()``) and by the topic's vector (``similar.dense(limit)``).
    :meth:`hiding` gives the same with some questions left out (a query that hides them)."""

    def __init__(self, ctx: SearchContext, query: SearchQuery, by: QuestionsSignal | None = None,
                 hidden: frozenset[int] = frozenset(), found: SimilarQuestions | None = None,
                 teacher: Teacher = Teacher()):
        self.ctx, self.query, self.by, self.hidden = ctx, query, by or QuestionsSignal(), hidden
        self.teacher = teacher  # re-scores the ones by vector on a student's index (.teacher)
        self._found = found or self  # the one that computes (a hiding view reads its results)
        # one lock a way: the BM25 search must not wait on the vector search (which waits on the
        # topic's encoding), nor the other way round, when their signals run side by side
        self._bm25_lock, self._dense_lock = threading.Lock(), threading.Lock()
        self._bm25: dict[int, float] | None = None
        self._dense: dict[int, dict[int, float]] = {}

    def hiding(self, questions: Iterable[int]) -> SimilarQuestions:
        return SimilarQuestions(self.ctx, self.query, self.by, self.hidden | frozenset(questions), self._found, self.teacher)

    def _shown(self, found: dict[int, float]) -> dict[int, float]:
        return {q: v for q, v in found.items() if q not in self.hidden} if self.hidden else found

    def __call__(self) -> dict[int, float]:
        f = self._found
        with f._bm25_lock:  # the questions and linked signals share one search, whichever thread asks first
            if f._bm25 is None:
                by = f.by
                f._bm25 = similar_questions(f.ctx, f.query, by.fields, by.limit, by.max_terms, by.max_df)
        return self._shown(f._bm25)

    def dense(self, limit: int) -> dict[int, float]:
        f = self._found
        with f._dense_lock:
            if limit not in f._dense:
                if applies(f.ctx, f.teacher):  # a student's index: its best questions re-scored by MiniLM
                    found = dense_questions(f.ctx, f.query, max(limit, f.teacher.rescore))
                    f._dense[limit] = rescored(f.ctx, query_vector(f.ctx, f.query), found, f.teacher, limit)
                else:
                    f._dense[limit] = dense_questions(f.ctx, f.query, limit)
        return self._shown(f._dense[limit])


# -- the registry of signal kinds ------------------------------------------------------------------
Similar = SimilarQuestions
_NO_FIELDS: Mapping[str, float] = MappingProxyType({})
_NO_SCORES: Mapping[str, Mapping[int, float]] = MappingProxyType({})


def _check_max_df(max_df: Mapping[str, float], known: Sequence[str], index: str) -> None:
    """A share of documents per field of ``index``: a misspelt field would drop nothing, silently."""
    from ..errors import InputError

    for fld, share in max_df.items():
        if fld not in known:
            raise InputError(f"max_df names {fld!r}, not a field of the {index} index ({', '.join(known)})")
        if not 0 < share <= 1:
            raise InputError(f"max_df of {fld!r} is a share of the documents, in (0, 1], not {share!r}")


@dataclass(frozen=True)
class Signal:
    """One weighted signal of a fused system; a weight of 0 leaves it uncomputed."""

    KINDS: ClassVar[tuple[str, ...]] = ()
    NEEDS: ClassVar[tuple[str, ...]] = ()  # the indexes it reads
    weight: float = 0.0

    def scores(self, ctx: SearchContext, query: SearchQuery, similar: Similar,
               earlier: Mapping[str, Mapping[int, float]] = _NO_SCORES) -> dict[int, float]:
        """``{answer id: score}``; ``earlier``: the scores of the signals computed before this one
        (by name), for a signal that re-scores their candidates."""
        raise NotImplementedError

    def reads_earlier(self) -> bool:
        """Whether :meth:`scores` reads ``earlier`` (then it runs after every signal before it)."""
        return False

    def own_scores(self, ctx: SearchContext, query: SearchQuery, answers: Sequence[int],
                   found: Mapping[int, float]) -> dict[int, float]:
        """The scores of ``answers``, whose question is hidden (``SearchQuery.hidden_questions``),
        from their own text alone; ``found`` is what :meth:`scores` gave with the question in view.
        By default none: the signal's evidence of an answer is its thread's (similar questions,
        links) or holds its question (an answer's vector embeds the question's title)."""
        return {}

    def rescorer(self, ctx: SearchContext, query: SearchQuery) -> CandidateRescorer | None:
        """A re-scoring signal's scores fed one earlier signal at a time (``None``: not fed so)."""
        return None


@dataclass(frozen=True)
class Bm25Signal(Signal):
    """BM25 over weighted ``"query part->answer field"`` pairs of the answer index; ``max_terms`` > 0
    keeps only that many of the query's terms, those that can add most (boost x idf); ``max_df``
    (``{field: share}``) leaves out a field's terms held by more than that share of the answers."""

    KINDS = ("bm25", "answer", "math")
    NEEDS = ("text",)
    limit: int = 1000
    max_terms: int = 0
    fields: Mapping[str, float] = field(default_factory=lambda: _NO_FIELDS)
    max_df: Mapping[str, float] = field(default_factory=lambda: _NO_FIELDS)

    def __post_init__(self) -> None:
        _check_max_df(self.max_df, ANSWER_FIELDS, "answer")

    def scores(self, ctx: SearchContext, query: SearchQuery, similar: Similar,
               earlier: Mapping[str, Mapping[int, float]] = _NO_SCORES) -> dict[int, float]:
        return fielded_bm25(ctx, query, self.fields, self.limit, self.max_terms, self.max_df)

    def own_scores(self, ctx: SearchContext, query: SearchQuery, answers: Sequence[int],
                   found: Mapping[int, float]) -> dict[int, float]:
        """BM25 of the fields an answer holds itself (its words, maths and comments), not those it
        borrows from its question (:data:`~mathsearch.indexes.documents.QUESTION_FIELDS`)."""
        own = [c for c in clauses_from(self.fields) if c.field not in QUESTION_FIELDS and c.weight > 0]
        if not own or not answers:
            return {}
        return ctx.text.score_answers(query.bags, own, answers, self.max_terms, self.max_df)


@dataclass(frozen=True)
class QuestionsSignal(Signal):
    """Collection questions like the topic (BM25 over ``fields`` of the question index, the best
    ``limit``) pass their scores to their answers.  Its fields and limit also choose the similar
    questions that ``linked`` starts from; ``max_terms`` and ``max_df`` as :class:`Bm25Signal`'s,
    over the question index."""

    KINDS = ("questions",)
    NEEDS = ("text", "store")
    limit: int = 50
    max_terms: int = 0
    fields: Mapping[str, float] = field(default_factory=lambda: _NO_FIELDS)
    max_df: Mapping[str, float] = field(default_factory=lambda: _NO_FIELDS)

    def __post_init__(self) -> None:
        _check_max_df(self.max_df, QUESTION_FIELDS, "question")

    def scores(self, ctx: SearchContext, query: SearchQuery, similar: Similar,
               earlier: Mapping[str, Mapping[int, float]] = _NO_SCORES) -> dict[int, float]:
        return thread_scores(ctx, similar())


@dataclass(frozen=True)
class LinkedSignal(Signal):
    """Answers of questions linked (``types``: duplicate, related or any) to the similar questions by
    BM25, their score times ``decay``."""

    KINDS = ("linked",)
    NEEDS = ("text", "store")
    decay: float = 1.0
    types: str = "duplicate"

    def __post_init__(self) -> None:
        if self.types not in LINK_TYPES:
            from ..errors import InputError

            raise InputError(f"a linked signal follows links of types {', '.join(LINK_TYPES)}, not {self.types!r}")

    def questions(self, similar: Similar) -> dict[int, float]:
        """The questions whose links are followed, with their scores."""
        return similar()

    def scores(self, ctx: SearchContext, query: SearchQuery, similar: Similar,
               earlier: Mapping[str, Mapping[int, float]] = _NO_SCORES) -> dict[int, float]:
        return linked_scores(ctx, self.questions(similar), self.decay, self.types)


@dataclass(frozen=True)
class DenseLinkedSignal(LinkedSignal):
    """:class:`LinkedSignal` from the ``limit`` questions most like the topic by its vector (their
    cosine): a thread that a question like the topic links to answers the topic too, whatever words
    it uses."""

    KINDS = ("dense_linked",)
    NEEDS = ("dense", "store")
    types: str = "any"
    limit: int = 50

    def questions(self, similar: Similar) -> dict[int, float]:
        return similar.dense(self.limit)


@dataclass(frozen=True)
class DenseSignal(Signal):
    """Cosine of the topic's vector to each answer's (the best ``limit``)."""

    KINDS = ("dense",)
    NEEDS = ("dense",)
    limit: int = 1000

    def scores(self, ctx: SearchContext, query: SearchQuery, similar: Similar,
               earlier: Mapping[str, Mapping[int, float]] = _NO_SCORES) -> dict[int, float]:
        return dense_answers(ctx, query, self.limit)


@dataclass(frozen=True)
class DenseQuestionsSignal(Signal):
    """Cosine of the topic's vector to collection questions', passed on to their answers."""

    KINDS = ("dense_questions",)
    NEEDS = ("dense", "store")
    limit: int = 50

    def scores(self, ctx: SearchContext, query: SearchQuery, similar: Similar,
               earlier: Mapping[str, Mapping[int, float]] = _NO_SCORES) -> dict[int, float]:
        return thread_scores(ctx, similar.dense(self.limit))


@dataclass(frozen=True)
class FormulaSignal(Signal):
    """Answers by their best formula match to the topic's formulae (the ``max_formulae`` largest),
    summed over those formulae; Tangent-S scoring unless ``scoring`` says otherwise.

    ``rerank`` > 0 scores only the answers in the best ``rerank`` of each signal named in
    ``candidates`` that ran before it (a re-ranker: its cost follows the candidates' formulae, not
    the collection's, which a search of the whole formula index per topic formula does); when none
    of them ran, the whole index is searched (``depth`` best visual formulae per topic formula).
    """

    KINDS = ("formula",)
    NEEDS = ("formula",)
    depth: int = 2000
    max_formulae: int = 5
    scoring: Scoring | None = None
    rerank: int = 0
    candidates: tuple[str, ...] = ("answer", "dense")

    def reads_earlier(self) -> bool:
        return self.rerank > 0

    def own_scores(self, ctx: SearchContext, query: SearchQuery, answers: Sequence[int],
                   found: Mapping[int, float]) -> dict[int, float]:
        """An answer's formulae are its own (its comments' too): its scores stand."""
        return {a: found[a] for a in answers if a in found}

    def formulae(self, query: SearchQuery) -> list[str]:
        return largest_formulae([f for f in query.bags.formulae if f.strip()], self.max_formulae)

    def rescorer(self, ctx: SearchContext, query: SearchQuery) -> CandidateRescorer | None:
        """What re-scores the candidates one signal at a time (``None`` when not a re-ranker)."""
        return CandidateRescorer(self, ctx, query) if self.rerank > 0 else None

    def scores(self, ctx: SearchContext, query: SearchQuery, similar: Similar,
               earlier: Mapping[str, Mapping[int, float]] = _NO_SCORES) -> dict[int, float]:
        ran = [earlier[name] for name in self.candidates if name in earlier]
        rescorer = self.rescorer(ctx, query)
        if rescorer is not None and ran:
            for found in ran:
                rescorer.add(found)
            return rescorer.result()
        return answer_scores(ctx, self.formulae(query), self.scoring or TANGENT_S, self.depth)


class CandidateRescorer:
    """A re-ranking :class:`FormulaSignal` fed the scores of its candidate signals one at a time, as
    each is done: ``ours`` re-scores the dense signal's best answers while the answer BM25 still runs
    (at 1.4M answers the dense signal is done first).  The scores are those of re-scoring the union
    of every candidate signal's best ``rerank`` at once (see :class:`.formula.Rescorer`)."""

    def __init__(self, sig: FormulaSignal, ctx: SearchContext, query: SearchQuery):
        self.sig = sig
        self._rescorer = Rescorer(ctx, sig.formulae(query), sig.scoring or TANGENT_S)

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.sig.candidates

    def add(self, found: Mapping[int, float]) -> None:
        self._rescorer.add(ranking.top(found, self.sig.rerank))  # ties cut as the runs cut them

    def result(self) -> dict[int, float]:
        return self._rescorer.total


SIGNAL_KINDS: dict[str, type[Signal]] = {
    kind: cls
    for cls in (Bm25Signal, QuestionsSignal, LinkedSignal, DenseSignal, DenseQuestionsSignal, DenseLinkedSignal,
                FormulaSignal)
    for kind in cls.KINDS
}
DENSE_KINDS = ("dense", "dense_questions", "dense_linked")


def signal_from(name: str, section: Mapping[str, object], where: str) -> tuple[str, Signal]:
    """``(kind, Signal)`` of a ``[signals.NAME]`` table."""
    from ..config import typed
    from ..errors import InputError

    kind = str(section.get("kind", name))
    cls = SIGNAL_KINDS.get(kind)
    if cls is None:
        raise InputError(f"system config {where}: unknown kind of signal {kind!r} in [signals.{name}]; "
                         f"known: {', '.join(sorted(SIGNAL_KINDS))}")
    return kind, typed(cls, section, f"{where} [signals.{name}]", ignore=("kind",))
