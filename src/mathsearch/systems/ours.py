"""Task 1 ``ours``: BM25 over answers with thread context, question-question similarity, duplicate
links, formula evidence and dense similarity, fused with the weights of a config file.

A config (``ours.toml`` and its siblings) is read once into a frozen :class:`OursConfig`: its
depth, its fusion and its signals, each one of the typed kinds of :data:`signals.SIGNAL_KINDS`
(a misspelt key is an error).  Each signal gives ``{answer: score}``; scores are min-max normalised
per topic and summed with the signal's weight (CombSUM), or fused by reciprocal rank
(:mod:`mathsearch.ranking`).  A signal of weight 0 is not computed.  ``[feedback]``, when a config
has it, then lets the fused ranking's best answers vote for the answers like them (:mod:`.feedback`);
``[teacher]`` re-scores the similar questions by vector on a student's index (:mod:`.teacher`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from concurrent.futures import Future, as_completed
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .. import ranking
from ..config import read_toml, typed
from ..errors import InputError
from . import signals
from .base import Ranking, SearchContext, SearchQuery, register
from .feedback import Feedback, rescore
from .signals import DENSE_KINDS, Signal, signal_from
from .teacher import Teacher

DEFAULT_CONFIG = "ours.toml"
LEXICAL_CONFIG = "ours_lexical.toml"  # ours:dense=False: tuned without the dense signals


@dataclass(frozen=True)
class Fusion:
    method: str = "combsum"  # or "rrf"
    rrf_k: float = 60.0


@dataclass(frozen=True)
class OursConfig:
    """Every weight ``ours`` uses, immutable: shared by every query of a run or a server."""

    depth: int = 1000
    fusion: Fusion = Fusion()
    signals: tuple[tuple[str, str, Signal], ...] = ()  # (name, kind, signal) in file order
    feedback: Feedback = Feedback()  # after fusion: off unless the file has [feedback]
    teacher: Teacher = Teacher()  # the similar questions by vector re-scored: off unless [teacher]

    @classmethod
    def parse(cls, data: Mapping[str, Any], where: str) -> OursConfig:
        unknown = sorted(set(data) - {"depth", "fusion", "signals", "feedback", "teacher"})
        if unknown:
            raise InputError(f"system config {where}: unknown key(s) {', '.join(unknown)}; "
                             "known: depth, fusion, signals, feedback, teacher")
        fusion = typed(Fusion, data.get("fusion", {}), f"{where} [fusion]")
        if fusion.method not in ("combsum", "rrf"):
            raise InputError(f"system config {where}: fusion method {fusion.method!r} should be combsum or rrf")
        sigs = tuple((name, *signal_from(name, sec, where)) for name, sec in data.get("signals", {}).items())
        for i, (name, _, sig) in enumerate(sigs):
            before = {n for n, _, _ in sigs[:i]}
            unknown = [c for c in getattr(sig, "candidates", ()) if c not in before] if getattr(sig, "rerank", 0) else []
            if unknown:
                raise InputError(f"system config {where}: [signals.{name}] re-scores the candidates of "
                                 f"{', '.join(unknown)}, which no [signals.NAME] before it defines")
        feedback = typed(Feedback, data.get("feedback", {}), f"{where} [feedback]")
        teacher = typed(Teacher, data.get("teacher", {}), f"{where} [teacher]")
        return cls(int(data.get("depth", 1000)), fusion, sigs, feedback, teacher)

    def without_dense(self) -> OursConfig:
        return dataclasses.replace(self, signals=tuple(s for s in self.signals if s[1] not in DENSE_KINDS),
                                   feedback=Feedback(), teacher=Teacher())

    @property
    def similar(self) -> signals.QuestionsSignal:
        """The ``questions`` signal's choice of similar questions (defaults when it has none)."""
        for name, _, sig in self.signals:
            if name == "questions" and isinstance(sig, signals.QuestionsSignal):
                return sig
        return signals.QuestionsSignal()

    def needs(self) -> tuple[str, ...]:
        needed = {"store", "text"}
        for _, _, sig in self.signals:
            if sig.weight > 0:
                needed.update(sig.NEEDS)
        if self.feedback.on:
            needed.add("dense")
        return tuple(sorted(needed))


def load_config(path: str = "", packaged: str = DEFAULT_CONFIG) -> dict[str, Any]:
    """The TOML file at ``path`` (or the packaged ``packaged``) as a new, mutable dict (tuning)."""
    return read_toml(path, packaged)


@lru_cache(maxsize=64)
def ours_config(path: str = "", packaged: str = DEFAULT_CONFIG) -> OursConfig:
    """The config at ``path`` (or the packaged one), parsed and checked once."""
    config = OursConfig.parse(read_toml(path, packaged), path or packaged)
    if not config.signals:  # an empty or misspelt file would otherwise rank nothing, silently
        raise InputError(f"system config {path or packaged}: no [signals.NAME] section, so nothing to rank by")
    return config


def without_dense(config: OursConfig | Mapping[str, Any]) -> OursConfig:
    """``config`` with its dense signals dropped (for indexes built without ``--dense``)."""
    return _as_config(config).without_dense()


def _as_config(config: OursConfig | Mapping[str, Any]) -> OursConfig:
    return config if isinstance(config, OursConfig) else OursConfig.parse(config, "(given)")


# How ``combine`` gets one signal's scores: ``(signal name, signal, similar questions, the scores
# of the signals before it by name) -> scores``.  The default asks the signal; bench/tune_ours.py
# passes one that caches them across trials.
SignalScores = Callable[[str, Signal, signals.SimilarQuestions, Mapping[str, Mapping[int, float]]],
                        dict[int, float]]


def combine(ctx: SearchContext, query: SearchQuery, config: OursConfig | Mapping[str, Any],
            scores_of: SignalScores | None = None, threads: bool = True) -> dict[int, float]:
    """All weighted signals of ``config`` fused into one ``{answer id: score}``.

    The signals that read no other signal's scores run side by side on the context's signal
    threads (tantivy, faiss and numpy release the GIL: at 1.4M answers the answer BM25 alone is
    about half a query's CPU); a re-scoring signal is fed its candidate signals as each is done (the
    formula signal re-scores the dense signal's best answers while the answer BM25 still runs: on a
    signal thread, behind the signals queued there, while any runs; else on the caller's thread),
    then waits for every signal before it, so the scores are those of
    running them one by one in file order, which ``threads=False`` or a given ``scores_of`` does
    (bench/tune_ours.py caches through it, bench/profile_ours.py times each signal with it).
    """
    config = _as_config(config)
    if query.hidden_threads or query.hidden_questions:  # no signal may read what the query hides
        return _combine_hiding(ctx, query, config, scores_of)
    if any("dense" in sig.NEEDS for _, _, sig in config.signals if sig.weight > 0):  # not the feedback's
        signals.prefetch_query_vector(ctx, query)  # encoded on a worker while the lexical signals run
    similar = signals.SimilarQuestions(ctx, query, config.similar, teacher=config.teacher)  # each way computed once, shared

    def asked(_name: str, sig: Signal, similar: signals.SimilarQuestions,
              earlier: Mapping[str, Mapping[int, float]]) -> dict[int, float]:
        return sig.scores(ctx, query, similar, earlier)

    earlier: dict[str, Mapping[int, float]] = {}  # in file order: a re-scoring signal reads those before it
    seen = MappingProxyType(earlier)  # read-only; a signal runs before its own entry is added
    weighted = [(name, sig) for name, _, sig in config.signals if sig.weight > 0]
    if scores_of is not None or not threads or len(weighted) < 2:
        for name, sig in weighted:
            earlier[name] = (scores_of or asked)(name, sig, similar, seen)
    else:
        pending: dict[str, Future] = {}
        waiting: list[tuple[str, Signal]] = []  # the signals before the next re-scoring one

        def start() -> None:  # pending is empty here: it is read, then cleared, at each re-scoring signal
            futures = {name: ctx.signal_threads().submit(asked, name, sig, similar, seen)
                       for name, sig in _run_order(waiting)}
            pending.update((name, futures[name]) for name, _ in waiting)  # read in file order
            waiting.clear()

        for name, sig in weighted:
            if sig.reads_earlier():
                start()
                early = _rescore_as_done(ctx, query, sig, pending, earlier)
                for before, done in pending.items():  # file order, as the sequential loop
                    earlier[before] = done.result()
                pending.clear()
                earlier[name] = early if early is not None else asked(name, sig, similar, seen)
            else:
                waiting.append((name, sig))
        start()
        for before, done in pending.items():
            earlier[before] = done.result()
    parts = [(sig.weight, earlier[name]) for name, _, sig in config.signals if earlier.get(name)]
    weights, found_all = [w for w, _ in parts], [f for _, f in parts]
    if config.fusion.method == "rrf":
        fused = ranking.rrf(found_all, weights, config.fusion.rrf_k)
    else:
        fused = ranking.combsum(found_all, weights, "minmax")
    return rescore(ctx, fused, config.feedback) if config.feedback.on else fused


def _run_order(named: list[tuple[str, Signal]]) -> list[tuple[str, Signal]]:
    """The order in which ``combine`` starts signals on its threads (their scores are read in file
    order whatever it is): the first that reads no vector (``ours``' answer BM25, its costliest),
    then those that read the topic's vector (they wait for its encoding without using a core), then
    the rest.  With two signal threads the other lexical signals (the similar questions' BM25 and
    their links) then run once the encoding is done, instead of taking a core from the answer BM25
    and the encoding while both run: at 1.4M answers `ours` took 99.7-103.2 ms a query against
    103.6-106.0 in file order (docs/log/compiled.md, sixteenth step)."""
    lexical = [ns for ns in named if "dense" not in ns[1].NEEDS]
    vector = [ns for ns in named if "dense" in ns[1].NEEDS]
    if not lexical or not vector:
        return list(named)
    return [lexical[0], *vector, *lexical[1:]]


def _combine_hiding(ctx: SearchContext, query: SearchQuery, config: OursConfig,
                    scores_of: SignalScores | None) -> dict[int, float]:
    """:func:`combine` with what the query hides removed from every signal's input and output, run
    one by one.  A hidden thread: its question is never a similar question (so neither its answers
    nor its duplicate links are reached through it) and no signal scores its answers (so a re-scorer
    never sees them).  A hidden question: the same, except that its answers keep what each signal
    says of them from their own text alone (:meth:`~.signals.Signal.own_scores`)."""
    hidden_questions = set(query.hidden_threads) | set(query.hidden_questions)
    answers_of = ctx.store.answer_ids_of_threads(hidden_questions)
    hidden = hidden_questions | {a for t in query.hidden_threads for a in answers_of.get(t, ())}
    bare = sorted({a for t in query.hidden_questions for a in answers_of.get(t, ())} - hidden)
    hidden.update(bare)
    plain = dataclasses.replace(query, hidden_threads=(), hidden_questions=())

    def seen(name: str, sig: Signal, similar: signals.SimilarQuestions,
             earlier: Mapping[str, Mapping[int, float]]) -> dict[int, float]:
        similar_shown = similar.hiding(hidden_questions)  # by BM25 and by vectors alike
        found = (scores_of(name, sig, similar_shown, earlier) if scores_of is not None
                 else sig.scores(ctx, plain, similar_shown, earlier))
        shown = {a: s for a, s in found.items() if a not in hidden}
        if bare:
            shown.update(sig.own_scores(ctx, plain, bare, found))
        return shown

    return combine(ctx, plain, config, seen, threads=False)


def _rescore_as_done(ctx: SearchContext, query: SearchQuery, sig: Signal, pending: Mapping[str, Future],
                     earlier: Mapping[str, Mapping[int, float]]) -> dict[int, float] | None:
    """A re-scoring signal's scores, fed each candidate signal as soon as it is done (on this
    thread, which would otherwise wait for the slowest); ``None`` when ``sig`` cannot be fed so, or
    none of its candidates ran (then it is asked as in the sequential loop)."""
    rescorer = sig.rescorer(ctx, query)
    if rescorer is None:
        return None
    names = [n for n in rescorer.candidates if n in earlier or n in pending]
    if not names:
        return None
    for n in names:
        if n in earlier:
            rescorer.add(earlier[n])
    waiting = {pending[n]: n for n in names if n in pending}
    queued = []
    for done in as_completed(waiting):
        if any(not f.done() for f in pending.values()):
            # Other signals still run on the signal threads: this batch waits behind them there
            # instead of taking a third turn at two cores from the slowest signal (at 1.4M answers
            # the dense signal is done while the answer BM25, its critical path, still runs).
            queued.append(ctx.signal_threads().submit(rescorer.add, done.result()))
        else:
            rescorer.add(done.result())
    for batch in queued:
        batch.result()
    return rescorer.result()


# What ``ours`` runs, by what the index holds: the one place that says it.  Vectors of a MiniLM
# encoder: ours.toml; of a static encoder (trained on the collection, the full-size one):
# ours_static.toml; no vectors at all: ours_lexical.toml (the same as ``ours:dense=False``).
CONFIG_BY_ENCODER_KIND = {"minilm": DEFAULT_CONFIG, "static": "ours_static.toml"}


def packaged_config_for(index_dir: str | Path) -> str:
    """The packaged config ``ours`` uses on ``index_dir`` (see :data:`CONFIG_BY_ENCODER_KIND`)."""
    from ..indexes.dense import DENSE_DIR

    manifest = Path(index_dir) / DENSE_DIR / "manifest.json"
    try:
        stamp = manifest.stat().st_mtime_ns
    except OSError:
        return LEXICAL_CONFIG
    return CONFIG_BY_ENCODER_KIND.get(_encoder_kind(str(manifest), stamp), DEFAULT_CONFIG)


@lru_cache(maxsize=64)
def _encoder_kind(manifest: str, stamp: int) -> str:
    """The kind of encoder a dense manifest names, read once per version of the file (ours asks
    every query, and a server's index may be rebuilt under it)."""
    import json

    return str((json.loads(Path(manifest).read_text()).get("encoder") or {}).get("kind", "minilm"))


@register
@dataclass(frozen=True)
class Ours:
    """The best Task 1 system we make from these parts; every weight is in its config file.

    One name everywhere: on an index with vectors ``ours`` adds the dense signals of whatever
    encoder made them, with the weights tuned for that kind of encoder; on an index without vectors
    it is ``ours:dense=False``, the lexical config (:func:`packaged_config_for` says which file).
    ``dense=False`` always runs without dense signals: the packaged ``ours_lexical.toml``, or the
    given config with its dense signals dropped.  A given ``config`` is used as written (its dense
    signals need an index built with ``--dense``).  ``teacher`` (0 or more) sets the config's
    ``[teacher] rescore``: ``ours:teacher=0`` is the student's config without MiniLM's query-time
    re-scoring (~1.8 s a query less on two cores, :mod:`.teacher`).
    """

    NAME = "ours"
    TASK = 1
    HIDES = True  # honours the hidden threads and questions of topics drawn from the collection
    DESCRIPTION = "fused BM25 (answer + thread), similar questions, duplicate links, math tokens, dense similarity"
    config: str = ""  # a TOML file; empty: the packaged config for the index (packaged_config_for)
    dense: bool = True
    threads: bool = True  # run the independent signals side by side (same scores; False: one by one)
    teacher: int = -1  # the similar questions the teacher re-scores (-1: as the config says)

    def __post_init__(self) -> None:
        if self.teacher < -1:
            raise InputError(f"ours: teacher is the number of similar questions MiniLM re-scores (0: none), not {self.teacher}")

    def config_for(self, index_dir: str | Path) -> OursConfig:
        """What this ``ours`` runs on ``index_dir``."""
        if not self.dense:
            return ours_config(self.config, LEXICAL_CONFIG).without_dense()
        config = ours_config(self.config) if self.config else ours_config("", packaged_config_for(index_dir))
        if self.teacher >= 0 and self.teacher != config.teacher.rescore:
            config = dataclasses.replace(config, teacher=dataclasses.replace(config.teacher, rescore=self.teacher))
        return config

    def needs(self) -> tuple[str, ...]:
        """The lexical indexes always; dense vectors only where a given config asks for them (the
        packaged configs follow what the index holds)."""
        cfg = self.config_for("") if (self.config or not self.dense) else ours_config("", LEXICAL_CONFIG)
        return tuple(sorted({*cfg.needs(), "formula"}))

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        cfg = self.config_for(ctx.index_dir)
        return Ranking(ranking.top(combine(ctx, query, cfg, threads=self.threads), min(limit, cfg.depth)))


def default_spec(index_dir: str | Path) -> str:
    """The spec (and run tag) of what ``ours`` runs on ``index_dir``: ``ours`` where the index has
    dense vectors, else ``ours:dense=False`` (what ``ours`` falls back to there)."""
    from ..indexes.dense import DenseIndex

    return "ours" if DenseIndex.exists(index_dir) else "ours:dense=False"
