# Augmenting declarations for the compiled core (Cython; parser.py is the source and the reference):
# the parse state as an extension type, so the token stream is read through C struct members, and
# its hot methods (token stream, one sequence, one argument, one symbol) called as C functions.
cimport cython

from .slt cimport SNode


cdef class ParseState:
    cdef public list toks, pending, errors, unknown
    cdef public Py_ssize_t pos, n, n_errors, budget, flat, flat_left, envs
    cdef public str font, stop
    cdef public dict macros, table, tails

    @cython.locals(t=str)
    cpdef str next(self)

    cpdef str peek(self)

    cpdef error(self, str msg)

    @cython.locals(atoms=list, t=str, c0=str, name=str, inner=list, base=SNode, arg=list, existing=SNode,
                   prime=SNode, node=SNode, last=SNode, n_before=Py_ssize_t, color_from=Py_ssize_t,
                   empty_base=cython.bint, blank_scripts=cython.bint, prime_base=SNode, group_base=SNode)
    cpdef list seq(self, Py_ssize_t depth, frozenset stops)

    @cython.locals(c0=str, role=str, font=str)
    cpdef SNode char_node(self, str t)

    @cython.locals(t=str, c0=str, out=list, atoms=list)
    cpdef list arg(self, Py_ssize_t depth)
