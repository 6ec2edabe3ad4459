"""Every representation of one formula as one JSON-able dict: what ``mathsearch formula`` prints and
the formula page of ``mathsearch serve`` shows."""

from __future__ import annotations

from . import (
    infix,
    latex_to_words,
    leaf_paths,
    node_count,
    opt_key,
    opt_to_cmathml,
    opt_tuples,
    parse_latex,
    prefix,
    slt_string,
    slt_to_pmathml,
    slt_tuples,
    subexpression_terms,
    visual_key,
)


def representations(latex: str) -> dict:
    """Every representation of one formula, as a JSON-able dict (the library's view, verbatim)."""
    p = parse_latex(latex)
    return {
        "latex": latex,
        "recovered": p.recovered,
        "errors": list(p.errors),
        "unknown_macros": list(p.unknown_macros),
        "visual_key": visual_key(p),
        "node_count": node_count(p.slt),
        "slt": slt_string(p.slt),
        "opt": infix(p.opt),
        "opt_key": opt_key(p.opt),
        "prefix": prefix(p.opt),
        "infix": infix(p.opt),
        "slt_tuples": [list(t) for t in slt_tuples(p.slt)],
        "opt_tuples": [list(t) for t in opt_tuples(p.opt)],
        "leaf_paths": leaf_paths(p.opt),
        "math_terms": subexpression_terms(p.opt),
        "words": latex_to_words(latex),
        "pmathml": slt_to_pmathml(p.slt),
        "cmathml": opt_to_cmathml(p.opt),
        "slt_tree": p.slt.to_json(),
        "opt_tree": p.opt.to_dict(),
    }
