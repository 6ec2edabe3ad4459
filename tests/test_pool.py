"""mathsearch pool: the lab's pooling on runs of our systems over the real sample, and on small runs
whose pools can be worked out by hand (Task 2 visual ids and votes, Task 3 answers)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_support import cli, write
from lxml import etree

from mathsearch.assess import AssessDB, build_pool, classify_runs
from mathsearch.assess.pool import task3_answer_id

TOPICS_2021 = "topics/task1-2021.xml"


def make_run(index: Path, task: int, system: str, topics: Path, out: Path) -> Path:
    result = cli("run", "--index", index, "--task", task, "--system", system, "--topics", topics, "--out", out)
    assert result.exit_code in (0, 1), result.output  # 1: a run written with dropped hits
    assert out.stat().st_size > 0
    return out


def subset_topics(src: Path, keep: set[str], out: Path) -> Path:
    tree = etree.parse(str(src))
    root = tree.getroot()
    for t in list(root):
        if t.get("number") not in keep:
            root.remove(t)
    assert len(root) == len(keep)
    tree.write(str(out))
    return out


@pytest.fixture(scope="module")
def runs_2021(sample_index: Path, data_dir: Path, tmp_path_factory) -> dict[str, Path]:
    """Runs of three of our systems over every 2021 topic, named as the lab asks (two primary, one alternate)."""
    d = tmp_path_factory.mktemp("runs2021")
    topics = data_dir / TOPICS_2021
    return {
        "P1": make_run(sample_index, 1, "bm25-answer", topics, d / "mathsearch-task1-bm25_answer-auto-both-P.tsv"),
        "P2": make_run(sample_index, 1, "bm25-thread", topics, d / "mathsearch-task1-bm25_thread-auto-both-P.tsv"),
        "A": make_run(sample_index, 1, "tfidf-words", topics, d / "mathsearch-task1-tfidf_words-auto-text-A.tsv"),
    }


def hand_pool(runs_and_depths: list[tuple[Path, int]]) -> dict[str, set[str]]:
    """The pool worked out directly from the files: per topic, the union of each run's top `depth`
    answers in trec_eval's order (score descending, then document id descending, as strings)."""
    out: dict[str, set[str]] = {}
    for path, depth in runs_and_depths:
        per_topic: dict[str, list[tuple[str, float]]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            topic, _q0, doc, _rank, score, _tag = line.split()
            per_topic.setdefault(topic, []).append((doc, float(score)))
        for topic, docs in per_topic.items():
            docs.sort(key=lambda x: x[0], reverse=True)
            docs.sort(key=lambda x: x[1], reverse=True)
            out.setdefault(topic, set()).update(doc for doc, _ in docs[:depth])
    return out


def pooled_docs(db_path: Path) -> dict[str, set[str]]:
    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT topic_id, doc_id FROM items WHERE kind = 'answer'").fetchall()
    out: dict[str, set[str]] = {}
    for topic, doc in rows:
        out.setdefault(topic, set()).add(doc)
    return out


@pytest.mark.parametrize(("depth", "alternate"), [(45, 20), (10, 3)])
def test_task1_pool_of_our_runs_matches_the_distinct_answers_counted_by_hand(runs_2021, data_dir, tmp_path, depth,
                                                                            alternate):
    out = tmp_path / "pool.sqlite"
    result = cli("pool", "--task", 1, runs_2021["P1"], runs_2021["P2"], runs_2021["A"], "--depth", depth,
                 "--alternate-depth", alternate, "--topics", data_dir / TOPICS_2021, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout)
    expected = hand_pool([(runs_2021["P1"], depth), (runs_2021["P2"], depth), (runs_2021["A"], alternate)])
    assert counts["topics"] == len(expected) == 100
    assert counts["per_topic"] == {t: len(docs) for t, docs in expected.items()}
    assert counts["items"] == sum(len(docs) for docs in expected.values())
    assert pooled_docs(out) == expected
    # Each topic holds at least the primary depth and at most every run's depth (duplicates merged).
    assert all(depth <= n <= 2 * depth + alternate for n in counts["per_topic"].values())
    roles = {r["name"]: (r["role"], r["depth"]) for r in counts["runs"]}
    assert roles[runs_2021["A"].name] == ("alternate", alternate)
    assert roles[runs_2021["P1"].name] == ("primary", depth)
    # Every pooled answer is one a run returned within its depth: the alternate run adds what the
    # primaries did not reach, and its own share never exceeds its depth per topic.
    alt_only = hand_pool([(runs_2021["A"], alternate)])
    assert all(len(alt_only[t]) == alternate for t in alt_only)


def test_display_order_is_seeded_random_and_hides_the_run_order(runs_2021, tmp_path):
    runs = classify_runs([runs_2021["P1"]], 1)
    first = build_pool(1, runs, depth=45, seed=0)
    again = build_pool(1, runs, depth=45, seed=0)
    other = build_pool(1, runs, depth=45, seed=7)
    topic = next(iter(first.topics))
    order = [i.doc_id for i in first.topics[topic]]
    assert order == [i.doc_id for i in again.topics[topic]]
    assert order != [i.doc_id for i in other.topics[topic]]
    assert set(order) == {i.doc_id for i in other.topics[topic]}
    by_rank = sorted(first.topics[topic], key=lambda i: i.ranks[runs_2021["P1"].name])
    assert order != [i.doc_id for i in by_rank]


def test_task2_pools_visual_ids_to_depth_and_shows_instances_by_reciprocal_rank_votes(tmp_path):
    # Primary run, depth 2 visually distinct formulae: v1 (f1, f2) and v2 (f3); f4 (v3) lies beyond.
    primary = write(tmp_path / "t-task2-x-auto-math-P.tsv", [
        "B.1\tf1\t10\t1\t9.0\tx", "B.1\tf2\t11\t2\t8.0\tx", "B.1\tf3\t12\t3\t7.0\tx", "B.1\tf4\t13\t4\t6.0\tx",
        "B.1\tf9\t19\t5\t5.0\tx"])
    # Alternate run, depth 1: v5 (f6); its f3 (rank 2), f7 (v2, rank 3) and f8 (v1, rank 4) vote.
    alternate = write(tmp_path / "t-task2-y-auto-math-A.tsv", [
        "B.1\tf6\t16\t1\t9.0\ty", "B.1\tf3\t12\t2\t8.0\ty", "B.1\tf7\t17\t3\t7.0\ty", "B.1\tf8\t18\t4\t6.0\ty"])
    visual = {"f1": "v1", "f2": "v1", "f8": "v1", "f3": "v2", "f7": "v2", "f4": "v3", "f6": "v5"}  # f9: none
    runs = classify_runs([primary, alternate], 2)
    pool = build_pool(2, runs, depth=2, alternate_depth=1, instances=2,
                      visual_ids=lambda ids: {i: visual.get(i) for i in ids})
    items = pool.topics["B.1"]
    shown = {i.doc_id: i for i in items}
    assert {i.visual_id for i in items} == {"v1", "v2", "v5"}  # v3 was beyond the primary's depth
    assert set(shown) == {"f1", "f2", "f3", "f7", "f6"}  # v1: f1 (1) and f2 (1/2) beat f8 (1/4)
    assert shown["f3"].votes == pytest.approx(1 / 3 + 1 / 2)  # returned by both runs
    assert shown["f7"].votes == pytest.approx(1 / 3)
    assert shown["f3"].ranks == {primary.name: 3, alternate.name: 2}
    assert shown["f3"].post_id == "12"
    # The instances of one visual id are shown together, best voted first.
    groups = [i.visual_id for i in items]
    for v in set(groups):
        at = [k for k, g in enumerate(groups) if g == v]
        assert at == list(range(at[0], at[-1] + 1))
    v1 = [i.doc_id for i in items if i.visual_id == "v1"]
    assert v1 == ["f1", "f2"]
    assert any("no visual id" in n for n in pool.notes)
    counts = pool.counts()
    assert counts["visual_ids"] == 3 and counts["items"] == 5
    assert {r["name"]: (r["pooled"], r["unique"]) for r in counts["runs"]} == {primary.name: (2, 2), alternate.name: (1, 1)}


def test_task2_vote_ties_are_broken_by_the_seed(tmp_path):
    run = write(tmp_path / "t-task2-x-auto-math-P.tsv", ["B.1\tfa\t1\t1\t2.0\tx", "B.1\tfb\t2\t2\t1.0\tx"])
    other = write(tmp_path / "t-task2-z-auto-math-P.tsv", ["B.1\tfb\t2\t1\t2.0\tz", "B.1\tfa\t1\t2\t1.0\tz"])
    runs = classify_runs([run, other], 2)
    chosen = set()
    for seed in range(32):
        pool = build_pool(2, runs, depth=1, instances=1, seed=seed, visual_ids=lambda ids: dict.fromkeys(ids, "v"))
        (item,) = pool.topics["B.1"]
        assert item.votes == pytest.approx(1.5)  # both: 1/1 + 1/2
        again = build_pool(2, runs, depth=1, instances=1, seed=seed, visual_ids=lambda ids: dict.fromkeys(ids, "v"))
        assert again.topics["B.1"][0].doc_id == item.doc_id
        chosen.add(item.doc_id)
    assert chosen == {"fa", "fb"}


def test_task2_pool_of_our_formula_runs_on_the_sample(sample_index, data_dir, tmp_path):
    topics = subset_topics(data_dir / "topics/task2-2021.xml", {"B.201", "B.202", "B.203"}, tmp_path / "t.xml")
    p = make_run(sample_index, 2, "formula", topics, tmp_path / "mathsearch-task2-formula-auto-math-P.tsv")
    a = make_run(sample_index, 2, "tangent-s-formula", topics, tmp_path / "mathsearch-task2-tangent_s-auto-math-A.tsv")
    out = tmp_path / "pool2.sqlite"
    result = cli("pool", "--task", 2, p, a, "--index", sample_index, "--topics", topics, "--out", out, "--json",
                 "--depth", 6, "--alternate-depth", 3, "--instances", 2)
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout)
    assert counts["topics"] == 3
    from mathsearch.store import Store

    store = Store.open(sample_index)
    with AssessDB(out) as db:
        for t in db.topics():
            items = db.items(t.topic_id)
            vids = {i.visual_id for i in items}
            assert 6 <= len(vids) <= 9  # the primary's 6 plus at most the alternate's 3
            assert all(sum(i.visual_id == v for i in items) <= 2 for v in vids)
            for i in items:
                assert store.visual_id(i.doc_id) == i.visual_id
                assert store.formula(i.doc_id).post_id == int(i.post_id)
            assert t.formula_id is not None and t.latex  # the query formula, for the page


def test_task3_answers_join_a_task1_pool_and_identical_answers_are_judged_once(tmp_path):
    t1 = write(tmp_path / "g-task1-r-auto-both-P.tsv", ["A.1\tQ0\t100\t1\t2.0\tr", "A.1\tQ0\t101\t2\t1.0\tr"])
    header = "A.1\t1\t1.0\t{tag}\t100\t\"{text}\""
    a = write(tmp_path / "g-task3-a-auto-both-extract-A.tsv", [header.format(tag="a", text="The sum is $n^2$."),
                                                             "A.2\t1\t1.0\ta\t7\t\"First answer\""])
    b = write(tmp_path / "g-task3-b-auto-both-generate-P.tsv", [header.format(tag="b", text="The sum is $n^2$. "),
                                                              "A.2\t1\t1.0\tb\t8\t\"Second answer\""])
    pool = build_pool(1, classify_runs([t1, a, b], 1))
    kinds = {t: sorted(i.kind for i in items) for t, items in pool.topics.items()}
    assert kinds == {"A.1": ["answer", "answer", "task3"], "A.2": ["task3", "task3"]}
    (same,) = [i for i in pool.topics["A.1"] if i.kind == "task3"]
    assert same.doc_id == task3_answer_id("The sum is $n^2$.")
    assert set(same.ranks) == {a.name, b.name}
    only3 = build_pool(3, classify_runs([a, b], 3))
    assert only3.counts()["items"] == 3


def test_run_names_must_follow_the_convention(tmp_path):
    bad = write(tmp_path / "bm25.tsv", ["A.1\tQ0\t100\t1\t2.0\tr"])
    result = cli("pool", "--task", 1, bad, "--out", tmp_path / "p.sqlite")
    assert result.exit_code == 2
    assert "rename it" in result.output and "-task1-" in result.output
    t2 = write(tmp_path / "g-task2-r-auto-math-P.tsv", ["B.1\t1\t2\t1\t1.0\tr"])
    result = cli("pool", "--task", 1, t2, "--out", tmp_path / "p.sqlite")
    assert result.exit_code == 2 and "task2" in result.output
    assert not (tmp_path / "p.sqlite").exists()


def test_out_is_never_a_file_we_did_not_make_nor_a_pool_with_judgements(tmp_path):
    run = write(tmp_path / "g-task1-r-auto-both-P.tsv", ["A.1\tQ0\t100\t1\t2.0\tr", "A.1\tQ0\t101\t2\t1.0\tr"])
    other = tmp_path / "notes.sqlite"
    other.write_bytes(b"precious")
    result = cli("pool", "--task", 1, run, "--out", other)
    assert result.exit_code == 2 and "not an assessment database" in result.output
    assert other.read_bytes() == b"precious"
    out = tmp_path / "pool.sqlite"
    assert cli("pool", "--task", 1, run, "--out", out, "--depth", 1).exit_code == 0
    with AssessDB(out) as db:
        assert db.progress()["A.1"]["items"] == 1
    # Our own database, still without judgements: replaced.
    assert cli("pool", "--task", 1, run, "--out", out, "--depth", 2).exit_code == 0
    with AssessDB(out) as db:
        assert db.progress()["A.1"]["items"] == 2
        db.judge(db.items("A.1")[0].item_id, "ann", 3)
    result = cli("pool", "--task", 1, run, "--out", out, "--depth", 1)
    assert result.exit_code == 2 and "judgement" in result.output
    with AssessDB(out) as db:
        assert len(db.judgements()) == 1 and db.progress()["A.1"]["items"] == 2


def test_force_never_writes_over_an_input_of_the_command(tmp_path):
    run = write(tmp_path / "g-task1-r-auto-both-P.tsv", ["A.1\tQ0\t100\t1\t2.0\tr", "A.1\tQ0\t101\t2\t1.0\tr"])
    topics = write(tmp_path / "topics.xml", ['<Topics><Topic number="A.1"><Title>t</Title></Topic></Topics>'])
    for out in (run, topics):
        before = out.read_bytes()
        result = cli("pool", "--task", 1, run, "--topics", topics, "--out", out, "--force")
        assert result.exit_code == 2 and "is also an input of this command" in result.output
        assert out.read_bytes() == before  # --force replaces a file, never the command's own input


def test_coverage_of_the_labs_judgements_by_a_pool_of_our_runs(runs_2021, sample_index, data_dir, tmp_path):
    out = tmp_path / "pool.sqlite"
    assert cli("pool", "--task", 1, *runs_2021.values(), "--out", out).exit_code == 0
    result = cli("qrels", "coverage", out, "--qrels", data_dir / "qrels/task1-2021.tsv", "--index", sample_index,
                 "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    # Worked out from the files: the lab's graded judgements of sample answers, and which the pool holds.
    from mathsearch.store import Store

    present = Store.open(sample_index).answer_ids()
    pooled = hand_pool([(runs_2021["P1"], 45), (runs_2021["P2"], 45), (runs_2021["A"], 20)])
    judged = []
    for line in (data_dir / "qrels/task1-2021.tsv").read_text().splitlines():
        topic, _, doc, rel = line.split()
        if doc in present and int(rel) in (0, 1, 2, 3):
            judged.append((topic, doc, int(rel)))
    assert found["judged"] == len(judged) and found["topics"] == len({t for t, _, _ in judged})
    assert found["judged_pooled"] == sum(doc in pooled[t] for t, doc, _ in judged)
    assert found["relevant"] == sum(r >= 2 for _, _, r in judged)
    assert found["relevant_pooled"] == sum(r >= 2 and doc in pooled[t] for t, doc, r in judged)
    assert found["relevant_share"] > found["judged_share"] > 0.0  # the pool favours what the lab found relevant


def test_topics_of_another_year_are_refused_and_no_pool_written(runs_2021, data_dir, tmp_path):
    out = tmp_path / "pool.sqlite"
    result = cli("pool", "--task", 1, runs_2021["P1"], "--topics", data_dir / "topics" / "task1-2020.xml", "--out", out)
    assert result.exit_code == 2 and "none of the 100 pooled topics" in result.output and "another year" in result.output
    assert not out.exists()
