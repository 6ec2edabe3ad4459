"""The measured dense recipe is the default: ``train-encoder`` with no options trains the README's
student, and ``ours`` on an index of student vectors runs the config tuned for them."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_search_golden import make_dump

from mathsearch.building import build_index
from mathsearch.building.train import TrainConfig


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("recipe")
    build_index(make_dump(root / "dump"), root / "index")
    return root / "index"


@pytest.fixture()
def small_base(tmp_path, monkeypatch):
    """An encoders' home holding a ``static-minilm`` start (MiniLM's word pieces, a seeded random
    table): the student's start without minutes of model2vec distilling; the teacher is MiniLM itself."""
    from tokenizers import Tokenizer

    from mathsearch.encoders.builtin import BUILTIN_INFO, minilm_path
    from mathsearch.encoders.static import StaticEncoder

    home = tmp_path / "encoders"
    tokenizer = Tokenizer.from_file(f"{minilm_path()}/tokenizer.json")
    table = np.random.default_rng(0).normal(0, 0.1, (tokenizer.get_vocab_size(), 384)).astype(np.float32)
    StaticEncoder(tokenizer, table, dict(BUILTIN_INFO["static-minilm"])).save(home / "static-minilm")
    monkeypatch.setenv("MATHSEARCH_ENCODERS", str(home))
    return home


def _train(index, out, *options: str) -> dict:
    from typer.testing import CliRunner

    from mathsearch.cli import app

    result = CliRunner().invoke(app, ["train-encoder", "--index", str(index), "--name", "s", "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    return json.loads((out / "encoder.json").read_text())


def test_the_default_config_is_the_measured_recipe():
    recipe = TrainConfig()
    assert (recipe.contrastive, recipe.epochs, recipe.anchor, recipe.seed) == (0.3, 15, "mixed", 13)
    assert recipe.teacher_budget == 20_000 and recipe.links == 0 and recipe.hard_negatives == 0 and recipe.bigrams == 0
    assert recipe.teacher_tokens == 256  # all MiniLM reads: 128 and 192 lost (docs/log/dense-encoders.md)


def test_train_encoder_without_options_trains_the_recipe(tiny_index, small_base, tmp_path):
    plain = _train(tiny_index, tmp_path / "plain")
    explicit = _train(tiny_index, tmp_path / "explicit", "--contrastive", "0.3", "--epochs", "15", "--anchor", "mixed",
                      "--seed", "13", "--teacher-budget", "20000")
    assert plain["fingerprint"] == explicit["fingerprint"]
    assert np.array_equal(np.load(tmp_path / "plain" / "embeddings.npy"), np.load(tmp_path / "explicit" / "embeddings.npy"))
    assert plain["config"]["contrastive"] == 0.3 and plain["config"]["epochs"] == 15
    assert plain["trained_on"]["qa_pairs"] > 0  # the contrastive term did train
    # the yesterday's defaults (no contrastive term, 30 epochs) make another student
    old = _train(tiny_index, tmp_path / "old", "--contrastive", "0", "--epochs", "30")
    assert old["fingerprint"] != plain["fingerprint"]


def test_ours_runs_the_static_config_on_student_vectors(tiny_index, tmp_path):
    from mathsearch.systems.ours import DEFAULT_CONFIG, LEXICAL_CONFIG, Ours, packaged_config_for

    assert packaged_config_for(tiny_index) == LEXICAL_CONFIG  # no vectors
    dense = tiny_index / "dense"
    dense.mkdir()
    try:
        (dense / "manifest.json").write_text(json.dumps({"encoder": {"name": "s", "kind": "static"}}))
        assert packaged_config_for(tiny_index) == "ours_static.toml"
        static = Ours().config_for(tiny_index)
        (dense / "manifest.json").write_text(json.dumps({"encoder": {"name": "minilm", "kind": "minilm"}}))
        assert packaged_config_for(tiny_index) == DEFAULT_CONFIG
        assert Ours().config_for(tiny_index) != static  # the two packaged configs differ
    finally:
        (dense / "manifest.json").unlink()
        dense.rmdir()
