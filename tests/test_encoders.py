"""Encoders: names checked cheaply, a static encoder trained on a tiny collection and reloaded,
dense indexes that record their encoder and refuse another."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import COLLECTION, TOPICS
from test_search_golden import make_dump, ranking

import mathsearch.encoders as encoders
from mathsearch.building import build_index
from mathsearch.building.train import TrainConfig, train
from mathsearch.encoders import check_encoder, encoder_info, load_encoder
from mathsearch.encoders.static import StaticEncoder
from mathsearch.errors import InputError
from mathsearch.indexes.dense import ANN_NPROBE, DenseIndex, build_ann, build_dense_index
from mathsearch.readers.arqmath import iter_posts
from mathsearch.readers.topics import read_topics
from mathsearch.store import Store

TINY = TrainConfig(seed=5, epochs=8, batch=4, lr=0.05, latex_vocab=5, min_latex_count=1, base="random",
                   val_fraction=0.25, patience=8, threads=1, contrastive=0.5)


def tiny_student(root):
    """A tiny index under ``root`` and a static encoder trained on it (MiniLM as teacher, random
    start): ``(index, encoder folder, its info)``."""
    index = root / "index"
    build_index(make_dump(root / "dump"), index)
    with Store.open(index) as store:
        info = train(store, root / "enc", "tiny", TINY, source="tiny fixture")
    return index, root / "enc", info


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_student(tmp_path_factory.mktemp("enc"))


def test_check_encoder_is_cheap_and_says_what_is_wrong(monkeypatch, tmp_path):
    check_encoder("minilm")
    check_encoder("static-minilm")
    with pytest.raises(InputError, match="unknown encoder 'nope'"):
        check_encoder("nope")
    with pytest.raises(InputError, match="empty"):
        check_encoder(" ")
    (tmp_path / "encoder.json").write_text('{"kind": "lstm"}')
    with pytest.raises(InputError, match="unknown kind 'lstm'"):
        check_encoder(str(tmp_path))
    monkeypatch.setattr(encoders, "find_spec", lambda m: None if m == "sentence_transformers" else object())
    with pytest.raises(InputError, match=r"needs the 'dense' extras \(sentence_transformers not installed\)"):
        check_encoder("minilm")
    assert encoder_info("minilm")["dim"] == 384  # recorded identity without loading a model


def test_trained_encoder_records_itself_and_reloads_identically(tiny):
    _, folder, info = tiny
    assert info["kind"] == "static" and info["name"] == "tiny" and info["config"]["seed"] == 5
    assert info["trained_on"]["posts"] == 12 and info["trained_on"]["teacher_posts"] == 12
    assert info["trained_on"]["qa_pairs"] > 0 and info["fingerprint"].startswith("static/")
    training = info["training"]
    assert training["val_distance_best"] < training["val_distance_start"]  # it learned from the teacher
    texts = ["Are there infinitely many primes?", "$\\frac{1}{2} + x^2$", ""]
    first = StaticEncoder.load(folder).encode(texts)
    again = load_encoder(str(folder)).encode(texts)
    assert first.shape == (3, 384) and np.array_equal(first, again)
    assert np.allclose(np.linalg.norm(first[:2], axis=1), 1.0, atol=1e-5) and not first[2].any()


def test_training_is_reproducible_from_its_seed(tiny, tmp_path):
    index, folder, info = tiny
    with Store.open(index) as store:
        again = train(store, tmp_path / "again", "tiny", TINY, source="tiny fixture")
    assert again["fingerprint"] == info["fingerprint"]
    assert np.array_equal(np.load(tmp_path / "again" / "embeddings.npy"), np.load(folder / "embeddings.npy"))


def test_index_records_its_encoder_and_refuses_another(tiny, tmp_path):
    index, folder, info = tiny
    with Store.open(index) as store:
        counts = build_dense_index(store, index, encoder=str(folder))
    assert counts == {"dense_answers": 7, "dense_questions": 5, "dense_encoder": "tiny"}
    manifest = json.loads((index / "dense" / "manifest.json").read_text())
    assert manifest["encoder"]["name"] == "tiny" and manifest["encoder"]["fingerprint"] == info["fingerprint"]
    dense = DenseIndex.open(index)
    assert dense.answers.shape == (7, 384)
    vec = dense.encode("Are there infinitely many primes?")
    assert np.allclose(vec @ vec, 1.0, atol=1e-4)
    with pytest.raises(InputError, match="made by encoder 'tiny', not 'minilm'"):
        DenseIndex.open(index, encoder="minilm")
    config = tmp_path / "dense.toml"
    config.write_text('[signals.d]\nkind = "dense"\nweight = 1.0\nlimit = 3\n')
    assert len(ranking(index, f"ours:config={config}", "primes")) == 3
    # the encoder kept in the index no longer matches the vectors: a clear error, never silent nonsense
    table = np.load(index / "dense" / "encoder" / "embeddings.npy")
    np.save(index / "dense" / "encoder" / "embeddings.npy", table[::-1])
    encoder_json = index / "dense" / "encoder" / "encoder.json"
    changed = json.loads(encoder_json.read_text())
    changed["fingerprint"] = "static/0000"
    encoder_json.write_text(json.dumps(changed))
    with pytest.raises(InputError, match="is not the one that made the vectors"):
        DenseIndex.open(index).encode("primes")


def test_index_may_record_minilm_as_its_query_encoder(tiny, tmp_path):
    index, folder, _ = tiny
    with Store.open(index) as store:
        build_dense_index(store, index, encoder=str(folder), query_encoder="minilm")
    manifest = json.loads((index / "dense" / "manifest.json").read_text())
    assert manifest["encoder"]["name"] == "tiny" and manifest["query_encoder"]["name"] == "minilm"
    dense = DenseIndex.open(index)
    text = "Are there infinitely many primes?"
    # MiniLM's vector (the topics' encoder runs auto: bfloat16 where the CPU has it, cosine >= 0.9999)
    assert float(dense.encode(text) @ load_encoder("minilm").encode([text])[0]) > 0.999
    assert not np.allclose(dense.encode(text), StaticEncoder.load(folder).encode([text])[0], atol=1e-2)


def test_index_command_takes_the_encoder_and_the_query_encoder(tiny, tmp_path):
    from typer.testing import CliRunner

    from mathsearch.cli import app

    _, folder, _ = tiny
    dump = make_dump(tmp_path / "dump")
    built = CliRunner().invoke(app, ["index", str(dump), "--index", str(tmp_path / "idx"), "--json",
                                     "--encoder", str(folder), "--query-encoder", "minilm"])
    assert built.exit_code in (0, 1), built.output  # the dump holds one bad row on purpose
    counts = json.loads(built.stdout.strip().splitlines()[-1])
    assert counts["dense_answers"] == 7 and "dense_seconds" in counts
    manifest = json.loads((tmp_path / "idx" / "dense" / "manifest.json").read_text())
    assert manifest["encoder"]["name"] == "tiny" and manifest["query_encoder"]["name"] == "minilm"
    refused = CliRunner().invoke(app, ["index", str(dump), "--index", str(tmp_path / "other"),
                                       "--encoder", str(folder), "--query-encoder", "no-such"])
    assert refused.exit_code == 2 and "unknown encoder 'no-such'" in refused.output
    assert not (tmp_path / "other").exists()
    small = tmp_path / "e8"
    small.mkdir()
    (small / "encoder.json").write_text('{"kind": "static", "name": "e8", "dim": 8}')
    mismatched = CliRunner().invoke(app, ["index", str(dump), "--index", str(tmp_path / "other"),
                                          "--encoder", str(folder), "--query-encoder", str(small)])
    assert mismatched.exit_code == 2 and "8-dimensional" in mismatched.output  # said before any embedding
    assert not (tmp_path / "other").exists()


def test_train_command_refuses_a_place_that_is_not_for_an_encoder(tiny, tmp_path):
    from typer.testing import CliRunner

    from mathsearch.cli import app

    index, _, _ = tiny
    (tmp_path / "thesis.tex").write_text("mine")
    (tmp_path / "afile").write_text("mine")
    for out, words in ((tmp_path, "not an encoder's"), (tmp_path / "afile", "is a file")):
        result = CliRunner().invoke(app, ["train-encoder", "--index", str(index), "--name", "x", "--out", str(out)])
        assert result.exit_code == 2 and words in result.output, result.output
    # a teacher index without vectors (here the folder of someone's files) is refused before training
    result = CliRunner().invoke(app, ["train-encoder", "--index", str(index), "--name", "x", "--out",
                                      str(tmp_path / "enc"), "--teacher-index", str(tmp_path)])
    assert result.exit_code == 2 and "holds no dense vectors" in result.output, result.output
    # hard negatives without the term they join, or an index without a text index to mine them from
    for extra, words in ((["--hard-negatives", "2", "--contrastive", "0"], "give it a weight with --contrastive"),
                         (["--hard-negatives", "2", "--contrastive", "0.3", "--index", str(tmp_path)], "has no text index"),
                         (["--links", "-1"], "must be at least 0"),
                         (["--bigrams", "-5"], "--bigrams must be at least 0"),
                         (["--teacher-tokens", "0"], "--teacher-tokens must be 1 to 256"),
                         (["--teacher-tokens", "300"], "--teacher-tokens must be 1 to 256")):
        result = CliRunner().invoke(app, ["train-encoder", "--index", str(index), "--name", "x", "--out",
                                          str(tmp_path / "enc"), *extra])
        assert result.exit_code == 2 and words in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "thesis.tex"]
    assert (tmp_path / "thesis.tex").read_text() == "mine" and (tmp_path / "afile").read_text() == "mine"


def test_ann_index_finds_what_exact_search_finds_on_the_sample(tiny, tmp_path):
    """recall@1000 of the faiss IVF-SQ8 index (as built for full size) against exact search, the
    sample's 3,395 answers and the 2020 topics (vectors by the tiny encoder: recall, not relevance)."""
    _, folder, _ = tiny
    encoder = StaticEncoder.load(folder)
    answers = [p for p in iter_posts(COLLECTION / "Posts.V1.3.xml") if p.post_type == 2]
    vectors = encoder.encode([p.body[:1200] for p in answers])
    ids = np.asarray([p.post_id for p in answers])
    built = build_ann(vectors, tmp_path / "answers.ivf")
    assert built["vectors"] == 3395 and built["nlist"] > 1
    import faiss

    index = faiss.read_index(str(tmp_path / "answers.ivf"), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
    index.nprobe = ANN_NPROBE
    topics = read_topics(TOPICS / "task1-2020.xml")[:40]
    recalls = []
    for vec in encoder.encode([f"{t.title} {t.question}"[:1200] for t in topics]):
        exact = set(DenseIndex._top(vectors, ids, vec, 1000))
        found = set(DenseIndex._ann_top(index, ids, vec, 1000))
        recalls.append(len(found & exact) / 1000)
    assert np.mean(recalls) >= 0.95 and min(recalls) >= 0.85, recalls


def test_teacher_anchored_training_and_a_restricted_teacher(tiny, tmp_path):
    """``anchor="teacher"``: questions enter the contrastive term as MiniLM vectors (as topics are
    encoded at query time), so only questions the teacher embedded give pairs; ``teacher_posts``
    keeps the teacher off the posts a cross-fitted student must not have seen."""
    import dataclasses

    index, _, info = tiny
    with Store.open(index) as store:
        from mathsearch.building.train import posts_of

        ids, _, parent = posts_of(store)
        allowed = set(sorted(ids)[::2])
        anchored = train(store, tmp_path / "anchored", "anchored", dataclasses.replace(TINY, anchor="teacher"),
                         teacher_posts=allowed)
        # no question with a teacher vector: no pair for the teacher-anchored term
        answers_only = train(store, tmp_path / "answers", "answers", dataclasses.replace(TINY, anchor="teacher"),
                             teacher_posts=set(parent))
        # mixed: every pair, MiniLM's vector on the question side where the teacher has one
        mixed = train(store, tmp_path / "mixed", "mixed", dataclasses.replace(TINY, anchor="mixed"),
                      teacher_posts=allowed)
        own = train(store, tmp_path / "own", "own", dataclasses.replace(TINY, anchor="student"), teacher_posts=allowed)
        # never more pairs than teacher posts (at full size pairs would drown the teacher's term)
        few = train(store, tmp_path / "few", "few", dataclasses.replace(TINY, anchor="mixed"),
                    teacher_posts=set(sorted(ids)[:3]))
        with pytest.raises(InputError, match="unknown contrastive anchor 'both': student, teacher, mixed"):
            train(store, tmp_path / "bad", "bad", dataclasses.replace(TINY, anchor="both"))
    assert mixed["trained_on"]["qa_pairs"] == own["trained_on"]["qa_pairs"] > anchored["trained_on"]["qa_pairs"]
    assert mixed["config"]["anchor"] == "mixed"
    assert few["trained_on"]["teacher_posts"] == 3 and few["trained_on"]["qa_pairs"] == 3 < own["trained_on"]["qa_pairs"]
    assert mixed["training"]["val_distance_best"] < mixed["training"]["val_distance_start"]
    trained = anchored["trained_on"]
    assert trained["teacher_posts"] == len(allowed) < info["trained_on"]["teacher_posts"]
    assert trained["teacher_posts_restricted"] is True and anchored["config"]["anchor"] == "teacher"
    assert 0 < trained["qa_pairs"] <= info["trained_on"]["qa_pairs"]
    assert answers_only["trained_on"]["qa_pairs"] == 0 and info["trained_on"]["qa_pairs"] > 0
    assert anchored["training"]["val_distance_best"] < anchored["training"]["val_distance_start"]


def test_question_anchors_by_kind():
    """The question side of a contrastive batch: MiniLM's row, the student's bag, or for "mixed"
    MiniLM's row where the teacher embedded the question and the student's elsewhere."""
    import torch

    from mathsearch.building.train import question_anchors

    target = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # teacher rows of posts 7 and 9
    row_of = {7: 0, 9: 1}
    qs = np.asarray([9, 4, 7])

    def own(rows):
        return torch.tensor([[float(q), -1.0] for q in rows])

    assert question_anchors("teacher", np.asarray([9, 7]), row_of, target, own).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert question_anchors("student", qs, row_of, target, own).tolist() == [[9.0, -1.0], [4.0, -1.0], [7.0, -1.0]]
    assert question_anchors("mixed", qs, row_of, target, own).tolist() == [[0.0, 1.0], [4.0, -1.0], [1.0, 0.0]]
    assert question_anchors("mixed", np.asarray([4]), row_of, target, own).tolist() == [[4.0, -1.0]]


def test_capped_pairs_keep_the_taught_questions_first():
    """At most ``cap`` question -> answer pairs, in order: every pair whose question has a teacher
    vector first, the rest drawn with the seed (at full size ~1M pairs meet 20-30k teacher posts)."""
    from mathsearch.building.train import capped_pairs

    pairs = np.asarray([(q, 100 + i) for i, q in enumerate([1, 2, 3, 4, 5, 6, 7, 8])])
    taught = {2: 0, 5: 1, 7: 2}  # question position -> teacher row
    assert capped_pairs(pairs, taught, 8, np.random.default_rng(0)).tolist() == list(range(8))
    rows = capped_pairs(pairs, taught, 5, np.random.default_rng(0))
    assert len(rows) == 5 and rows.tolist() == sorted(rows.tolist()) and {1, 4, 6} <= set(rows.tolist())
    assert capped_pairs(pairs, taught, 5, np.random.default_rng(0)).tolist() == rows.tolist()  # seeded
    only_taught = capped_pairs(pairs, taught, 2, np.random.default_rng(1))
    assert len(only_taught) == 2 and set(only_taught.tolist()) <= {1, 4, 6}
    assert capped_pairs(np.zeros((0, 2), dtype=np.int64), taught, 3, np.random.default_rng(0)).tolist() == []


def test_vectors_made_in_batches_are_those_of_one_call(tiny, monkeypatch):
    # The dense step embeds EMBED_BATCH posts at a time (its memory follows the batch, not the
    # collection): the rows, their order and their ids are those of encoding every passage at once.
    from mathsearch.indexes import dense

    index, folder, _ = tiny
    encoder = StaticEncoder.load(folder)
    monkeypatch.setattr(dense, "EMBED_BATCH", 2)
    seen = []
    with Store.open(index) as store:
        q_ids, q_texts, a_ids, a_texts, _ = dense.post_passages(store)
        build_dense_index(store, index, lambda *p: seen.append(p), encoder=str(folder))
    assert np.load(index / "dense" / "answer_ids.npy").tolist() == a_ids
    assert np.load(index / "dense" / "question_ids.npy").tolist() == q_ids
    assert np.array_equal(np.load(index / "dense" / "answers.npy"), encoder.encode(a_texts).astype(np.float16))
    assert np.array_equal(np.load(index / "dense" / "questions.npy"), encoder.encode(q_texts).astype(np.float16))
    assert ("dense answers", len(a_ids), len(a_ids)) in seen and len(seen) >= len(a_ids) // 2


def test_the_default_training_start_can_distil_minilm():
    """``train-encoder`` starts from MiniLM distilled by model2vec (``base = "static-minilm"``); the
    tests above start from a random table, so the distiller's own imports are checked here: a
    fresh install once lacked one (skeletoken) and the packaged command stopped at its first step."""
    from model2vec.distill import distill

    assert TrainConfig().base == "static-minilm" and callable(distill)


def test_links_and_bm25_hard_negatives_join_training(tiny, tmp_path):
    """The issue's other automatic judgements: duplicate / related questions as question <-> question
    pairs, and BM25's answers to a question (outside its thread and linked threads) as hard negatives."""
    import dataclasses

    from mathsearch.building.train import bm25_negatives, link_pairs, posts_of
    from mathsearch.indexes.text_index import TextIndex

    index, _, info = tiny
    with Store.open(index) as store:
        ids, _, parent = posts_of(store)
        pairs = link_pairs(store, ids, parent, held=set())
        assert sorted((ids[a], ids[b]) for a, b in pairs) == [(4, 5), (5, 4)]  # the fixture's one link, both ways
        assert len(link_pairs(store, ids, parent, held={ids.index(5)})) == 0  # a held-out question gives none
        questions = [p for p in ids if p not in parent]
        negatives = bm25_negatives(TextIndex.open(index), store, questions, 3, parent)
        thread = {p: parent.get(p, p) for p in ids}
        assert set(negatives) == set(questions) and any(negatives.values())
        for q, found in negatives.items():
            assert len(found) <= 3 and all(a in parent for a in found)
            assert not {thread[a] for a in found} & {q, *store.linked(q)}, (q, found)
        both = train(store, tmp_path / "both", "both", dataclasses.replace(TINY, links=0.5, hard_negatives=2),
                     text_index=index)
        with pytest.raises(InputError, match="hard negatives come from BM25"):
            train(store, tmp_path / "bad", "bad", dataclasses.replace(TINY, hard_negatives=1))
    trained = both["trained_on"]
    assert info["trained_on"]["link_pairs"] == 0 and info["trained_on"]["negative_questions"] == 0
    assert trained["negative_questions"] == 4 and trained["link_pairs"] == 2 and trained["qa_pairs"] == 4
    assert both["config"]["links"] == 0.5 and both["config"]["hard_negatives"] == 2
    assert both["fingerprint"] != info["fingerprint"]
    assert both["training"]["val_distance_best"] < both["training"]["val_distance_start"]


def test_a_bigram_student_adds_pair_rows_and_reloads_identically(tiny, tmp_path):
    """--bigrams B: B zero-started rows after the word pieces', one per hashed pair of neighbours; the
    encoder reads B from its encoder.json, and a pair never spans two passages of one batch."""
    import dataclasses

    from mathsearch.encoders.static import pair_rows

    index, folder, info = tiny
    with Store.open(index) as store:
        bi = train(store, tmp_path / "bi", "bi", dataclasses.replace(TINY, bigrams=64))
    plain, student = StaticEncoder.load(folder), StaticEncoder.load(tmp_path / "bi")
    assert bi["config"]["bigrams"] == 64 and info["config"]["bigrams"] == 0
    assert student.table.shape[0] == plain.table.shape[0] + 64 and student.vocab == plain.table.shape[0]
    assert student.table[student.vocab:].any()  # the pairs were trained, from zero
    text = "Let $x^2 + \\frac{1}{2}$ be prime"
    (pieces,), (rows,) = plain.token_ids([text]), student.token_ids([text])
    assert rows[: len(pieces)] == pieces and len(rows) == 2 * len(pieces) - 1
    assert all(student.vocab <= r < student.vocab + 64 for r in rows[len(pieces):])
    assert rows[len(pieces):] == pair_rows(np.asarray(pieces), student.vocab, 64).tolist()
    # the batch's vectors are each passage's alone: no pair across the boundary of two texts
    texts = [text, "Are there infinitely many primes?", "", "$a$"]
    batch = student.encode(texts)
    alone = np.vstack([student.encode([t]) for t in texts])
    assert np.allclose(batch, alone, atol=1e-6)
    # by hand: the sum of the word pieces' rows and the pairs' rows, normalised
    by_hand = student.table[rows].sum(axis=0)
    assert np.allclose(batch[0], by_hand / np.linalg.norm(by_hand), atol=1e-5)
    assert not np.allclose(batch[0], plain.encode([text])[0], atol=1e-3)
    assert np.array_equal(load_encoder(str(tmp_path / "bi")).encode(texts), batch)
    # an encoder.json that claims more buckets than its table has rows is refused on load
    meta = json.loads((tmp_path / "bi" / "encoder.json").read_text())
    meta["config"]["bigrams"] = 10_000
    (tmp_path / "bi" / "encoder.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="per bigram bucket"):
        StaticEncoder.load(tmp_path / "bi")


def test_a_link_batch_never_scores_a_question_against_itself():
    import torch

    from mathsearch.building.train import without_itself

    asked, alike = np.array([7, 9, 7]), np.array([9, 7, 4])  # 7 <-> 9 both ways, and 7 -> 4
    out = without_itself(torch.zeros(3, 3), asked, alike)
    assert torch.isinf(out).tolist() == [[False, True, False], [True, False, False], [False, True, False]]
    loss = torch.nn.functional.cross_entropy(out, torch.arange(3))
    assert torch.isfinite(loss) and float(loss) < float(torch.nn.functional.cross_entropy(torch.zeros(3, 3), torch.arange(3)))


def test_minilm_cut_to_its_first_word_pieces_says_so():
    """MiniLMEncoder(max_tokens=N), bench_encoders' minilm:N: the same vectors for a short passage,
    other vectors for a long one, the cut in its info, and a cut MiniLM cannot read refused."""
    from mathsearch.encoders.builtin import MiniLMEncoder

    full, cut = MiniLMEncoder(), MiniLMEncoder(max_tokens=8)
    short = "prime numbers"
    long = "Let $p$ be a prime greater than three; show that $p^2 - 1$ is divisible by twenty-four."
    assert np.allclose(cut.encode([short]), full.encode([short]), atol=1e-5)
    assert not np.allclose(cut.encode([long]), full.encode([long]), atol=1e-2)
    assert cut.info()["config"]["max_tokens"] == 8 and "max_tokens" not in full.info()["config"]
    for wrong in (0, 300):
        with pytest.raises(InputError, match="word pieces"):
            MiniLMEncoder(max_tokens=wrong)


def test_minilm_sorts_passages_by_length_in_its_window_and_gives_the_same_vectors():
    """Windows of passages sorted by length, short batches (the default): each passage's vector
    is the one batches of 64 as read give (to float rounding: only the padding differs), in the
    order given; the sample's posts, short and long mixed; and a window shorter than the batch refused."""
    from itertools import islice

    from mathsearch.encoders.builtin import MiniLMEncoder
    from mathsearch.indexes.dense import passage

    texts = [passage(p.title, p.body) for p in islice(iter_posts(COLLECTION / "Posts.V1.3.xml"), 70)]
    new, old = MiniLMEncoder(window=32), MiniLMEncoder(batch=64, window=64)
    got, want = new.encode(texts), old.encode(texts)
    assert got.shape == want.shape == (70, 384)
    assert float((got * want).sum(1).min()) > 0.99999
    assert len({len(t) for t in texts}) > 30  # lengths differ, so the sorting had work to do
    with pytest.raises(InputError, match="window"):
        MiniLMEncoder(batch=8, window=4)


def test_minilm_in_bfloat16_is_close_to_float32_and_auto_follows_the_cpu(monkeypatch):
    """``precision``: bfloat16 (torch's autocast) gives unit vectors within cosine 0.999 of
    float32's and not equal to them (the arithmetic did change), and says so in its info, for the
    posts' encoder and the queries' alike; auto is bfloat16 where the CPU multiplies it natively
    (the kernel's own flags say whether it does), float32 elsewhere and on a GPU; others refused."""
    from itertools import islice
    from pathlib import Path

    from mathsearch.encoders import builtin
    from mathsearch.indexes.dense import passage

    texts = [passage(p.title, p.body) for p in islice(iter_posts(COLLECTION / "Posts.V1.3.xml"), 12)]
    f32, b16 = builtin.MiniLMEncoder(), builtin.MiniLMEncoder(precision="bfloat16")
    a, b = f32.encode(texts), b16.encode(texts)
    assert a.dtype == b.dtype == np.float32 and a.shape == b.shape == (12, 384)
    assert float((a * b).sum(1).min()) > 0.999 and not np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert "precision" not in f32.info()["config"] and b16.info()["config"]["precision"] == "bfloat16"
    q32, q16 = builtin.MiniLMQueryEncoder(precision="float32"), builtin.MiniLMQueryEncoder(precision="bfloat16")
    for text, post in zip(texts[:4], a[:4], strict=True):
        x, y = q32.encode_one(text), q16.encode_one(text)
        assert abs(x - post).max() < 1e-6 and float(x @ y) > 0.999 and not np.array_equal(x, y)
    flags = Path("/proc/cpuinfo").read_text().split()
    assert builtin.native_bf16() == ("avx512_bf16" in flags or "amx_bf16" in flags)
    monkeypatch.delenv(builtin.PRECISION_ENV, raising=False)
    monkeypatch.setattr(builtin, "native_bf16", lambda: True)
    assert builtin.resolve_precision("auto") == "bfloat16" and builtin.resolve_precision("auto", "cuda") == "float32"
    monkeypatch.setenv(builtin.PRECISION_ENV, "float32")  # the same figures on every CPU
    assert builtin.resolve_precision("auto") == "float32" and builtin.resolve_precision("bfloat16") == "bfloat16"
    monkeypatch.setattr(builtin, "native_bf16", lambda: False)
    monkeypatch.setenv(builtin.PRECISION_ENV, "bfloat16")
    assert builtin.resolve_precision("auto") == "bfloat16"
    monkeypatch.delenv(builtin.PRECISION_ENV)
    assert builtin.resolve_precision("auto") == "float32" and builtin.resolve_precision("bfloat16") == "bfloat16"
    for wrong in ("float16", "", "BF16"):
        with pytest.raises(InputError, match="precision"):
            builtin.MiniLMEncoder(precision=wrong)
    monkeypatch.setenv(builtin.PRECISION_ENV, "half")
    with pytest.raises(InputError, match="MATHSEARCH_PRECISION='half'"):
        builtin.MiniLMQueryEncoder()


def test_a_static_encoders_word_pieces_are_the_tokenizers_own(tiny):
    """token_ids reads the tokenizer's fast batch call (no offsets): the same word pieces as its
    full call on every post of the sample, with the encoder's own LaTeX tokens and cut."""
    from mathsearch.indexes.dense import passage

    _index, folder, _info = tiny
    enc = StaticEncoder.load(folder)
    texts = [passage(p.title, p.body) for p in iter_posts(COLLECTION / "Posts.V1.3.xml")]
    assert len(texts) > 6_000
    full = [e.ids[: enc.max_tokens] for e in enc.tokenizer.encode_batch(texts, add_special_tokens=False)]
    assert enc.token_ids(texts) == full
    assert sum(len(ids) == enc.max_tokens for ids in full) > 100  # the cut is met
