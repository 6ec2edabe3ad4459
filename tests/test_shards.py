"""Sharded indexes without Ray: the split, the CLI, the merge against the single index, the
target rules.  On a generated raw dump of 60 threads (fast); the real sample on Ray is in
test_ray_shards.py."""

from __future__ import annotations

import html
import json
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mathsearch.building import build_index
from mathsearch.building.train import TrainConfig, train
from mathsearch.cli import app
from mathsearch.errors import InputError
from mathsearch.indexes.shards import shard_of, sql_shard
from mathsearch.indexes.text_index import Clause
from mathsearch.store import Store
from mathsearch.systems import SearchContext, SearchQuery, make_system

runner = CliRunner()
WORDS = ("prime integral derivative series limit matrix group ring field proof sum converge bound "
         "continuous function vector norm graph tree").split()
FORMULAE = ["x^2", "\\frac{1}{n}", "\\sum_{k=1}^n k", "\\int_0^1 f(x)\\,dx", "a^2+b^2=c^2", "\\sin(x)", "e^{i\\pi}",
            "\\lim_{n\\to\\infty} a_n", "\\sqrt{2}", "n!", "x_1+x_2", "\\det(A)"]


def make_dump(root: Path, threads: int = 60, seed: int = 3) -> Path:
    """A raw Stack Exchange dump: ``threads`` questions with 1-3 answers each, $math$ in both,
    duplicate links between some questions."""
    rnd = random.Random(seed)
    root.mkdir(parents=True)

    def text() -> str:
        words = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 15)))
        return f"{words} ${rnd.choice(FORMULAE)}$ and ${rnd.choice(FORMULAE)}$"

    rows = []
    for tid in range(1, threads + 1):
        rows.append(f'<row Id="{tid}" PostTypeId="1" Title="{html.escape(text())}" '
                    f'Body="{html.escape(f"<p>{html.escape(text(), quote=False)}</p>")}" Tags="&lt;algebra&gt;" />')
        for i in range(rnd.randint(1, 3)):
            rows.append(f'<row Id="{1000 + 10 * tid + i}" PostTypeId="2" ParentId="{tid}" Score="{rnd.randint(0, 9)}" '
                        f'Body="{html.escape(f"<p>{html.escape(text(), quote=False)}</p>")}" />')
    (root / "Posts.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<posts>\n' + "\n".join(rows) + "\n</posts>\n")
    (root / "Comments.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<comments>\n'
                                       '<row Id="1" PostId="1011" Text="see $x^2$ above" />\n</comments>\n')
    links = [f'<row Id="{i}" PostId="{i}" RelatedPostId="{i + 7}" LinkTypeId="3" />' for i in range(1, 20, 3)]
    (root / "PostLinks.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<postlinks>\n' + "\n".join(links)
                                        + "\n</postlinks>\n")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The dump indexed once whole and once in 3 shards through the CLI (no Ray)."""
    root = tmp_path_factory.mktemp("shards")
    dump = make_dump(root / "dump")
    build_index(dump, root / "single")
    result = runner.invoke(app, ["index", str(dump), "--index", str(root / "sharded"), "--shards", "3", "--json"])
    assert result.exit_code == 0, result.output
    return dump, root / "single", root / "sharded", json.loads(result.stdout)


def test_the_sql_split_and_shard_of_agree():
    rnd = random.Random(1)
    ids = [rnd.randint(1, 5_000_000) for _ in range(500)] + [1, 2, 3, 4_294_967_295]
    db = sqlite3.connect(":memory:")
    for n in (2, 3, 4, 7):
        got = [db.execute(f"SELECT {sql_shard('t', n)} FROM (SELECT ? AS t)", (i,)).fetchone()[0] for i in ids]
        assert got == [shard_of(i, n) for i in ids]
        assert len(set(got)) == n  # every shard gets threads


def test_the_cli_builds_complete_shards_holding_every_post_once(built):
    from mathsearch.indexes.directory import read_manifest
    from mathsearch.indexes.kinds import INDEX_KINDS
    from mathsearch.store import Store

    _, single, sharded, counts = built
    manifest = read_manifest(sharded)
    assert manifest["shards"]["count"] == 3 and counts["shards"] == 3
    assert manifest["entries"] == sorted(["mathsearch-index.json", "shard-000", "shard-001", "shard-002"])
    with Store.open(single) as store:
        posts = store.post_ids()
        assert counts["answers"] == len(store.answer_ids()) == counts["text_answers"]
    seen = []
    for name in manifest["shards"]["dirs"]:
        shard = sharded / name
        assert all(INDEX_KINDS[k].exists(shard) for k in ("store", "text", "formula"))  # each a complete index
        assert read_manifest(shard)["counts"]["answers"] > 0
        with Store.open(shard) as store:
            seen += store.post_ids()
    assert sorted(seen) == sorted(posts)


def test_search_and_run_on_the_sharded_index_match_the_single_one(built, tmp_path):
    _, single, sharded, _ = built
    a_ctx, b_ctx = SearchContext(single), SearchContext(sharded)
    assert b_ctx.shards is not None and a_ctx.shards is None
    for system in ("tangent-s", "tangent-s-formula"):
        for latex in FORMULAE[:6]:
            q = SearchQuery("q", f"about ${latex}$", "", (), latex)
            a, b = make_system(system).search(a_ctx, q, 50), make_system(system).search(b_ctx, q, 50)
            assert dict(a.items()) == dict(b.items()), (system, latex)  # no idf, or formula idf made global
    # the store's look-ups across shards: links between threads of different shards, answers of threads
    threads = [int(p) for p in sorted(a_ctx.store.post_ids(), key=int) if a_ctx.store.post_type(p) == 1]
    assert b_ctx.store.linked_many(threads) == a_ctx.store.linked_many(threads) != {}
    assert b_ctx.store.answer_ids_of_threads(threads) == a_ctx.store.answer_ids_of_threads(threads)
    assert [f.formula_id for f in b_ctx.store.iter_formulas()] == [f.formula_id for f in a_ctx.store.iter_formulas()]
    for system in ("bm25-thread", "ours:dense=False"):
        q = SearchQuery("q", "prime series converge", "proof of the bound $x^2$", ("algebra",))
        a, b = make_system(system).search(a_ctx, q, 10), make_system(system).search(b_ctx, q, 10)
        assert len(a) == len(b) > 0, system
        assert len(set(a.ordered()) & set(b.ordered())) >= 0.7 * len(a), system  # BM25: collection df, shard lengths
    # max_terms picks the query terms by the collection's document frequencies on both
    clauses = [Clause("words", "body"), Clause("words", "question", 0.5), Clause("title_words", "question", 1.0)]
    q = SearchQuery("q", "prime series converge bound", "proof of the limit of the matrix norm $x^2$", ("algebra",))
    a, b = (ctx.text.search_answers(q.bags, clauses, 20, max_terms=3) for ctx in (a_ctx, b_ctx))
    assert len(a) == len(b) > 0 and len(a.keys() & b.keys()) >= 0.7 * len(a)
    assert a != a_ctx.text.search_answers(q.bags, clauses, 20)
    # max_df by the collection's shares too: the shards drop the terms the single index drops
    math = [Clause("math", "body_math"), Clause("words", "body")]
    q2 = SearchQuery("q", "sum of a series", "show that $x + 1 = (x - 1) + 2$ for every $x$", ())
    a, b = (ctx.text.search_answers(q2.bags, math, 20, max_df={"body_math": 0.3}) for ctx in (a_ctx, b_ctx))
    assert len(a) == len(b) > 0 and len(a.keys() & b.keys()) >= 0.7 * len(a)
    assert a != a_ctx.text.search_answers(q2.bags, math, 20) and b != b_ctx.text.search_answers(q2.bags, math, 20)
    # some answers scored alone (an own-answer topic's): the sharded index's own search gives them those scores
    whole = b_ctx.text.search_answers(q.bags, clauses, 10_000)
    some = sorted(whole)[::5][:30]
    assert b_ctx.text.score_answers(q.bags, clauses, some) == {x: whole[x] for x in some} != {}
    result = runner.invoke(app, ["search", "--index", str(sharded), "prime $x^2$", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["hits"]) == 10


def test_a_sharded_target_follows_the_index_rules(built, tmp_path):
    dump, _, sharded, _ = built
    # a rebuild with fewer shards replaces what mathsearch made, and nothing else
    result = runner.invoke(app, ["index", str(dump), "--index", str(sharded), "--shards", "2", "--json"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in sharded.iterdir()) == ["mathsearch-index.json", "shard-000", "shard-001"]
    for mine in (sharded / "mine.txt", sharded / "shard-001" / "mine.txt"):  # beside the shards, or in one
        mine.write_text("mine")
        result = runner.invoke(app, ["index", str(dump), "--index", str(sharded), "--shards", "2"])
        assert result.exit_code == 2 and "mine.txt" in result.output
        assert mine.read_text() == "mine" and (sharded / "shard-001" / "store.sqlite").is_file()
        mine.unlink()


def test_other_optional_indexes_with_shards_are_refused_before_any_work(tmp_path):
    dump = make_dump(tmp_path / "dump", threads=3)
    with pytest.raises(InputError, match="scm cannot be combined with --shards"):
        build_index(dump, tmp_path / "index", shards=2, optional=("dense", "scm"), encoder="static-minilm")
    assert not (tmp_path / "index").exists()
    result = runner.invoke(app, ["index", str(dump), "--index", str(tmp_path / "index"), "--shards", "0"])
    assert result.exit_code == 2 and not (tmp_path / "index").exists()


# -- vectors per shard -------------------------------------------------------------------------------------
TINY = TrainConfig(seed=5, epochs=8, batch=4, lr=0.05, latex_vocab=5, min_latex_count=1, base="random",
                   val_fraction=0.25, patience=8, threads=1)


def train_tiny_encoder(root: Path) -> Path:
    """A static encoder trained in seconds on a dump of 12 threads (MiniLM as teacher, random start):
    MiniLM itself would take minutes to embed a collection."""
    index = root / "train-index"
    build_index(make_dump(root / "train-dump", threads=12, seed=8), index)
    with Store.open(index) as store:
        train(store, root / "tiny", "tiny", TINY, source="test_shards fixture")
    return root / "tiny"


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> Path:
    return train_tiny_encoder(tmp_path_factory.mktemp("encoder"))


def test_vectors_per_shard_by_one_encoder_search_as_the_single_index(encoder, tmp_path):
    """``--shards 3 --dense``: each shard embeds its own posts with the encoder (recorded in each
    shard's dense manifest and in the parent's); cosine scores compare across shards, so the merge
    of the shards' exact top k is the single index's top k."""
    from mathsearch.indexes.dense import DENSE_DIR
    from mathsearch.indexes.directory import read_manifest
    from mathsearch.systems.ours import default_spec

    dump = make_dump(tmp_path / "dump")
    build_index(dump, tmp_path / "single", optional=("dense",), encoder=str(encoder))
    result = runner.invoke(app, ["index", str(dump), "--index", str(tmp_path / "sharded"), "--shards", "3",
                                 "--encoder", str(encoder), "--json"])
    assert result.exit_code == 0, result.output
    counts, sharded, single = json.loads(result.stdout), tmp_path / "sharded", tmp_path / "single"
    fingerprint = json.loads((encoder / "encoder.json").read_text())["fingerprint"]
    with Store.open(single) as store:
        answers, questions = store.answer_ids(), {p for p in store.post_ids() if p not in store.answer_ids()}
    assert counts["dense_answers"] == len(answers) and counts["dense_questions"] == len(questions)
    assert counts["dense_encoder"] == "tiny" and "dense_seconds_max_shard" in counts
    seen: list[int] = []
    for name in read_manifest(sharded)["shards"]["dirs"]:
        dense = json.loads((sharded / name / DENSE_DIR / "manifest.json").read_text())
        assert dense["encoder"]["fingerprint"] == fingerprint  # the same encoder, recorded by each shard
        with Store.open(sharded / name) as store:
            mine = np.load(sharded / name / DENSE_DIR / "answer_ids.npy").tolist()
            assert sorted(map(str, mine)) == sorted(store.answer_ids())  # its own posts, no other
        seen += mine
    assert sorted(map(str, seen)) == sorted(answers)
    parent = json.loads((sharded / DENSE_DIR / "manifest.json").read_text())
    assert parent["encoder"]["fingerprint"] == fingerprint and parent["dense_answers"] == len(answers)
    assert default_spec(sharded) == "ours"  # ours sees the vectors, and runs its static-encoder config

    a, b = SearchContext(single), SearchContext(sharded)
    assert a.dense.search_answers(a.dense.encode("x"), 1000) != {}
    for text in ("prime series converge", "integral of $x^2$", "matrix group ring", "bound of the norm"):
        vec = a.dense.encode(text)
        assert np.array_equal(b.dense.encode(text), vec)
        for k in (5, 1000):
            sa, sb = a.dense.search_answers(vec, k), b.dense.search_answers(vec, k)
            assert len(sa) == min(k, len(answers)) and sa.keys() == sb.keys(), (text, k)
            assert max(abs(sa[d] - sb[d]) for d in sa) < 1e-5
            qa, qb = a.dense.search_questions(vec, k), b.dense.search_questions(vec, k)
            assert qa.keys() == qb.keys() and len(qa) == min(k, len(questions))
        ids = [int(d) for d in sorted(answers)[::3]]
        assert a.dense.score_answers(vec, ids).keys() == b.dense.score_answers(vec, ids).keys() == set(ids)
        (ia, va), (ib, vb) = a.dense.answer_vectors(ids[::-1] + [-1]), b.dense.answer_vectors(ids[::-1] + [-1])
        assert ia == ib == ids[::-1] and np.array_equal(va, vb)  # each from its shard, in the order asked
    config = tmp_path / "dense.toml"
    config.write_text('[signals.d]\nkind = "dense"\nweight = 1.0\nlimit = 1000\n'
                      '[signals.q]\nkind = "dense_questions"\nweight = 1.0\nlimit = 20\n'
                      '[feedback]\nweight = 0.5\nk = 3\n')  # the feedback too: it gathers answers' vectors
    for system in (f"ours:config={config}", "ours"):
        for text in ("prime series converge", "the derivative of $\\sin(x)$"):
            q = SearchQuery("q", text, "", ())
            ra, rb = make_system(system).search(a, q, 10), make_system(system).search(b, q, 10)
            assert len(ra) == 10 and ra.ordered() == rb.ordered(), (system, text)
    # shards whose vectors come from different encoders are refused, not merged
    other = json.loads((sharded / "shard-001" / DENSE_DIR / "manifest.json").read_text())
    other["encoder"]["fingerprint"] = "static/0000"
    (sharded / "shard-001" / DENSE_DIR / "manifest.json").write_text(json.dumps(other))
    with pytest.raises(InputError, match="different encoders"):
        SearchContext(sharded).dense  # noqa: B018
