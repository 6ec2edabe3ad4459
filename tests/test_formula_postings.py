"""The posting construction's grouping by token hash: exactly numpy's stable argsort, also where
two hashes share their top 32 bits (the packed sort's one weak spot)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mathsearch.indexes.formula.build import group_by_hash

# Few top halves and few low halves: most runs of equal top bits hold several distinct hashes,
# their positions interleaved.
_HALF = st.sampled_from([0, 1, 7, 2**31, 2**32 - 1])
_HASH = st.builds(lambda top, low: (top << 32) | low, _HALF, _HALF)


@settings(max_examples=300, deadline=None)
@given(st.lists(_HASH, max_size=200))
def test_group_by_hash_is_the_stable_argsort_when_top_bits_collide(values):
    hashes = np.array(values, dtype=np.uint64)
    order, ordered = group_by_hash(hashes)
    expected = np.argsort(hashes, kind="stable")
    assert order.dtype == np.int64
    assert np.array_equal(order, expected)
    assert np.array_equal(ordered, hashes[expected])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300))
def test_group_by_hash_is_the_stable_argsort_for_any_hashes(values):
    hashes = np.array(values, dtype=np.uint64)
    order, ordered = group_by_hash(hashes)
    assert np.array_equal(order, np.argsort(hashes, kind="stable"))
    assert np.array_equal(ordered, np.sort(hashes))


def test_group_by_hash_keeps_each_tokens_postings_in_document_order():
    rng = np.random.default_rng(3)
    vocab = rng.integers(0, 2**64 - 1, 1_000, dtype=np.uint64)
    vocab[:50] = (vocab[0] >> np.uint64(32)) << np.uint64(32)  # 50 tokens on one top half ...
    vocab[:50] |= np.arange(50, dtype=np.uint64)[::-1]  # ... whose low halves run backwards
    hashes = vocab[rng.integers(0, len(vocab), 200_000)]
    order, ordered = group_by_hash(hashes)
    assert np.array_equal(order, np.argsort(hashes, kind="stable"))
    assert np.all(ordered[1:] >= ordered[:-1])
    same = ordered[1:] == ordered[:-1]
    assert np.all(order[1:][same] > order[:-1][same])  # a token's postings stay in document order
