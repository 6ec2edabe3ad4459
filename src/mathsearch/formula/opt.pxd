# Augmenting declarations for the compiled core (Cython; opt.py is the source and the reference):
# the OPT nodes, the builder and the operator-precedence parser as extension types, their hot
# methods called as C functions.
cimport cython

from .slt cimport SNode


cdef class ONode:
    cdef public str label
    cdef public list children


cdef class _Builder:
    cdef public Py_ssize_t budget

    cpdef ONode line(self, SNode node)

    @cython.locals(out=list, k=str)
    cpdef list items(self, SNode node)

    @cython.locals(edges=list, e=str, child=SNode, sub=SNode, sup=SNode, presub=SNode, presup=SNode, over=SNode,
                   under=SNode, p=SNode, n_primes=Py_ssize_t)
    cpdef ONode scripted(self, ONode on, SNode node)


cdef class _Pratt:
    cdef public _Builder b
    cdef public list items
    cdef public Py_ssize_t i, n

    cpdef tuple peek(self)

    @cython.locals(parts=list, start=Py_ssize_t, e=ONode, it=tuple)
    cpdef ONode top(self)

    @cython.locals(b=_Builder, left=ONode, right=ONode, it=tuple, k=str)
    cpdef ONode expr(self, Py_ssize_t min_prec)

    @cython.locals(it=tuple, k=str, chain=list, operand=ONode, node=ONode)
    cpdef ONode unary(self)

    @cython.locals(it=tuple, nxt=tuple, k=str, on=ONode, fexpr=ONode)
    cpdef ONode primary(self)
