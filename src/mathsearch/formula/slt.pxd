# Augmenting declarations for the compiled core (Cython; slt.py is the source and the reference):
# SNode as an extension type, its fields typed, so tree walks read them as C struct members, and
# its two small methods called as C functions by the parser and the OPT builder.
cimport cython


cdef class SNode:
    cdef public str label
    cdef public str kind
    cdef public SNode next
    cdef public list edges

    cpdef add(self, str edge, SNode child)

    @cython.locals(e=str, child=SNode)
    cpdef SNode edge(self, str label)
