"""The text index build: the same documents, tokens and search results whatever the number of
worker processes and however the store is read, on the real sample."""

from __future__ import annotations

import hashlib
import math
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
import tantivy
from conftest import COLLECTION, TOPICS

from mathsearch.building import build_index
from mathsearch.indexes.documents import QueryBags, QuestionBags, answer_fields, field_texts
from mathsearch.indexes.text_index import (
    Clause,
    TextIndex,
    _analysed,
    _jobs,
    build_text_indexes,
    query_terms,
    select_terms,
)
from mathsearch.readers.topics import read_topics
from mathsearch.store import Store
from mathsearch.text import analysis as ta
from mathsearch.text.dollar_math import find_math

# Every (query bag, index field) pair a system may weigh.
CLAUSES = [
    Clause("words", "body"), Clause("math", "body_math", 0.7), Clause("raw", "body_raw"), Clause("latex_words", "body_lw"),
    Clause("words", "comments", 0.3), Clause("title_words", "title", 0.5), Clause("words", "question", 0.5),
    Clause("tags", "tags", 0.4), Clause("math", "q_math", 0.6),
]


@pytest.fixture(scope="module")
def pruned_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's store with every 9th question deleted, so that some answers lose their thread."""
    index_dir = tmp_path_factory.mktemp("text-build") / "store"
    build_index(COLLECTION, index_dir, store_only=True)
    db = sqlite3.connect(index_dir / "store.sqlite")
    with db:
        db.execute("DELETE FROM posts WHERE post_type=1 AND post_id IN (SELECT post_id FROM posts WHERE post_type=1 AND post_id % 9 = 0)")
    db.close()
    return index_dir


def _reference_docs(store: Store) -> list:
    """The documents as the first build made them: one store query per thread and per answer."""
    out, seen = [], set()
    for q in store.iter_posts(1):
        answers = store.answers_of(q.post_id)
        if not answers:
            continue
        bags = QuestionBags.of(q.title, q.text, q.tags)
        docs = []
        for a in answers:
            comments = [text for _, text in store.comments_of(a.post_id)]
            docs.append((a.post_id, a.thread_id, field_texts(answer_fields(a.text, comments, bags))))
            seen.add(a.post_id)
        out.append(((q.post_id, None, field_texts(bags.fields())), docs))
    for a in store.iter_answers():
        if a.post_id not in seen:
            comments = [text for _, text in store.comments_of(a.post_id)]
            out.append((a.post_id, a.thread_id, field_texts(answer_fields(a.text, comments, None))))
    return out


def test_documents_same_for_any_workers_and_batched_reads(pruned_store):
    with Store.open(pruned_store) as store:
        one = [item for batch in _analysed(store, _jobs(store), 1) for item in batch]
        two = [item for batch in _analysed(store, _jobs(store), 2) for item in batch]
        reference = _reference_docs(store)
    assert one == two == reference
    threads = [item for item in one if len(item) == 2]
    orphans = [item for item in one if len(item) == 3]
    assert len(threads) > 2000 and len(orphans) > 100  # both kinds of job ran
    fields = {name for _, docs in threads for _, _, f in docs for name in f}
    assert fields == {"body", "body_math", "body_raw", "body_lw", "comments", "title", "question", "tags", "q_math"}
    assert all(set(f) <= {"body", "body_math", "body_raw", "body_lw", "comments"} for _, _, f in orphans)


def test_index_same_for_one_and_two_workers(pruned_store, tmp_path):
    counts, indexes, seen = [], [], []
    for workers in (1, 2):
        out_dir = tmp_path / f"w{workers}"
        progress: list[tuple[int, int]] = []
        with Store.open(pruned_store) as store:
            counts.append(build_text_indexes(store, out_dir, lambda _s, d, t, p=progress: p.append((d, t)), workers=workers))
        indexes.append(TextIndex.open(out_dir))
        seen.append(progress)
    assert counts[0] == counts[1]
    assert counts[0]["text_answers"] == 3395 and counts[0]["text_answers_without_question"] > 100
    assert seen[0][-1] == seen[1][-1] == (3395, 3395)
    assert indexes[0].num_answers == indexes[1].num_answers == 3395
    topics = read_topics(TOPICS / "task1-2020.xml")[:25]
    hits = 0
    for topic in topics:
        bags = QueryBags.of_topic(topic)
        a = [ix.search_answers(bags, CLAUSES, limit=50) for ix in indexes]
        q = [ix.search_questions(bags, CLAUSES[5:], limit=20) for ix in indexes]
        assert a[0] == a[1] and q[0] == q[1]
        hits += len(a[0])
    assert hits > 25 * 40



@pytest.fixture(scope="module")
def sample_text(pruned_store, tmp_path_factory) -> TextIndex:
    out = tmp_path_factory.mktemp("text-terms")
    with Store.open(pruned_store) as store:
        build_text_indexes(store, out, workers=1)
    return TextIndex.open(out)


def _unmerged_search(ix: TextIndex, bags: QueryBags, clauses: list[Clause], limit: int) -> dict[int, float]:
    """One term query per clause and token, duplicates and all (the query as it was built before merging)."""
    subs = []
    for c in clauses:
        for token, tf in bags.bag(c.bag).items():
            boost = c.weight * (1.0 + 0.5 * (tf - 1))
            q = tantivy.Query.term_query(ix.answers.schema, c.field, token, index_option="freq")
            subs.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, boost)))
    hits = ix._a_searcher.search(tantivy.Query.boolean_query(subs), limit=limit, count=False).hits
    ids = ix._a_searcher.fast_field_values("id", [addr for _, addr in hits])
    return {int(i): float(s) for (s, _), i in zip(hits, ids, strict=True)}


def test_a_token_weighed_twice_on_one_field_is_one_term_with_the_same_scores(sample_text):
    # words->question and title_words->question both put the title's words on the question field
    clauses = [Clause("words", "body"), Clause("words", "question", 0.5), Clause("title_words", "question", 1.0)]
    merged_any = 0
    for topic in read_topics(TOPICS / "task1-2020.xml")[:20]:
        bags = QueryBags.of_topic(topic)
        terms = query_terms(bags, clauses)
        assert len({(f, t) for f, t, _ in terms}) == len(terms)
        title = bags.bag("title_words")
        for fld, token, boost in terms:
            if fld == "question" and token in title:
                words = bags.bag("words")[token]
                expect = 0.5 * (1 + 0.5 * (words - 1)) + 1.0 * (1 + 0.5 * (title[token] - 1))
                assert boost == pytest.approx(expect)
                merged_any += 1
        got, ref = sample_text.search_answers(bags, clauses, 100), _unmerged_search(sample_text, bags, clauses, 100)
        assert got.keys() == ref.keys() or len(got.keys() & ref.keys()) >= 99  # float order may swap a tie at the cut
        for a in got.keys() & ref.keys():
            assert got[a] == pytest.approx(ref[a], rel=1e-5)
    assert merged_any > 20


def test_max_terms_keeps_the_terms_that_can_add_most(sample_text):
    searcher, n = sample_text._a_searcher, sample_text.num_answers
    for topic in read_topics(TOPICS / "task1-2021.xml")[:20]:
        bags = QueryBags.of_topic(topic)
        terms = query_terms(bags, CLAUSES)
        matching = [t for t in terms if searcher.doc_freq(t[0], t[1]) > 0]
        assert select_terms(terms, searcher.doc_freq, n, 0) == matching
        kept = select_terms(terms, searcher.doc_freq, n, 8)
        assert len(kept) == min(8, len(matching))
        assert [t for t in matching if t in kept] == kept  # the query's order
        worth = {t: t[2] * math.log(1 + (n - searcher.doc_freq(t[0], t[1]) + 0.5) / (searcher.doc_freq(t[0], t[1]) + 0.5))
                 for t in matching}
        if len(matching) > 8:
            assert min(worth[t] for t in kept) >= max(worth[t] for t in matching if t not in kept) - 1e-6
        # the search with max_terms is the search of exactly those terms
        got = sample_text.search_answers(bags, CLAUSES, 50, max_terms=8)
        subs = [(tantivy.Occur.Should, tantivy.Query.boost_query(
            tantivy.Query.term_query(sample_text.answers.schema, f, t, index_option="freq"), b)) for f, t, b in kept]
        hits = searcher.search(tantivy.Query.boolean_query(subs), limit=50, count=False).hits
        assert list(got) == [int(i) for i in searcher.fast_field_values("id", [a for _, a in hits])]
        assert got != sample_text.search_answers(bags, CLAUSES, 50) or len(matching) <= 8


def test_max_df_leaves_out_the_commonest_terms_of_a_field(sample_text):
    searcher, n = sample_text._a_searcher, sample_text.num_answers
    left_out = 0
    for topic in read_topics(TOPICS / "task1-2021.xml")[:20]:
        bags = QueryBags.of_topic(topic)
        terms = query_terms(bags, CLAUSES)
        matching = [t for t in terms if searcher.doc_freq(t[0], t[1]) > 0]
        kept = select_terms(terms, searcher.doc_freq, n, 0, {"q_math": 0.5})
        # only q_math's terms in more than half the answers go; the rest keep the query's order
        assert kept == [t for t in matching if t[0] != "q_math" or searcher.doc_freq(t[0], t[1]) <= n / 2]
        left_out += len(matching) - len(kept)
        got = sample_text.search_answers(bags, CLAUSES, 50, max_df={"q_math": 0.5})
        subs = [(tantivy.Occur.Should, tantivy.Query.boost_query(
            tantivy.Query.term_query(sample_text.answers.schema, f, t, index_option="freq"), b)) for f, t, b in kept]
        hits = searcher.search(tantivy.Query.boolean_query(subs), limit=50, count=False).hits
        assert list(got) == [int(i) for i in searcher.fast_field_values("id", [a for _, a in hits])]
        # both limits at once: the share first, then the terms that can add most among those left
        assert select_terms(terms, searcher.doc_freq, n, 5, {"q_math": 0.5}) == select_terms(kept, searcher.doc_freq, n, 5)
    assert left_out > 20  # the sample's topics do hold such tokens (=, (, 1, ...)


# -- the faster analysis makes the tokens the straightforward one made ------------------------
_REF_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def _ref_words(text: str) -> list[str]:
    return [ta.stem(w) for w in _REF_WORD.findall(text.lower()) if w not in ta.STOPWORDS and len(w) <= 40]


def _ref_split(text: str) -> tuple[str, list[str]]:
    found = find_math(text, is_html=False)
    if not found:
        return text, []
    prose, pos = [], 0
    for start, end, _ in found:
        prose.append(text[pos:start])
        pos = end
    prose.append(text[pos:])
    return " ".join(prose), [latex for _, _, latex in found]


def _ref_math_tokens(latex: str) -> list[str]:
    syms = []
    for tok in ta._LATEX_TOKEN.findall(latex):
        tok = ta._LATEX_ALIAS.get(tok, tok)
        if tok not in ta._LATEX_DROP:
            syms.append(tok)
    if not syms:
        return []
    classed = ["#" if re.match(r"^[0-9]+(?:\.[0-9]+)?$", s) and len(s) > 1 else s for s in syms]
    key = "f:" + hashlib.blake2b("".join(syms).encode("utf-8"), digest_size=8).hexdigest()
    return [f"m:{s}" for s in syms] + [f"p:{a}|{b}" for a, b in zip(classed, classed[1:], strict=False)] + [key]


def _ref_latex_words(text: str) -> list[str]:
    prose, formulae = _ref_split(text)
    out = _ref_words(prose)
    for latex in formulae:
        out.extend(w for w in _REF_WORD.findall(ta.latex_to_words(latex).lower()) if len(w) <= 40)
    return out


def test_analysis_matches_straightforward_definitions(pruned_store):
    with Store.open(pruned_store) as store:
        texts = [p.text for p in store.iter_answers()][:1500]
        texts += [text for (text,) in store.db.execute("SELECT text FROM comments ORDER BY comment_id LIMIT 3000")]
    texts += ["no math here", "price \\$5 and `$x$` code", "\\(a+b\\) and \\[c\\]", "$x^{10}+3.5y_{12}$ $$\\dfrac12$$"]
    n_formulae = 0
    for text in texts:
        prose, formulae = ta.split_math(text)
        assert (prose, formulae) == _ref_split(text)
        assert ta.words(prose) == _ref_words(prose)
        assert ta.latex_word_terms(text) == _ref_latex_words(text)
        assert ta.formula_math_tokens(formulae) == [t for f in formulae for t in _ref_math_tokens(f)]
        n_formulae += len(formulae)
    assert n_formulae > 5000


def test_answer_fields_match_straightforward_definitions(pruned_store):
    with Store.open(pruned_store) as store:
        answers = list(store.iter_answers())[:800]
        comments = store.comments_of_posts([a.post_id for a in answers])
    assert sum(len(c) for c in comments.values()) > 1000
    for a in answers:
        texts = [text for _, text in comments.get(a.post_id, [])]
        fields = answer_fields(a.text, texts, None)
        prose, formulae = _ref_split(a.text)
        assert fields["body"] == _ref_words(prose)
        assert fields["body_math"] == [t for f in formulae for t in _ref_math_tokens(f)]
        assert fields["body_raw"] == [w for w in _REF_WORD.findall(a.text.lower()) if w not in ta.STOPWORDS and len(w) <= 40]
        assert fields["body_lw"] == _ref_latex_words(a.text)
        assert fields["comments"] == [w for c in texts for w in _ref_words(_ref_split(c)[0])]


def test_pool_not_used_for_one_worker(pruned_store, tmp_path):
    # workers=1 analyses in this process: a store that cannot be reopened elsewhere still works.
    moved = tmp_path / "moved"
    shutil.copytree(pruned_store, moved)
    with Store.open(moved) as store:
        shutil.rmtree(moved)
        counts = build_text_indexes(store, tmp_path / "out", workers=1)
    assert counts["text_answers"] == 3395
