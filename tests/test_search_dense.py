"""The optional dense index on a tiny collection (the model loads offline from its package)."""

from __future__ import annotations

import json

import pytest
from test_search_golden import make_dump, ranking
from typer.testing import CliRunner

from mathsearch.building import build_index
from mathsearch.cli import app
from mathsearch.errors import InputError
from mathsearch.indexes.dense import DenseIndex


@pytest.fixture(scope="module")
def dense_tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("dense")
    counts = build_index(make_dump(root / "dump"), root / "index", optional=("dense",))
    assert counts.indexes["dense_answers"] == 7 and counts.indexes["dense_questions"] == 5
    return root / "index"


def test_dense_similarity_finds_paraphrases(dense_tiny, tmp_path):
    index = DenseIndex.open(dense_tiny)
    assert index.answers.shape == (7, 384) and index.questions.shape == (5, 384)
    vec = index.encode("Do the prime numbers go on forever?")
    best_question = max(index.search_questions(vec, 5).items(), key=lambda kv: kv[1])[0]
    assert best_question in (3, 5)  # both ask whether primes never end, in other words
    config = tmp_path / "dense.toml"
    config.write_text('[signals.d]\nkind = "dense"\nweight = 1.0\nlimit = 3\n')
    order = ranking(dense_tiny, f"ours:config={config}", "Do the prime numbers go on forever?")
    assert len(order) == 3 and order[0] in ("300", "301", "500")
    manifest = json.loads((dense_tiny / "dense" / "manifest.json").read_text())
    assert manifest["encoder"]["name"] == "minilm" and index.encoder_name == "minilm"
    with pytest.raises(InputError, match="made by encoder 'minilm', not 'static-minilm'"):
        DenseIndex.open(dense_tiny, encoder="static-minilm")
    shown = CliRunner().invoke(app, ["search", "--index", str(dense_tiny), "--json", "Do primes go on forever?"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["system"] == "ours"  # dense signals on when the index has vectors


def test_dense_signal_without_dense_index_says_how_to_build_it(tmp_path):
    root = tmp_path
    build_index(make_dump(root / "dump"), root / "index")
    config = root / "dense.toml"
    config.write_text('[signals.d]\nkind = "dense"\nweight = 1.0\n')
    with pytest.raises(InputError, match="--dense"):
        ranking(root / "index", f"ours:config={config}", "primes")
    # one name everywhere: without vectors, ours is ours:dense=False (never an error)
    lexical = ranking(root / "index", "ours", "primes")
    assert lexical and lexical == ranking(root / "index", "ours:dense=False", "primes")
    assert not (root / "index" / "dense").exists()
    assert json.loads((root / "index" / "text" / "manifest.json").read_text())["text_answers"] == 7


def test_query_is_encoded_on_the_worker_while_lexical_signals_run(dense_tiny, tmp_path):
    import threading

    from mathsearch.systems import SearchContext, SearchQuery, make_system
    from mathsearch.systems.ours import combine, ours_config

    ctx = SearchContext(dense_tiny)
    query = SearchQuery.from_text("Do the prime numbers go on forever?")
    direct = ctx.dense.encode("Do the prime numbers go on forever?")
    seen: list[str] = []
    encode = ctx.dense.encode

    def spy(text: str):
        seen.append(threading.current_thread().name)
        return encode(text)

    ctx.dense.encode = spy
    config = tmp_path / "both.toml"
    config.write_text('[signals.b]\nkind = "bm25"\nweight = 1.0\nfields = { "words->body" = 1.0 }\n'
                      '[signals.d]\nkind = "dense"\nweight = 1.0\nlimit = 3\n')
    fused = combine(ctx, query, ours_config(str(config)))
    assert seen and all(name.startswith("mathsearch-query-encoder") for name in seen)
    assert not ctx.pending_vectors  # the dense signal collected what the worker made
    (vector,) = ctx.query_vectors.values()
    assert (abs(vector - direct) < 1e-5).all()
    assert fused and len(seen) == 1
    # a second search of the same text reuses the vector: nothing more is encoded
    make_system(f"ours:config={config}").search(ctx, query, 10)
    assert len(seen) == 1


def test_dense_linked_gives_the_threads_that_the_questions_most_like_the_topic_link_to(dense_tiny):
    """``dense_linked``: the answers of threads linked to the topic's nearest questions by vector, with
    their cosine; shared with ``dense_questions`` (one search), hidden alike, gone without vectors."""
    from mathsearch.systems import SearchContext, SearchQuery
    from mathsearch.systems.ours import OursConfig, combine
    from mathsearch.systems.signals import DenseLinkedSignal, SimilarQuestions, signal_from

    ctx = SearchContext(dense_tiny)
    query = SearchQuery.from_text("Is there an easy proof that prime numbers never end?")
    near = ctx.dense.search_questions(ctx.dense.encode(query.title), 5)
    assert max(near, key=near.get) == 5  # thread 5, which is a duplicate of thread 4
    sig = DenseLinkedSignal(weight=1.0, limit=5)
    found = sig.scores(ctx, query, SimilarQuestions(ctx, query))
    # thread 4's answer (400) with thread 5's cosine (5 links to 4), and 5's (500) through the same link seen from 4
    assert found[400] == pytest.approx(near[5]) and found[500] == pytest.approx(near[4])
    assert set(found) == {400, 500}
    assert DenseLinkedSignal(weight=1.0, limit=5, types="related").scores(ctx, query, SimilarQuestions(ctx, query)) == {}
    # thread 5 hidden: nothing is reached through it any more
    hidden = SimilarQuestions(ctx, query).hiding([5])
    assert 5 not in hidden.dense(5) and 400 not in sig.scores(ctx, query, hidden)
    # in ours: weighted in, dropped with the other dense signals, a bad link type refused by name
    raw = {"signals": {"answer": {"weight": 1.0, "fields": {"words->body": 1.0}},
                       "linked_near": {"kind": "dense_linked", "weight": 1.0, "limit": 5}}}
    config = OursConfig.parse(raw, "t")
    assert "dense" in config.needs() and [n for n, _, _ in config.without_dense().signals] == ["answer"]
    assert combine(ctx, query, config)[400] == 2.0 and combine(ctx, query, config.without_dense())[400] == 1.0
    with pytest.raises(InputError, match=r"system config t \[signals.x\]: .*types duplicate, related, any, not 'both'"):
        signal_from("x", {"kind": "dense_linked", "types": "both"}, "t")


def test_dense_feedback_lets_the_best_fused_answers_vote_for_the_answers_like_them(dense_tiny):
    """``[feedback]``: after fusion, the mean vector of the best ``k`` answers votes (cosine, min-max,
    times ``weight``) for the best ``depth``; it adds no answer, leaves the others as they were, and
    is off without vectors or at weight 0; a bad value is refused with its place."""
    import numpy as np

    from mathsearch.systems import SearchContext, SearchQuery
    from mathsearch.systems.feedback import Feedback, rescore
    from mathsearch.systems.ours import OursConfig, combine

    ctx = SearchContext(dense_tiny)
    ids = [int(a) for a in ctx.dense.answer_ids]
    fused = {a: float(len(ids) - i) for i, a in enumerate(ids)}  # the first answer best, then in order
    out = rescore(ctx, fused, Feedback(weight=2.0, k=1, depth=5))
    assert set(out) == set(fused)
    best, rest = ids[0], ids[5:]
    assert out[best] == pytest.approx(fused[best] + 2.0)  # its own vector is the mean: the top vote
    assert all(out[a] == fused[a] for a in rest)  # beyond depth: untouched
    vectors = np.asarray(ctx.dense.answers[:5], dtype=np.float32)
    cosine = vectors @ vectors[0] / np.linalg.norm(vectors[0])
    votes = [out[a] - fused[a] for a in ids[:5]]
    assert np.argsort(votes).tolist() == np.argsort(cosine).tolist()  # the more alike, the larger the vote
    assert min(votes) == pytest.approx(0.0)
    assert rescore(ctx, fused, Feedback()) == fused and rescore(ctx, {}, Feedback(weight=1.0)) == {}
    # in ours: after the fusion, with what the index holds; off without vectors
    raw = {"signals": {"answer": {"weight": 1.0, "fields": {"words->body": 1.0}}}, "feedback": {"weight": 0.5, "k": 2}}
    config = OursConfig.parse(raw, "t")
    assert config.needs() == ("dense", "store", "text") and not config.without_dense().feedback.on
    query = SearchQuery.from_text("Is there an easy proof that prime numbers never end?")
    plain = combine(ctx, query, config.without_dense())
    assert combine(ctx, query, config) == rescore(ctx, plain, config.feedback) != plain
    for bad, message in (({"weight": -1.0}, "weight must be 0 or more"), ({"k": 0}, "k must be at least 1"),
                         ({"k": 5, "depth": 2}, "depth at least k"), ({"kk": 3}, "unknown key")):
        with pytest.raises(InputError, match=rf"system config t \[feedback\]: .*{message}"):
            OursConfig.parse({**raw, "feedback": bad}, "t")
