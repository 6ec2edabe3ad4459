# Augmenting declarations for the compiled core (Cython; slt.py is the source and the reference):
# SNode as an extension type, its fields typed, so tree walks read them as C struct members.
cdef class SNode:
    cdef public str label
    cdef public str kind
    cdef public SNode next
    cdef public list edges

