"""What every retrieval system shares: the query it is given, the indexes it may use, the registry.

A system is a frozen dataclass with a ``NAME``, the ``TASK`` it answers (1: answers, 2: formula
instances) and typed parameters with defaults.  ``search(ctx, query, limit)`` returns
a :class:`~mathsearch.ranking.Ranking`: answer post ids for Task 1, formula instance ids with
the post holding each for Task 2.  Its :func:`spec` (``name`` or ``name:k=v,...``) names it in run
tags and on the command line, and :func:`make_system` turns a spec back into the object.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import typing
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from ..errors import InputError
from ..indexes.directory import IndexDirectory
from ..indexes.documents import QueryBags, topic_text
from ..ranking import Ranking
from ..records import Topic
from ..text.plainmath import PlainSpan, annotate


@dataclass(frozen=True)
class SearchQuery:
    """A Task 1 question (title, body, tags) or a Task 2 formula, as plain text with ``$LaTeX$``.

    Made by :meth:`from_topic` or :meth:`from_text`, a query's maths typed without LaTeX (``sqrt 2``,
    ``integral of x sin x dx``) is already written as ``$LaTeX$`` in ``title`` and ``question``
    (:func:`mathsearch.text.plainmath.annotate`); ``understood`` lists those spans, what the user
    typed and the LaTeX searched for ("searched as" on the page).
    """

    query_id: str
    title: str
    question: str = ""
    tags: tuple[str, ...] = ()
    formula_latex: str | None = None  # Task 2: the formula searched for
    formula_id: str | None = None
    topic: Topic | None = None
    understood: tuple[PlainSpan, ...] = ()  # plain-words maths read as formulae
    # Threads no signal may read for this query (their question, answers and links): a question of
    # the collection asked as a topic (judgements from the collection) would otherwise find itself.
    hidden_threads: tuple[int, ...] = ()
    # Threads whose question is hidden but whose answers may be found, by their own text alone: the
    # question, its links and what its answers borrow from it (title, body, tags, maths) are unread.
    # A question asked for its own answers (own-answer pairs) would otherwise match itself.
    hidden_questions: tuple[int, ...] = ()

    @classmethod
    def from_topic(cls, topic: Topic, plain_math: bool = True) -> SearchQuery:
        title, question = topic_text(topic)
        title, question, understood = _with_plain_math(title, question, plain_math)
        q = topic.query_formula
        latex = q.latex if q is not None else topic.latex
        return cls(topic.topic_id, title, question, topic.tags, latex, topic.formula_id, topic, understood,
                   topic.hidden_threads, topic.hidden_questions)

    @classmethod
    def from_fields(cls, query_id: str, title: str, question: str = "", tags: tuple[str, ...] = (),
                    formula_latex: str | None = None, formula_id: str | None = None,
                    plain_math: bool = True) -> SearchQuery:
        """A topic given field by field (a queries frame, a dataset's query): read as
        :meth:`from_topic` reads a topic, its plain-words maths included."""
        title, question, understood = _with_plain_math(title, question, plain_math)
        return cls(query_id, title, question, tags, formula_latex, formula_id, None, understood)

    @classmethod
    def from_text(cls, text: str, query_id: str = "q", tags: tuple[str, ...] = (),
                  plain_math: bool = True) -> SearchQuery:
        """A typed-in search: the text is the title; with ``task 2`` its first formula is searched."""
        from ..text.analysis import split_math

        title, _, understood = _with_plain_math(text, "", plain_math)
        _, formulae = split_math(title)
        latex = formulae[0] if formulae else text.strip().strip("$")
        return cls(query_id, title, "", tags, latex, None, None, understood)

    @cached_property
    def bags(self) -> QueryBags:
        return QueryBags.of_text(self.title, self.question, self.tags)


_T = TypeVar("_T")
_POOL_PREFIX = "mathsearch-"  # thread names: mathsearch-signal_0, mathsearch-query-encoder_0
_SIGNAL_POOL = "signal"


class SearchContext(IndexDirectory):
    """The indexes of one INDEX_DIR (:class:`~mathsearch.indexes.directory.IndexDirectory`), opened
    lazily and shared by every system of a run, and the query vectors encoded so far (tuning runs
    the same topics many times; the dense signals share one encoding of a query)."""

    def __init__(self, index_dir: str | Path):
        super().__init__(index_dir)
        self.query_vectors: dict[str, Any] = {}
        self.pending_vectors: dict[str, Future] = {}  # query vectors being encoded on the worker
        self.teacher_vectors: dict[tuple[int, int], Any] = {}  # (word pieces, question) -> vector (.teacher)
        self._pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}  # name -> (pid that made it, pool)

    def _pool(self, name: str, threads: int) -> ThreadPoolExecutor:
        """The context's ``name`` thread pool, made again in a forked child (which has no such threads)."""
        made = self._pools.get(name)
        if made is None or made[0] != os.getpid():
            made = self._pools[name] = (os.getpid(), ThreadPoolExecutor(threads, thread_name_prefix=f"{_POOL_PREFIX}{name}"))
            if name == "query-encoder":
                self.pending_vectors.clear()  # a parent's pending encodings are not this process's
        return made[1]

    def worker(self) -> ThreadPoolExecutor:
        """One thread that encodes query vectors while the caller computes lexical signals."""
        return self._pool("query-encoder", 1)

    def signal_threads(self) -> ThreadPoolExecutor:
        """The threads a fused system's signals run on side by side (one per core, from 2 to 4)."""
        return self._pool(_SIGNAL_POOL, max(2, min(4, os.cpu_count() or 2)))

    def beside(self, fn: Callable[..., _T], *args: Any) -> Callable[[], _T]:
        """``fn(*args)`` started on a signal thread while the caller goes on; call what this returns
        for its value.  On a signal thread itself it runs when asked instead: a pool thread never
        waits on its own pool."""
        if threading.current_thread().name.startswith(_POOL_PREFIX + _SIGNAL_POOL):
            return functools.partial(fn, *args)
        return self.signal_threads().submit(fn, *args).result


def _with_plain_math(title: str, question: str, on: bool) -> tuple[str, str, tuple[PlainSpan, ...]]:
    """Title and question with their plain-words maths as ``$LaTeX$``: the one place a query's
    typed maths is read (documents are never rewritten)."""
    if not on:
        return title, question, ()
    title, in_title = annotate(title) if title else (title, ())
    question, in_question = annotate(question) if question else (question, ())
    return title, question, (*in_title, *in_question)


def needs_of(system: Any) -> tuple[str, ...]:
    """The indexes (:data:`~mathsearch.indexes.kinds.INDEX_KINDS`) a configured system reads:
    its ``needs()`` where its configuration decides, else its class's ``NEEDS``."""
    needs = getattr(system, "needs", None)
    return tuple(needs()) if callable(needs) else tuple(getattr(system, "NEEDS", ("store", "text", "formula")))


@runtime_checkable
class System(Protocol):
    """What every configured system is: a frozen dataclass with a ``NAME``, the ``TASK`` it answers
    and a ``DESCRIPTION`` (a :class:`Ranker` for Tasks 1 and 2, an :class:`Answerer` for Task 3)."""

    NAME: ClassVar[str]
    TASK: ClassVar[int]
    DESCRIPTION: ClassVar[str]


def hides_threads(system: Any) -> bool:
    """Whether ``system`` honours what a query hides (``SearchQuery.hidden_threads`` and
    ``hidden_questions``: topics drawn from the collection itself); a system says so with
    ``HIDES = True``.  One that does not would find the asking question itself."""
    return bool(getattr(system, "HIDES", False))


def check_hiding(system: Any, topics: Iterable[Topic]) -> None:
    """Refuse (:class:`InputError`) to run ``system`` on topics that hide part of the collection
    when it cannot hide it (:func:`hides_threads`): it would find the asking question itself."""
    hiding = sum(t.hides for t in topics)
    if hiding and not hides_threads(system):
        raise InputError(f"{hiding:,} topics hide the question they were drawn from, and {spec(system)} cannot "
                         "hide it, so it would find the question itself; run ours on them")


@runtime_checkable
class Ranker(System, Protocol):
    """A Task 1 or Task 2 system: a ranking of answers or formula instances for a query."""

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking: ...


@runtime_checkable
class Answerer(System, Protocol):
    """A Task 3 system: one answer (:class:`mathsearch.answers.Answer`) to a question."""

    def answer(self, ctx: SearchContext, query: SearchQuery) -> Any: ...


_REGISTRY: dict[str, type[System]] = {}
S = TypeVar("S", bound=type)


def register(cls: S) -> S:
    """Class decorator: make a system dataclass known by its ``NAME``; a name already taken (by
    another class) is refused, so that a plug-in never silently replaces a system."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} must be a dataclass")
    name = getattr(cls, "NAME", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{cls.__name__} must have a NAME (the name a spec uses)")
    taken = _REGISTRY.get(name)
    if taken is not None and (taken.__module__, taken.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(f"a system named {name!r} is registered already ({taken.__module__}.{taken.__qualname__}); "
                         f"give {cls.__module__}.{cls.__qualname__} another NAME")
    _REGISTRY[name] = typing.cast("type[System]", cls)
    return cls


def system_names(task: int | None = None) -> list[str]:
    return sorted(n for n, c in _REGISTRY.items() if task is None or c.TASK == task)


def system_class(name: str) -> type[System]:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(system_names()) or "none"
        raise InputError(f"unknown system {name!r}; known systems: {known}") from None


def _type_name(kind: Any) -> str:
    return getattr(kind, "__name__", None) or str(kind)


def _describe(cls: type, hints: dict[str, Any]) -> str:
    """``math (float, default 1.0), ...``: what a spec of ``cls`` may set."""
    params = [f for f in dataclasses.fields(cls) if f.init]
    if not params:
        return "it takes no parameters"
    parts = []
    for f in params:
        default = "" if f.default is dataclasses.MISSING else f", default {f.default!r}"
        parts.append(f"{f.name} ({_type_name(hints.get(f.name))}{default})")
    return "its parameters are " + ", ".join(parts)


_EXPECTED = {bool: "true or false", int: "a whole number", float: "a number", str: "a text"}


def _convert(value: str, kind: Any, name: str, system: str) -> Any:
    try:
        if kind is bool:
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if kind in (int, float, str):
            return kind(value)
    except ValueError:
        raise InputError(
            f"system {system}: {value!r} is not a valid value for parameter {name}, "
            f"which takes {_EXPECTED.get(kind, _type_name(kind))} ({_type_name(kind)})"
        ) from None
    return value


def make_system(spec: str, **params: Any) -> System:
    """A system from ``name`` or ``name:k=v,k=v`` (typed by the dataclass fields), plus ``params``.

    Examples:
        >>> make_system("ours:dense=False").dense
        False
        >>> spec(make_system("linked-posts", neighbours=10))
        'linked-posts:neighbours=10'
    """
    name, _, rest = spec.partition(":")
    cls = system_class(name.strip())
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(typing.cast(Any, cls)) if f.init}  # a registered dataclass
    values: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if key not in known:
            raise InputError(f"system {name}: unknown parameter {key!r} (in {item!r}); {_describe(cls, hints)}")
        if not eq:
            raise InputError(f"system {name}: parameter {key} needs a value, as {key}=VALUE; {_describe(cls, hints)}")
        values[key] = _convert(value.strip(), hints.get(key), key, name)
    for key, value in params.items():
        if key not in known:
            raise InputError(f"system {name}: unknown parameter {key!r}; {_describe(cls, hints)}")
        values[key] = value
    return cls(**values)


def spec(system: Any) -> str:
    """Canonical name of a configured system: ``NAME`` plus its non-default parameters."""
    changed = []
    for f in dataclasses.fields(system):
        if not f.init:
            continue
        value = getattr(system, f.name)
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else dataclasses.MISSING  # type: ignore[misc]
        )
        if value != default:
            changed.append(f"{f.name}={value}")
    return system.NAME + (":" + ",".join(changed) if changed else "")


__all__ = [
    "Answerer",
    "Ranker",
    "Ranking",
    "SearchContext",
    "SearchQuery",
    "System",
    "field",
    "make_system",
    "register",
    "spec",
    "system_class",
    "system_names",
]
