# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The candidate loop of a formula search, compiled (setup.py builds it; there is no .py twin).

:meth:`FormulaIndex._search <mathsearch.indexes.formula.search.FormulaIndex._search>` runs this
where it was built and the pure path was not asked for, and its numpy code otherwise.  Every
sum is taken in the numpy code's order (a per-family bincount adds a formula's weights in query
tuple order; an axis-0 sum adds the family rows one after the other), so both give the same
candidates, the same pruning and scores equal to the last bit (tests/test_formula_kernel.py).
setup.py compiles it with ``-ffp-contract=off``: a fused multiply-add would round differently.
"""

import numpy as np

from libc.stdint cimport int32_t, int64_t, uint16_t

PACKED_BITS = 63  # what a packed sort key may use of an int64 (a test lowers it to reach the fallback)


def accumulate(const int32_t[::1] post_doc, const uint16_t[::1] post_tf, const int64_t[::1] lo,
               const int64_t[::1] hi, const int64_t[::1] fam, const double[::1] qtf,
               const double[::1] idf, Py_ssize_t n_fam, bint dense, keep, slot):
    """The formulae in the postings ``lo[j]:hi[j]`` (ascending, int32) and their overlap per family
    (``n_fam`` x formulae): ``min(tf, qtf[j]) * idf[j]`` added in the order of ``j``.

    ``dense``: drop formulae whose overlaps are all 0 (as the bincount over all formulae does);
    ``keep`` (uint8 per formula, or None): drop the formulae it marks 0.  ``slot``: scratch of one
    int32 per formula, all -1 (and left so), to number the formulae in place; or None, to sort
    the postings as packed keys instead (:func:`_by_packing`: the better way when the scratch would
    not stay in the CPU's cache)."""
    cdef Py_ssize_t j, total = 0, nj = lo.shape[0]
    for j in range(nj):
        total += hi[j] - lo[j]
    if slot is None:
        docs, ov = _by_packing(post_doc, post_tf, lo, hi, fam, qtf, idf, n_fam, total)
    else:
        docs, ov = _by_slots(post_doc, post_tf, lo, hi, fam, qtf, idf, n_fam, total, slot)
    if not dense and keep is None:
        return docs, ov
    return _kept(docs, ov, dense, keep)


cdef _by_slots(const int32_t[::1] post_doc, const uint16_t[::1] post_tf, const int64_t[::1] lo,
               const int64_t[::1] hi, const int64_t[::1] fam, const double[::1] qtf,
               const double[::1] idf, Py_ssize_t n_fam, Py_ssize_t total, int32_t[::1] slot):
    """Number each formula on first sight in ``slot``, sort the numbers' formulae, then add."""
    cdef Py_ssize_t j, p, i, f, m = 0, nj = lo.shape[0]
    cdef int32_t d
    cdef double t, q, x
    cand = np.empty(total, dtype=np.int32)
    cdef int32_t[::1] c = cand
    with nogil:
        for j in range(nj):
            for p in range(lo[j], hi[j]):
                d = post_doc[p]
                if slot[d] < 0:
                    slot[d] = <int32_t>m
                    c[m] = d
                    m += 1
    docs = np.sort(cand[:m])
    cdef int32_t[::1] dv = docs
    ov = np.zeros((n_fam, m), dtype=np.float64)
    cdef double[:, ::1] o = ov
    with nogil:
        for i in range(m):
            slot[dv[i]] = <int32_t>i
        for j in range(nj):
            f, q, x = fam[j], qtf[j], idf[j]
            for p in range(lo[j], hi[j]):
                t = <double>post_tf[p]
                o[f, slot[post_doc[p]]] += (t if t < q else q) * x
        for i in range(m):
            slot[dv[i]] = -1
    return docs, ov


cdef _by_packing(const int32_t[::1] post_doc, const uint16_t[::1] post_tf, const int64_t[::1] lo,
                 const int64_t[::1] hi, const int64_t[::1] fam, const double[::1] qtf,
                 const double[::1] idf, Py_ssize_t n_fam, Py_ssize_t total):
    """Sort the postings by (formula, tuple), each posting's (formula, tuple, tf) packed in one
    int64, then add each formula's weights in that order: the sums of :func:`_by_slots`, with the
    sorted keys alone giving every weight (a sort of keys and places, reading each weight back by
    its place, was 1.2-1.3x slower a call at 1.4M answers: a cache miss a posting).  A formula
    holds one posting per tuple, so (formula, tuple) orders the weights as the query's tuple order
    does.  Where the three do not fit in ``PACKED_BITS`` bits, a scratch of one int32 per formula
    and :func:`_by_slots` instead."""
    cdef Py_ssize_t j, p, r, m = 0, at = 0, nj = lo.shape[0]
    cdef int64_t top = 0, k, d, last = -1
    cdef double t, q
    for j in range(nj):
        if hi[j] > lo[j] and post_doc[hi[j] - 1] > top:  # blocks ascend: the last is the largest
            top = post_doc[hi[j] - 1]
    cdef int jbits = max(int(nj - 1).bit_length(), 1)
    if int(top).bit_length() + jbits + 16 > PACKED_BITS:
        return _by_slots(post_doc, post_tf, lo, hi, fam, qtf, idf, n_fam, total,
                         np.full(top + 1, -1, dtype=np.int32))
    cdef int shift = 16 + jbits
    cdef int64_t jmask = (<int64_t>1 << jbits) - 1
    key = np.empty(total, dtype=np.int64)
    cdef int64_t[::1] kv = key
    with nogil:
        for j in range(nj):
            for p in range(lo[j], hi[j]):
                kv[at] = ((((<int64_t>post_doc[p]) << jbits) | j) << 16) | post_tf[p]
                at += 1
    key.sort()  # numpy lets go of the GIL while it sorts
    with nogil:
        for r in range(total):
            d = kv[r] >> shift
            if d != last:
                m += 1
                last = d
    docs = np.empty(m, dtype=np.int32)
    ov = np.zeros((n_fam, m), dtype=np.float64)
    cdef int32_t[::1] dv = docs
    cdef double[:, ::1] o = ov
    cdef Py_ssize_t i = -1
    last = -1
    with nogil:
        for r in range(total):
            k = kv[r]
            d = k >> shift
            if d != last:
                i += 1
                dv[i] = <int32_t>d
                last = d
            j = (k >> 16) & jmask
            t = <double>(k & 0xFFFF)
            q = qtf[j]
            o[fam[j], i] += (t if t < q else q) * idf[j]
    return docs, ov


cdef _kept(docs, ov, bint dense, keep):
    """``docs`` and ``ov`` without the formulae whose overlaps are all 0 (``dense``) or that ``keep``
    marks 0."""
    cdef int32_t[::1] dv = docs
    cdef double[:, ::1] o = ov
    cdef const unsigned char[::1] kept
    cdef Py_ssize_t i, f, w = 0, m = dv.shape[0], n_fam = o.shape[0]
    cdef bint ok, has_keep = keep is not None
    if has_keep:
        kept = keep
    with nogil:
        for i in range(m):
            ok = True
            if dense:
                ok = False
                for f in range(n_fam):
                    if o[f, i] > 0:
                        ok = True
                        break
            if ok and has_keep:
                ok = kept[dv[i]] != 0
            if ok:
                dv[w] = dv[i]
                for f in range(n_fam):
                    o[f, w] = o[f, i]
                w += 1
    return docs[:w].copy(), np.ascontiguousarray(ov[:, :w])


cdef class Candidates:
    """The candidates of a search while the frequent tuples are read: formulae (ascending), their
    overlaps per family, and, once :meth:`bound` was called, what pruning needs of each, all
    compacted in place as candidates drop out."""

    cdef object _docs, _ov, _ratio, _cap, _factor, _bonus
    cdef int32_t[::1] docs
    cdef double[:, ::1] ov
    cdef double[:, ::1] ratio
    cdef double[:, ::1] cap
    cdef double[::1] factor
    cdef double[::1] bonus
    cdef int64_t[::1] fams
    cdef readonly Py_ssize_t m
    cdef bint bounded

    def __init__(self, docs, ov):
        self._docs = np.ascontiguousarray(docs, dtype=np.int32)
        self._ov = np.ascontiguousarray(ov, dtype=np.float64)
        self.docs = self._docs
        self.ov = self._ov
        self.m = self._docs.shape[0]
        self.bounded = False

    def result(self):
        """``(formulae, overlaps)`` of the candidates left."""
        return self._docs[:self.m], self._ov[:, :self.m]

    def lookup_add(self, const int32_t[::1] post_doc, const uint16_t[::1] post_tf, int64_t lo, int64_t hi,
                   Py_ssize_t f, double q, double x):
        """Add ``min(tf, q) * x`` to family ``f`` of each candidate in the posting block ``lo:hi``
        (a galloping intersection of two ascending lists)."""
        with nogil:
            self._lookup_add(&post_doc[0], &post_tf[0], lo, hi, f, q, x)

    cdef void _lookup_add(self, const int32_t* post_doc, const uint16_t* post_tf, int64_t lo, int64_t hi,
                          Py_ssize_t f, double q, double x) noexcept nogil:
        cdef Py_ssize_t i, step, a, b, mid, pos = lo, near
        cdef int32_t d
        cdef double t
        for i in range(self.m):
            if pos >= hi:
                break
            d = self.docs[i]
            near = pos + 8 if pos + 8 < hi else hi
            while pos < near and post_doc[pos] < d:  # a few steps on (blocks a few times longer than the candidates)
                pos += 1
            if pos >= hi:
                break
            if post_doc[pos] < d:  # still short: gallop to a block entry >= d, then binary search
                step = 1
                a = pos
                b = pos + 1
                while b < hi and post_doc[b] < d:
                    a = b
                    step *= 2
                    b = pos + step
                if b > hi:
                    b = hi
                while a + 1 < b:  # post_doc[a] < d, and b == hi or post_doc[b] >= d
                    mid = (a + b) // 2
                    if post_doc[mid] < d:
                        a = mid
                    else:
                        b = mid
                pos = b
                if pos >= hi:
                    break
            if post_doc[pos] == d:
                t = <double>post_tf[pos]
                self.ov[f, i] += (t if t < q else q) * x
                pos += 1

    def read_frequent(self, const int32_t[::1] post_doc, const uint16_t[::1] post_tf, const int64_t[::1] lo,
                      const int64_t[::1] hi, const int64_t[::1] fam, const double[::1] qtf, const double[::1] idf,
                      const unsigned char[::1] due, const double[:, ::1] rest, Py_ssize_t k):
        """The frequent tuples ``j`` in order, in one call without the GIL: where ``due[j]`` and more
        than ``k`` candidates are left, :meth:`prune` with ``rest[j]`` (what the unread tuples may
        still add, per family, before ``j`` is read), then :meth:`lookup_add` of ``j``.  The caller
        works out ``due`` and ``rest`` as its own loop did; once ``k`` or fewer are left no later
        pruning can happen (candidates only drop), as there.  ``due`` empty: no pruning (``rest``
        unread).  A Python loop of one call a tuple took the GIL back ~37 times a query, waiting on
        the other half's and the text boost's threads."""
        cdef Py_ssize_t j, nj = lo.shape[0], n_due = due.shape[0]
        if n_due and n_due != nj:
            raise ValueError("due: one flag per frequent tuple, or none")
        if n_due and (rest.shape[0] != nj or rest.shape[1] < self.ov.shape[0]):
            raise ValueError("rest: one row per frequent tuple, one column per family")
        if not self.bounded and self.m > k:
            for j in range(n_due):
                if due[j]:
                    raise RuntimeError("Candidates.read_frequent prunes before Candidates.bound")
        low = np.empty(max(self.m, 1))
        cdef double[::1] lv = low
        with nogil:
            for j in range(nj):
                if n_due and due[j] and self.m > k:
                    self._prune(&rest[j, 0], k, &lv[0])
                self._lookup_add(&post_doc[0], &post_tf[0], lo[j], hi[j], fam[j], qtf[j], idf[j])

    def bound(self, const float[:, ::1] lens, fams, const double[::1] q_len, const double[::1] weight,
              factor, bonus):
        """What pruning needs: per scoring family ``fams[r]`` (query length ``q_len[r]``, weight
        ``weight[r]``) and candidate, the Dice ratio and the cap on its overlap; per candidate, the
        size factor and the exact-match bonus (computed by the caller)."""
        cdef Py_ssize_t r, i, nf = len(fams)
        cdef double length, s
        self.fams = np.ascontiguousarray(fams, dtype=np.int64)
        self._ratio = np.empty((nf, self.m))
        self._cap = np.empty((nf, self.m))
        self.ratio = self._ratio
        self.cap = self._cap
        with nogil:
            for r in range(nf):
                for i in range(self.m):
                    length = <double>lens[self.fams[r], self.docs[i]]
                    s = q_len[r] + length
                    self.ratio[r, i] = (2.0 * weight[r]) / (s if s > 1e-9 else 1e-9)
                    self.cap[r, i] = (length if length < q_len[r] else q_len[r]) * (1 + 1e-6) + 1e-9
        self._factor = np.array(factor, dtype=np.float64)
        self._bonus = np.array(bonus, dtype=np.float64)
        self.factor = self._factor
        self.bonus = self._bonus
        self.bounded = True

    def prune(self, const double[::1] rest, Py_ssize_t k):
        """Drop the candidates whose best possible score (every unread tuple matched in full, each
        overlap capped) is below the ``k``-th best score so far; returns how many are left."""
        if not self.bounded:
            raise RuntimeError("Candidates.prune before Candidates.bound")
        if self.m <= k:  # nothing can drop (np.partition would be asked for a place before the first)
            return self.m
        low = np.empty(self.m)
        cdef double[::1] lv = low
        with nogil:
            self._prune(&rest[0], k, &lv[0])
        return self.m

    cdef void _prune(self, const double* rest, Py_ssize_t k, double* low) noexcept nogil:
        """:meth:`prune` with ``low`` as scratch of at least ``m`` doubles (``m > k``)."""
        cdef Py_ssize_t r, i, f, w, nf = self.fams.shape[0], n_fam = self.ov.shape[0]
        cdef double s, h, floor
        for i in range(self.m):
            s = self.ov[self.fams[0], i] * self.ratio[0, i]
            for r in range(1, nf):
                s = s + self.ov[self.fams[r], i] * self.ratio[r, i]
            low[i] = s * self.factor[i] + self.bonus[i]
        floor = _select(low, self.m, self.m - k)
        w = 0
        for i in range(self.m):
            s = 0.0
            for r in range(nf):
                h = self.ov[self.fams[r], i] + rest[self.fams[r]] * (1 + 1e-9) + 1e-12
                if not h < self.cap[r, i]:
                    h = self.cap[r, i]
                if r == 0:
                    s = h * self.ratio[r, i]
                else:
                    s = s + h * self.ratio[r, i]
            if s * self.factor[i] * (1 + 1e-9) + self.bonus[i] >= floor:
                self.docs[w] = self.docs[i]
                for f in range(n_fam):
                    self.ov[f, w] = self.ov[f, i]
                for r in range(nf):
                    self.ratio[r, w] = self.ratio[r, i]
                    self.cap[r, w] = self.cap[r, i]
                self.factor[w] = self.factor[i]
                self.bonus[w] = self.bonus[i]
                w += 1
        self.m = w


cdef double _select(double* a, Py_ssize_t n, Py_ssize_t kth) noexcept nogil:
    """The value at place ``kth`` of ``a[:n]`` sorted ascending, as ``np.partition(a, kth)[kth]``
    (one value, whichever way it is found); ``a`` is reordered.  Quickselect, median-of-three pivot."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, j, mid
    cdef double pivot, t
    while hi > lo:
        mid = lo + (hi - lo) // 2
        if a[mid] < a[lo]:
            t = a[mid]; a[mid] = a[lo]; a[lo] = t
        if a[hi] < a[lo]:
            t = a[hi]; a[hi] = a[lo]; a[lo] = t
        if a[hi] < a[mid]:
            t = a[hi]; a[hi] = a[mid]; a[mid] = t
        pivot = a[mid]
        i = lo
        j = hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while pivot < a[j]:
                j -= 1
            if i <= j:
                t = a[i]; a[i] = a[j]; a[j] = t
                i += 1
                j -= 1
        if kth <= j:
            hi = j
        elif kth >= i:
            lo = i
        else:
            return a[kth]
    return a[kth]


def select(double[::1] a, Py_ssize_t kth):
    """:func:`_select` on a copy of ``a`` (for the tests against ``np.partition``)."""
    b = np.array(a, dtype=np.float64)
    cdef double[::1] bv = b
    if not 0 <= kth < bv.shape[0]:
        raise IndexError(kth)
    return _select(&bv[0], bv.shape[0], kth)


def combine(const int32_t[::1] docs, const double[:, :] ov, const float[:, ::1] lens, const int64_t[::1] fams,
            const double[::1] q_len, const double[::1] w2):
    """The weighted Dice part of a candidate's score, as ``FormulaIndex._combine``'s numpy code sums
    it: per scoring family ``fams[r]`` in order, ``w2[r] * ov / max(q_len[r] + length, 1e-9)``
    added to 0.0, the denominator in float32 (numpy adds a Python float to the float32 lengths in
    float32) and the quotient in float64."""
    cdef Py_ssize_t r, i, f, m = docs.shape[0], nf = fams.shape[0]
    cdef float d, ql, tiny = <float>1e-9
    cdef double w
    scores = np.zeros(m, dtype=np.float64)
    cdef double[::1] s = scores
    with nogil:
        for r in range(nf):
            f, ql, w = fams[r], <float>q_len[r], w2[r]
            for i in range(m):
                d = ql + lens[f, docs[i]]
                if d < tiny:  # np.maximum (a NaN would stay NaN, as there)
                    d = tiny
                s[i] = s[i] + (w * ov[f, i]) / <double>d
    return scores
