"""Task 3 systems: one answer of at most 1,200 characters per question, with its sources.

Each is a frozen dataclass like the Task 1 and 2 systems (``TASK = 3``, a spec, a run tag), but
answers with :meth:`answer` (an :class:`~mathsearch.answers.Answer`) instead of a ranking.  All
build on a Task 1 ranking (``base``: a Task 1 spec, with ``;`` between its parameters since ``,``
separates ours; empty: ``ours`` as the index allows, see :func:`~.ours.default_spec`):

* ``first-hit``: the first hit, its longest opening that fits (cut between sentences);
* ``extract``: one answer of the ranking, whole when it fits, its most useful sentences, displayed
  equations, items and code blocks when it does not (:mod:`mathsearch.answers.extract`).  Which
  answer: on a ranking that uses dense vectors, the consensus choice (the best of its top
  ``consensus_k`` answers by reciprocal-rank fusion of the ranking's order and their agreement with
  the other answers of its top ``consensus``; chosen by cross-validation over the pooled topics on
  both dense bases, ``bench/tune_task3.py``); on a lexical ranking, the first hit
  (``extract:consensus=0`` everywhere).  Options: ``extract:k=2`` (the best of the top ``k`` by
  retrieval score, rank, length, the question's math and words and, where known, dense similarity,
  votes and the accepted flag), and ``extract:consensus=5,condense=4``, which also cuts an answer
  that fits to the pieces its top peers agree with (higher LO, but an answer can lose a definition it uses);
* ``generate``: retrieval-augmented generation through an OpenAI-compatible endpoint (URL and
  model as parameters or from the environment; the key only from the environment, so that it
  never lands in a run tag); when the endpoint fails or answers nothing, the ``extract`` answer,
  so the run stays valid.

Every parameter's default lives in the packaged ``task3.toml`` (one table per system, a key per
field: a misspelt or missing key is an error when this module is imported); a spec overrides it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..answers import NO_ANSWER, Answer
from ..answers.extract import (
    ChoiceWeights,
    PieceWeights,
    QueryProfile,
    candidates,
    choice_score,
    choose,
    extract,
)
from ..answers.passages import MAX_ANSWER_CHARS
from ..config import read_toml
from ..errors import InputError
from ..records import Task3Answer, Topic
from .base import SearchContext, SearchQuery, check_hiding, make_system, needs_of, register, spec

DEFAULT_SYSTEM = "extract"  # what `mathsearch answer` and `run --task 3` run unless told
DEFAULT_BASE_NEEDS = ("store", "text", "formula")  # ours:dense=False; dense vectors used when present
CONFIG = "task3.toml"  # every parameter's default, one table per system
_DEFAULTS = read_toml("", CONFIG)


def _default(system: str, key: str) -> Any:
    try:
        return _DEFAULTS[system][key]
    except KeyError:
        raise InputError(f"system config {CONFIG}: [{system}] has no key {key!r}") from None


def _check_config(cls: type) -> type:
    """Refuse a ``task3.toml`` table whose keys are not exactly the fields of ``cls``."""
    fields = {f.name for f in dataclasses.fields(cls) if f.init}
    keys = set(_DEFAULTS.get(cls.NAME, {}))
    if keys != fields:
        raise InputError(f"system config {CONFIG}: [{cls.NAME}] should hold exactly {', '.join(sorted(fields))}; "
                         f"unknown: {', '.join(sorted(keys - fields)) or 'none'}, missing: "
                         f"{', '.join(sorted(fields - keys)) or 'none'}")
    return cls


def base_spec(base: str) -> str:
    """The Task 1 spec a ``base`` parameter names: ``;`` stands for ``,`` (``ours:dense=False;config=F``),
    and a first ``;`` before any ``:`` for the ``:`` (``ours;dense=False``)."""
    spec_ = base.replace(";", ",")
    name, colon, _ = spec_.partition(":")
    if not colon and "," in spec_:
        spec_ = spec_.replace(",", ":", 1)
    return spec_


def base_system(ctx: SearchContext, base: str):
    """The Task 1 system a Task 3 system draws from (a frozen value: cheap to make per query)."""
    from .ours import default_spec

    name = base_spec(base) if base else default_spec(ctx.index_dir)
    system = make_system(name)
    if system.TASK != 1:
        raise InputError(f"base system {name} answers task {system.TASK}, not task 1")
    return system


def _base_needs(base: str) -> tuple[str, ...]:
    if not base:
        return DEFAULT_BASE_NEEDS
    return tuple(dict.fromkeys(("store", *needs_of(make_system(base_spec(base))))))


def _ranking(ctx: SearchContext, base: str, query: SearchQuery, k: int) -> list[tuple[str, float]]:
    found = base_system(ctx, base).search(ctx, query, max(k, 1))
    return [(d, found[d]) for d in found.ordered()[:k]]


def _accepted(ctx: SearchContext, ids: list[str]) -> set[int] | None:
    store = ctx.store
    threads = {p.thread_id for p in store.posts(ids).values()}
    accepted = store.accepted_answers(threads)
    return set(accepted.values()) if accepted else None


def ranks_by_dense(ctx: SearchContext, base: str) -> bool:
    """Whether the Task 1 ranking ``base`` names uses the index's dense vectors on ``ctx``."""
    system = base_system(ctx, base)
    config_for = getattr(system, "config_for", None)  # ours: what it runs depends on the index
    needs = config_for(ctx.index_dir).needs() if config_for is not None else needs_of(system)
    return "dense" in needs and ctx.has("dense")


def _dense(ctx: SearchContext, query: SearchQuery, ids: list[str]) -> dict[int, float] | None:
    """The question's cosine similarity to answers ``ids``, where the index has vectors (else None)."""
    from .signals import query_vector

    if not ctx.has("dense"):
        return None
    return ctx.dense.score_answers(query_vector(ctx, query), [int(d) for d in ids])


@register
@_check_config
@dataclass(frozen=True)
class FirstHit:
    """The reference point: the first hit of the Task 1 ranking, its longest opening that fits."""

    NAME = "first-hit"
    TASK = 3
    DESCRIPTION = "the first hit of a Task 1 ranking, cut between sentences to 1,200 characters"
    ANS_TYPE = "extract"
    base: str = _default("first-hit", "base")

    def needs(self) -> tuple[str, ...]:
        return _base_needs(self.base)

    def answer(self, ctx: SearchContext, query: SearchQuery) -> Answer:
        return self.answer_from(ctx, query, _ranking(ctx, self.base, query, 1))

    def answer_from(self, ctx: SearchContext, query: SearchQuery, ranking: Sequence[tuple[str, float]]) -> Answer:
        """The answer drawn from ``ranking`` (``(answer id, score)``, best first), e.g. a cached one."""
        profile = QueryProfile.of(query.title, query.question)
        found = candidates(ctx.store, ranking, profile, 1)
        if not found:
            return Answer(NO_ANSWER, (), 0.0)
        text = extract(found[0], profile, prefix=True)
        return Answer(text or NO_ANSWER, (str(found[0].post_id),) if text else (), 1.0)


def _x(key: str) -> Any:
    return _default("extract", key)


@register
@_check_config
@dataclass(frozen=True)
class Extract:
    """Our extractive system (see the module text); every weight is a parameter, its default in
    ``task3.toml``."""

    NAME = "extract"
    TASK = 3
    DESCRIPTION = "the best of the top k answers for the question's words and math, its most useful sentences"
    ANS_TYPE = "extract"
    base: str = _x("base")
    k: int = _x("k")
    retrieval: float = _x("retrieval")
    rank: float = _x("rank")
    formula: float = _x("formula")
    exact: float = _x("exact")
    words: float = _x("words")
    too_long: float = _x("too_long")
    votes: float = _x("votes")
    accepted: float = _x("accepted")
    dense: float = _x("dense")  # used where the index has vectors
    consensus: int = _x("consensus")  # answers compared for agreement (0: off); used on dense rankings only
    consensus_k: int = _x("consensus_k")  # candidates when the agreement is used
    condense: int = _x("condense")  # > 0: cut even answers that fit to what this many peers say (off)
    condense_floor: int = _x("condense_floor")  # ... but keep at least this many characters where the answer has them
    prefix: bool = _x("prefix")  # keep the longest opening that fits rather than the most useful pieces
    piece_formula: float = _x("piece_formula")
    piece_exact: float = _x("piece_exact")
    piece_words: float = _x("piece_words")
    piece_position: float = _x("piece_position")
    piece_lead: int = _x("piece_lead")

    def __post_init__(self) -> None:
        if self.condense > 0 and self.consensus <= 0:  # its peers are the consensus choice's top answers
            raise InputError(f"extract: condense={self.condense} needs the consensus choice that gives its peers "
                             f"(e.g. extract:consensus=10,condense={self.condense})")

    def needs(self) -> tuple[str, ...]:
        return _base_needs(self.base)

    @property
    def choice(self) -> ChoiceWeights:
        return ChoiceWeights(self.k, self.retrieval, self.rank, self.formula, self.exact, self.words,
                             self.too_long, self.votes, self.accepted, self.dense, self.consensus,
                             self.consensus_k, self.condense)

    def choice_on(self, ctx: SearchContext) -> ChoiceWeights:
        """The choice weights on ``ctx``: agreement only where the base ranking is dense (on the
        sample's lexical ranking it lost in both years)."""
        w = self.choice
        if w.consensus and not ranks_by_dense(ctx, self.base):
            w = dataclasses.replace(w, consensus=0)
        return w

    @staticmethod
    def depth(w: ChoiceWeights) -> int:
        """How much of the ranking the choice reads."""
        return max(w.k, w.consensus, w.consensus_k if w.consensus else 0)

    @property
    def piece_weights(self) -> PieceWeights:
        return PieceWeights(self.piece_formula, self.piece_exact, self.piece_words, self.piece_position,
                            self.piece_lead, self.condense_floor)

    def answer(self, ctx: SearchContext, query: SearchQuery) -> Answer:
        return self.answer_from(ctx, query, _ranking(ctx, self.base, query, self.depth(self.choice_on(ctx))))

    def answer_from(self, ctx: SearchContext, query: SearchQuery, ranking: Sequence[tuple[str, float]]) -> Answer:
        """The answer drawn from ``ranking`` (``(answer id, score)``, best first), e.g. a cached one."""
        profile = QueryProfile.of(query.title, query.question)
        w = self.choice_on(ctx)
        depth = self.depth(w)
        ranking = list(ranking[:depth])
        accepted = _accepted(ctx, [d for d, _ in ranking]) if self.accepted and ranking else None
        dense = _dense(ctx, query, [d for d, _ in ranking]) if self.dense and ranking else None
        found = candidates(ctx.store, ranking, profile, depth, accepted, dense)
        chosen = choose(found, w)
        for best in chosen[: w.consensus_k if w.consensus else w.k]:
            text = extract(best, profile, self.piece_weights, MAX_ANSWER_CHARS, self.prefix)
            if text:
                return Answer(text, (str(best.post_id),), round(choice_score(best, w), 6))
        return Answer(NO_ANSWER, (), 0.0)

    def passages(self, ctx: SearchContext, query: SearchQuery, n: int, budget: int) -> list[tuple[str, str]]:
        """The ``n`` best answers as ``(post id, text of at most budget characters)``, for a prompt."""
        profile = QueryProfile.of(query.title, query.question)
        w = self.choice_on(ctx)
        depth = max(self.depth(w), n)
        found = choose(candidates(ctx.store, _ranking(ctx, self.base, query, depth), profile, depth), w)
        out = []
        for c in found[:n]:
            text = extract(c, profile, self.piece_weights, budget, self.prefix)
            if text:
                out.append((str(c.post_id), text))
        return out


def _g(key: str) -> Any:
    return _default("generate", key)


@register
@_check_config
@dataclass(frozen=True)
class Generate:
    """Retrieval-augmented generation (off by default: it needs an endpoint; see the module text)."""

    NAME = "generate"
    TASK = 3
    DESCRIPTION = "an answer generated from the top passages by an OpenAI-compatible chat model, citing them"
    ANS_TYPE = "generate"
    base: str = _g("base")
    url: str = _g("url")  # empty: $MATHSEARCH_LLM_URL
    model: str = _g("model")  # empty: $MATHSEARCH_LLM_MODEL
    passages: int = _g("passages")
    passage_chars: int = _g("passage_chars")
    retries: int = _g("retries")  # asks again this many times while the answer is too long or empty
    temperature: float = _g("temperature")
    max_tokens: int = _g("max_tokens")
    timeout: float = _g("timeout")

    def needs(self) -> tuple[str, ...]:
        return _base_needs(self.base)

    def endpoint(self):
        from ..answers.generate import ChatEndpoint

        return ChatEndpoint.from_env(self.url, self.model, None, self.timeout)

    def answer(self, ctx: SearchContext, query: SearchQuery) -> Answer:
        from ..answers.generate import GenerationError, generate

        extractive = Extract(base=self.base)
        fallback = extractive.answer(ctx, query)
        passages = extractive.passages(ctx, query, self.passages, self.passage_chars)
        try:
            endpoint = self.endpoint()
            made = generate(endpoint, query.title, query.question, passages, MAX_ANSWER_CHARS,
                            self.retries, self.temperature, self.max_tokens)
        except GenerationError as exc:
            return Answer(fallback.text, fallback.sources, fallback.score, "fallback", (str(exc),))
        sources = made.sources or tuple(pid for pid, _ in passages)
        notes = (f"cut to {MAX_ANSWER_CHARS} characters after {made.tries} tries",) if made.trimmed else ()
        return Answer(made.text, sources, 1.0, "generate", notes)


def run_answers(system, ctx: SearchContext, topics: list[Topic], progress=None) -> tuple[list[Task3Answer], list[str]]:
    """The Task 3 answers of ``system`` for ``topics`` (one each), and notes on the way."""
    check_hiding(system, topics)
    tag = spec(system)
    out: list[Task3Answer] = []
    notes: list[str] = []
    for i, topic in enumerate(topics, 1):
        a = system.answer(ctx, SearchQuery.from_topic(topic))
        out.append(Task3Answer(topic.topic_id, a.text, a.score, 1, tag, a.sources_field))
        notes.extend(f"{topic.topic_id}: {n}" for n in a.notes)
        if progress:
            progress(i, len(topics))
    return out, notes
