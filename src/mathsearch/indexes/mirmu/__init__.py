"""The artifacts of MIRMU's systems (seed 002) under ``INDEX_DIR/mirmu/``: built and trained by
``mathsearch index COLL --index IDX --with mias,scm,formula2vec,compubert`` and read by the
systems of :mod:`mathsearch.systems.mirmu`.

====================  ============================================  ====================================
``--with``            what is built (``mirmu/NAME/``)                  trained on
====================  ============================================  ====================================
``mias``              tantivy: answer words and M-terms              nothing (an index)
``scm``               term similarity matrix, TF-IDF answer vectors  fastText on every post's body
``formula2vec``       formula vectors, the Doc2Vec model             the question and answer formulae
``compubert``         the fine-tuned encoder, answer vectors         every (question, answer) pair
====================  ============================================  ====================================

Each writes ``manifest.json`` last, with its config (the ``[build]`` table of the system's TOML),
seed, counts and seconds.  Nothing reads topics or judgements.  Each is one entry of
:data:`mathsearch.indexes.kinds.INDEX_KINDS` (its builder, the extras it needs);
:func:`mathsearch.building.build_artifacts` builds them into an existing INDEX_DIR.
"""
