# Augmenting declarations for the compiled core (Cython; parser.py is the source and the reference):
# the parse state as an extension type, so the token stream is read through C struct members.
cdef class ParseState:
    cdef public list toks, pending, errors, unknown
    cdef public Py_ssize_t pos, n, n_errors, budget, flat, flat_left, envs
    cdef public str font, stop
    cdef public dict macros, table, tails
