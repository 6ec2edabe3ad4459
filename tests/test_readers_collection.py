"""Collection readers on the real sample: every row read, attributes never invented."""

from __future__ import annotations

import csv
from collections import Counter

from conftest import COLLECTION

from mathsearch.readers.arqmath import iter_comments, iter_post_links, iter_posts, parse_tags
from mathsearch.readers.formula_tsv import iter_formula_tsv
from mathsearch.readers.html import body_text, plain_text, strip_delimiters
from mathsearch.records import FormulaKind, LinkType, PostType, ReadReport


def test_posts_comments_links_of_the_sample_are_all_read():
    report = ReadReport()
    posts = list(iter_posts(COLLECTION / "Posts.V1.3.xml", report))
    kinds = Counter(p.post_type for p in posts)
    assert kinds[PostType.QUESTION] == 2769
    assert kinds[PostType.ANSWER] == 3395
    assert report.skipped == {}
    comments = list(iter_comments(COLLECTION / "Comments.V1.3.xml"))
    assert len(comments) == 16712
    links = list(iter_post_links(COLLECTION / "PostLinks.V1.3.xml"))
    assert len(links) == 6779
    assert Counter(lk.link_type for lk in links) == {LinkType.DUPLICATE: 1539, LinkType.RELATED: 5240}


def test_attributes_the_sample_lacks_stay_absent():
    posts = {p.post_id: p for p in iter_posts(COLLECTION / "Posts.V1.3.xml")}
    q = posts[255]
    assert q.title.startswith("Why does the series")
    assert q.tags == ("calculus", "sequences-and-series", "harmonic-numbers")
    assert q.answer_count == 5
    assert q.score is None and q.creation_date is None and q.view_count is None
    a = posts[320]
    assert a.post_type == PostType.ANSWER and a.parent_id == 307 and a.thread_id == 307 and a.title is None


def test_every_formula_span_matches_the_formula_tsv():
    tsv = {f.formula_id: f for f in iter_formula_tsv(COLLECTION / "formulas" / "latex_representation_v3.tsv")}
    assert len(tsv) == 76968
    assert Counter(f.kind for f in tsv.values()) == {
        FormulaKind.TITLE: 1930, FormulaKind.QUESTION: 19072, FormulaKind.ANSWER: 41231, FormulaKind.COMMENT: 14735,
    }
    # 693 formulae have no MathML; one of them still carries a visual id in the source pages.
    assert sum(1 for f in tsv.values() if f.visual_id is None) == 692
    found = {}
    for p in iter_posts(COLLECTION / "Posts.V1.3.xml"):
        text, formulas = body_text(p.body)
        for f in formulas:
            found[f.formula_id] = f.latex
            assert text[f.start : f.end] == f"${f.latex}$"
        if p.title:
            found.update((f.formula_id, f.latex) for f in plain_text(p.title)[1])
    for c in iter_comments(COLLECTION / "Comments.V1.3.xml"):
        found.update((f.formula_id, f.latex) for f in plain_text(c.text)[1])
    assert set(found) == set(tsv)
    same = sum(1 for k, latex in found.items() if tsv[k].formula == latex)
    # 3 spans in the sample hold "$...$" inside an id'd span; everything else is byte-identical.
    assert same >= len(tsv) - 3


def test_slt_tsv_has_the_same_instances():
    n = sum(1 for _ in iter_formula_tsv(COLLECTION / "formulas" / "slt_representation_v3.tsv"))
    assert n == 76968


def test_nine_column_v3_layout(tmp_path):
    path = tmp_path / "latex_representation_v3.tsv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(["id", "post_id", "thread_id", "type", "comment_id", "old_visual_id", "visual_id", "issue", "formula"])
        w.writerow([1, 10, 9, "comment", 77, 5, 6, "", 'a"b'])
        w.writerow([2, 10, 9, "answer", "", 5, 5, "d", "x^2"])
        w.writerow([3, 10, 9, "answer", ""])  # broken: too few columns
    report = ReadReport()
    rows = list(iter_formula_tsv(path, report))
    assert [r.formula_id for r in rows] == ["1", "2"]
    assert rows[0].comment_id == 77 and rows[0].old_visual_id == "5" and rows[0].visual_id == "6"
    assert rows[0].formula == 'a"b' and rows[0].kind == FormulaKind.COMMENT
    assert rows[1].issue == "d" and rows[1].comment_id is None
    assert report.skipped_total == 1 and ":4" in report.problems[0]


def test_tags_and_delimiters():
    assert parse_tags("<calculus><real-analysis>") == ("calculus", "real-analysis")
    assert parse_tags("abstract-algebra,matrices, ring-theory") == ("abstract-algebra", "matrices", "ring-theory")
    # Stack Exchange dumps since 2024 write tags between bars; read as one tag, a [tag] filter missed them
    assert parse_tags("|calculus|real-analysis|") == ("calculus", "real-analysis")
    assert strip_delimiters("$$x^2$$") == "x^2"
    assert strip_delimiters("$$$ f(n) $$$") == "f(n)"
    assert strip_delimiters("\\(a\\)") == "a"
    assert strip_delimiters(" x ") == " x "  # no delimiters: byte for byte


def test_every_post_keeps_its_formulae_without_a_formula_tsv(tmp_path):
    """An ARQMath collection without its formula TSV: each post's formulae come from its own spans,
    also after a post that has none (the reader once took that post's empty list for its flag)."""
    from mathsearch.readers.collection import CollectionReader, detect_collection

    root = tmp_path / "coll"
    root.mkdir()
    lines = (COLLECTION / "Posts.V1.3.xml").read_text(encoding="utf-8").splitlines()[:80]
    (root / "Posts.V1.3.xml").write_text("\n".join(lines) + "\n</posts>\n", encoding="utf-8")
    posts = list(CollectionReader(detect_collection(root)).posts(formulas=True))
    expected = [len(body_text(tp.post.body)[1]) + (len(plain_text(tp.post.title)[1]) if tp.post.title else 0)
                for tp in posts]
    assert [len(tp.formulas) for tp in posts] == expected
    gaps = [i for i, n in enumerate(expected[:-1]) if n == 0 and expected[i + 1] > 0]
    assert gaps  # a post without formulae followed by one with: the case that lost them


def test_markup_text_puts_every_span_between_dollars_as_the_template_does():
    """``markup_text`` joins split pieces instead of ``MATH_SPAN.sub(r"$\\2$", ...)``: the same text,
    on every body, title and comment of the sample and on spans with and without ids, nested in
    un-annotated spans, empty, or holding tags."""
    from mathsearch.readers.html import MATH_SPAN, _spans_as_dollars
    from mathsearch.readers.xml_rows import iter_xml_rows

    texts = [attrs[k] for name, keys in (("Posts.V1.3.xml", ("Body", "Title")), ("Comments.V1.3.xml", ("Text",)))
             for _, attrs in iter_xml_rows(COLLECTION / name) for k in keys if attrs.get(k)]
    texts += ['<span class="math-container">x</span>', '<span class="math-container" id="7"></span>$',
              '<span><span class="math-container" id="1">a<b>c</b></span></span> and <span class="math-container" '
              'id="2" >$y$</span>', "no math", '<span class="math-container" id="3">unclosed']
    with_spans = [t for t in texts if "math-container" in t]
    assert len(with_spans) > 10_000
    for text in with_spans:
        assert _spans_as_dollars(text) == MATH_SPAN.sub(r"$\2$", text), text
