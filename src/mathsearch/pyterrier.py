"""mathsearch in PyTerrier: every registered system as a ``pt.Transformer``, a re-ranker, fusion, and
the ARQMath measures for ``pt.Experiment`` (the ``pyterrier`` extra; PyTerrier 1.x, no Java).

>>> import pyterrier as pt, mathsearch.pyterrier as ms                      # doctest: +SKIP
>>> topics = pt.get_dataset("irds:arqmath/task1/2020").get_topics()           # doctest: +SKIP
>>> pt.Experiment([ms.retriever("index", "bm25-thread"), ms.retriever("index", "ours")],
...               topics, qrels, ms.measures(1), baseline=0)               # doctest: +SKIP

Frames (PyTerrier's column names):

* **queries in**: ``qid`` and ``query``; where present ``title``, ``question`` (plain text with
  ``$LaTeX$``), ``tags`` and, for Task 2, ``formula_id`` and ``latex`` (the formula searched for)
  are what a system is given, as ``mathsearch run`` gives a topic's (the ``arqmath/...`` queries of
  :mod:`mathsearch.irds` carry them).  A frame with ``query`` alone is a typed-in search, parsed and
  ranked as ``mathsearch search`` does it (:meth:`mathsearch.searcher.Searcher.rank_by`): its text is
  the title (Task 2: its first ``$formula$``, or the whole text as LaTeX), its filters (``[tag]``,
  ``-[tag]``, ``answers:N``...) and Task 2 query variables (``?a``) applied; a row that
  ``mathsearch search`` would refuse (empty, filters only) is refused naming its ``qid``.
* **results out**: ``qid``, ``docno`` (Task 1: answer post id; Task 2: formula instance id),
  ``score``, ``rank`` (from 0) and the query columns; Task 2 adds ``post_id``, ``thread_id`` and
  ``visual_id``.  Rows of a query follow the project's one ranking order
  (:mod:`mathsearch.ranking`: score descending, then id descending, as trec_eval ranks).

Measures (:func:`measures`) are ir_measures measures computed by the project's evaluation
(:func:`mathsearch.evaluation.evaluate_ranked`: trec_eval through ir_measures, unjudged hits removed,
H+M for MAP' and P'@10, Task 2 de-duplicated by visual id), so ``pt.Experiment`` prints what
``mathsearch eval`` prints.  ``import pyterrier`` loads this module as ``pt.mathsearch`` when
mathsearch is installed with the extra; importing it registers the ``arqmath/...`` datasets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

try:
    import ir_measures
    import pandas as pd
    import pyterrier as pt
except ImportError as exc:  # the core install: one line that names the extra
    raise ImportError(f"mathsearch.pyterrier needs the pyterrier extra ({exc.name} is not installed): "
                      "pip install 'mathsearch[pyterrier]'") from None

from . import irds  # noqa: F401 - registers arqmath/... with ir_datasets
from . import ranking as _ranking
from .errors import InputError
from .evaluation import evaluate_ranked, from_index, restrict_qrels
from .evaluation.measures import MAP_PRIME, NDCG_PRIME, P10_PRIME
from .readers.qrels import qrels_to_dict
from .records import Qrel
from .searcher import ParsedQuery, Searcher, parse_query
from .systems import SearchContext, SearchQuery, make_system, needs_of, spec, system_class, system_names
from .systems import fusion as _fusion
from .systems.ours import default_spec
from .systems.runner import MAX_HITS, ranking_to_hits, top

TASK2_COLUMNS = ("post_id", "thread_id", "visual_id")


# --- queries -------------------------------------------------------------------------------------


def _text(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _tags(value: Any) -> tuple[str, ...]:
    if value is None or (isinstance(value, float) and value != value):
        return ()
    if isinstance(value, str):
        return tuple(t for t in value.replace(",", " ").split() if t)
    return tuple(str(t) for t in value)


def typed_in(row: Mapping[str, Any]) -> bool:
    """The row is a typed-in search: ``query`` alone, no topic fields (see the module text)."""
    return not ("title" in row or "question" in row or _text(row, "latex"))


def parsed_query(row: Mapping[str, Any], task: int) -> ParsedQuery:
    """A typed-in row (:func:`typed_in`) parsed as ``mathsearch search`` parses a query."""
    try:
        return parse_query(_text(row, "query"), task, _tags(row.get("tags")))
    except InputError as exc:
        raise InputError(f"qid {_text(row, 'qid')!r}: {exc}") from None


def search_query(row: Mapping[str, Any], task: int) -> SearchQuery:
    """The :class:`~mathsearch.systems.SearchQuery` of one queries-frame row (see the module text)."""
    qid = _text(row, "qid")
    if typed_in(row):
        return dataclasses.replace(parsed_query(row, task).query, query_id=qid)
    if "title" in row or "question" in row:
        title, question = _text(row, "title"), _text(row, "question")
        latex = _text(row, "latex") or None
        if task == 2 and latex is None and _text(row, "query"):
            latex = SearchQuery.from_text(_text(row, "query")).formula_latex
        return SearchQuery.from_fields(qid, title, question, _tags(row.get("tags")), latex,
                                       _text(row, "formula_id") or None)
    query = SearchQuery.from_text(_text(row, "query"), qid, _tags(row.get("tags")))
    if task == 2 and _text(row, "latex"):
        query = dataclasses.replace(query, formula_latex=_text(row, "latex"), formula_id=_text(row, "formula_id") or None)
    return query


def _check_queries(topics: pd.DataFrame, who: str) -> None:
    missing = [c for c in ("qid",) if c not in topics.columns]
    if missing or not ({"query", "title", "latex"} & set(topics.columns)):
        raise InputError(f"{who}: the queries frame needs qid and query (or title / latex) columns; "
                         f"it has {', '.join(map(str, topics.columns)) or 'none'}")


def _query_columns(topics: pd.DataFrame) -> list[str]:
    return [c for c in topics.columns if c not in ("docno", "score", "rank", *TASK2_COLUMNS)]


def _results(rows: list[dict], topics: pd.DataFrame, task: int) -> pd.DataFrame:
    """The results frame: hits joined to their query's columns, ``rank`` from 0 within each query."""
    columns = ["qid", "docno", "score", "rank", *(TASK2_COLUMNS if task == 2 else ())]
    hits = pd.DataFrame(rows, columns=columns)
    hits["score"] = hits["score"].astype(float)
    hits["rank"] = hits["rank"].astype(int)
    extra = [c for c in _query_columns(topics) if c != "qid"]
    if not extra:
        return hits
    queries = topics[["qid", *extra]].drop_duplicates("qid")
    queries = queries.assign(qid=queries["qid"].astype(str))
    return hits.merge(queries, on="qid", how="left")[[*columns, *extra]]


# --- retrievers ----------------------------------------------------------------------------------


class Retriever(pt.Transformer):
    """A registered system (``spec`` as on the command line) over one index folder."""

    def __init__(self, index: str | Path, system: str, depth: int = MAX_HITS):
        self.index = Path(index)
        self.system: Any = make_system(system)  # a registered system (base.System)
        self.spec = spec(self.system)
        self.task = int(self.system.TASK)
        if self.task not in (1, 2):
            raise InputError(f"system {self.spec} answers Task {self.task}: retriever() serves the ranked tasks 1 "
                             f"and 2 ({', '.join(system_names(1) + system_names(2))})")
        self.depth = depth
        self._searcher: Searcher | None = None

    @property
    def searcher(self) -> Searcher:
        """The index opened once: its context ranks topics, its query path typed-in searches."""
        if self._searcher is None:
            searcher = Searcher(self.index)
            searcher.ctx.require(("store", *needs_of(self.system)))  # every index it reads, checked before any query
            self._searcher = searcher
        return self._searcher

    @property
    def ctx(self) -> SearchContext:
        return self.searcher.ctx

    def __repr__(self) -> str:
        return f"mathsearch.retriever({str(self.index)!r}, {self.spec!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Retriever) and (other.index, other.spec, other.depth) == (self.index, self.spec, self.depth)

    def __hash__(self) -> int:
        return hash((self.index, self.spec, self.depth))

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        _check_queries(topics, repr(self))
        ctx = self.ctx
        rows: list[dict] = []
        visual: dict[str, str | None] = {}
        for row in topics.to_dict("records"):
            if typed_in(row):  # filters and query variables as `mathsearch search` applies them
                parsed = parsed_query(row, self.task)
                query = dataclasses.replace(parsed.query, query_id=_text(row, "qid"))
                ranking = self.searcher.rank_by(parsed, self.system, self.depth)
            else:
                query = search_query(row, self.task)
                ranking = top(self.system.search(ctx, query, self.depth), self.depth)
            hits = ranking_to_hits(self.system, query.query_id, ranking, self.spec)
            ordered = ranking.ordered()
            if len(ordered) != len(hits):
                raise AssertionError(f"{self.spec}: {len(hits)} hits for {len(ordered)} ranked ids")
            by_id = {getattr(h, "formula_id", None) or h.doc_id: h for h in hits}
            for rank, doc in enumerate(ordered):
                hit = by_id[doc]
                out = {"qid": query.query_id, "docno": doc, "score": float(hit.score), "rank": rank}
                if self.task == 2:
                    out["post_id"] = hit.post_id
                rows.append(out)
        if self.task == 2:
            visual.update(ctx.store.visual_ids({r["docno"] for r in rows}))
            threads = ctx.store.thread_ids({r["post_id"] for r in rows})
            for r in rows:
                r["thread_id"] = str(threads.get(r["post_id"], "")) if r["post_id"] in threads else ""
                r["visual_id"] = visual.get(r["docno"]) or ""
        return _results(rows, topics, self.task)


def retriever(index: str | Path, system: str = "ours", *, depth: int = MAX_HITS) -> Retriever:
    """``system`` (a CLI spec: ``ours``, ``bm25-thread``, ``formula``, ``ours:dense=False``, ...) over the
    index folder ``index`` as a PyTerrier transformer.  ``ours`` is what ``mathsearch run`` runs by
    default on that index (with its dense signals where the index has vectors)."""
    name = system.partition(":")[0]
    system_class(name)  # an unknown name is refused with the known ones
    if system == "ours":
        system = default_spec(index)
    return Retriever(index, system, depth)


# --- re-ranking ----------------------------------------------------------------------------------


class Reranker(pt.Transformer):
    """Re-scores each query's candidate answers with one signal of ``ours`` (Task 1)."""

    def __init__(self, index: str | Path, signal: str, **params: Any):
        from .systems.ours import Ours, ours_config

        self.index = Path(index)
        self.name = signal
        self.config = Ours().config_for(self.index)
        # The signals of ours on this index, then those of the packaged config (ours.toml) it lacks.
        found = {name: sig for name, _, sig in ours_config().signals}
        found.update({name: sig for name, _, sig in self.config.signals})
        if signal not in found:
            raise InputError(f"reranker: unknown signal {signal!r}; the signals of ours: {', '.join(found)}")
        try:
            self.signal = dataclasses.replace(found[signal], **params)
        except TypeError as exc:
            raise InputError(f"reranker {signal}: {exc}") from None
        self._ctx: SearchContext | None = None

    def __repr__(self) -> str:
        return f"mathsearch.reranker({str(self.index)!r}, {self.name!r})"

    @property
    def ctx(self) -> SearchContext:
        if self._ctx is None:
            ctx = SearchContext(self.index)
            ctx.require(("store", *self.signal.NEEDS))
            self._ctx = ctx
        return self._ctx

    def scores(self, query: SearchQuery, candidates: Sequence[str]) -> dict[str, float]:
        """``{answer id: signal score}`` of the candidates (0 where the signal does not score one).

        The ``formula`` signal re-scores exactly the candidates (every formula of each); the others
        search as in ``ours`` (their ``limit`` best) and give their score to the candidates among them."""
        from .systems import signals

        ctx = self.ctx
        ids = [int(c) for c in candidates]
        sig = self.signal
        if isinstance(sig, signals.FormulaSignal):
            rescorer = dataclasses.replace(sig, rerank=max(1, len(ids))).rescorer(ctx, query)
            assert rescorer is not None
            rescorer.add(dict.fromkeys(ids, 0.0))
            found = rescorer.result()
        else:
            found = sig.scores(ctx, query, signals.SimilarQuestions(ctx, query, self.config.similar,
                                                                       teacher=self.config.teacher))
        return {str(i): float(found.get(i, 0.0)) for i in ids}

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        missing = [c for c in ("qid", "docno") if c not in results.columns]
        if missing:
            raise InputError(f"{self!r}: the results frame needs qid and docno; it lacks {', '.join(missing)}")
        _check_queries(results, repr(self))
        rows: list[dict] = []
        for qid, group in results.groupby("qid", sort=False):
            first = group.iloc[0].to_dict()
            query = search_query(first, 1)
            for doc, score in self.scores(query, list(map(str, group["docno"]))).items():
                rows.append({"qid": str(qid), "docno": doc, "score": score})
        return _rank(rows, results, 1)


def reranker(index: str | Path, signal: str, **params: Any) -> Reranker:
    """A Task 1 re-ranker: ``signal`` of ``ours`` (as configured for ``index``: ``answer``, ``questions``,
    ``linked``, ``math``, ``dense``, ``dense_questions``, ``formula``; ``params`` change its settings)
    re-scores each query's candidates, e.g. ``ms.retriever(ix, "bm25-thread") % 100 >> ms.reranker(ix, "formula")``."""
    return Reranker(index, signal, **params)


def _rank(rows: list[dict], source: pd.DataFrame, task: int) -> pd.DataFrame:
    """Rows ``{qid, docno, score}`` put in ranking order with ranks from 0, Task 2 columns and query
    columns taken from ``source``."""
    by_query: dict[str, dict[str, float]] = {}
    for r in rows:
        by_query.setdefault(r["qid"], {})[r["docno"]] = r["score"]
    extra: dict[tuple[str, str], dict[str, str]] = {}
    if task == 2 and all(c in source.columns for c in TASK2_COLUMNS):
        for rec in source[["qid", "docno", *TASK2_COLUMNS]].astype(str).to_dict("records"):
            extra.setdefault((rec["qid"], rec["docno"]), {c: rec[c] for c in TASK2_COLUMNS})
    out: list[dict] = []
    for qid, scores in by_query.items():
        for rank, doc in enumerate(_ranking.ranked(scores)):
            row = {"qid": qid, "docno": doc, "score": scores[doc], "rank": rank}
            if task == 2:
                row.update(extra.get((qid, doc), dict.fromkeys(TASK2_COLUMNS, "")))
            out.append(row)
    return _results(out, source, task if extra else 1)


# --- fusion --------------------------------------------------------------------------------------


def _run(results: pd.DataFrame) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for qid, doc, score in zip(results["qid"].astype(str), results["docno"].astype(str), results["score"], strict=True):
        run.setdefault(qid, {})[doc] = float(score)
    return run


def fuse(method: str, results: Sequence[pd.DataFrame], weights: Sequence[float] | None = None, *, k: float = 60.0,
         normalise: str = "minmax", depth: int = MAX_HITS) -> pd.DataFrame:
    """Results frames fused by :func:`mathsearch.systems.fusion.fuse` (what ``mathsearch fuse`` runs:
    ``rrf``, ``combsum``, ``minmax``, ``mirmu``).  Task 2 columns are kept from the first frame that has the hit."""
    if not results:
        raise InputError("fuse() needs at least one results frame; it was given none")
    fused = _fusion.fuse(method, [_run(r) for r in results], weights, k=k, normalise=normalise, depth=depth)
    rows = [{"qid": q, "docno": d, "score": s} for q, docs in fused.items() for d, s in docs.items()]
    task2 = all(c in r.columns for r in results for c in TASK2_COLUMNS)
    source = pd.concat(list(results), ignore_index=True) if task2 else results[0]
    queries = pd.concat([r[_query_columns(r)] for r in results], ignore_index=True).drop_duplicates("qid")
    framed = _rank(rows, source, 2 if task2 else 1)
    extra = [c for c in _query_columns(queries) if c != "qid" and c not in framed.columns]
    if extra:
        queries = queries.assign(qid=queries["qid"].astype(str))
        framed = framed.merge(queries[["qid", *extra]], on="qid", how="left")
    return framed


class Fusion(pt.Transformer):
    """Two (or more) transformers run on the same queries, their results fused by ``method``."""

    def __init__(self, method: str, transformers: Sequence[pt.Transformer], weights: Sequence[float] | None = None,
                 **options: Any):
        if method not in _fusion.METHODS:
            raise InputError(f"unknown fusion method {method!r}: one of {', '.join(_fusion.METHODS)}")
        self.method = method
        self.transformers = list(transformers)
        self.weights = weights
        self.options = options

    def __repr__(self) -> str:
        return f"mathsearch.{self.method}({', '.join(map(repr, self.transformers))})"

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        return fuse(self.method, [t.transform(topics) for t in self.transformers], self.weights, **self.options)


def combsum(a: pt.Transformer, b: pt.Transformer, weights: Sequence[float] | None = None, *,
            normalise: str = "minmax", depth: int = MAX_HITS) -> Fusion:
    """Weighted CombSUM of two PyTerrier retrievers (each query's scores min-max normalised first)."""
    return Fusion("combsum", [a, b], weights, normalise=normalise, depth=depth)


def rrf(a: pt.Transformer, b: pt.Transformer, weights: Sequence[float] | None = None, *, k: float = 60.0,
        depth: int = MAX_HITS) -> Fusion:
    """Reciprocal rank fusion of two PyTerrier retrievers: ``sum_i w_i / (k + rank_i)``."""
    return Fusion("rrf", [a, b], weights, k=k, depth=depth)


# --- run files ---------------------------------------------------------------------------------


def write_run(results: pd.DataFrame, path: str | Path, tag: str = "mathsearch", *, index: str | Path | None = None):
    """Write a results frame as an official run file (Task 2 when it has ``post_id``: the formula run
    layout), through the project's run writers; ``index`` checks the hits against its collection as
    ``mathsearch run`` does.  An existing file is refused, never overwritten.  Returns the writer's
    :class:`~mathsearch.runs.CheckReport`."""
    from .records import FormulaHit, ScoredDoc
    from .runs import write_formula_run, write_trec_run

    path = Path(path)
    if path.exists():
        raise InputError(f"{path} already exists: give a new file name (a run file is never overwritten)")
    lookup = SearchContext(index).store if index is not None else None
    qids, docs, scores = results["qid"].astype(str), results["docno"].astype(str), results["score"].astype(float)
    if "post_id" in results.columns:
        posts = results["post_id"].astype(str)
        hits = [FormulaHit(q, d, p, s) for q, d, p, s in zip(qids, docs, posts, scores, strict=True)]
        return write_formula_run(path, hits, tag, lookup)
    return write_trec_run(path, [ScoredDoc(q, d, s) for q, d, s in zip(qids, docs, scores, strict=True)], tag, lookup)


# --- measures ------------------------------------------------------------------------------------


class _Scores:
    """The project's evaluation of one (qrels, run) pair, shared by the measures of one ``measures()``
    call (ir_measures asks each measure in turn with the same frames)."""

    def __init__(self, task: int, visual_of: Mapping[str, str] | None):
        self.task = task
        self.visual_of = dict(visual_of or {})
        self._key: tuple | None = None
        self._frames: tuple = ()
        self._per_topic: dict[str, dict[str, float]] = {}

    def per_topic(self, qrels: pd.DataFrame, run: pd.DataFrame) -> dict[str, dict[str, float]]:
        key = (id(qrels), id(run), len(qrels), len(run))
        if key != self._key:
            judged = qrels_to_dict(
                Qrel(str(q), str(d), int(r)) for q, d, r in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"], strict=True)
            )
            scores = _run(run.rename(columns={"query_id": "qid", "doc_id": "docno"}))
            visual_of = self.visual_of
            if self.task == 2 and "visual_id" in run.columns:
                visual_of = {**visual_of, **{str(d): str(v) for d, v in zip(run["doc_id"], run["visual_id"], strict=True)
                                             if isinstance(v, str) and v}}
            result = evaluate_ranked(self.task, judged, [("run", scores)], visual_of=visual_of or None)[0]
            self._key, self._frames, self._per_topic = key, (qrels, run), result.per_topic
        return self._per_topic


def measures(task: int = 1, index: str | Path | None = None, *, visual_of: Mapping[str, str] | None = None) -> list:
    """nDCG', MAP' and P'@10 of ARQMath ``task`` (1 or 2) as ir_measures measures, for ``pt.Experiment``.

    Computed by :func:`mathsearch.evaluation.evaluate_ranked` (what ``mathsearch eval`` scores with):
    unjudged hits removed, MAP'/P'@10 with H+M (relevance >= 2) relevant, depth 1,000, every judged topic
    averaged (0 where a run has nothing).  Task 2 runs are scored on visual ids, de-duplicated from the
    top: the visual ids come from the results' ``visual_id`` column, ``visual_of`` or ``index``'s store.
    """
    if task not in (1, 2):
        raise InputError(f"measures: ARQMath's ranked tasks are 1 and 2, not {task}")
    if task == 2 and index is not None:
        visual_of = {**from_index(index).visual_of, **(visual_of or {})}
    shared = _Scores(task, visual_of)
    out = []
    for m in (NDCG_PRIME, MAP_PRIME, P10_PRIME):
        def impl(qrels: pd.DataFrame, run: pd.DataFrame, name: str = m.name) -> Iterable[tuple[str, float]]:
            return shared.per_topic(qrels, run).get(name, {}).items()

        out.append(ir_measures.define(
            impl, name=m.name, support_cutoff=False,
            run_inputs=["query_id", "doc_id", "score", *(["visual_id"] if task == 2 and visual_of is None else [])],
            pretty_name=m.name, short_desc=f"ARQMath Task {task} {m.name} ({m.trec_eval})",
        ))
    return out


def subcollection_qrels(qrels: pd.DataFrame, index: str | Path, task: int = 1) -> pd.DataFrame:
    """The sub-collection protocol (``mathsearch eval --collection-only``) on a qrels frame: judgements of
    documents absent from ``index``'s collection removed, topics left without an H+M document dropped."""
    facts = from_index(index)
    present = facts.present(task)
    if present is None:
        raise InputError(f"subcollection_qrels: {index} does not say which documents it holds")
    frame = qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    judged = qrels_to_dict(Qrel(str(q), str(d), int(r)) for q, d, r in zip(frame["qid"], frame["docno"], frame["label"], strict=True))
    if task == 2:
        from .evaluation.evaluate import prepare_judgements

        judged = {t: dict(d) for t, d in prepare_judgements(2, judged, facts.visual_of).qrels.items()}
    kept = restrict_qrels(judged, present).qrels
    return pd.DataFrame([{"qid": q, "docno": d, "label": r} for q, docs in kept.items() for d, r in docs.items()],
                        columns=["qid", "docno", "label"])


__all__ = [
    "Fusion",
    "Reranker",
    "Retriever",
    "combsum",
    "fuse",
    "measures",
    "reranker",
    "retriever",
    "rrf",
    "search_query",
    "subcollection_qrels",
    "write_run",
]
