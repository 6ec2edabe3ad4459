# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The formula build's token bags, compiled (setup.py builds it; there is no .py twin).

:func:`_analyze <mathsearch.indexes.formula.build._analyze>` runs this where it was built and
the pure path was not asked for; its reference is the Python code it replaces there: the
analyzer's tuples joined as strings (:func:`~mathsearch.formula.representations.slt_tuples`,
:func:`~mathsearch.formula.representations.opt_tuples`,
:func:`~mathsearch.formula.representations.leaf_paths`), their bags
(:func:`~mathsearch.indexes.formula.tokens.family_tokens`) and their hashes
(:meth:`~mathsearch.indexes.formula.tokens.TokenHasher.many`).

Why: in the compiled build three quarters of the analysis ran inside Python's C API, most of it
making, counting and looking up token strings that repeat across formulae.  Here a tuple is a
64-bit key of interned ids (labels, edge paths, ancestor chains) looked up in a C hash table; a
token's string is built, and hashed with the reference's own function, only the first time it is
seen.  The walks visit the trees in the reference's order, so every bag lists its tokens in the
same first-occurrence order with the same counts, and the arrays are byte-identical
(tests/test_compiled.py builds the sample's index both ways; tests/test_formula_tokens_kernel.py
compares formula by formula).  A formula the keys cannot hold exactly (a label with a tab, an
edge name longer than one character, ancestors past the leaf paths' limit) takes the string path
for that family, through the same table.
"""

import numpy as np

from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

from ...formula.opt cimport ONode
from ...formula.slt cimport SNode

from ...formula.representations import leaf_paths, opt_tuples, slt_tuples, visual_string
from .tokens import _VAR, _hash

# Keys: two ids of 26 bits and a path code of 12 (tuples), or a label id and a chain id (leaf
# paths); at most 32 one-letter SLT edge names; the leaf paths' limit on ancestors (leaf_paths'
# default, which family_tokens uses); the flags of a label.
cdef enum:
    ID_BITS = 26
    PATH_BITS = 12
    CHAIN_BITS = 38
    MAX_EDGES = 32
    MAX_PATH = 32
    TAB = 1
    SLASH = 2
# Past this many ids in all (Bags.size) every table starts again, at a formula's boundary: the ids
# are a cache of the hashes, which do not depend on them.  ~90 bytes an id at most (the hash
# tables at half load, the per-token arrays, the labels' strings): a worker's memory stays bounded
# at full size, about as the analyzer's string cache of 2M tokens did.
CAPACITY = 4_000_000


cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    x ^= x >> 33
    x *= 0xff51afd7ed558ccdULL
    x ^= x >> 33
    x *= 0xc4ceb9fe1a85ec53ULL
    x ^= x >> 33
    return x


cdef class _Map:
    """uint64 key -> int64 value, open addressing, linear probing; -1: absent."""
    cdef uint64_t* keys
    cdef int64_t* vals
    cdef Py_ssize_t cap, n

    def __cinit__(self):
        self.keys = NULL
        self.vals = NULL
        self._alloc(1 << 12)

    def __dealloc__(self):
        free(self.keys)
        free(self.vals)

    cdef int _alloc(self, Py_ssize_t cap) except -1:
        self.keys = <uint64_t*> malloc(cap * sizeof(uint64_t))
        self.vals = <int64_t*> malloc(cap * sizeof(int64_t))
        if self.keys == NULL or self.vals == NULL:
            raise MemoryError()
        memset(self.vals, 0xFF, cap * sizeof(int64_t))
        self.cap = cap
        self.n = 0
        return 0

    cdef void clear(self) noexcept:
        memset(self.vals, 0xFF, self.cap * sizeof(int64_t))
        self.n = 0

    cdef inline int64_t get(self, uint64_t key) noexcept:
        cdef Py_ssize_t mask = self.cap - 1
        cdef Py_ssize_t i = <Py_ssize_t> (_mix(key) & mask)
        while self.vals[i] >= 0:
            if self.keys[i] == key:
                return self.vals[i]
            i = (i + 1) & mask
        return -1

    cdef int put(self, uint64_t key, int64_t val) except -1:
        cdef uint64_t* old_keys
        cdef int64_t* old_vals
        cdef Py_ssize_t old_cap, j, i, mask
        if 2 * (self.n + 1) > self.cap:
            old_keys, old_vals, old_cap = self.keys, self.vals, self.cap
            self._alloc(2 * old_cap)
            for j in range(old_cap):
                if old_vals[j] >= 0:
                    self._insert(old_keys[j], old_vals[j])
            free(old_keys)
            free(old_vals)
        self._insert(key, val)
        return 0

    cdef inline void _insert(self, uint64_t key, int64_t val) noexcept:
        cdef Py_ssize_t mask = self.cap - 1
        cdef Py_ssize_t i = <Py_ssize_t> (_mix(key) & mask)
        while self.vals[i] >= 0:
            i = (i + 1) & mask
        self.keys[i] = key
        self.vals[i] = val
        self.n += 1


cdef class _Buf:
    """A growable C array of int64."""
    cdef int64_t* data
    cdef Py_ssize_t n, cap

    def __cinit__(self):
        self.cap = 256
        self.n = 0
        self.data = <int64_t*> malloc(self.cap * sizeof(int64_t))
        if self.data == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.data)

    cdef inline int push(self, int64_t v) except -1:
        cdef int64_t* grown
        if self.n == self.cap:
            grown = <int64_t*> realloc(self.data, 2 * self.cap * sizeof(int64_t))
            if grown == NULL:
                raise MemoryError()
            self.data = grown
            self.cap *= 2
        self.data[self.n] = v
        self.n += 1
        return 0

    cdef int reserve(self, Py_ssize_t size) except -1:
        cdef int64_t* grown
        if size > self.cap:
            grown = <int64_t*> realloc(self.data, size * sizeof(int64_t))
            if grown == NULL:
                raise MemoryError()
            self.data = grown
            self.cap = size
        return 0

    cdef object array(self, dtype):
        out = np.empty(self.n, dtype=np.int64)
        cdef int64_t[::1] view = out
        cdef Py_ssize_t i
        for i in range(self.n):
            view[i] = self.data[i]
        return out.astype(dtype) if dtype is not np.int64 else out


cdef class _Family:
    """One token family: its tokens' ids (by key, or by string on the string path) and hashes,
    and the chunk's output (per formula: tokens counted, their hashes and counts)."""
    cdef str name
    cdef _Map by_key
    cdef dict by_string
    cdef _Buf hashes, stamp, pos          # per token id
    cdef _Buf idx, tf                     # the formula being counted
    cdef int64_t cur
    cdef _Buf c_lens, c_tf, c_hash        # the chunk's arrays (hashes: uint64 bits in int64)

    def __cinit__(self, str name):
        self.name = name
        self.by_key = _Map()
        self.by_string = {}
        self.hashes, self.stamp, self.pos = _Buf(), _Buf(), _Buf()
        self.idx, self.tf = _Buf(), _Buf()
        self.cur = 0
        self.c_lens, self.c_tf, self.c_hash = _Buf(), _Buf(), _Buf()

    cdef Py_ssize_t size(self) noexcept:
        return self.hashes.n

    cdef void reset(self) noexcept:
        self.by_key.clear()
        self.by_string.clear()
        self.hashes.n = self.stamp.n = self.pos.n = 0

    cdef int64_t new(self, str token) except -1:
        cdef uint64_t h = hash_token(self.name + token)
        self.hashes.push(<int64_t> h)
        self.stamp.push(-1)
        self.pos.push(0)
        return self.hashes.n - 1

    cdef inline int count(self, int64_t t) except -1:
        if self.stamp.data[t] == self.cur:
            self.tf.data[self.pos.data[t]] += 1
        else:
            self.stamp.data[t] = self.cur
            self.pos.data[t] = self.idx.n
            self.idx.push(t)
            self.tf.push(1)
        return 0

    cdef int count_string(self, str token) except -1:
        t = self.by_string.get(token)
        if t is None:
            t = self.by_string[token] = self.new(token)
        return self.count(<int64_t> t)

    cdef int finish(self) except -1:
        """The formula counted: its bag to the chunk's arrays."""
        cdef Py_ssize_t k
        cdef _Buf c_hash = self.c_hash
        self.c_lens.push(self.idx.n)
        for k in range(self.idx.n):
            c_hash.push(self.hashes.data[self.idx.data[k]])
            self.c_tf.push(min(self.tf.data[k], 65535))
        self.idx.n = self.tf.n = 0
        self.cur += 1
        return 0

    cdef tuple take(self):
        """The chunk's (lengths int32, hashes uint64, tfs uint16), emptied for the next chunk."""
        out = (self.c_lens.array(np.int32), self.c_hash.array(np.int64).view(np.uint64),
               self.c_tf.array(np.uint16))
        self.c_lens.n = self.c_tf.n = self.c_hash.n = 0
        return out


cdef class Bags:
    """The token bags of the formulae of a chunk, family by family (``FAMILIES``: s, o, u, p),
    as :func:`_analyze <mathsearch.indexes.formula.build._analyze>` writes them."""
    cdef _Family s, o, u, p
    cdef dict label_id, edge_id
    cdef list labels, edges
    cdef _Buf unified, comm, flags        # per label id (flags: TAB, SLASH)
    cdef _Map chain_of
    cdef _Buf chain_label, chain_parent   # per chain id (0: no ancestors)
    cdef _Buf keys, tmp_label, tmp_chain  # one formula's keys, in the reference's order
    cdef list stack
    cdef _Buf depth_stack
    cdef int64_t empty_label

    def __cinit__(self):
        self.s, self.o, self.u, self.p = _Family("s"), _Family("o"), _Family("u"), _Family("p")
        self.label_id, self.edge_id = {}, {}
        self.labels, self.edges = [], []
        self.unified, self.comm, self.flags = _Buf(), _Buf(), _Buf()
        self.chain_of = _Map()
        self.chain_label, self.chain_parent = _Buf(), _Buf()
        self.keys, self.tmp_label, self.tmp_chain = _Buf(), _Buf(), _Buf()
        self.stack = []
        self.depth_stack = _Buf()
        self._reset()

    cdef void _reset(self) except *:
        self.s.reset()
        self.o.reset()
        self.u.reset()
        self.p.reset()
        self.label_id.clear()
        self.labels.clear()
        self.unified.n = self.comm.n = self.flags.n = 0
        self.chain_of.clear()
        self.chain_label.n = self.chain_parent.n = 0
        self.chain_label.push(-1)  # chain 0: none
        self.chain_parent.push(-1)
        self.empty_label = self._label("")

    cdef int64_t _label(self, str lab) except -1:
        cdef int64_t i, u_id
        got = self.label_id.get(lab)
        if got is not None:
            return <int64_t> got
        i = len(self.labels)
        self.label_id[lab] = i
        self.labels.append(lab)
        self.comm.push(1 if lab.startswith("U!") else 0)
        self.flags.push((TAB if "\t" in lab else 0) | (SLASH if "/" in lab else 0))
        self.unified.push(i)  # its own id until the unified label is known (below)
        if "V!" in lab:
            u = _VAR.sub("V!", lab)
            if u != lab:
                u_id = self._label(u)  # (it may grow the buffers: read their data after it)
                self.unified.data[i] = u_id
        return i

    cdef int64_t _edge(self, str e) except -2:
        got = self.edge_id.get(e)
        if got is not None:
            return <int64_t> got
        if len(e) != 1 or len(self.edges) >= MAX_EDGES:
            return -1
        self.edge_id[e] = len(self.edges)
        self.edges.append(e)
        return len(self.edges) - 1

    def add(self, SNode slt, ONode opt):
        """Count one formula's tokens (its SLT and OPT, as parsed); returns its SLT's node count
        (blank placeholders excluded, as :func:`~mathsearch.formula.slt.node_count`)."""
        if self.size() > CAPACITY:
            self._reset()
        n_nodes = self._slt(slt)
        self._opt(opt)
        self._leaf_paths(opt)
        self.s.finish()
        self.o.finish()
        self.u.finish()
        self.p.finish()
        return n_nodes

    cpdef Py_ssize_t size(self):
        """Ids held, over every table (tokens of each family, labels, ancestor chains)."""
        return (self.s.size() + self.o.size() + self.u.size() + self.p.size() + len(self.labels)
                + self.chain_label.n)

    def take(self):
        """The chunk's ``[(lengths, hashes, tfs)]`` per family, in ``FAMILIES`` order."""
        return [self.s.take(), self.o.take(), self.u.take(), self.p.take()]

    # -- the SLT's tuples (family s) and the same with variables unified (family u) --------------
    cdef inline int _key(self, int64_t a, int64_t b, int64_t path) except -1:
        self.keys.push(<int64_t> ((<uint64_t> a << (ID_BITS + PATH_BITS)) | (<uint64_t> b << PATH_BITS)
                                  | <uint64_t> path))
        return 0

    cdef int _slt(self, SNode root) except -1:
        """_slt_pairs2's walk (representations.py), keys instead of tuples."""
        cdef list stack = self.stack
        cdef SNode node, nxt, n2, child, after
        cdef int64_t lab, e, n_edge
        cdef Py_ssize_t count = 0, k
        cdef bint bad = False
        cdef tuple pair
        self.keys.n = 0
        n_edge = self._edge("n")
        stack.append(root)
        while stack:
            node = <SNode> stack.pop()
            if node.kind != "W":
                count += 1
            lab = self._label(node.label)
            nxt = node.next
            if nxt is not None:
                stack.append(nxt)
                self._key(lab, self._label(nxt.label), 1 + n_edge)
                n2 = nxt.next
                if n2 is not None:
                    self._key(lab, self._label(n2.label), 1 + MAX_EDGES + n_edge * MAX_EDGES + n_edge)
                if nxt.edges:
                    bad |= self._below(lab, nxt, n_edge)
            if node.edges:
                for pair in node.edges:
                    e = self._edge(<str> pair[0])
                    bad |= e < 0
                    child = <SNode> pair[1]
                    stack.append(child)
                    self._key(lab, self._label(child.label), 1 + e)
                    after = child.next
                    if after is not None:
                        self._key(lab, self._label(after.label), 1 + MAX_EDGES + e * MAX_EDGES + n_edge)
                    if child.edges:
                        bad |= self._below(lab, child, e)
        if self.keys.n == 0:
            self._key(self._label(root.label), self.empty_label, 0)
        if not bad:  # (a bad edge's keys hold no ids to read)
            for k in range(self.keys.n):
                bad |= self._tabbed(<uint64_t> self.keys.data[k])
        if bad:  # the string path: the reference's own tokens
            for t in slt_tuples(root, 2):
                token = "\t".join(t)
                self.s.count_string(token)
                self.u.count_string(_VAR.sub("V!", token) if "V!" in token else token)
            return count
        self._count_tuples(self.s, False, False)
        self._count_tuples(self.u, True, False)
        return count

    cdef bint _below(self, int64_t lab, SNode via, int64_t first) except -1:
        """The keys from ``lab`` to the children of ``via`` (reached by edge ``first``): the walk's
        second step down; True where an edge name cannot be a key's."""
        cdef bint bad = False
        cdef int64_t e2
        cdef tuple pair
        for pair in via.edges:
            e2 = self._edge(<str> pair[0])
            bad |= e2 < 0
            self._key(lab, self._label((<SNode> pair[1]).label), 1 + MAX_EDGES + first * MAX_EDGES + e2)
        return bad

    cdef bint _tabbed(self, uint64_t key) noexcept:
        cdef uint64_t mask = (1ULL << ID_BITS) - 1
        return ((self.flags.data[(key >> (ID_BITS + PATH_BITS)) & mask] | self.flags.data[(key >> PATH_BITS) & mask])
                & TAB) != 0

    cdef int _count_tuples(self, _Family fam, bint unify, bint opt) except -1:
        cdef uint64_t key, a, b, path
        cdef uint64_t mask = (1ULL << ID_BITS) - 1
        cdef int64_t t
        cdef Py_ssize_t k
        for k in range(self.keys.n):
            key = <uint64_t> self.keys.data[k]
            if unify:
                a = <uint64_t> self.unified.data[(key >> (ID_BITS + PATH_BITS)) & mask]
                b = <uint64_t> self.unified.data[(key >> PATH_BITS) & mask]
                key = (a << (ID_BITS + PATH_BITS)) | (b << PATH_BITS) | (key & ((1ULL << PATH_BITS) - 1))
            t = fam.by_key.get(key)
            if t < 0:
                t = fam.new(self._tuple_string(key, opt))
                fam.by_key.put(key, t)
            fam.count(t)
        return 0

    cdef str _tuple_string(self, uint64_t key, bint opt):
        cdef uint64_t mask = (1ULL << ID_BITS) - 1
        cdef int64_t path = <int64_t> (key & ((1ULL << PATH_BITS) - 1))
        a = <str> self.labels[(key >> (ID_BITS + PATH_BITS)) & mask]
        b = <str> self.labels[(key >> PATH_BITS) & mask]
        return a + "\t" + b + "\t" + (self._opt_path(path) if opt else self._slt_path(path))

    cdef str _slt_path(self, int64_t path):
        if path == 0:
            return ""
        if path <= MAX_EDGES:
            return <str> self.edges[path - 1]
        path -= 1 + MAX_EDGES
        return <str> self.edges[path // MAX_EDGES] + <str> self.edges[path % MAX_EDGES]

    # -- the OPT's tuples (family o) ------------------------------------------------------------
    cdef str _opt_path(self, int64_t path):
        if path == 0:
            return ""
        if path <= 11:
            return _OPT_STEP[path - 1]
        path -= 12
        return _OPT_STEP[path // 11] + _OPT_STEP[path % 11]

    cdef int _opt(self, ONode root) except -1:
        """opt_tuples' walk for a window of 2 (representations.py), keys instead of tuples."""
        cdef list stack = self.stack
        cdef list children, grand
        cdef ONode node, child, c2
        cdef int64_t lab, code, code2
        cdef Py_ssize_t i, j, k, n_mid
        cdef bint bad = False
        cdef list mid = []
        cdef _Buf mid_code = self.tmp_chain
        self.keys.n = 0
        stack.append(root)
        while stack:
            node = <ONode> stack.pop()
            children = node.children
            if not children:
                continue
            stack.extend(children)
            lab = self._label(node.label)
            # step 1: the children, then step 2: the grandchildren through each child that has any
            del mid[:]
            mid_code.n = 0
            for i in range(len(children)):
                child = <ONode> children[i]
                code = _step(self.comm.data[lab], i)
                self._key(lab, self._label(child.label), 1 + code)
                if child.children:
                    mid.append(child)
                    mid_code.push(code)
            n_mid = len(mid)
            for k in range(n_mid):
                child = <ONode> mid[k]
                code = mid_code.data[k]
                grand = child.children
                for j in range(len(grand)):
                    c2 = <ONode> grand[j]
                    code2 = _step(self.comm.data[self._label(child.label)], j)
                    self._key(lab, self._label(c2.label), 12 + code * 11 + code2)
        if self.keys.n == 0:
            self._key(self._label(root.label), self.empty_label, 0)
        for k in range(self.keys.n):
            bad |= self._tabbed(<uint64_t> self.keys.data[k])
        if bad:
            for t in opt_tuples(root, 2):
                self.o.count_string("\t".join(t))
            return 0
        self._count_tuples(self.o, False, True)
        return 0

    # -- leaf-to-root paths (family p) ----------------------------------------------------------
    cdef int _leaf_paths(self, ONode root) except -1:
        """leaf_paths' walk (representations.py): each leaf with its chain of ancestors, the
        chain interned as (label, the chain above it); counted in the reference's (reversed) order."""
        cdef list stack = self.stack
        cdef _Buf chains = self.depth_stack, lens = self.tmp_label
        cdef ONode node, child
        cdef list children
        cdef int64_t chain, here, n, lab
        cdef uint64_t ckey
        cdef Py_ssize_t k, i
        cdef _Family fam = self.p
        self.keys.n = 0
        chains.n = lens.n = 0
        stack.append(root)
        chains.push(0)
        lens.push(0)
        while stack:
            node = <ONode> stack.pop()
            chains.n -= 1
            lens.n -= 1
            chain = chains.data[chains.n]
            n = lens.data[lens.n]
            lab = self._label(node.label)
            children = node.children
            # a label with "/" could make two paths one string; past the limit the reference drops
            # an inner node's farthest ancestor
            if self.flags.data[lab] & SLASH or (children and n >= MAX_PATH):
                del stack[:]
                return self._leaf_paths_strings(root)
            if not children:
                self.keys.push(<int64_t> ((<uint64_t> lab << CHAIN_BITS) | <uint64_t> chain))
                continue
            ckey = (<uint64_t> lab << CHAIN_BITS) | <uint64_t> chain
            here = self.chain_of.get(ckey)
            if here < 0:
                here = self.chain_label.n
                self.chain_label.push(lab)
                self.chain_parent.push(chain)
                self.chain_of.put(ckey, here)
            for i in range(len(children)):
                child = <ONode> children[i]
                stack.append(child)
                chains.push(here)
                lens.push(n + 1)
        for k in range(self.keys.n - 1, -1, -1):
            ckey = <uint64_t> self.keys.data[k]
            t = fam.by_key.get(ckey)
            if t < 0:
                t = fam.new(self._path_string(ckey))
                fam.by_key.put(ckey, t)
            fam.count(t)
        return 0

    cdef int _leaf_paths_strings(self, ONode root) except -1:
        for token in leaf_paths(root):
            self.p.count_string(token)
        return 0

    cdef str _path_string(self, uint64_t key):
        cdef int64_t chain = <int64_t> (key & ((1ULL << CHAIN_BITS) - 1))
        parts = [self.labels[key >> CHAIN_BITS]]
        while chain > 0:
            parts.append(self.labels[self.chain_label.data[chain]])
            chain = self.chain_parent.data[chain]
        return "/".join(parts)


_OPT_STEP = [str(i) for i in range(10)] + ["c"]


cdef inline int64_t _step(int64_t comm, Py_ssize_t i) noexcept:
    """The code of opt_tuples' edge for argument ``i``: "0".."9" (past 9 all "9"), "c" for a
    commutative operator (index 10 of _OPT_STEP)."""
    if comm:
        return 10
    return i if i < 10 else 9


# -- BLAKE2b with an 8-byte digest (RFC 7693), the hash of tokens.py's _hash ---------------------
# hashlib's call (a hasher object, its digest as bytes, int.from_bytes) cost ~2 us a token, a
# quarter of the kernel's time at 100k answers; here it is the compression function alone.  The
# tests compare it with hashlib on every token they make and on random strings.
cdef uint64_t _IV[8]
_IV[:] = [0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
          0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179]
cdef uint8_t _SIGMA[160]
_SIGMA[:] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
             14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3,
             11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4,
             7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8,
             9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13,
             2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9,
             12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11,
             13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10,
             6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5,
             10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0]


cdef inline uint64_t _rotr(uint64_t x, int n) noexcept nogil:
    return (x >> n) | (x << (64 - n))


cdef inline void _g(uint64_t* v, int a, int b, int c, int d, uint64_t x, uint64_t y) noexcept nogil:
    v[a] = v[a] + v[b] + x
    v[d] = _rotr(v[d] ^ v[a], 32)
    v[c] = v[c] + v[d]
    v[b] = _rotr(v[b] ^ v[c], 24)
    v[a] = v[a] + v[b] + y
    v[d] = _rotr(v[d] ^ v[a], 16)
    v[c] = v[c] + v[d]
    v[b] = _rotr(v[b] ^ v[c], 63)


cdef void _compress(uint64_t* h, const uint8_t* block, uint64_t t, bint last) noexcept nogil:
    cdef uint64_t v[16]
    cdef uint64_t m[16]
    cdef const uint8_t* s
    cdef int i, j, r
    for i in range(16):  # little-endian words, whatever the machine's order
        m[i] = 0
        for j in range(8):
            m[i] |= (<uint64_t> block[8 * i + j]) << (8 * j)
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = _IV[i]
    v[12] ^= t
    if last:
        v[14] = ~v[14]
    for r in range(12):
        s = &_SIGMA[(r % 10) * 16]
        _g(v, 0, 4, 8, 12, m[s[0]], m[s[1]])
        _g(v, 1, 5, 9, 13, m[s[2]], m[s[3]])
        _g(v, 2, 6, 10, 14, m[s[4]], m[s[5]])
        _g(v, 3, 7, 11, 15, m[s[6]], m[s[7]])
        _g(v, 0, 5, 10, 15, m[s[8]], m[s[9]])
        _g(v, 1, 6, 11, 12, m[s[10]], m[s[11]])
        _g(v, 2, 7, 8, 13, m[s[12]], m[s[13]])
        _g(v, 3, 4, 9, 14, m[s[14]], m[s[15]])
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


cdef uint64_t _blake2b_8(const uint8_t* data, Py_ssize_t n) noexcept nogil:
    """The first 8 bytes of BLAKE2b-64 (no key) of ``data``, as a little-endian integer."""
    cdef uint64_t h[8]
    cdef uint8_t block[128]
    cdef uint64_t t = 0
    cdef int i
    for i in range(8):
        h[i] = _IV[i]
    h[0] ^= 0x01010000 ^ 8  # digest length 8, no key, fan-out and depth 1
    while n > 128:
        t += 128
        _compress(h, data, t, False)
        data += 128
        n -= 128
    memset(block, 0, 128)
    memcpy(block, data, n)
    t += n
    _compress(h, block, t, True)
    return h[0]


cpdef uint64_t hash_token(str key) except? 0:
    """``tokens._hash(key)``: BLAKE2b-64 of the key's UTF-8 (``surrogatepass``: through hashlib)."""
    cdef Py_ssize_t n
    cdef const char* data
    try:
        data = PyUnicode_AsUTF8AndSize(key, &n)
    except UnicodeEncodeError:  # a lone surrogate: the reference's own encoding
        return _hash(key)
    return _blake2b_8(<const uint8_t*> data, n)


cdef inline uint64_t _byteswap(uint64_t x) noexcept nogil:
    cdef uint64_t out = 0
    cdef int i
    for i in range(8):
        out = (out << 8) | ((x >> (8 * i)) & 0xFF)
    return out


def visual_key_int(SNode slt, str latex):
    """``vkey_int(visual_key_of_slt(slt, latex))``: the visual key's 16 hex digits as an integer,
    without the hex (the digest's bytes read big-endian)."""
    text = visual_string(slt)
    if text == "W!":
        text = "latex:" + "".join(latex.split())
    return _byteswap(hash_token(text))
