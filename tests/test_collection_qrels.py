"""Judgements from the collection (``mathsearch qrels --from-collection``): duplicate pairs as topics
and qrels every command reads, the asking thread hidden from every signal of ``ours``."""

from __future__ import annotations

import dataclasses
import shutil
import sqlite3

import pytest
from cli_support import cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mathsearch.errors import InputError
from mathsearch.evaluation.collection_qrels import duplicate_links, duplicate_topics, own_answer_topics
from mathsearch.indexes.documents import ANSWER_FIELDS
from mathsearch.indexes.text_index import Clause
from mathsearch.readers.hidden import Hidden, read_hidden_threads
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.store import Store
from mathsearch.systems import SearchContext, SearchQuery
from mathsearch.systems.ours import combine, ours_config


def test_the_sample_gives_its_duplicate_pairs(sample_index):
    with Store.open(sample_index) as store:
        links = duplicate_links(store)
        topics = duplicate_topics(store)
        # what the sample gives: 1,539 duplicate links, 74 of them from a question to a target with answers
        assert len(links) == 1539 and len(topics) == 74
        for t in topics:
            assert t.hidden_thread == t.question_id and t.topic_id == f"D.{t.question_id}"
            threads = store.thread_ids(t.relevant)
            assert t.question_id not in set(threads.values())  # the asking thread's answers are not the judged ones
            targets = {b for a, b in links if a == t.question_id}
            assert set(threads.values()) <= targets
        own = own_answer_topics(store, limit=5)
        assert len(own) == 5 and all(set(store.thread_ids(o.relevant).values()) == {o.question_id} for o in own)


def test_the_command_writes_topics_and_qrels_that_the_readers_read_and_never_overwrites(sample_index, tmp_path):
    out = tmp_path / "cq"
    r = cli("qrels", "--from-collection", str(sample_index), "--out", str(out), "--own", "3")
    assert r.exit_code == 0, r.output
    assert "77 topics (74 duplicate, 3 own)" in r.output
    topics = read_topics(out / "topics.xml")
    qrels = qrels_to_dict(read_qrels(out / "qrels.tsv"))
    hidden = read_hidden_threads(out / "hidden-threads.tsv")
    assert len(topics) == 77 and set(qrels) == {t.topic_id for t in topics} == set(hidden)
    # a duplicate pair hides the asking thread, an own-answer pair only its question
    own = [t for t in hidden if t.startswith("O.")]
    assert len(own) == 3 and all(hidden[t].questions == (int(t[2:]),) and not hidden[t].threads for t in own)
    assert all(hidden[t].threads == (int(t[2:]),) and not hidden[t].questions for t in hidden if t.startswith("D."))
    first = next(t for t in topics if t.topic_id == "D.49169")
    assert "sqrt" in first.title and first.tags  # title's formula read back from its span
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    again = cli("qrels", "--from-collection", str(sample_index), "--out", str(out))
    assert again.exit_code == 2 and "already exist" in again.output and "nothing is overwritten" in again.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_collection_without_links_says_so_in_one_line_and_writes_nothing(sample_index, tmp_path):
    bare = tmp_path / "no-links"
    shutil.copytree(sample_index, bare, ignore=shutil.ignore_patterns("text", "formula", "dense"))
    with sqlite3.connect(bare / "store-side.sqlite") as db:
        db.execute("DELETE FROM links")
    out = tmp_path / "cq"
    r = cli("qrels", "--from-collection", str(bare), "--out", str(out))
    assert r.exit_code == 2 and "no duplicate links (PostLinks type 3)" in r.output
    assert len([line for line in r.output.splitlines() if line.strip()]) == 1
    assert not out.exists()


def test_a_hidden_thread_is_scored_by_no_signal_of_ours(sample_index):
    ctx = SearchContext(sample_index)
    config = ours_config("", "ours_lexical.toml")  # answer BM25, similar questions, duplicate links
    with Store.open(sample_index) as store:
        topics = duplicate_topics(store)[:8]
    found_itself = 0
    for t in topics:
        with Store.open(sample_index) as store:
            asking = store.post(t.question_id)
            own = set(store.answer_ids_of_threads([t.hidden_thread]).get(t.hidden_thread, []))
        query = SearchQuery(t.topic_id, asking.title or "", asking.text, asking.tags)
        # without hiding, the asking thread's own answers are found (so the check below could fail)
        found_itself += bool(own & set(combine(ctx, query, config)))
        seen: dict[str, set[int]] = {}

        def watched(name, sig, similar, earlier, query=query, seen=seen):
            seen.setdefault("similar", set()).update(similar())
            got = sig.scores(ctx, query, similar, earlier)
            seen.setdefault(name, set()).update(got)
            return got

        hidden = SearchQuery(t.topic_id, query.title, query.question, query.tags, hidden_threads=(t.hidden_thread,))
        fused = combine(ctx, hidden, config, watched)
        assert fused and not (own | {t.question_id}) & set(fused)
        assert t.question_id not in seen["similar"]  # no link or answer reached through the asking question
        assert combine(ctx, hidden, config) == fused  # the system's own path hides the same
    assert found_itself >= len(topics) // 2


def test_an_out_that_is_a_users_file_is_refused_and_kept(sample_index, tmp_path):
    from cli_support import cli

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    r = cli("qrels", "--from-collection", str(sample_index), "--out", str(notes))
    assert r.exit_code == 2 and "is a file, not a folder" in r.output and "nothing was written" in r.output
    assert notes.read_text() == "my notes\n"


def test_hidden_threads_files_say_what_they_hide_or_name_the_bad_line(tmp_path):
    path = tmp_path / "hidden-threads.tsv"
    path.write_text("D.1\t1\nO.2\t2\tquestion\n\nO.3\t3\tthread\n")
    hidden = read_hidden_threads(path)
    assert hidden["D.1"] == Hidden(threads=(1,)) and hidden["O.2"] == Hidden(questions=(2,))
    assert hidden["O.3"] == Hidden(threads=(3,))
    for bad, says in (("D.1\tx\n", "expected 'topic<TAB>thread id"), ("D.1\n", "expected"), ("\t7\n", "expected"),
                      ("O.2\t2\tanswers\n", "thread or question, not 'answers'"), ("O.2\t2\tquestion\tx\n", "expected")):
        path.write_text("D.9\t9\n" + bad)
        with pytest.raises(InputError, match=says) as err:
            read_hidden_threads(path)
        assert f"{path}:2:" in str(err.value)


def test_an_own_answer_topic_finds_its_answers_by_their_own_text_and_never_through_its_question(sample_index):
    """An own-answer pair hides the asking question: no similar question, link or borrowed field of
    it is read, but its answers stay findable by their own words, maths and comments."""
    ctx = SearchContext(sample_index)
    config = ours_config("", "ours_lexical.toml")  # answer BM25 with thread fields, similar questions, links
    with Store.open(sample_index) as store:
        topics = own_answer_topics(store, limit=40)
        questions = store.posts([t.question_id for t in topics])
    found_own, ranked_first_without = 0, 0
    for t in topics:
        asking = questions[t.question_id]
        query = SearchQuery(t.topic_id, asking.title or "", asking.text, asking.tags)
        own = set(t.relevant)
        plain = combine(ctx, query, config)
        ranked_first_without += bool(plain) and max(plain, key=plain.get) in own  # the task unhidden: trivial
        seen: dict[str, dict[int, float]] = {}

        def watched(name, sig, similar, earlier, query=query, seen=seen):
            seen.setdefault("similar", {}).update(similar())
            got = sig.scores(ctx, query, similar, earlier)
            seen.setdefault(name, {}).update(got)
            return got

        hidden = dataclasses.replace(query, hidden_questions=(t.hidden_thread,))
        fused = combine(ctx, hidden, config, watched)
        assert t.question_id not in seen["similar"] and t.question_id not in fused
        answer = dict(config.signals[0][2].fields)  # what the answer BM25 reads of an answer itself
        own_fields = [Clause(*k.split("->"), w) for k, w in answer.items() if k.split("->")[1] in ANSWER_FIELDS[:5]]
        by_own_text = ctx.text.score_answers(query.bags, own_fields, sorted(own))
        # the own answers hold exactly what their own text scores; no other signal reaches them
        assert {a for a in fused if a in own} == set(by_own_text)
        found_own += bool(set(by_own_text))
        assert combine(ctx, hidden, config) == fused  # the system's own path hides the same
    assert ranked_first_without >= len(topics) * 3 // 4  # so unhidden the own answers win: hiding matters
    assert found_own >= len(topics) * 3 // 4  # and hidden they are still found, by their own text


def test_scoring_some_answers_gives_the_scores_a_search_of_all_gives_them(sample_index):
    ctx = SearchContext(sample_index)
    bags = SearchQuery("q", "continuous function with a derivative", "$f'(x) = x^2$").bags
    clauses = [Clause("words", "body", 2.0), Clause("math", "body_math", 1.0), Clause("words", "title", 1.0)]
    everything = ctx.text.search_answers(bags, clauses, 10_000)
    some = sorted(everything)[::7][:40] + [max(int(a) for a in ctx.store.answer_ids()) + 1]  # and an id no answer has
    scored = ctx.text.score_answers(bags, clauses, some)
    assert scored and scored == {a: everything[a] for a in some if a in everything}
    assert ctx.text.score_answers(bags, clauses, []) == {}


def test_a_run_over_the_collections_topics_hides_what_they_name_and_a_system_that_cannot_is_refused(sample_index, tmp_path):
    out = tmp_path / "cq"
    assert cli("qrels", "--from-collection", str(sample_index), "--out", str(out), "--own", "20").exit_code == 0
    topics = read_topics(out / "topics.xml")  # what each hides travels with the topic
    assert {t.topic_id for t in topics if t.hidden_threads} == {t.topic_id for t in topics if t.topic_id.startswith("D.")}
    assert all(t.hidden_questions == (int(t.topic_id[2:]),) for t in topics if t.topic_id.startswith("O."))
    run = tmp_path / "ours.tsv"
    r = cli("run", "--index", str(sample_index), "--task", "1", "--topics", str(out / "topics.xml"), "--out", str(run))
    assert r.exit_code == 0, r.output
    hits: dict[str, set[int]] = {}
    for line in run.read_text().splitlines():
        topic, _, answer, *_ = line.split("\t")
        hits.setdefault(topic, set()).add(int(answer))
    own_found = 0
    with Store.open(sample_index) as store:
        for t in topics:
            thread = (t.hidden_threads or t.hidden_questions)[0]
            own = set(store.answer_ids_of_threads([thread]).get(thread, []))
            found = hits.get(t.topic_id, set())
            if t.hidden_threads:  # a duplicate pair's asking thread: none of its answers
                assert not own & found
            else:  # an own-answer pair's answers, by their own text
                own_found += bool(own & found)
    assert own_found >= 10
    unhidden = tmp_path / "bm25.tsv"
    r = cli("run", "--index", str(sample_index), "--task", "1", "--system", "bm25-thread",
            "--topics", str(out / "topics.xml"), "--out", str(unhidden))
    assert r.exit_code == 2 and "cannot hide it" in r.output and "94 topics" in r.output
    assert not unhidden.exists()
    # the library's own path refuses the same (every run, on Ray too, goes through run_rankings)
    from mathsearch.systems import make_system, run_rankings

    with pytest.raises(InputError, match="94 topics hide .* bm25-thread cannot hide it"):
        run_rankings(make_system("bm25-thread"), SearchContext(sample_index), topics)


@settings(max_examples=150, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(
    st.tuples(st.sampled_from(["D.1", "O.2", "A.3", " x "]), st.integers(-5, 10**12).map(str),
              st.sampled_from(["", "question", "thread", " question "])).map(lambda t: "\t".join(x for x in t if x)),
    st.text(alphabet=st.sampled_from("\tDO.0123456789 qx\r\u00a0"), max_size=20)), max_size=8))
def test_any_hidden_threads_file_is_read_or_refused_at_its_line(tmp_path_factory, lines):
    """Whatever a hidden-threads.tsv holds, it is read into what each topic hides, or refused with
    an InputError naming its file and line; never another exception."""
    path = tmp_path_factory.mktemp("hidden") / "hidden-threads.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        hidden = read_hidden_threads(path)
    except InputError as err:
        assert str(err).startswith(f"{path}:") and (": expected" in str(err) or "third column" in str(err))
        return
    for topic, h in hidden.items():
        assert isinstance(h, Hidden) and (h.threads or h.questions) and topic and topic == topic.strip()
