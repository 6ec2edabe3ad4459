"""Contract of every registered system (the registry sweep): it names the indexes it reads, its spec
round-trips, it returns a Ranking in the one ranking order, and a run of it on real topics is
valid by the participant guidelines (checked against the collection, invalid hits refused)."""

from __future__ import annotations

import pytest
from conftest import TOPICS

from mathsearch.indexes.kinds import INDEX_KINDS
from mathsearch.ranking import Ranking
from mathsearch.readers.topics import read_topics
from mathsearch.runs import write_formula_run, write_task3_run, write_trec_run
from mathsearch.systems import (
    SearchContext,
    SearchQuery,
    make_system,
    needs_of,
    run_system,
    spec,
    system_names,
)

SYSTEMS = system_names()


def test_register_refuses_a_name_taken():
    """A second class under a name already registered is refused: it never replaces the first."""
    from dataclasses import dataclass

    from mathsearch.errors import InputError
    from mathsearch.systems import System, register, resolve, system_class

    @dataclass(frozen=True)
    class Impostor:
        NAME = "bm25-thread"
        TASK = 1
        DESCRIPTION = "not BM25"

    before = system_class("bm25-thread")
    with pytest.raises(ValueError, match="'bm25-thread' is registered already"):
        register(Impostor)
    assert system_class("bm25-thread") is before and before is not Impostor
    assert register(before) is before  # the same class again (a module read twice) is itself
    assert isinstance(resolve(2), System) and resolve(2).NAME == "formula"  # the task's default
    assert resolve(3).NAME == "extract" and resolve(1, "bm25-thread:math=0.5").TASK == 1
    with pytest.raises(InputError, match="system formula answers task 2; task 1 systems: .*bm25-thread"):
        resolve(1, "formula")
    with pytest.raises(InputError, match=r"--task must be 1 or 2, not 3 \(a Task 3 answer"):
        resolve(3, tasks=(1, 2))
    with pytest.raises(InputError, match="--task must be 1, 2 or 3, not 4"):
        resolve(4)


def test_the_registry_holds_both_tasks():
    assert set(system_names(1)) >= {"ours", "bm25-answer", "bm25-thread", "tangent-s", "linked-posts"}
    assert set(system_names(2)) >= {"formula", "tangent-s-formula"}
    assert set(system_names(3)) >= {"extract", "first-hit", "generate"}
    assert set(system_names(1)) | set(system_names(2)) | set(system_names(3)) == set(SYSTEMS)


@pytest.fixture(scope="module")
def topics():
    return {1: read_topics(TOPICS / "task1-2020.xml", TOPICS / "formulas" / "formulas-2020-latex.tsv")[:4],
            2: read_topics(TOPICS / "task2-2020.xml", TOPICS / "formulas" / "formulas-2020-latex.tsv")[:4]}


@pytest.mark.parametrize("name", SYSTEMS)
def test_every_system_keeps_the_contract(name, sample_index, topics, tmp_path, monkeypatch):
    monkeypatch.delenv("MATHSEARCH_LLM_URL", raising=False)  # generate: no endpoint here, it falls back
    system = make_system(name)
    assert make_system(spec(system)) == system  # the spec names it, and is its run tag
    needs = needs_of(system)
    assert needs and set(needs) <= set(INDEX_KINDS), needs
    ctx = SearchContext(sample_index)
    if "dense" in needs:  # the sample index here has no vectors: say so up front, clearly
        with pytest.raises(Exception, match="dense"):
            ctx.require(needs)
        return
    if set(needs) & {"mias", "scm", "formula2vec", "compubert"}:  # MIRMU's: tests/test_mirmu_systems.py
        with pytest.raises(Exception, match="--with"):
            ctx.require(needs)
        return
    ctx.require(needs)
    task = system.TASK
    if task == 3:
        _task3_contract(system, ctx, topics[1], tmp_path)
        return
    found = system.search(ctx, SearchQuery.from_topic(topics[task][0]), 50)
    assert isinstance(found, Ranking) and len(found) <= 50
    if task == 2:
        assert found.posts is not None and set(found.posts) == set(found)  # each instance with its post
    hits = run_system(system, ctx, topics[task], 100)
    assert hits, f"{name} found nothing for 4 topics of 2020"
    writer = write_trec_run if task == 1 else write_formula_run
    report = writer(tmp_path / "run.tsv", hits, lookup=ctx.store, on_invalid="raise")
    assert report.ok and report.hits == len(hits)
    lines = (tmp_path / "run.tsv").read_text().splitlines()
    assert len(lines) == len(hits) and all(line.endswith("\t" + spec(system)) for line in lines)


def _task3_contract(system, ctx, topics, tmp_path):
    """Task 3: one answer per topic, 1..1,200 characters, sources that are answer posts of the index,
    written as a valid run (invalid answers refused)."""
    from mathsearch.systems.task3 import run_answers

    answers, _ = run_answers(system, ctx, topics)
    assert [a.query_id for a in answers] == [t.topic_id for t in topics]
    for a in answers:
        assert 1 <= len(a.answer) <= 1200 and a.rank == 1 and a.run_tag == spec(system)
        ids = [s.removeprefix("answer:") for s in a.sources.split(",")]
        assert all(s.startswith("answer:") for s in a.sources.split(",")), a.sources
        assert all(ctx.store.post_type(i) == 2 for i in ids), a.sources
    report = write_task3_run(tmp_path / "run.tsv", answers, on_invalid="raise")
    assert report.ok and report.hits == len(topics)
