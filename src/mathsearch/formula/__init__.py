"""Formulae: LaTeX to symbol layout trees (SLT) and operator trees (OPT), and what derives from them.

Public API (pure functions unless said otherwise; none of them raises on any input string):

``parse_latex(latex) -> Parsed``
    ``.slt`` (:class:`SNode`), ``.opt`` (:class:`ONode`), ``.recovered`` (the parser repaired the
    input), ``.errors`` (what it repaired), ``.unknown_macros``.
``visual_key(latex | SNode | Parsed) -> str``
    16 hex digits shared by visually identical formulae; collections without visual ids get them.
``slt_tuples(slt, window=2)``, ``opt_tuples(opt, window=2)`` -> ``[(label, label, edges)]``
    Tangent-style symbol pairs; ``tuple_token(t)`` makes an index token of one.
``leaf_paths(opt)``, ``prefix(opt)``, ``infix(opt)``, ``subexpression_terms(opt)``, ``opt_key(opt)``
    Approach0 leaf-root paths, the seed's prefix/infix notations, MIaS-style M-terms (with
    unified variants), and a canonical key equal for trees equal up to commutativity.
``latex_to_words(latex)``
    English words for symbols, as the PyTerrier baseline does.
``slt_to_pmathml(slt)``, ``opt_to_cmathml(opt)``
    Presentation and Content MathML.
``node_count(slt)``, ``slt_string(slt)``, ``visual_string(slt)``
    Size (Tangent-S query selection) and readable renderings.
``FormulaAnalyzer(AnalyzerConfig(...)).analyze(latex) -> Analysis`` (LRU cache by LaTeX string)
    ``visual_key``, ``recovered``, ``n_nodes``, ``slt_tokens`` and ``opt_tokens`` (index tokens:
    tab-joined tuples), and on demand ``opt_key``, ``prefix``, ``parsed`` (the trees) and token
    bags; ``similarity(query, candidate)`` scores two analyses in [0, 1] (tuple overlap of SLT,
    OPT and unified OPT).
``agreement.bcubed(gold, pred)``
    B-cubed precision and recall of visual keys against visual ids.

Node labels and edge labels are documented in :mod:`.slt` and :mod:`.opt`.  Data flow:
:mod:`.parser` (LaTeX -> SLT) -> :mod:`.opt` (SLT -> OPT) -> :mod:`.representations`;
:mod:`.analysis` ties them together for the indexes.  Benchmarks: ``bench/bench_formula.py``
(speed beside latex2mathml and pya0), ``bench/visual_keys.py`` (agreement with the lab's
visual ids), ``bench/fuzz_formula.py --n 1000000 --jobs 2`` (robustness).
"""

from .analysis import Analysis, AnalyzerConfig, FormulaAnalyzer, Parsed, parse_latex, similarity, visual_key
from .opt import ONode, build_opt
from .parser import tokenize
from .representations import (
    infix,
    leaf_paths,
    opt_key,
    opt_to_cmathml,
    opt_tuples,
    prefix,
    slt_to_pmathml,
    slt_tuples,
    subexpression_terms,
    tuple_token,
    visual_string,
)
from .slt import SNode, node_count, slt_string
from .words import latex_to_words

__all__ = [
    "Analysis", "AnalyzerConfig", "FormulaAnalyzer", "ONode", "Parsed", "SNode", "build_opt",
    "infix", "latex_to_words", "leaf_paths", "node_count", "opt_key",
    "opt_to_cmathml", "opt_tuples", "parse_latex", "prefix", "similarity", "slt_string",
    "slt_to_pmathml", "slt_tuples", "subexpression_terms", "tokenize", "tuple_token", "visual_key", "visual_string",
]
