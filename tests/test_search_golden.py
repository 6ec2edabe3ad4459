"""Golden rankings on tiny hand-made collections, where the right order is known."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mathsearch.building import build_index
from mathsearch.cli import app
from mathsearch.errors import InputError
from mathsearch.records import Topic
from mathsearch.systems import SearchContext, SearchQuery, make_system, run_rankings, spec, system_names
from mathsearch.text import analysis as ta

runner = CliRunner()

# thread id -> (title, question body, tags, [answer bodies]); answers get ids 100 * thread + i.
THREADS = {
    1: ("Derivative of $\\sin(x^2)$", "How do I differentiate $\\sin(x^2)$ with respect to x?", ["calculus"],
        ["Use the chain rule: the derivative is $2x\\cos(x^2)$.", "The derivative comes from the outer function first."]),
    2: ("Chain rule question", "What is the chain rule for composite functions?", ["calculus"],
        ["The chain rule says the derivative of a composite is a product, see $f'(g(x))g'(x)$."]),
    3: ("Prime numbers are infinite", "Why are there infinitely many primes?", ["number-theory"],
        ["Euclid: multiply all primes and add one, $p_1 p_2 \\cdots p_n + 1$.",
         "Consider the product of primes plus one."]),
    4: ("Counting primes below n", "How many primes are below $n$?", ["number-theory"],
        ["The prime number theorem gives $\\pi(n) \\sim n/\\log n$."]),
    5: ("Infinitely many prime numbers proof", "Is there an easy proof that primes never end?", ["number-theory"],
        ["Yes, see the duplicate question on Euclid's argument."]),
}
LINKS = [(5, 4)]  # thread 5 marked as a duplicate of thread 4


def make_dump(root: Path, threads=THREADS, links=LINKS) -> Path:
    root.mkdir(parents=True)
    rows = []
    for tid, (title, body, tags, answers) in threads.items():
        tag_attr = html.escape("".join(f"<{t}>" for t in tags))
        rows.append(f'<row Id="{tid}" PostTypeId="1" Title="{html.escape(title)}" '
                    f'Body="{html.escape(f"<p>{html.escape(body, quote=False)}</p>")}" Tags="{tag_attr}" />')
        for i, answer in enumerate(answers):
            rows.append(f'<row Id="{100 * tid + i}" PostTypeId="2" ParentId="{tid}" '
                        f'Body="{html.escape(f"<p>{html.escape(answer, quote=False)}</p>")}" />')
    (root / "Posts.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<posts>\n' + "\n".join(rows) + "\n</posts>\n")
    (root / "Comments.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<comments>\n</comments>\n')
    link_rows = [f'<row Id="{i}" PostId="{a}" RelatedPostId="{b}" LinkTypeId="3" />' for i, (a, b) in enumerate(links, 1)]
    (root / "PostLinks.xml").write_text('<?xml version="1.0" encoding="utf-8"?>\n<postlinks>\n' + "\n".join(link_rows)
                                        + "\n</postlinks>\n")
    return root


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    counts = build_index(make_dump(root / "dump"), root / "index")
    assert counts.indexes["text_answers"] == 7 and counts.indexes["text_questions"] == 5
    return root / "index"


def ranking(index: Path, system: str, title: str, question: str = "", tags=()) -> list[str]:
    found = make_system(system).search(SearchContext(index), SearchQuery("q", title, question, tuple(tags)))
    return [d for d, _ in sorted(found.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def test_analysis_tokens_match_between_spellings():
    assert ta.formula_key("\\frac{1}{2}") == ta.formula_key("\\dfrac 1 2") == ta.formula_key("{\\frac{1}{2}}")
    assert ta.formula_key("x^2") != ta.formula_key("x_2")
    assert ta.words("The primes are infinite") == ["prime", "infinite"]
    assert "m:\\sin" in ta.math_tokens("\\sin(x^2)") and "p:x|^" in ta.math_tokens("\\sin(x^2)")
    prose, formulae = ta.split_math("if $a<b$ then $$c$$")
    assert formulae == ["a<b", "c"] and "a<b" not in prose


def test_answer_with_the_topic_formula_beats_one_without(tiny):
    # Answers 100 and 101 share thread 1; only 100 holds a formula with \cos(x^2) and x^2 tokens.
    for system in ("bm25-answer", "ours:dense=false"):
        order = ranking(tiny, system, "derivative of $\\cos(x^2)$")
        assert order.index("100") < order.index("101"), system


def test_thread_context_finds_answers_that_do_not_repeat_the_question(tiny):
    # "Consider the product of primes plus one" (301) never says "infinite": only its thread does.
    order = ranking(tiny, "bm25-thread", "Are there infinitely many primes?")
    assert order[0] in ("300", "301") and set(order[:2]) == {"300", "301"}
    assert "301" not in ranking(tiny, "bm25-answer", "infinitely many")


def test_tags_and_title_lift_the_right_thread(tiny):
    order = ranking(tiny, "ours:dense=false", "chain rule for composite functions", tags=["calculus"])
    assert order[0] == "200"


def test_latex_baselines_tokenise_formulae_differently(tiny):
    # raw LaTeX: "\\pi(n)" yields the term "pi"; as words it is the same; both must find answer 400 first
    assert ranking(tiny, "tfidf-latex", "$\\pi(n) \\sim n/\\log n$")[0] == "400"
    assert ranking(tiny, "tfidf-words", "$\\pi(n) \\sim n/\\log n$")[0] == "400"


def test_linked_posts_returns_answers_of_duplicates_of_the_nearest_question(tiny):
    order = ranking(tiny, "linked-posts:neighbours=1", "How many primes are below n?")
    # the nearest question is 4; its duplicate is 5, whose answer (500) is returned; 4's own answers are not
    assert order == ["500"]
    with_own = ranking(tiny, "linked-posts:neighbours=1,include_neighbours=true", "How many primes are below n?")
    assert with_own == ["400", "500"]


def test_system_specs_round_trip_and_bad_parameters():
    s = make_system("linked-posts:neighbours=3,include_neighbours=yes")
    assert spec(s) == "linked-posts:neighbours=3,include_neighbours=True"
    assert spec(make_system(spec(s))) == spec(s)
    assert spec(make_system("bm25-thread")) == "bm25-thread"
    assert {"bm25-answer", "bm25-thread", "tfidf-latex", "tfidf-words", "linked-posts", "ours"} <= set(system_names(1))
    for bad in ("nope", "bm25-answer:math=heavy", "bm25-answer:colour=1", "ours:config=/no/such.toml"):
        with pytest.raises(InputError):
            make_system(bad).search(SearchContext(Path("/nonexistent")), SearchQuery("q", "x"))


def test_run_covers_every_topic_and_cli_search_shows_formulae(tiny, tmp_path):
    topics = [Topic("A.1", "Derivative of $\\cos(x^2)$", "<p>chain rule</p>", ("calculus",)),
              Topic("A.2", "nothing in common", "<p>zzz</p>", ())]
    runs = run_rankings(make_system("ours:dense=false"), SearchContext(tiny), topics)
    assert set(runs) == {"A.1", "A.2"} and runs["A.1"] and runs["A.2"] == {}
    result = runner.invoke(app, ["search", "--index", str(tiny), "--json", "-k", "2",
                                 "Why are there infinitely many primes? $p_1 p_2 \\cdots p_n + 1$"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["system"] == "ours:dense=False"  # the default, without dense vectors in this index
    hits = shown["hits"]
    assert hits[0]["id"] == 300 and hits[0]["matched_formulae"] == ["p_1 p_2 \\cdots p_n + 1"]
    assert len(hits) == 2 and hits[0]["score"] >= hits[1]["score"]


def test_run_command_writes_official_run_and_suggests_a_name(tiny, tmp_path):
    xml = tmp_path / "topics.xml"
    xml.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<Topics>\n'
                   '<Topic number="A.1"><Title>Derivative of &lt;span class="math-container" id="q_1"&gt;$\\cos(x^2)$'
                   '&lt;/span&gt;</Title><Question>&lt;p&gt;chain rule&lt;/p&gt;</Question><Tags>calculus</Tags></Topic>\n'
                   '<Topic number="A.2"><Title>primes</Title><Question>&lt;p&gt;infinitely many&lt;/p&gt;</Question>'
                   '<Tags>number-theory</Tags></Topic>\n</Topics>\n')
    out = tmp_path / "run.tsv"
    result = runner.invoke(app, ["run", "--index", str(tiny), "--task", "1", "--system", "bm25-thread",
                                 "--topics", str(xml), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["topics_with_hits"] == 2 and report["suggested_name"].endswith("-task1-bm25_thread-auto-both-A.tsv")
    lines = [line.split("\t") for line in out.read_text().splitlines()]
    assert {line[0] for line in lines} == {"A.1", "A.2"}
    assert all(line[1] == "Q0" and line[5] == "bm25-thread" for line in lines)
    assert all(int(line[2]) % 100 < 10 and int(line[2]) >= 100 for line in lines)  # answers only
    wrong = runner.invoke(app, ["run", "--index", str(tiny), "--task", "2", "--system", "bm25-thread",
                                "--topics", str(xml), "--out", str(out)])
    assert wrong.exit_code != 0 and "Traceback" not in wrong.output


def test_index_command_reports_search_index_counts_and_rebuilds_atomically(tmp_path):
    dump = make_dump(tmp_path / "dump")
    index = tmp_path / "index"
    result = runner.invoke(app, ["index", str(dump), "--index", str(index), "--json"])
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert (counts["answers"], counts["text_answers"], counts["text_questions"]) == (7, 7, 5)
    manifest = json.loads((index / "text" / "manifest.json").read_text())
    assert manifest["text_answers"] == 7 and manifest["latex_words"] == ta.LATEX_WORDS_SOURCE
    # a stale analysis is refused with one sentence, not searched with mismatched tokens
    (index / "text" / "manifest.json").write_text(json.dumps({**manifest, "analysis_version": -1}))
    stale = runner.invoke(app, ["search", "--index", str(index), "primes"])
    assert stale.exit_code != 0 and "rebuild" in stale.output and "Traceback" not in stale.output


def test_ours_reads_every_weight_from_its_config(tiny, tmp_path):
    from mathsearch.systems.ours import load_config

    packaged = load_config("")
    assert packaged["signals"]["answer"]["weight"] > 0 and "fields" in packaged["signals"]["answer"]
    only_tags = tmp_path / "tags.toml"
    only_tags.write_text('[signals.t]\nkind = "bm25"\nweight = 1.0\n[signals.t.fields]\n"tags->tags" = 1.0\n')
    order = ranking(tiny, f"ours:config={only_tags}", "anything at all", tags=["number-theory"])
    assert set(order) == {"300", "301", "400", "500"}  # the number-theory threads, and only them
    bad = tmp_path / "bad.toml"
    bad.write_text('[signals.x]\nkind = "telepathy"\nweight = 1.0\n')
    with pytest.raises(InputError, match="telepathy"):
        ranking(tiny, f"ours:config={bad}", "primes")
