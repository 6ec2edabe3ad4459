"""The posting construction's grouping by token hash: exactly numpy's stable argsort, also where
two hashes share their top 32 bits (the packed sort's one weak spot)."""

from __future__ import annotations

import numpy as np
import pytest
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


# -- the postings kernel (_postings.pyx) against the numpy code it replaces -------------------------

HINT = "the kernel is not built: python setup.py build_ext --inplace (or pip install -e .)"


def _spill(folder, lens_by_family, hashes_by_family, tfs_by_family):
    """A spill as the analysis writes it, per family: each formula's token count, hashes and tfs."""
    from mathsearch.indexes.formula.build import _Spill
    from mathsearch.indexes.formula.layout import FAMILIES

    spill = _Spill(folder)
    spill.add([(np.asarray(lens_by_family[f], np.int32), np.asarray(hashes_by_family[f], np.uint64),
                np.asarray(tfs_by_family[f], np.uint16)) for f in FAMILIES])
    spill.close()
    return spill


def _postings_both_ways(tmp_path, spill, n_groups, part=None):
    """``_write_postings`` with the kernel (its families sorted in parts of ~``part`` postings, when
    given) and with numpy (each family at once): every file and returned array, as bytes."""
    from mathsearch import _compiled
    from mathsearch.indexes.formula import build

    kernel = _compiled.load_kernel("mathsearch.indexes.formula._postings")
    assert kernel is not None and build._postings is not None, HINT
    out, default_part = {}, build.PART_POSTINGS
    for name, k in (("kernel", kernel), ("numpy", None)):
        build._postings = k
        build.PART_POSTINGS = part if part and k is not None else default_part
        try:
            folder = tmp_path / name
            folder.mkdir(parents=True)
            arrays = build._write_postings(folder, spill, n_groups, None)
        finally:
            build._postings, build.PART_POSTINGS = kernel, default_part
        out[name] = {p.name: p.read_bytes() for p in folder.iterdir()} | {k: v.tobytes() for k, v in arrays.items()}
    return out


def _random_family(rng, n_groups, vocab, max_len):
    lens = rng.integers(0, max_len + 1, n_groups)
    lens[rng.random(n_groups) < 0.2] = 0  # formulae with no token of the family
    hashes = rng.choice(vocab, int(lens.sum()))
    tfs = rng.choice(np.array([1, 1, 2, 3, 17, 65535], np.uint16), int(lens.sum()))
    return lens, hashes, tfs


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 60), st.integers(1, 40), st.integers(0, 2**32 - 1), st.sampled_from([None, 1, 7, 50]))
def test_the_postings_kernel_writes_what_numpy_writes(tmp_path_factory, n_groups, n_vocab, seed, part):
    from mathsearch.indexes.formula.layout import FAMILIES

    rng = np.random.default_rng(seed)
    vocab = rng.integers(0, 2**64 - 1, n_vocab, dtype=np.uint64, endpoint=True)
    fams = {f: _random_family(rng, n_groups, vocab, 6) for f in FAMILIES}
    fams[FAMILIES[-1]] = (np.zeros(n_groups, int), np.zeros(0, np.uint64), np.zeros(0, np.uint16))  # an empty family
    tmp = tmp_path_factory.mktemp("postings")
    spill = _spill(tmp / "spill", *({f: v[i] for f, v in fams.items()} for i in range(3)))
    both = _postings_both_ways(tmp, spill, n_groups, part)
    assert both["kernel"].keys() == both["numpy"].keys()
    for name, data in both["numpy"].items():
        assert both["kernel"][name] == data, name


def test_the_postings_kernel_sums_many_weights_as_numpy_does(tmp_path):
    """Long sums of float32 weights (a formula with many postings, idfs of every size): rounding in
    another order or precision would show in the last bits of the formula lengths."""
    from mathsearch.indexes.formula.layout import FAMILIES

    rng = np.random.default_rng(11)
    n_groups = 2_000
    vocab = rng.integers(0, 2**64 - 1, 5_000, dtype=np.uint64, endpoint=True)
    fams = {f: _random_family(rng, n_groups, vocab, 200) for f in FAMILIES}
    spill = _spill(tmp_path / "spill", *({f: v[i] for f, v in fams.items()} for i in range(3)))
    assert sum(spill.postings.values()) > 500_000
    for part in (None, 20_000):  # each family at once, and in 8 parts whose sums carry on part to part
        both = _postings_both_ways(tmp_path / f"part-{part}", spill, n_groups, part)
        for name, data in both["numpy"].items():
            assert both["kernel"][name] == data, (part, name)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.integers(1, 40))
def test_a_familys_parts_put_together_are_its_whole_order(values, part):
    """``_order_parts``: the parts, in turn, are ``group_by_hash`` of the whole family; with hashes
    that share their top bytes (many tokens, few parts) as well as any."""
    from mathsearch.indexes.formula import build

    hashes = np.array(values + [v & 0xFF000000FFFFFFFF for v in values], dtype=np.uint64)
    default_part = build.PART_POSTINGS
    build.PART_POSTINGS = part
    try:
        parts = list(build._order_parts(hashes))
    finally:
        build.PART_POSTINGS = default_part
    whole_order, whole_ordered = build.group_by_hash(hashes)
    assert len(parts) == (1 if len(hashes) <= part else 1 << min(8, ((len(hashes) - 1) // part).bit_length()))
    assert np.concatenate([o for o, _ in parts]).tolist() == whole_order.tolist()
    assert np.concatenate([h for _, h in parts]).tolist() == whole_ordered.tolist()


def test_the_postings_kernel_refuses_arrays_out_of_range():
    from mathsearch import _compiled

    kernel = _compiled.load_kernel("mathsearch.indexes.formula._postings")
    assert kernel is not None, HINT
    docs, tfs = np.array([0, 1, 1], np.int32), np.array([1, 2, 3], np.uint16)
    first, idf = np.array([0, 2], np.int64), np.array([0.5, 1.5], np.float32)

    def fill(order, docs=docs, first=first, idf=idf, n=2, places=None):
        places = len(order) if places is None else places
        post_doc, post_tf = np.empty(places, np.int32), np.empty(places, np.uint16)
        lp, li = np.zeros(n, np.float64), np.zeros(n, np.float64)
        kernel.fill_family(np.asarray(order, np.int64), docs, tfs, first, idf, post_doc, post_tf, lp, li)
        return post_doc, lp, li

    post_doc, lp, li = fill([2, 0, 1])
    assert post_doc.tolist() == [1, 0, 1] and lp.tolist() == [1.0, 5.0] and li.tolist() == [0.5, 3 * 0.5 + 2 * 1.5]
    # A part of the family: two of its three postings, one token; its sums are of those two only.
    post_doc, lp, li = fill([1, 2], first=first[:1], idf=idf[1:])
    assert post_doc.tolist() == [1, 1] and lp.tolist() == [0.0, 5.0] and li.tolist() == [0.0, 5 * 1.5]
    with pytest.raises(ValueError, match="out of range"):
        fill([2, 0, 3])  # a place past the family's postings
    with pytest.raises(ValueError, match="out of range"):
        fill([2, 0, 1], docs=np.array([0, 2, 1], np.int32))  # a formula past n
    with pytest.raises(ValueError, match="out of range"):
        fill([2, 0, 1], first=np.array([0, 4], np.int64))  # a token starting past the end
    with pytest.raises(ValueError, match="posting 0"):
        fill([2, 0, 1], first=np.array([1, 2], np.int64))
    with pytest.raises(ValueError, match="lengths"):
        fill([2, 0], places=3)  # fewer places than postings to put there
