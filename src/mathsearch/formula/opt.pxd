# Augmenting declarations for the compiled core (Cython; opt.py is the source and the reference).
cdef class ONode:
    cdef public str label
    cdef public list children


cdef class _Builder:
    cdef public Py_ssize_t budget


cdef class _Pratt:
    cdef public _Builder b
    cdef public list items
    cdef public Py_ssize_t i, n
