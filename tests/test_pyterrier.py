"""mathsearch.pyterrier: systems as PyTerrier transformers give the hits `mathsearch run` gives, the
ARQMath measures in pt.Experiment are the project's, fusion is `mathsearch fuse`'s, and no JVM starts."""

from __future__ import annotations

import ir_measures
import pandas as pd
import pyterrier as pt
import pytest
from conftest import DATA, TOPICS

import mathsearch.pyterrier as ms
from mathsearch.errors import InputError
from mathsearch.evaluation import evaluate_ranked
from mathsearch.ranking import ranked
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, make_system, run_system
from mathsearch.systems import fusion as project_fusion


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARQMATH_HOME", str(DATA))


def _topics(task: int, n: int = 6) -> tuple[list, pd.DataFrame]:
    year = 2021
    topics = read_topics(TOPICS / f"task{task}-{year}.xml", TOPICS / "formulas" / f"formulas-{year}-latex.tsv")[:n]
    frame = pt.get_dataset(f"irds:arqmath/task{task}/{year}").get_topics()
    return topics, frame[frame.qid.isin([t.topic_id for t in topics])]


@pytest.mark.parametrize(("task", "system"), [(1, "bm25-thread"), (1, "ours:dense=False"), (1, "tangent-s"),
                                              (2, "formula"), (2, "tangent-s-formula")])
def test_retriever_gives_the_hits_of_mathsearch_run(sample_index, task: int, system: str) -> None:
    topics, frame = _topics(task)
    expected = run_system(make_system(system), SearchContext(sample_index), topics, 1000)
    results = ms.retriever(sample_index, system).transform(frame)
    assert len(results) == len(expected) > 0
    key = "formula_id" if task == 2 else "doc_id"
    runs: dict[str, dict[str, float]] = {}
    for h in expected:
        runs.setdefault(h.query_id, {})[getattr(h, key)] = h.score
    assert list(dict.fromkeys(results.qid)) == list(runs)  # the queries in the frame's order
    for qid, group in results.groupby("qid", sort=False):
        # each query's rows in the one ranking order (score descending, then id descending), ranks from 0
        assert list(group.docno) == ranked(runs[qid])
        assert list(group.score) == [runs[qid][d] for d in group.docno]
        assert list(group["rank"]) == list(range(len(group)))
    if task == 2:
        posts = {(h.query_id, h.formula_id): h.post_id for h in expected}
        assert list(results.post_id) == [posts[q, d] for q, d in zip(results.qid, results.docno, strict=True)]
        store = SearchContext(sample_index).store
        row = results.iloc[0]
        assert row.visual_id == store.visual_id(row.docno) and row.thread_id == str(store.post(row.post_id).thread_id)
    assert {"query", "title", "question", "tags"} <= set(results.columns)


def test_retriever_takes_a_typed_in_query(sample_index) -> None:
    frame = pd.DataFrame([{"qid": "q1", "query": "derivative of $x^2 \\sin x$"}])
    hits = ms.retriever(sample_index, "bm25-thread", depth=10)(frame)
    assert len(hits) == 10 and list(hits["rank"]) == list(range(10)) and set(hits.qid) == {"q1"}
    formula = ms.retriever(sample_index, "formula", depth=5)(pd.DataFrame([{"qid": "f", "query": "$x^2+y^2=z^2$"}]))
    assert len(formula) == 5 and formula.visual_id.str.len().min() > 0
    with pytest.raises(InputError, match="needs qid and query"):
        ms.retriever(sample_index, "bm25-thread")(pd.DataFrame([{"text": "x"}]))
    with pytest.raises(InputError, match="unknown system 'bm26'"):
        ms.retriever(sample_index, "bm26")


@pytest.mark.parametrize(("system", "task", "query"), [
    ("bm25-thread", 1, "limit [calculus]"), ("bm25-thread", 1, "limit -[calculus]"),
    ("formula", 2, "?a^2+?b^2"), ("formula", 2, "x^2 [calculus]")])
def test_a_typed_in_query_is_ranked_as_mathsearch_search_ranks_it(sample_index, system, task, query) -> None:
    """Filters and query variables apply: the rows are the Searcher's hits, in its order."""
    from mathsearch.searcher import Searcher

    hits = ms.retriever(sample_index, system, depth=20)(pd.DataFrame([{"qid": "q", "query": query}]))
    expected = Searcher(sample_index).search(query, task=task, system=system, k=20).hits
    assert len(hits) == 20 and list(hits.docno) == [str(h.id) for h in expected]
    with pytest.raises(InputError, match="qid 'q2': the query has only filters"):
        ms.retriever(sample_index, system)(pd.DataFrame([{"qid": "q2", "query": "[calculus]"}]))


def _judged_only_reference(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    """trec_eval -J by hand: unjudged hits removed, then ir_measures' nDCG, AP(rel=2), P(rel=2)@10."""
    judged = set(zip(qrels.qid, qrels.docno, strict=True))
    kept = run[[(q, d) in judged for q, d in zip(run.qid, run.docno, strict=True)]]
    measures = {"nDCG'": ir_measures.nDCG, "MAP'": ir_measures.AP(rel=2), "P'@10": ir_measures.P(rel=2) @ 10}
    got = ir_measures.calc_aggregate(list(measures.values()), pt.model.to_ir_measures(qrels), pt.model.to_ir_measures(kept))
    return {name: got[m] for name, m in measures.items()}


def test_measures_in_experiment_are_the_labs() -> None:
    qrels = pd.DataFrame([("1", "a", 3), ("1", "b", 0), ("1", "c", 2), ("2", "a", 1), ("2", "d", 2)],
                         columns=["qid", "docno", "label"])
    run = pd.DataFrame([("1", "x", 9.0), ("1", "b", 8.0), ("1", "a", 7.0), ("1", "c", 1.0),
                        ("2", "d", 5.0), ("2", "y", 4.0), ("2", "a", 3.0)], columns=["qid", "docno", "score"])
    table = pt.Experiment([run], pd.DataFrame({"qid": ["1", "2"], "query": ["q", "q"]}), qrels, ms.measures(1))
    expected = _judged_only_reference(run, qrels)
    for name, value in expected.items():
        assert table[name][0] == pytest.approx(value, abs=1e-12), name
    assert expected["nDCG'"] < 1.0 and expected["P'@10"] == pytest.approx((2 / 10 + 1 / 10) / 2)
    assert not pt.java.started(), "PyTerrier must not start a JVM"


def test_task2_measures_deduplicate_by_visual_id() -> None:
    qrels = pd.DataFrame([("B.1", "v1", 3), ("B.1", "v2", 0), ("B.1", "v3", 2)], columns=["qid", "docno", "label"])
    # Two instances of v2 (not relevant) above v1: the second is dropped, so v1 ranks 2nd, not 3rd.
    run = pd.DataFrame([("B.1", "f1", 9.0, "v2"), ("B.1", "f2", 8.0, "v2"), ("B.1", "f3", 7.0, "v1"), ("B.1", "f4", 6.0, "v3")],
                       columns=["qid", "docno", "score", "visual_id"])
    table = pt.Experiment([run], pd.DataFrame({"qid": ["B.1"], "query": ["x"]}), qrels, ms.measures(2), perquery=True)
    got = dict(zip(table.measure, table.value, strict=True))
    visual = {"B.1": {"v2": 9.0, "v1": 7.0, "v3": 6.0}}
    direct = evaluate_ranked(2, {"B.1": {"v1": 3, "v2": 0, "v3": 2}}, [("r", {"B.1": {"f1": 9.0, "f2": 8.0, "f3": 7.0, "f4": 6.0}})],
                             visual_of={"f1": "v2", "f2": "v2", "f3": "v1", "f4": "v3"})[0]
    assert got["MAP'"] == pytest.approx(direct.means["MAP'"]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    reference = _judged_only_reference(
        pd.DataFrame([("B.1", d, s) for d, s in visual["B.1"].items()], columns=["qid", "docno", "score"]), qrels)
    assert got["nDCG'"] == pytest.approx(reference["nDCG'"])


def test_fusion_is_mathsearch_fuse() -> None:
    a = pd.DataFrame([("1", "x", 3.0, 0), ("1", "y", 2.0, 1), ("2", "z", 1.0, 0)], columns=["qid", "docno", "score", "rank"])
    b = pd.DataFrame([("1", "y", 0.9, 0), ("1", "w", 0.5, 1)], columns=["qid", "docno", "score", "rank"])
    runs = [{"1": {"x": 3.0, "y": 2.0}, "2": {"z": 1.0}}, {"1": {"y": 0.9, "w": 0.5}}]
    for method, options in (("rrf", {"k": 60.0}), ("combsum", {})):
        fused = ms.fuse(method, [a, b], **options)
        expected = project_fusion.fuse(method, runs, **options)
        got = {q: dict(zip(g.docno, g.score, strict=True)) for q, g in fused.groupby("qid")}
        assert got == expected
        assert list(fused[fused.qid == "1"]["rank"]) == [0, 1, 2]
    assert list(ms.fuse("rrf", [a, b]).query("qid == '1'").docno) == ["y", "x", "w"]
    pipeline = ms.rrf(pt.Transformer.from_df(a), pt.Transformer.from_df(b))
    assert len(pipeline(pd.DataFrame({"qid": ["1", "2"], "query": ["q", "q"]}))) == 4
    with pytest.raises(InputError, match="at least one results frame"):
        ms.fuse("rrf", [])


def test_reranker_rescores_the_candidates(sample_index) -> None:
    _, frame = _topics(1, 3)
    first = ms.retriever(sample_index, "bm25-thread") % 20
    reranked = (first >> ms.reranker(sample_index, "formula"))(frame)
    candidates = first(frame)
    assert sorted(zip(reranked.qid, reranked.docno, strict=True)) == sorted(zip(candidates.qid, candidates.docno, strict=True))
    assert (reranked.groupby("qid")["score"].apply(lambda s: list(s) == sorted(s, reverse=True))).all()
    assert reranked.score.max() > 0  # formulae of these topics match formulae of some candidates
    with pytest.raises(InputError, match="unknown signal 'nope'"):
        ms.reranker(sample_index, "nope")


def test_a_frame_row_is_read_as_mathsearch_run_reads_its_topic() -> None:
    """Plain-words maths in a queries frame's title and question is read as in a topic file."""
    from mathsearch.indexes.documents import topic_text
    from mathsearch.systems import SearchQuery

    topics = read_topics(TOPICS / "task1-2021.xml")
    read = 0
    for t in topics:
        expected = SearchQuery.from_topic(t)
        title, question = topic_text(t)  # the frame's columns (mathsearch.irds): the topic as written
        got = ms.search_query({"qid": t.topic_id, "title": title, "question": question, "tags": list(t.tags)}, 1)
        assert (got.title, got.question, got.understood) == (expected.title, expected.question, expected.understood)
        read += bool(expected.understood)
    assert read > 0  # some topics of 2021 hold maths typed without dollars
