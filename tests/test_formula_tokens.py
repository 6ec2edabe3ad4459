"""The formula index's token ids: a chunk's tokens hashed together are the ids each token gets alone,
and a chunk of the sample's formulae analyses to the bags the search side reads for the same LaTeX."""

from __future__ import annotations

import numpy as np
from conftest import DATA

from mathsearch.formula import FormulaAnalyzer
from mathsearch.indexes.formula.build import _analyze_chunk
from mathsearch.indexes.formula.layout import FAMILIES, OPT_WINDOW, SLT_WINDOW
from mathsearch.indexes.formula.tokens import TokenHasher, query_tokens
from mathsearch.readers.formula_tsv import iter_formula_tsv


def sample_latex(n: int) -> list[str]:
    out: list[str] = []
    for path in sorted((DATA / "collection" / "formulas").glob("*latex*.tsv")):
        for record in iter_formula_tsv(path):
            if record.formula.strip() and record.formula not in out:
                out.append(record.formula)
            if len(out) >= n:
                return out
    return out


def test_many_equals_one_by_one_with_repeats_and_unicode():
    tokens = ["V!x\tV!y\tn", "N!2\t+\tn", "V!x\tV!y\tn", "M!()1x1\t∑\tw", "", "N!2\t+\tn"]
    one = TokenHasher()
    many = TokenHasher().many("s", tokens)
    assert many.dtype == np.uint64 and len(many) == len(tokens)
    assert many.tolist() == [one("s" + t) for t in tokens]
    assert many[0] == many[2] and many[0] != TokenHasher().many("o", tokens[:1])[0]  # the family is in the id
    assert TokenHasher().many("s", []).shape == (0,)


def test_many_is_right_across_calls_and_once_its_cache_is_full():
    tokens = ["V!x\tV!y\tn", "N!2\t+\tn", "V!x\tV!y\tn", "M!()1x1\t∑\tw", "", "N!2\t+\tn"]
    one = TokenHasher()
    hasher = TokenHasher()
    hasher.LIMIT = 2  # room for two of the four distinct tokens
    first = hasher.many("o", tokens)
    again = hasher.many("o", tokens[::-1])  # two from the cache, two hashed again
    assert first.tolist() == [one("o" + t) for t in tokens]
    assert again.tolist() == first.tolist()[::-1]
    assert hasher._cached == 2 and len(hasher._by_family["o"]) == 2
    assert hasher.many("p", tokens[:1]).tolist() == [one("p" + tokens[0])]  # no room left: hashed, not cached


def test_unified_bags_unify_every_variable_as_the_expression_does():
    from mathsearch.indexes.formula import tokens as tk

    slt = ["V!x\tV!y\tn", "V!x\tN!2\ta", "xV!ab\t+\tV!c", "N!2\t+\tn", "V!x\tV!z\tn", "V!\tV!q\tb"]
    want: dict[str, int] = {}
    for t in slt:
        u = tk._VAR.sub("V!", t)
        want[u] = want.get(u, 0) + 1
    assert tk._unified_bag(slt) == want
    assert list(tk._unified_bag(slt)) == list(want)  # first occurrence first
    assert tk._unified_bag(slt) == want  # from the cache the second time
    assert want["V!\tV!\tn"] == 2 and want["xV!\t+\tV!"] == 1


def test_a_chunk_of_the_sample_gives_the_query_sides_token_ids():
    latexes = sample_latex(300)
    assert len(latexes) == 300
    n_nodes, vkeys, fams = _analyze_chunk(latexes)
    analyzer = FormulaAnalyzer(slt_window=SLT_WINDOW, opt_window=OPT_WINDOW, keep_trees=True)
    hasher = TokenHasher()
    starts = {f: np.concatenate([[0], np.cumsum(fams[i][0])]) for i, f in enumerate(FAMILIES)}
    for j in (0, 1, 57, 150, 299):
        q = query_tokens(analyzer, latexes[j], hasher)
        assert n_nodes[j] == q.n_nodes and vkeys[j] == np.uint64(q.vkey)
        for i, f in enumerate(FAMILIES):
            lo, hi = starts[f][j], starts[f][j + 1]
            assert fams[i][1][lo:hi].tolist() == q.hashes[f].tolist()
            assert fams[i][2][lo:hi].astype(float).tolist() == q.tfs[f].tolist()
