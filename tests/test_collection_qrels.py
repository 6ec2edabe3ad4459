"""Judgements from the collection (``mathsearch qrels --from-collection``): duplicate pairs as topics
and qrels every command reads, the asking thread hidden from every signal of ``ours``."""

from __future__ import annotations

import shutil
import sqlite3

from cli_support import cli

from mathsearch.evaluation.collection_qrels import (
    duplicate_links,
    duplicate_topics,
    own_answer_topics,
    read_hidden_threads,
)
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
