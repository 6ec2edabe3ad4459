"""The frequent-terms index (a forward index beside tantivy's): its BM25 is tantivy's, and the
``rare_first`` answer search returns exact scores for the answers it finds (real sample)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, TOPICS

from mathsearch.indexes.frequent_terms import FIELDNORM_TABLE, FrequentTerms, choose_terms, fieldnorm_codes
from mathsearch.indexes.text_index import TextIndex, build_text_indexes, query_terms
from mathsearch.ranking import ranked
from mathsearch.readers.topics import read_topics
from mathsearch.store import Store
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.signals import clauses_from

CONFIG = REPO / "src" / "mathsearch" / "systems" / "ours_static.toml"


def _clauses():
    return clauses_from(tomllib.loads(CONFIG.read_text())["signals"]["answer"]["fields"])


def _queries(n: int = 12) -> list[SearchQuery]:
    return [SearchQuery.from_topic(t) for t in read_topics(TOPICS / "task1-2020.xml")[:n]]


@pytest.fixture(scope="module")
def every_term_index(sample_index: Path, tmp_path_factory: pytest.TempPathFactory) -> TextIndex:
    """The sample's text index with every term of the answers in the frequent-terms index."""
    out = tmp_path_factory.mktemp("every-term")
    with Store.open(sample_index) as store:
        build_text_indexes(store, out, workers=2, frequent_share=0.0)
    return TextIndex.open(out)


def test_fieldnorm_codes_are_tantivys() -> None:
    # exact to 40, then steps of 2, 4, ...; the largest code is 2,013,265,944 (tantivy's table)
    assert list(FIELDNORM_TABLE[:41]) == list(range(41))
    assert list(FIELDNORM_TABLE[41:45]) == [42, 44, 46, 48]
    assert FIELDNORM_TABLE[255] == 2_013_265_944
    assert list(fieldnorm_codes(np.array([0, 40, 41, 42, 43, 1_000_000_000, 2**31]))) == [0, 40, 40, 41, 41, 246, 255]


def test_choose_terms_keeps_what_enough_answers_hold() -> None:
    docs = [{"body": "a b"}, {"body": "a c", "tags": "t"}, {"body": "a", "tags": "t"}, {"q_math": "m:x"}]
    vocab = choose_terms(docs, min_share=0.5)  # at least 2 of the 4
    assert vocab["body"] == {"a": 0} and vocab["tags"] == {"t": 1} and vocab["q_math"] == {}
    every = choose_terms(docs, min_share=0.0)
    assert set(every["body"]) == {"a", "b", "c"} and "m:x" in every["q_math"]


def test_scores_are_tantivys_bm25(every_term_index: TextIndex) -> None:
    ti = every_term_index
    searcher = ti._a_searcher
    for q in _queries():
        exact = ti.search_answers(q.bags, _clauses(), 1000)
        terms = [t for t in query_terms(q.bags, _clauses()) if ti.frequent.holds(t[0], t[1])]
        ids = np.fromiter(exact, dtype=np.int64)
        ours = ti.frequent.scores(ids, terms, searcher.doc_freq, searcher.num_docs)
        np.testing.assert_allclose(ours, np.fromiter(exact.values(), dtype=np.float64), rtol=1e-5)


def test_rare_first_returns_exact_scores_of_the_answers_it_finds(sample_index: Path) -> None:
    ti = TextIndex.open(sample_index)  # the packaged build: terms of >= 1% of the answers
    assert ti.frequent is not None and 100 < len(ti.frequent.terms) < 20_000
    top10, found = [], 0
    for q in _queries(30):
        exact = ti.search_answers(q.bags, _clauses(), 50)
        quick = ti.search_answers(q.bags, _clauses(), 50, rare_first=500)
        assert len(quick) == len(exact)
        both = set(quick) & set(exact)
        for a in both:
            assert quick[a] == pytest.approx(exact[a], rel=1e-5)
        found += len(both)
        top10.append(len(set(ranked(quick)[:10]) & set(ranked(exact)[:10])))
        # a candidate list longer than what the rare terms match: one query of every term, the same run
        assert ti.search_answers(q.bags, _clauses(), 50, rare_first=4000) == exact
    assert np.mean(top10) >= 9.0 and found >= 0.9 * 30 * 50  # 500 of 3,395 answers: close, not exact


def test_old_index_without_frequent_terms_runs_every_term(sample_index: Path, tmp_path: Path) -> None:
    with Store.open(sample_index) as store:
        build_text_indexes(store, tmp_path, workers=1, frequent_share=None)
    ti = TextIndex.open(tmp_path)
    assert ti.frequent is None
    q = _queries(1)[0]
    assert ti.search_answers(q.bags, _clauses(), 100, rare_first=50) == ti.search_answers(q.bags, _clauses(), 100)


def test_rare_first_is_a_signal_parameter(sample_index: Path, tmp_path: Path) -> None:
    text = CONFIG.read_text().replace("[signals.answer]\n", "[signals.answer]\nrare_first = 300\n", 1)
    config = tmp_path / "quick.toml"
    config.write_text(text)
    ctx = SearchContext(sample_index)
    q = _queries(1)[0]
    quick = make_system(f"ours:config={config},dense=False").search(ctx, q, 100)
    same = make_system(f"ours:config={CONFIG},dense=False").search(ctx, q, 100)
    assert len(quick) == len(same) == 100
    assert len(set(quick.ordered()[:10]) & set(same.ordered()[:10])) >= 7


def test_frequent_terms_refuse_another_version(sample_index: Path, tmp_path: Path) -> None:
    import json
    import shutil

    from mathsearch.errors import InputError

    root = tmp_path / "frequent"
    shutil.copytree(Path(sample_index) / "text" / "frequent", root)
    meta = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**meta, "version": 0}))
    with pytest.raises(InputError, match="out of date"):
        FrequentTerms(root)
