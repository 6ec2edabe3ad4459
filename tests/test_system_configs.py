"""System configs are typed and immutable: a misspelt key is an error, a shared config cannot be
changed by one query, and no module fills another's registry."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from mathsearch.errors import InputError
from mathsearch.systems import make_system
from mathsearch.systems.formula import formula_config
from mathsearch.systems.ours import LEXICAL_CONFIG, OursConfig, ours_config
from mathsearch.systems.signals import SIGNAL_KINDS, Bm25Signal, FormulaSignal


def test_the_packaged_configs_parse_into_typed_signals():
    cfg = ours_config()
    kinds = {kind for _, kind, _ in cfg.signals}
    assert {"answer", "questions", "linked", "dense", "dense_questions", "formula"} <= kinds
    answer = next(sig for name, _, sig in cfg.signals if name == "answer")
    assert isinstance(answer, Bm25Signal) and answer.weight > 0 and answer.fields["words->body"] > 0
    assert "dense" not in {k for _, k, _ in ours_config("", LEXICAL_CONFIG).without_dense().signals}
    # Tangent-S with the unified and path tuples and the text boost, idf off: the grid's choice held under
    # cross-validation over the pooled years (2026-11-26), so formula reads the text index again
    scoring = formula_config().scoring
    assert (scoring.slt, scoring.opt, scoring.unified, scoring.paths, scoring.idf) == (0.5, 0.5, 0.3, 0.2, False)
    assert formula_config().text.weight == 0.05 and set(make_system("formula").needs()) == {"formula", "text"}
    formula = next(sig for name, _, sig in cfg.signals if name == "formula")
    assert isinstance(formula, FormulaSignal) and formula.rerank > 0 and formula.candidates == ("answer", "dense")


@pytest.mark.parametrize("text, words", [
    ('[signals.answer]\nweigth = 2.0\n', "unknown key(s) weigth"),
    ('[signals.x]\nkind = "telepathy"\nweight = 1.0\n', "unknown kind of signal 'telepathy'"),
    ('[signals.f]\nkind = "formula"\nweight = 1.0\n[signals.f.scoring]\nslt = 0.5\nsizepower = 1.0\n', "sizepower"),
    ('[fusion]\nmethod = "borda"\n', "should be combsum or rrf"),
    ('[signals.answer]\nweight = "high"\n', "should be float"),
    ('deep = 3\n', "unknown key(s) deep"),
    ('[signals.f]\nkind = "formula"\nweight = 1.0\nrerank = 10\ncandidates = "answer"\n', "should be tuple"),
    ('[signals.f]\nkind = "formula"\nweight = 1.0\nrerank = 10\ncandidates = ["answer"]\n'
     '[signals.answer]\nweight = 1.0\n', "re-scores the candidates of answer, which no"),
    ('[signals.answer]\nweight = 1.0\n[signals.answer.max_df]\nqmath = 0.5\n',
     "[signals.answer]: max_df names 'qmath', not a field of the answer index"),
    ('[signals.questions]\nweight = 0.0\n[signals.questions.max_df]\nbody_math = 0.5\n',
     "max_df names 'body_math', not a field of the question index"),
    ('[signals.answer]\nweight = 1.0\n[signals.answer.max_df]\nq_math = 0\n', "a share of the documents, in (0, 1], not 0.0"),
    ('[signals.answer]\nweight = 1.0\nmax_df = 0.5\n', "should be a table"),
    ('', "nothing to rank by"),
    ('depth = 100\n[fusion]\nmethod = "rrf"\n', "nothing to rank by"),
])
def test_a_bad_key_or_value_is_refused_with_its_place(tmp_path, text, words):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=re.escape(words)):
        ours_config(str(path))


def test_a_misspelt_formula_config_key_is_refused(tmp_path):
    path = tmp_path / "f.toml"
    path.write_text("depht = 10\n")
    with pytest.raises(InputError, match="depht"):
        formula_config(str(path))


def test_configs_are_immutable_once_shared():
    cfg = ours_config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.depth = 5  # type: ignore[misc]
    answer = next(sig for name, _, sig in cfg.signals if name == "answer")
    with pytest.raises(TypeError):
        answer.fields["words->body"] = 0.0  # type: ignore[index]
    assert ours_config() is cfg  # parsed once, shared


def test_every_signal_kind_is_registered_in_one_place():
    assert set(SIGNAL_KINDS) == {"bm25", "answer", "math", "questions", "linked", "dense", "dense_questions",
                                 "dense_linked", "formula"}
    assert SIGNAL_KINDS["formula"] is FormulaSignal
    # The Task 2 module no longer fills a Task 1 registry: it does not even import ours.
    import mathsearch.systems.formula as formula_module
    import mathsearch.systems.ours as ours_module

    tree = ast.parse(Path(formula_module.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "ours" not in imported and not hasattr(ours_module, "EXTRA_SIGNALS")


def test_ours_needs_follow_its_config(tmp_path):
    assert set(make_system("ours").needs()) == {"store", "text", "formula"}  # dense as the index allows
    dense_only = tmp_path / "d.toml"
    dense_only.write_text('[signals.d]\nkind = "dense"\nweight = 1.0\n')
    assert "dense" in make_system(f"ours:config={dense_only}").needs()
    assert "dense" not in make_system(f"ours:config={dense_only},dense=false").needs()
    assert isinstance(OursConfig.parse({"signals": {}}, "x"), OursConfig)


def test_a_config_may_start_from_another_and_say_only_what_it_changes(tmp_path):
    from mathsearch.config import read_toml

    packaged = read_toml("", "ours.toml")
    variant = tmp_path / "variant.toml"
    variant.write_text('base = "ours.toml"\n[signals.answer.fields]\n"words->body" = 1.5\n[signals.extra]\nkind = "dense"\nweight = 0.5\n')
    got = read_toml(str(variant), "ours.toml")
    assert got["signals"]["answer"]["fields"]["words->body"] == 1.5
    assert got["signals"]["answer"]["fields"]["math->body_math"] == packaged["signals"]["answer"]["fields"]["math->body_math"]
    assert list(got["signals"]) == [*packaged["signals"], "extra"] and "base" not in got
    assert ours_config(str(variant)).signals[-1][0] == "extra"
    # a base beside the file comes first, and chains
    (tmp_path / "mid.toml").write_text('base = "ours.toml"\ndepth = 50\n')
    (tmp_path / "top.toml").write_text('base = "mid.toml"\n[signals.answer]\nweight = 3.0\n')
    top = read_toml(str(tmp_path / "top.toml"), "ours.toml")
    assert top["depth"] == 50 and top["signals"]["answer"]["weight"] == 3.0 and top["signals"]["dense_questions"]
    # refused, naming the file: a base that is nowhere, not a name, or a loop
    for text, says in (('base = "nowhere.toml"\n', "neither a file beside it nor a packaged config"),
                       ("base = 3\n", "base should name a config file"),
                       ('base = "loop.toml"\n', "its bases go round")):
        (tmp_path / "loop.toml").write_text(text)
        with pytest.raises(InputError, match=says) as err:
            read_toml(str(tmp_path / "loop.toml"), "ours.toml")
        assert str(tmp_path / "loop.toml") in str(err.value)


def test_a_config_path_that_is_a_folder_or_not_text_is_one_clear_error(tmp_path):
    """``ours:config=DIR`` or a binary file: an InputError naming the path, not a traceback."""
    from mathsearch.config import read_toml
    from mathsearch.errors import InputError

    binary = tmp_path / "weights.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81" * 16)
    for path, says in ((tmp_path, "is a folder"), (binary, "not a text file")):
        with pytest.raises(InputError, match=says) as caught:
            read_toml(str(path), "ours.toml")
        assert str(path) in str(caught.value)
    assert binary.read_bytes() == b"\xff\xfe\x00\x81" * 16  # read, never written
