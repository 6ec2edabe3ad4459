"""Formula index and formula systems: golden rankings on a hand-made collection, the real sample."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pytest

from mathsearch.building import build_index
from mathsearch.errors import InputError
from mathsearch.evaluation.collection import from_index
from mathsearch.evaluation.evaluate import evaluate_ranked
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.indexes.formula import FORMULA_DIR, FormulaIndex, Scoring, build_formula_index
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.store import Store
from mathsearch.systems import SearchContext, SearchQuery, make_system, run_rankings, system_names
from mathsearch.systems.formula import answer_scores, tangent_s_formula

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"

# thread id -> (title, question, [answers]); answer ids 100 * thread + i.
THREADS = {
    1: ("A fraction", "What is $\\frac{x+1}{y}+2$ when y is large?",
        ["It is $\\frac{x+1}{y}+2$ which tends to two.", "It tends to two, no formula needed.",
         "Compare with $\\frac{y}{x+1}+2$ instead."]),
    2: ("Pythagoras", "Is $a^2+b^2=c^2$ true for right triangles?", ["Yes, $a^2+b^2=c^2$ always holds."]),
    3: ("Triples", "Integer solutions?", ["Solutions of $p^2+q^2=r^2$ are Pythagorean triples."]),
    4: ("An integral", "Compute it", ["We get $\\int_0^1 f(t)\\,dt$ by parts."]),
    5: ("Differences", "Order matters?", ["Here $x-y$ is not $y-x$ in general."]),
}
# (comment id, answer id, text): a formula seen only in a comment is never a Task 2 hit.
COMMENTS = [(1, 400, "See also $\\frac{x+1}{z}+2$ here.")]


def make_dump(root: Path) -> Path:
    root.mkdir(parents=True)
    rows = []
    for tid, (title, body, answers) in THREADS.items():
        rows.append(f'<row Id="{tid}" PostTypeId="1" Title="{html.escape(title)}" '
                    f'Body="{html.escape(f"<p>{html.escape(body, quote=False)}</p>")}" Tags="&lt;algebra&gt;" />')
        for i, answer in enumerate(answers):
            rows.append(f'<row Id="{100 * tid + i}" PostTypeId="2" ParentId="{tid}" '
                        f'Body="{html.escape(f"<p>{html.escape(answer, quote=False)}</p>")}" />')
    (root / "Posts.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<posts>\n' + "\n".join(rows) + "\n</posts>\n")
    comments = [f'<row Id="{c}" PostId="{p}" Text="{html.escape(t)}" />' for c, p, t in COMMENTS]
    (root / "Comments.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<comments>\n' + "\n".join(comments)
                                       + "\n</comments>\n")
    (root / "PostLinks.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<postlinks>\n</postlinks>\n')
    return root


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("formula")
    counts = build_index(make_dump(root / "dump"), root / "index")
    # 10 instances (one in a comment), 8 visually distinct formulae (two seen twice).
    assert counts.indexes["formula_instances"] == 10
    assert counts.indexes["formula_visual"] == 8
    assert counts.indexes["formula_visual_retrievable"] == 7
    return root / "index"


def latex_of(index: Path, ranking: dict[str, float]) -> list[str]:
    store = Store.open(index)
    order = sorted(ranking.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return [store.formula(fid).latex for fid, _ in order]


def task2(index: Path, system: str, latex: str, title: str = "") -> dict[str, float]:
    return make_system(system).search(SearchContext(index), SearchQuery("B.1", title, "", (), latex))


def distinct(latexes: list[str]) -> list[str]:
    return list(dict.fromkeys(latexes))


def test_systems_are_registered():
    assert {"formula", "tangent-s-formula"} <= set(system_names(2))
    assert {"tangent-s", "tfidf-tangent-s"} <= set(system_names(1))


@pytest.mark.parametrize("system", ["formula", "tangent-s-formula"])
def test_formula_beats_its_variant_with_swapped_non_commutative_operands(tiny, system):
    order = distinct(latex_of(tiny, task2(tiny, system, "\\frac{x+1}{y}+3")))
    assert order.index("\\frac{x+1}{y}+2") < order.index("\\frac{y}{x+1}+2")
    order = distinct(latex_of(tiny, task2(tiny, system, "y-x")))
    assert order[0] == "y-x" and ("x-y" not in order or order.index("x-y") > 0)


def test_alpha_equivalent_formulae_match(tiny):
    order = distinct(latex_of(tiny, task2(tiny, "formula", "u^2+v^2=w^2")))
    assert set(order[:2]) == {"a^2+b^2=c^2", "p^2+q^2=r^2"}


def test_exact_formula_first_and_further_instances_fill_free_slots(tiny):
    found = task2(tiny, "formula", "a^2+b^2=c^2")
    store = Store.open(tiny)
    order = sorted(found.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    latexes = [store.formula(f).latex for f, _ in order]
    assert latexes[0] == "a^2+b^2=c^2"
    # the question and the answer both hold it: the second instance is listed too, with the same
    # score (Task 2 evaluation keeps one per visual id; Task 1 mappings see every post)
    same = [s for (_, s), latex in zip(order, latexes, strict=True) if latex == "a^2+b^2=c^2"]
    assert len(same) == 2 and same[0] == same[1]
    assert len(task2(tiny, "formula", "a^2+b^2=c^2") ) == len(found)


def test_comment_formulae_are_never_task2_hits_but_count_for_answers(tiny):
    store = Store.open(tiny)
    found = task2(tiny, "tangent-s-formula", "\\frac{x+1}{z}+2")
    assert all(store.formula(f).kind != "comment" for f in found)
    assert "\\frac{x+1}{z}+2" not in latex_of(tiny, found)
    scores = answer_scores(SearchContext(tiny), ["\\frac{x+1}{z}+2"])
    assert max(scores, key=scores.get) == 400  # the answer whose comment holds it exactly


def test_answer_with_the_topic_formula_beats_one_without(tiny):
    query = SearchQuery("A.1", "About $\\frac{x+1}{y}+2$", "Why $n$?", ())
    assert tangent_s_formula(query) == "\\frac{x+1}{y}+2"  # the title's formula, not the body's
    found = make_system("tangent-s").search(SearchContext(tiny), query)
    order = sorted(found, key=lambda a: (found[a], a), reverse=True)
    assert order[0] == "100" and "101" not in found
    assert found["100"] > found["102"]


def test_text_boost_picks_the_instance_in_the_closest_thread(tiny, tmp_path):
    conf = tmp_path / "f.toml"
    conf.write_text("[scoring]\nslt = 0.5\nopt = 0.5\n[text]\nweight = 0.5\nlimit = 10\n"
                    '[text.fields]\n"words->title" = 1.0\n"words->question" = 1.0\n')
    store = Store.open(tiny)
    query = SearchQuery("B.1", "Pythagoras right triangles", "", (), "a^2+b^2=c^2")
    found = make_system("formula", config=str(conf)).search(SearchContext(tiny), query)
    best = max(found, key=found.get)
    assert store.formula(best).thread_id == 2
    with pytest.raises(InputError):
        make_system("formula", config=str(tmp_path / "missing.toml")).search(SearchContext(tiny), query)


def test_text_boost_beside_the_formula_search_gives_the_same_ranking(sample_index):
    """The text boost's search runs on a signal thread while the formulae are scored; inline (as on
    a signal thread itself, which never waits on its own pool) the ranking is the same."""
    from concurrent.futures import ThreadPoolExecutor

    from mathsearch.systems.formula import formula_config, formula_instances

    cfg = formula_config("")
    assert cfg.text.weight > 0  # else this tests nothing: the packaged config boosts by text
    ctx = SearchContext(sample_index)
    topics = [t for t in read_topics(DATA / "topics" / "task2-2021.xml")][:8]
    queries = [SearchQuery.from_topic(t) for t in topics]
    beside = [formula_instances(ctx, q, q.formula_latex, cfg.scoring, cfg.depth, 1000, cfg.text) for q in queries]
    with ThreadPoolExecutor(1, thread_name_prefix="mathsearch-signal") as pool:  # the inline path
        inline = list(pool.map(lambda q: formula_instances(ctx, q, q.formula_latex, cfg.scoring, cfg.depth, 1000,
                                                           cfg.text), queries))
    without = [formula_instances(ctx, q, q.formula_latex, cfg.scoring, cfg.depth, 1000) for q in queries]
    assert all(len(r) for r in beside)
    assert [list(r.items()) for r in beside] == [list(r.items()) for r in inline]
    assert [list(r.items()) for r in beside] != [list(r.items()) for r in without]  # the boost moved something


def test_text_boost_reads_only_its_best_terms_when_asked(sample_index, tmp_path):
    """``[text] max_terms``: the boost's BM25 over the topic's terms that can add most (0, the
    packaged value: every term), read from the config file."""
    from mathsearch.systems.formula import DEFAULT_CONFIG, _thread_boosts, formula_config

    packaged = formula_config("").text
    assert packaged.max_terms == 0
    conf = tmp_path / "f.toml"
    conf.write_text((Path(__file__).resolve().parents[1] / "src" / "mathsearch" / "systems" / DEFAULT_CONFIG)
                    .read_text().replace("[text]\n", "[text]\nmax_terms = 3\n"))
    cut = formula_config(str(conf)).text
    assert cut.max_terms == 3 and cut.fields == packaged.fields
    ctx = SearchContext(sample_index)
    queries = [SearchQuery.from_topic(t) for t in read_topics(DATA / "topics" / "task2-2021.xml")][:10]
    whole = [_thread_boosts(ctx, q, packaged) for q in queries]
    three = [_thread_boosts(ctx, q, cut) for q in queries]
    assert sum(not np.array_equal(a[0], b[0]) for a, b in zip(whole, three, strict=True)) >= 5
    assert all(len(b[0]) for b in three)  # fewer terms, still threads to boost


def test_rebuild_replaces_the_index_atomically(tiny, tmp_path):
    with Store.open(tiny) as store:
        counts = build_formula_index(store, tmp_path, workers=1)
        again = build_formula_index(store, tmp_path, workers=1)
    assert counts["formula_visual"] == again["formula_visual"] == 8
    assert sorted(p.name for p in tmp_path.iterdir()) == [FORMULA_DIR]  # no half-built folder left
    ix = FormulaIndex.open(tmp_path)
    docs, scores = ix.top(ix.query("x-y"), Scoring(unified=1.0), 3)
    assert len(docs) == 3 and scores[0] == pytest.approx(2.0) and np.all(np.diff(scores) <= 0)
    assert scores[1] == pytest.approx(1.0)  # y-x: alpha-equivalent, only the unified tuples agree
    with pytest.raises(InputError, match="no formula index"):
        FormulaIndex.open(tmp_path / "nowhere")


def test_formula_system_on_the_real_sample_beats_the_random_floor(sample_index):
    ctx = SearchContext(sample_index)
    facts = from_index(sample_index)
    qrels = restrict_qrels(qrels_to_dict(read_qrels(DATA / "qrels" / "task2-2021.tsv")), facts.present(2)).qrels
    topics = [t for t in read_topics(DATA / "topics" / "task2-2021.xml") if t.topic_id in qrels]
    results = {}
    for name in ("formula", "tangent-s-formula"):
        run = run_rankings(make_system(name), ctx, topics)
        assert all(len(r) == 1000 or len(r) <= facts_size(facts) for r in run.values())
        results[name] = evaluate_ranked(2, qrels, [(name, run)], visual_of=facts.visual_of)[0].means
    # A random order of all sample formulae scores nDCG' 0.746 in 2021.  An earlier goal of 0.86 was met
    # only in sample (0.872 with extras tuned on both years; 0.863 tuned on 2020 alone): the packaged
    # scoring is now the plain one, 0.859 (bench/tune_formula.py).
    assert results["formula"]["nDCG'"] >= 0.85 and results["formula"]["nDCG@10"] >= 0.58
    assert results["formula"]["nDCG'"] >= results["tangent-s-formula"]["nDCG'"] - 1e-9
    assert results["tangent-s-formula"]["nDCG'"] > 0.80


def facts_size(facts) -> int:
    return len(facts.visual_present)


def test_ours_formula_signal_ranks_answers_by_their_best_formula(tiny, tmp_path):
    conf = tmp_path / "ours.toml"
    conf.write_text("depth = 1000\n[fusion]\nmethod = \"combsum\"\n[signals.formula]\nweight = 1.0\nmax_formulae = 2\n")
    query = SearchQuery("A.1", "Pythagoras: $u^2+v^2=w^2$?", "Or $a^2+b^2=c^2$ with $x$?", ())
    found = make_system("ours", config=str(conf)).search(SearchContext(tiny), query)
    order = sorted(found, key=lambda a: (found[a], a), reverse=True)
    assert order[0] == "200" and "101" not in found  # the answer holding a^2+b^2=c^2 itself
