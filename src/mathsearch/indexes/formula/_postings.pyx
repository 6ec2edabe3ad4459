# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The formula build's postings, one part of a family at a time, compiled (setup.py builds it;
there is no .py twin).

:func:`_write_postings <mathsearch.indexes.formula.build._write_postings>` runs this where it was
built and the pure path was not asked for; its reference is the numpy code there.  Once a family's
postings are ordered by token (``group_by_hash``), that code gathers the postings' formulae and tfs
in that order, numbers each posting's token by a cumulative sum, and adds the formula lengths by
two weighted bincounts: six passes over hundreds of millions of postings at full size, with a
temporary array for each.  Here two loops do it (the gather, then the sums token by token), writing
straight into the index's arrays.  A large family is ordered a part at a time (consecutive ranges
of its tokens); each call adds that part's postings to sums the caller keeps.
The sums are taken as the bincounts take them (in double, in posting order, each idf weight the
float32 product ``tf * idf`` as numpy's promotion makes it); the caller rounds them to float32 as
numpy's assignment does, so the arrays are byte-identical (tests/test_compiled.py builds the
sample's index both ways; tests/test_formula_postings.py compares family by family).  setup.py
compiles it with ``-ffp-contract=off``.
"""

from libc.stdint cimport int32_t, int64_t, uint16_t


def fill_family(const int64_t[::1] order, const int32_t[::1] docs, const uint16_t[::1] tfs,
                const int64_t[::1] first, const float[::1] idf, int32_t[::1] post_doc, uint16_t[::1] post_tf,
                double[::1] plain, double[::1] wsum):
    """One part of a family (all of it, or a range of its tokens): ``post_doc[i], post_tf[i] =
    docs[order[i]], tfs[order[i]]`` (``order``: places among the family's postings); add to
    ``plain`` and ``wsum`` (one double per formula) each formula's tfs and ``tf * idf`` of their
    token (the token of posting ``i`` is the last ``t`` with ``first[t] <= i``)."""
    cdef Py_ssize_t m = order.shape[0], n_all = docs.shape[0], n = plain.shape[0], n_tok = first.shape[0]
    cdef Py_ssize_t i, t, end
    cdef int64_t p
    cdef int32_t d
    cdef uint16_t tf
    cdef float w = 0
    cdef bint bad = False
    if (tfs.shape[0] != n_all or post_doc.shape[0] != m or post_tf.shape[0] != m or m > n_all
            or wsum.shape[0] != n or idf.shape[0] != n_tok):
        raise ValueError("fill_family: the arrays' lengths do not agree")
    if m and (n_tok == 0 or first[0] != 0):
        raise ValueError("fill_family: the first token must start at posting 0")
    with nogil:
        # Two loops: the gather alone keeps many cache misses in flight; a token's change is a
        # branch the CPU mispredicts, and inside the gather each one threw the misses away.
        for i in range(m):
            p = order[i]
            if p < 0 or p >= n_all:
                bad = True
                break
            post_doc[i] = docs[p]
            post_tf[i] = tfs[p]
        if not bad:
            for t in range(n_tok):
                w = idf[t]
                end = first[t + 1] if t + 1 < n_tok else m
                if first[t] < 0 or end < first[t] or end > m:
                    bad = True
                    break
                for i in range(first[t], end):
                    d = post_doc[i]
                    if d < 0 or d >= n:
                        bad = True
                        break
                    tf = post_tf[i]
                    plain[d] += <double>tf
                    wsum[d] += <double>(<float>tf * w)
                if bad:
                    break
    if bad:
        raise ValueError("fill_family: a posting's place, token start or formula is out of range")
