"""A static encoder's compiled word pieces (encoders/_wordpiece.pyx) against the tokenizer they
replace: the same ids, cut at the same place, on every post of the real sample and on random text
of every kind of character the tokenizer treats apart (added LaTeX tokens, punctuation, control
characters, accents, CJK, Hangul, other white space); the vectors of the two paths equal; another
tokenizer pipeline left to the tokenizer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import COLLECTION
from hypothesis import given, settings
from hypothesis import strategies as st

from mathsearch import _compiled
from mathsearch.encoders import static
from mathsearch.encoders.builtin import minilm_path
from mathsearch.encoders.static import StaticEncoder
from mathsearch.indexes.dense import passage
from mathsearch.readers.arqmath import iter_posts

HINT = "the kernel is not built: python setup.py build_ext --inplace (or pip install -e .)"
# As train.extend_vocabulary adds them: whole LaTeX commands matched before the words, some of
# them prefixes of others (\in, \int, \infty), and the backslash pair.
LATEX = ["\\frac", "\\in", "\\int", "\\infty", "\\sum", "\\mathbb", "\\\\", "\\le", "\\left", "\\leq"]


def _tokenizer(added=LATEX, lowercase: bool = True):
    from tokenizers import AddedToken, Tokenizer, normalizers

    tokenizer = Tokenizer.from_file(str(Path(minilm_path()) / "tokenizer.json"))
    tokenizer.add_tokens([AddedToken(w, single_word=False, normalized=False) for w in added])
    tokenizer.no_truncation()  # as StaticEncoder does: its cut is max_tokens
    tokenizer.no_padding()
    if not lowercase:
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=False)
    return tokenizer


def _encoder(max_tokens: int = 256, **kwargs) -> StaticEncoder:
    tokenizer = _tokenizer(**kwargs)
    table = np.random.default_rng(3).normal(size=(tokenizer.get_vocab_size(), 8)).astype(np.float32)
    return StaticEncoder(tokenizer, table, {"name": "t", "config": {"max_tokens": max_tokens}})


@pytest.fixture(scope="module")
def encoders():
    if _compiled.pure_python_requested():
        pytest.fail("MATHSEARCH_PURE_PYTHON is set: this test compares the compiled word pieces with the tokenizer")
    assert static._KERNEL is not None, HINT
    out = {cut: _encoder(cut) for cut in (1, 7, 256)}
    assert all(e._pieces is not None for e in out.values())
    return out


def _split(flat: np.ndarray, lengths: np.ndarray) -> list[list[int]]:
    return [part.tolist() for part in np.split(flat, np.cumsum(lengths)[:-1])] if len(lengths) else []


def _assert_same(enc: StaticEncoder, texts: list[str]) -> None:
    got = _split(*enc.piece_ids(texts))
    want = enc._reference_ids(texts)
    for text, g, w in zip(texts, got, want, strict=True):
        assert g == w, (text, enc.tokenizer.decode(g), enc.tokenizer.decode(w))


def test_every_sample_post_has_the_tokenizers_word_pieces(encoders):
    texts = [passage(p.title, p.body) for p in iter_posts(COLLECTION / "Posts.V1.3.xml")]
    assert len(texts) > 6_000 and sum(not t.isascii() for t in texts) > 100
    for enc in encoders.values():
        _assert_same(enc, texts)
    full = encoders[256]
    assert full._pieces.other_pieces > 100  # the non-ASCII pieces went through the tokenizer
    assert sum(len(ids) == 256 for ids in full._reference_ids(texts)) > 100  # the cut is met


def test_the_vectors_of_both_paths_are_equal(encoders):
    texts = [passage(p.title, p.body) for p in iter_posts(COLLECTION / "Posts.V1.3.xml")][:2_000]
    enc = encoders[256]
    compiled = enc.encode(texts)
    kernel, enc._pieces = enc._pieces, None
    try:
        assert np.array_equal(enc.encode(texts), compiled)
    finally:
        enc._pieces = kernel


PIECES = st.sampled_from(
    LATEX + ["\\", "\\f", "\\fra", "frac", "\\inner", "[UNK]", "[unk]", "[CLS]", "[PAD]x", "$", "^{2}", "_{ij}",
             "x", "X", "Hello", "ABC", "12", "3.5", "a_b", "n!", "don't", "e.g.", "(1)", "--", "~", "`", "|",
             "unaffable", "Théorème", "é", "e\u0301", "\u0301", "’", "−", "≤", "∞", "中文", "한국어", "İ", "Σς",
             "ﬁ", "\u1fef", "\u037e", "\ufffd", "\u200b", "\u00ad", "\u00a0", "\u3000", "\u2028", "\x00", "\x01",
             "\x0b", "\x0c", "\x1f", "\x7f", "\x85", " ", "  ", "\t", "\n", "\r\n", "a" * 101, "Z" * 99])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=6)), max_size=40).map("".join))
def test_random_text_has_the_tokenizers_word_pieces(encoders, text):
    for enc in encoders.values():
        _assert_same(enc, [text, text + " tail", "", text])


def test_another_pipeline_is_left_to_the_tokenizer():
    """Without lower-casing (or with an added token matched after normalising) the kernel would
    read the text otherwise: the encoder keeps to the tokenizer, with the same ids."""
    from tokenizers import AddedToken

    cased = _encoder(lowercase=False)
    assert cased._pieces is None
    assert _split(*cased.piece_ids(["Hello World"])) == cased._reference_ids(["Hello World"])
    assert cased._reference_ids(["Hello"]) != _encoder()._reference_ids(["Hello"])
    tokenizer = _tokenizer()
    tokenizer.add_tokens([AddedToken("\\sin", normalized=True)])
    assert not static._KERNEL.WordPieces.accepts(tokenizer)
    assert static._KERNEL.WordPieces.accepts(_tokenizer())
    tokenizer = _tokenizer()
    tokenizer.enable_truncation(16)  # a cut of its own: the kernel would not make it
    assert not static._KERNEL.WordPieces.accepts(tokenizer)


def test_a_word_met_again_is_not_split_again(encoders):
    enc = _encoder(256)
    _assert_same(enc, ["Zyzzyva zyzzyva ZYZZYVA \u00e9t\u00e9 \u00e9t\u00e9"])
    assert enc._pieces.other_pieces == 1  # "été" read once by the tokenizer, then remembered
