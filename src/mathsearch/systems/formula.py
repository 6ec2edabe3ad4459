"""Formula systems over the formula index: Task 2 ``formula`` and the lab's Tangent-S baseline.

* ``formula`` (Task 2): candidates from the tuple postings, scored by (idf-weighted) Dice overlap
  of SLT tuples, OPT tuples, variable-unified SLT tuples and OPT leaf-root paths, then a mild
  boost from the BM25 similarity of an instance's thread to the topic's question (the boosted
  instance represents its visual formula); one instance per visual id first, question and
  answer posts only, further instances filling free slots.  Every weight is in ``formula.toml``.
* ``tangent-s`` (Task 1; ``tfidf-tangent-s`` fuses it with ``tfidf-words``) and
  ``tangent-s-formula`` (Task 2): the lab's baseline as the issue describes it: SLT and OPT
  tuple Dice with equal weights, no idf, no text.  For Task 1 the query is the topic's formula
  with most SLT nodes (from the title if it has one, else the body), and answers are ranked by
  their best-matching formula.

For Task 1 systems (``ours``, fusion with ``tfidf-tangent-s``):
:func:`answer_scores` ``(ctx, latexes, scoring=None, depth=...) -> {answer id: score}`` scores
answers by their best-matching formula, summed over the given query formulae;
:func:`tangent_s_formula` picks the Tangent-S query formula of a topic and
:func:`largest_formulae` the formulae ``ours``' formula signal (:class:`signals.FormulaSignal`)
searches with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import numpy as np

from ..config import read_toml, typed
from ..indexes.formula import Scoring
from ..ranking import Ranking
from ..records import FormulaKind
from .base import SearchContext, SearchQuery, register
from .formula_scores import (  # noqa: F401  (all importable from here, as tests, bench and mirmu do)
    MAX_INSTANCES,
    TANGENT_S,
    Rescorer,
    answer_scores,
    answer_scores_among,
    largest_formulae,
    query_analyzer,
)
from .signals import clauses_from

DEFAULT_CONFIG = "formula.toml"


def load_config(path: str = "") -> dict[str, Any]:
    """The packaged ``formula.toml``, or the TOML file at ``path``, as a new, mutable dict (tuning)."""
    return read_toml(path, DEFAULT_CONFIG)


def scoring_from(section: Mapping[str, Any]) -> Scoring:
    return typed(Scoring, section, "[scoring]")


@dataclass(frozen=True)
class TextBoost:
    """The thread text boost of ``formula``: BM25 of an instance's thread to the topic, times ``weight``."""

    weight: float = 0.0
    limit: int = 1000
    max_terms: int = 0  # the query terms that can add most (boost x idf); 0: every term
    fields: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class FormulaConfig:
    """Every weight ``formula`` uses (``formula.toml``), immutable."""

    depth: int = 2000
    scoring: Scoring = Scoring()
    text: TextBoost = TextBoost()


@lru_cache(maxsize=64)
def formula_config(path: str = "") -> FormulaConfig:
    """The config at ``path`` (or the packaged one), parsed and checked once."""
    return typed(FormulaConfig, read_toml(path, DEFAULT_CONFIG), path or DEFAULT_CONFIG)


def _thread_boosts(ctx: SearchContext, query: SearchQuery, text: TextBoost) -> tuple[np.ndarray, np.ndarray]:
    """Threads (question ids, sorted) and their BM25 similarity to the topic, max-normalised."""
    found = ctx.text.search_questions(query.bags, clauses_from(text.fields), text.limit, text.max_terms)
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    ids = np.fromiter(found.keys(), dtype=np.int64, count=len(found))
    vals = np.fromiter(found.values(), dtype=np.float64, count=len(found))
    order = np.argsort(ids)
    return ids[order], vals[order] / max(float(vals.max()), 1e-9)


def formula_instances(ctx: SearchContext, query: SearchQuery, latex: str, scoring: Scoring, depth: int,
                      limit: int, text: TextBoost | None = None) -> Ranking:
    """Task 2: formula instances with their posts, one (the best) per visual formula, at most ``limit``."""
    ix = ctx.formula
    weight = text.weight if text is not None else 0.0
    boosts = None
    if text is not None and weight > 0 and (query.title or query.question):
        # The boost's BM25 (tantivy lets go of the GIL) runs beside the formula search: at 1.4M
        # answers they took ~70 and ~110 ms one after the other.
        boosts = ctx.beside(_thread_boosts, ctx, query, text)
    return ix.best_instances(ix.query(latex), scoring, max(depth, limit), limit, boosts, weight)


def tangent_s_formula(query: SearchQuery) -> str | None:
    """The topic's formula with most SLT nodes, from the title if it has one, else the body."""
    from ..text.analysis import split_math

    if query.topic is not None and query.topic.formulas:
        title = [f.latex for f in query.topic.formulas if f.kind == FormulaKind.TITLE]
        body = [f.latex for f in query.topic.formulas if f.kind != FormulaKind.TITLE]
    else:
        title, body = split_math(query.title)[1], split_math(query.question)[1]
    pool = [t for t in title if t.strip()] or [b for b in body if b.strip()]
    if not pool:
        return None
    analyzer = query_analyzer()
    return max(pool, key=lambda latex: (analyzer.analyze(latex).n_nodes, -pool.index(latex)))


@register
@dataclass(frozen=True)
class FormulaSearch:
    """Our Task 2 system; every weight is in its config file (``formula.toml`` by default)."""

    NAME = "formula"
    DATA_USED = "math"  # the run-file naming field: formulae only
    TASK = 2
    DESCRIPTION = "tuple candidates (SLT, OPT, unified SLT; idf-weighted Dice), exact visual match, thread text boost"
    config: str = ""  # a TOML file; empty: the packaged formula.toml

    def needs(self) -> tuple[str, ...]:
        return ("formula", "text") if formula_config(self.config).text.weight > 0 else ("formula",)

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        cfg = formula_config(self.config)
        if not query.formula_latex:
            return Ranking()
        return formula_instances(ctx, query, query.formula_latex, cfg.scoring, cfg.depth, limit, cfg.text)


@register
@dataclass(frozen=True)
class TangentSFormula:
    """The lab's Tangent-S baseline for Task 2: SLT and OPT tuple overlap, equal weights."""

    NAME = "tangent-s-formula"
    DATA_USED = "math"  # the run-file naming field: formulae only
    TASK = 2
    NEEDS = ("formula",)
    DESCRIPTION = "Tangent-S baseline: SLT + OPT tuple Dice, best instance per visual id"
    slt: float = 0.5

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        if not query.formula_latex:
            return Ranking()
        scoring = Scoring(slt=self.slt, opt=1.0 - self.slt)
        return formula_instances(ctx, query, query.formula_latex, scoring, limit, limit)


@register
@dataclass(frozen=True)
class TangentS:
    """The lab's Tangent-S baseline for Task 1: answers ranked by their best-matching formula to
    the topic's largest formula (title first)."""

    NAME = "tangent-s"
    DATA_USED = "math"  # the run-file naming field: formulae only
    TASK = 1
    NEEDS = ("formula",)
    DESCRIPTION = "Tangent-S baseline: answers by their best formula match to the topic's largest formula"
    slt: float = 0.5

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        latex = tangent_s_formula(query)
        if latex is None:
            return Ranking()
        return Ranking(answer_scores(ctx, [latex], Scoring(slt=self.slt, opt=1.0 - self.slt), limit=limit))
