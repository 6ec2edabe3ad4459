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
