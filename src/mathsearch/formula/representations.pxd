# Augmenting declarations for the compiled core (Cython; representations.py is the source and the
# reference): the tree walks of the formula step with typed nodes and locals.
cimport cython

from .opt cimport ONode
from .slt cimport SNode


@cython.locals(stack=list, node=SNode, nxt=SNode, n2=SNode, child=SNode, c2=SNode, c3=SNode, lab=str, e=str, e2=str)
cdef _slt_pairs2(SNode root, list out)

@cython.locals(out=list, stack=list, node=ONode, cur=ONode, child=ONode, lab=str, path=str, p=str, frontier=list,
               nxt=list, comm=cython.bint, i=cython.Py_ssize_t, _step=cython.Py_ssize_t)
cpdef list opt_tuples(ONode opt, Py_ssize_t window=*)

@cython.locals(out=list, stack=list, node=ONode, child=ONode, above=tuple, here=tuple)
cpdef list leaf_paths(ONode opt, Py_ssize_t max_length=*)

@cython.locals(edges=list, e=str, child=SNode)
cdef _vis(SNode node, list out, Py_ssize_t depth)
