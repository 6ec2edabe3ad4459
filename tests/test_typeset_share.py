"""The share of the sample's formulae that the page's renderer typesets (issue 34: at least 99.5%).

Runs bench/bench_typeset.py's measure (:func:`mathsearch.web.typeset_share.typeset_share`: node,
static/texcompat.js, MathJax configured as the page) over the formulae of every fourth thread of the
sample index (thread id a multiple of 4: about 19,000 formulae, whole pages, so a post's
``\\newcommand`` reaches its later formulae), in their page order.  Needs node and node_modules
(``bash scripts/setup_web.sh``; without them typeset_share says so and the test fails)."""

from __future__ import annotations

import pytest

from mathsearch.errors import InputError
from mathsearch.web.typeset_share import typeset_share


def test_mathjax_typesets_at_least_995_per_mille(sample_index):
    r = typeset_share(sample_index, "mathjax", every=4)
    assert r["formulae"] > 15_000 and r["pages"] > 600
    assert r["share"] >= 0.995, r["top"]  # typeset (a macro defined nowhere on its page shown by name in red)
    assert r["share_defined"] >= 0.995, r["top"]  # typeset with every macro defined


def test_unknown_renderer_is_refused(sample_index):
    with pytest.raises(InputError, match="renderer must be one of"):
        typeset_share(sample_index, "mathml")
