"""MIRMU's ARQMath 2020 systems (seed 002), each a named, configured system beside ours.

* ``mias`` (Task 1): M-terms beside the text in tantivy, Leave-Rightmost-Out query expansion,
  results interleaved (seed section 3).
* ``scm`` (Task 1): the Soft Cosine Measure over TF-IDF with a term similarity matrix from fastText
  trained on the collection, formulae in prefix notation; a re-ranker of BM25 candidates (section 4).
* ``formula2vec`` (Task 1) and ``formula2vec-formula`` (Task 2): Doc2Vec DBOW over formulae in
  prefix notation (section 5).
* ``compubert`` (Task 1): MiniLM fine-tuned on the collection's question -> answer pairs, a
  bi-encoder (section 6); the encoder is ``mathsearch.encoders``' ``compubert`` kind.

Every parameter is in ``mias.toml``, ``scm.toml``, ``formula2vec.toml``, ``compubert.toml`` beside
this file, each citing the seed's section; ``[build]`` is read when ``mathsearch index --with``
trains, ``[search]`` at query time.  Their ensemble is ``mathsearch fuse --method mirmu``.
"""

from . import compubert, formula2vec, mias, scm  # noqa: F401 - importing registers the systems
