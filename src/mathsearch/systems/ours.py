"""Task 1 ``ours``: BM25 over answers with thread context, question-question similarity, duplicate
links and formula evidence, fused with the weights of a config file (``ours.toml`` by default).

Each signal gives ``{answer: score}``; scores are min-max normalised per topic and summed with
the signal's weight (or fused by reciprocal rank).  A signal of weight 0 is not computed.
Signals other modules provide (formula similarity, dense retrieval) plug in through
:data:`EXTRA_SIGNALS`: ``name -> function(ctx, query, section of the config) -> {answer id: score}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import signals
from .base import Ranking, SearchContext, SearchQuery, load_system_config, register
from .fusion import minmax_normalise, ranked

Signal = Callable[[SearchContext, SearchQuery, Mapping[str, Any]], dict[int, float]]
EXTRA_SIGNALS: dict[str, Signal] = {}
DEFAULT_CONFIG = "ours.toml"
LEXICAL_CONFIG = "ours_lexical.toml"  # ours:dense=False: tuned without the dense signals


def load_config(path: str = "", packaged: str = DEFAULT_CONFIG) -> dict[str, Any]:
    """The TOML file at ``path``, or when empty the packaged config ``packaged``."""
    return load_system_config(path, packaged)


DENSE_KINDS = ("dense", "dense_questions")


def without_dense(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with its dense signals dropped (for indexes built without ``--dense``)."""
    out = dict(config)
    out["signals"] = {n: s for n, s in config.get("signals", {}).items() if s.get("kind", n) not in DENSE_KINDS}
    return out


def combine(ctx: SearchContext, query: SearchQuery, config: Mapping[str, Any]) -> dict[int, float]:
    """All weighted signals of ``config`` fused into one ``{answer id: score}``."""
    sigs: Mapping[str, Mapping[str, Any]] = config.get("signals", {})
    parts: list[tuple[float, dict[int, float]]] = []
    questions: dict[int, float] | None = None

    def similar() -> dict[int, float]:
        nonlocal questions
        if questions is None:
            sec = sigs.get("questions", {})
            questions = signals.similar_questions(ctx, query, sec.get("fields", {}), int(sec.get("limit", 50)))
        return questions

    for name, sec in sigs.items():
        weight = float(sec.get("weight", 0.0))
        if weight <= 0:
            continue
        kind = sec.get("kind", name)
        if kind in ("bm25", "answer", "math"):
            found = signals.fielded_bm25(ctx, query, sec.get("fields", {}), int(sec.get("limit", 1000)))
        elif kind == "questions":
            found = signals.thread_scores(ctx, similar())
        elif kind == "linked":
            found = signals.linked_scores(ctx, similar(), float(sec.get("decay", 1.0)))
        elif kind == "dense":
            found = signals.dense_answers(ctx, query, int(sec.get("limit", 1000)))
        elif kind == "dense_questions":
            found = signals.thread_scores(ctx, signals.dense_questions(ctx, query, int(sec.get("limit", 50))))
        elif kind in EXTRA_SIGNALS:
            found = EXTRA_SIGNALS[kind](ctx, query, sec)
        else:
            raise InputError(f"system config: unknown kind of signal {kind!r} in [signals.{name}]")
        if found:
            parts.append((weight, found))
    fusion = config.get("fusion", {})
    method = fusion.get("method", "combsum")
    fused: dict[int, float] = {}
    if method == "rrf":
        k = float(fusion.get("rrf_k", 60))
        for weight, found in parts:
            for rank, doc in enumerate(ranked(found), 1):
                fused[doc] = fused.get(doc, 0.0) + weight / (k + rank)
    elif method == "combsum":
        for weight, found in parts:
            for doc, s in minmax_normalise(found).items():
                fused[doc] = fused.get(doc, 0.0) + weight * s
    else:
        raise InputError(f"system config: fusion method {method!r} should be combsum or rrf")
    return fused


# What ``ours`` runs, by what the index holds: the one place that says it.  Vectors of a MiniLM
# encoder: ours.toml; of a static encoder (trained on the collection, the full-size one):
# ours_static.toml; no vectors at all: ours_lexical.toml (the same as ``ours:dense=False``).
CONFIG_BY_ENCODER_KIND = {"minilm": DEFAULT_CONFIG, "static": "ours_static.toml"}


def packaged_config_for(index_dir: str | Path) -> str:
    """The packaged config ``ours`` uses on ``index_dir`` (see :data:`CONFIG_BY_ENCODER_KIND`)."""
    from ..indexes.dense import DENSE_DIR, DenseIndex

    if not DenseIndex.exists(index_dir):
        return LEXICAL_CONFIG
    import json

    manifest = json.loads((Path(index_dir) / DENSE_DIR / "manifest.json").read_text())
    kind = (manifest.get("encoder") or {}).get("kind", "minilm")
    return CONFIG_BY_ENCODER_KIND.get(kind, DEFAULT_CONFIG)


@register
@dataclass(frozen=True)
class Ours:
    """The best Task 1 system we make from these parts; every weight is in its config file.

    One name everywhere: on an index with vectors ``ours`` adds the dense signals of whatever
    encoder made them, with the weights tuned for that kind of encoder; on an index without vectors
    it is ``ours:dense=False``, the lexical config (:func:`packaged_config_for` says which file).
    ``dense=False`` always runs without dense signals: the packaged ``ours_lexical.toml``, or the
    given config with its dense signals dropped.  A given ``config`` is used as written (its dense
    signals need an index built with ``--dense``).
    """

    NAME = "ours"
    TASK = 1
    DESCRIPTION = "fused BM25 (answer + thread), similar questions, duplicate links, math tokens, dense similarity"
    config: str = ""  # a TOML file; empty: the packaged config for the index (packaged_config_for)
    dense: bool = True

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        if not self.dense:
            cfg = without_dense(load_config(self.config, LEXICAL_CONFIG))
        elif self.config:
            cfg = load_config(self.config)
        else:
            cfg = ctx.part("ours_config", lambda index_dir: load_config("", packaged_config_for(index_dir)))
        fused = combine(ctx, query, cfg)
        depth = min(limit, int(cfg.get("depth", 1000)))
        best = sorted(fused.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:depth]
        return Ranking(best)


def default_spec(index_dir: str | Path) -> str:
    """The spec (and run tag) of what ``ours`` runs on ``index_dir``: ``ours`` where the index has
    dense vectors, else ``ours:dense=False`` (what ``ours`` falls back to there)."""
    from ..indexes.dense import DenseIndex

    return "ours" if DenseIndex.exists(index_dir) else "ours:dense=False"
