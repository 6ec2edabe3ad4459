"""MiniLM's query-time re-scoring of the similar questions on a student's index (systems.teacher)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_encoders import tiny_student
from test_search_golden import make_dump

from mathsearch.building import build_index
from mathsearch.encoders import load_encoder, shared_encoder
from mathsearch.errors import InputError
from mathsearch.indexes.dense import DenseIndex, build_dense_index, passage
from mathsearch.store import Store
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.ours import OursConfig, ours_config
from mathsearch.systems.signals import SimilarQuestions
from mathsearch.systems.teacher import Teacher

TOPIC = "Do the prime numbers go on forever?"


@pytest.fixture(scope="module")
def student_tiny(tmp_path_factory):
    """A tiny index whose vectors come from a static student, its topics encoded by MiniLM."""
    index, encoder, _ = tiny_student(tmp_path_factory.mktemp("teacher"))
    with Store.open(index) as store:
        build_dense_index(store, index, encoder=str(encoder), query_encoder="minilm")
    return index


def minilm_cosines(index, topic: str) -> dict[int, float]:
    """Every question's cosine to the topic by sentence-transformers' MiniLM (the index's own path)."""
    with Store.open(index) as store:
        questions = list(store.iter_posts(1))
    model = load_encoder("minilm")
    vectors = model.encode([passage(q.title, q.text) for q in questions])
    topic_vector = model.encode([topic])[0]
    return {q.post_id: float(v @ topic_vector) for q, v in zip(questions, vectors, strict=True)}


def test_the_teacher_reorders_the_students_similar_questions_by_minilm(student_tiny):
    ctx = SearchContext(student_tiny)
    query = SearchQuery("q", TOPIC)
    student = SimilarQuestions(ctx, query).dense(2)
    taught = SimilarQuestions(ctx, query, teacher=Teacher(rescore=5, tokens=256)).dense(2)
    truth = minilm_cosines(student_tiny, TOPIC)
    best = sorted(truth, key=lambda q: -truth[q])[:2]
    assert sorted(taught) == sorted(best)  # all five questions re-scored: MiniLM's own best two
    for q, v in taught.items():
        assert v == pytest.approx(truth[q], abs=2e-3)  # the topic's vector is bfloat16 where the CPU has it
    # without the teacher: the student's cosines, which are not MiniLM's
    vec = DenseIndex.open(student_tiny).encode(TOPIC)
    assert student == DenseIndex.open(student_tiny).search_questions(vec, 2)
    # (a student fitted on these very posts is close to MiniLM, but off by more than the teacher's rounding)
    assert max(abs(v - truth[q]) for q, v in student.items()) > 5e-3
    assert len(ctx.teacher_vectors) == 5  # each question encoded once, kept for the context


def test_the_teacher_reads_only_the_questions_the_student_found(student_tiny):
    ctx = SearchContext(student_tiny)
    query = SearchQuery("q", TOPIC)
    student = SimilarQuestions(ctx, query).dense(3)
    taught = SimilarQuestions(ctx, query, teacher=Teacher(rescore=3)).dense(2)
    assert set(taught) <= set(student) and len(taught) == 2
    assert {q for _, q in ctx.teacher_vectors} == set(student)
    # hidden questions stay hidden after the re-scoring
    first, second = list(taught)
    hidden = SimilarQuestions(ctx, query, teacher=Teacher(rescore=3)).hiding([first]).dense(2)
    assert hidden == {second: taught[second]}


def test_a_minilm_index_has_nothing_to_rescore(tmp_path):
    build_index(make_dump(tmp_path / "dump"), tmp_path / "index", optional=("dense",))
    ctx = SearchContext(tmp_path / "index")
    query = SearchQuery("q", TOPIC)
    assert SimilarQuestions(ctx, query, teacher=Teacher(rescore=5)).dense(2) == SimilarQuestions(ctx, query).dense(2)
    assert ctx.teacher_vectors == {}


def test_the_packaged_student_config_rescores_and_teacher_0_turns_it_off(student_tiny):
    packaged = make_system("ours").config_for(student_tiny)
    assert packaged.teacher == Teacher(rescore=100, tokens=256)
    assert make_system("ours:teacher=0").config_for(student_tiny).teacher.rescore == 0
    assert make_system("ours:teacher=7").config_for(student_tiny).teacher == Teacher(rescore=7, tokens=256)
    assert make_system("ours:dense=False").config_for(student_tiny).teacher == Teacher()
    ctx = SearchContext(student_tiny)
    found = make_system("ours").search(ctx, SearchQuery("q", TOPIC))
    assert found and len(ctx.teacher_vectors) == 5
    off = SearchContext(student_tiny)
    assert make_system("ours:teacher=0").search(off, SearchQuery("q", TOPIC)) and off.teacher_vectors == {}
    with pytest.raises(InputError, match="teacher is the number of similar questions"):
        make_system("ours:teacher=-2")


def test_teacher_settings_are_checked(tmp_path):
    base = {"signals": {"d": {"kind": "dense_questions", "weight": 1.0}}}
    assert OursConfig.parse({**base, "teacher": {"rescore": 30}}, "t").teacher == Teacher(30, 256)
    with pytest.raises(InputError, match=r"\[teacher\].*rescore must be 0 or more"):
        OursConfig.parse({**base, "teacher": {"rescore": -1}}, "t")
    with pytest.raises(InputError, match=r"tokens must be 1 to 256"):
        OursConfig.parse({**base, "teacher": {"tokens": 300}}, "t")
    with pytest.raises(InputError, match=r"\[teacher\].*depth"):
        OursConfig.parse({**base, "teacher": {"depth": 3}}, "t")
    config = OursConfig.parse({**base, "teacher": {"rescore": 30}}, "t")
    assert config.without_dense().teacher == Teacher()
    assert dataclasses.replace(ours_config("", "ours.toml")).teacher == Teacher()  # MiniLM's config: off


def test_minilm_encodes_many_passages_as_it_encodes_one():
    encoder = shared_encoder("minilm")
    texts = ["Are there infinitely many primes?", "What is the integral of $x \\sin x$? " * 30, "x"]
    many = encoder.encode_passages(texts, 256)
    one = np.vstack([encoder.encode_one(t) for t in texts])
    assert many.shape == (3, 384) and np.all(np.sum(many * one, axis=1) > 0.9999)
    short = encoder.encode_passages(texts, 8)
    assert float(short[1] @ many[1]) < 0.999 and float(short[2] @ many[2]) > 0.9999  # only long ones are cut
    assert encoder.encode_passages([], 128).shape == (0, 384)
    with pytest.raises(InputError, match="1 to 256 word pieces"):
        encoder.encode_passages(texts, 257)
