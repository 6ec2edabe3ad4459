"""The formula index: one entry per visually distinct formula, its symbol-pair tuples as tokens.

The collection repeats itself (28M instances, far fewer distinct formulae), so each visual id
(the store's, or our visual key where the collection has none) is parsed once and indexed once;
its instances (formula id, post, thread, kind) hang off it.  Layout under ``INDEX_DIR/formula/``
(flat numpy arrays, memory-mapped at search time):

``manifest.json``
    version, tuple windows, counts.
``tok_hash.npy`` (uint64, sorted), ``tok_idf.npy`` (float32)
    the vocabulary: a 64-bit hash of ``family + token`` per token id, and its idf
    ``log(1 + N / df)`` over the N visual formulae.
``post_start.npy`` / ``post_end.npy`` (int64), ``post_doc.npy`` (int32), ``post_tf.npy`` (uint16)
    postings of each token id (a block of ``post_doc``/``post_tf``): visual formulae and term
    frequencies; blocks are written family by family, to bound the build's memory.
``len_plain.npy`` / ``len_idf.npy`` (float32, families x N)
    per family the number of tuples of each visual formula, and their idf-weighted sum
    (the denominators of the Dice overlaps, so a query never re-parses a candidate).
``n_nodes.npy`` (int32), ``vkey.npy`` (uint64)
    SLT size and our visual key (exact matches) of each visual formula.
``inst_ptr.npy`` (int64, CSR over visual formulae), ``inst_formula.npy``, ``inst_post.npy``,
``inst_thread.npy`` (int64), ``inst_kind.npy`` (int8: :data:`KINDS`), ``inst_answer.npy`` (bool:
the post is an answer, for Task 1), ``retrievable.npy`` (bool per visual formula: some
instance is in a question or answer post, i.e. a possible Task 2 hit) and ``first_hit.npy``
(int64: that first question/answer instance, -1 if none).

Token families: ``s`` SLT tuples, ``o`` OPT tuples (commutative operands unordered), ``u`` SLT
tuples with variable names unified (alpha-equivalent formulae share them), ``p`` Approach0-style
leaf-to-root paths of the OPT (longer context than a pair).

Modules: :mod:`.layout` (names and constants), :mod:`.tokens` (a formula's hashed tuples),
:mod:`.build` (the build from the store), :mod:`.scoring` (the scoring's weights and a query's tuples),
:mod:`.search` (the candidate loop, and the questions systems ask), :mod:`.pruning` (its numpy bounds)
``_kernel`` (the candidate loop compiled), ``_tokens`` (the build's token bags compiled) and
``_postings`` (the build's postings and formula lengths, one loop a family).
"""

from .build import build_formula_index
from .layout import FAMILIES, FORMULA_DIR, KINDS
from .search import FormulaIndex, Scoring
from .tokens import QueryTokens, TokenHasher, query_tokens

__all__ = ["FAMILIES", "FORMULA_DIR", "KINDS", "FormulaIndex", "QueryTokens", "Scoring", "TokenHasher",
           "build_formula_index", "query_tokens"]
