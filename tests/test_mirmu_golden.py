"""MIRMU's systems (seed 002) where the right answer is known: Leave-Rightmost-Out expansion,
interleaving, M-terms, and the Soft Cosine Measure matching a synonym no word of the query shares."""

from __future__ import annotations

import json
import math

import pytest
from test_search_golden import make_dump

from mathsearch.building import build_index
from mathsearch.indexes.mirmu.common import _hashed, mixed_tokens, mterm_tokens
from mathsearch.indexes.mirmu.scm import build_scm
from mathsearch.store import Store
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.mirmu.mias import interleave, lro_subqueries, query_units


def test_lro_leaves_the_rightmost_unit_out_one_more_each_time():
    units = query_units("Prove $a^2+b^2=c^2$ for integers")
    assert [kind for kind, _ in units] == ["text", "math", "text"]
    assert units[0] == ("text", ("prove",)) and units[2] == ("text", ("integer",))
    formula = units[1][1]
    assert formula == mterm_tokens("a^2+b^2=c^2") and len(formula) > 4
    subs = lro_subqueries(units, 8)
    assert subs == [units, units[:2], units[:1]]
    assert lro_subqueries(units, 2) == [units, units[:2]]  # capped
    assert lro_subqueries([], 8) == []


def test_interleaving_takes_each_rank_round_robin_and_keeps_first_places():
    assert interleave([[1, 2, 3], [2, 4], [5]], 10) == [1, 2, 5, 4, 3]
    assert interleave([[1, 2, 3], [2, 4], [5]], 3) == [1, 2, 5]
    assert interleave([], 5) == []


def test_mterms_are_unified_and_renaming_variables_keeps_the_unified_ones():
    x, a = set(mterm_tokens("x^2+y")), set(mterm_tokens("a^2+b"))
    assert {t[0] for t in x} == {"m", "u"}
    shared = x & a
    # a renaming keeps the unified terms and the terms without variables (the constant 2) only
    assert {t for t in shared if t[0] == "m"} == {"m" + _hashed("N!2")}
    assert len([t for t in shared if t[0] == "u"]) >= 2
    assert not mterm_tokens("x^2+y", unify=False)[0].startswith("u")
    assert all(t[0] == "m" for t in mterm_tokens("x^2+y", unify=False))


def test_mixed_tokens_keep_formulae_in_place_as_prefix_notation():
    tokens = mixed_tokens("Clearly $x^2$ grows")
    assert tokens[0] == "clearly" and tokens[-1] == "grow"
    assert tokens[1:-1] == ["O!SUP", "V!x", "N!2"] or ("V!x" in tokens and "N!2" in tokens)


# A collection where "car" and "automobile" occur in the same contexts and never together.
def _threads():
    contexts = ["engine needs oil", "wheel turns fast", "driver parks the", "brakes stop the", "fuel tank of the",
                "the red drives", "garage holds the", "mechanic repairs the"]
    threads = {}
    tid = 1
    for i, ctx in enumerate(contexts * 3):
        word = "car" if i % 2 else "automobile"
        threads[tid] = (f"Question {ctx}", f"My {word} {ctx} {word} today", [],
                        [f"The {word} {ctx}, every {word} {ctx}."])
        tid += 1
    for ctx in ["prime divides integer", "integer factor prime", "divisor of integer prime", "prime modulus integer"] * 3:
        threads[tid] = (f"Number {ctx}", f"Why {ctx} here", [], [f"Because {ctx}, as {ctx}."])
        tid += 1
    threads[tid] = ("Repair", "What breaks?", [], ["my car engine needs oil"])  # the synonym-only match
    threads[tid + 1] = ("Numbers", "What divides?", [], ["prime divides integer"])  # unrelated
    return threads, 100 * tid, 100 * (tid + 1)


SCM_TOML = """
[build]
vector_size = 24
bucket = 5000
negative = 5
alpha = 0.05
sample = 0.0
window = 3
min_count = 1
min_n = 3
max_n = 4
epochs = 60
min_df = 1
seed = 1
workers = 1
[search]
candidates = 0
"""


@pytest.fixture(scope="module")
def synonyms(tmp_path_factory):
    root = tmp_path_factory.mktemp("scm")
    threads, match, unrelated = _threads()
    build_index(make_dump(root / "dump", threads, []), root / "index")
    config = root / "scm.toml"
    config.write_text(SCM_TOML)
    with Store.open(root / "index") as store:
        counts = build_scm(store, root / "index", config=str(config))
    assert counts["scm_answers"] == len(threads)
    return root / "index", config, match, unrelated


def test_scm_ranks_a_synonym_only_match_above_an_unrelated_post(synonyms):
    index, config, match, unrelated = synonyms
    ctx = SearchContext(index)
    found = make_system(f"scm:config={config}").search(ctx, SearchQuery("q", "automobile"), 1000)
    assert str(match) in found, "the synonym-only answer was not scored"
    assert found[str(match)] > found.get(str(unrelated), 0.0)
    assert all(math.isfinite(s) for s in found.values())
    manifest = json.loads((index / "mirmu" / "scm" / "manifest.json").read_text())
    assert manifest["seed"] == 1 and manifest["config"]["epochs"] == 60 and "no topics" in manifest["trained_on"]


def test_scm_guards_empty_and_unknown_queries(synonyms):
    index, config, _, _ = synonyms
    ctx = SearchContext(index)
    system = make_system(f"scm:config={config}")
    assert len(system.search(ctx, SearchQuery("q", ""), 10)) == 0
    assert len(system.search(ctx, SearchQuery("q", "the of and"), 10)) == 0  # stop words only
    assert len(system.search(ctx, SearchQuery("q", "zzyzx qwertyuiop"), 10)) == 0  # no known term
    reranked = make_system("scm")  # the packaged config: BM25 candidates first
    assert len(reranked.search(ctx, SearchQuery("q", "zzyzx"), 10)) == 0
