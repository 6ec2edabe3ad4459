"""The properties of the fuzzing campaign (issue 41, item 5), shared by ``tests/test_fuzz.py``
(Hypothesis, bounded examples, in CI) and ``bench/fuzz_campaign.py`` (the same checks on 100,000+
seeded inputs a target, counted).

Each reader target takes a small real slice of the sample (rows of Posts, Comments, PostLinks, the
formula TSV, a topics file, qrels, the lab's run) and damages one row with a list of
:data:`Edit` (insert, delete or replace a character, cut the line).  The property, per reader:

* no exception but a typed one (:class:`~mathsearch.errors.MathsearchError`) that names the
  damaged line, and nothing else raised;
* the rest kept: every record of an undamaged row is still read (a damaged row may turn into
  another valid record, which no reader can tell);
* a row lost is reported: the report's problems name the damaged line ``path:LINE``.

The formula target: any string parses to a tree (``recovered`` exactly when errors are given),
never an exception, in bounded time.  The snippet target: a snippet never splits a formula.
"""

from __future__ import annotations

import itertools
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mathsearch.errors import FormatError, MathsearchError
from mathsearch.records import ReadReport

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
COLLECTION = DATA / "collection"
ROWS = 12  # rows of each slice: enough neighbours to see one lost, small enough to be quick

# What a damaged row may gain: the characters that matter to the formats (quotes, tabs, markup,
# entities, digits, signs) and a few others, a newline among them (a row split in two).
ALPHABET = ['"', "'", "\t", " ", "\n", "<", ">", "/", "=", "&", ";", "#", "x", "0", "9", "-", ".", "e", "é", "\\",
            "$", "{", "}", "\x00", "\u2028", "\r", "&amp;", "&#0;", "&#xD800;", "<row ", "/>", '"/>', "Q0", "NaN", "inf"]
OPS = ("insert", "delete", "replace", "cut")


@dataclass(frozen=True)
class Edit:
    op: str  # insert, delete, replace, cut (the line ends there)
    at: int  # a position, taken modulo the line's length
    text: str = ""


def damage(line: str, edits: Sequence[Edit]) -> str:
    """``line`` (without its newline) after ``edits``, in order."""
    for e in edits:
        n = len(line)
        i = e.at % (n + 1)
        if e.op == "insert":
            line = line[:i] + e.text + line[i:]
        elif e.op == "delete" and n:
            line = line[: i % n] + line[i % n + 1:]
        elif e.op == "replace" and n:
            line = line[: i % n] + e.text + line[i % n + 1:]
        elif e.op == "cut":
            line = line[:i]
    return line


def random_edits(rng: random.Random) -> list[Edit]:
    """The bench's draw of what Hypothesis draws in the tests (same ops, positions, alphabet)."""
    return [Edit(rng.choice(OPS), rng.randrange(1 << 20), rng.choice(ALPHABET)) for _ in range(rng.randint(1, 6))]


# -- the reader targets -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ReaderTarget:
    name: str
    lines: tuple[str, ...]  # the slice, one row a line (header and footer lines included)
    rows: tuple[int, ...]  # indexes into ``lines`` of the rows that may be damaged
    read: Callable[[Path, ReadReport], list]  # every record read, in order
    key: Callable[[object], object]  # what names a record (its id)
    suffix: str = ".txt"
    whole_file: bool = False  # damage refuses the whole file (one typed error naming its line) or keeps it all


def _head(path: Path, n: int) -> list[str]:
    with path.open(encoding="utf-8", newline="") as fh:
        return [line.rstrip("\n") for line in itertools.islice(fh, n)]


def _xml_slice(path: Path, root: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    head = _head(path, ROWS + 2)  # declaration, root element, rows
    lines = (*head, f"</{root}>")
    return lines, tuple(range(2, len(lines) - 1))


@cache
def reader_targets() -> dict[str, ReaderTarget]:
    from mathsearch.readers.arqmath import iter_comments, iter_post_links, iter_posts
    from mathsearch.readers.formula_tsv import iter_formula_tsv
    from mathsearch.readers.qrels import iter_qrels
    from mathsearch.readers.runs import read_trec_run
    from mathsearch.readers.topics import read_topics

    posts, posts_rows = _xml_slice(COLLECTION / "Posts.V1.3.xml", "posts")
    comments, comments_rows = _xml_slice(COLLECTION / "Comments.V1.3.xml", "comments")
    links, links_rows = _xml_slice(COLLECTION / "PostLinks.V1.3.xml", "postlinks")
    tsv = tuple(_head(COLLECTION / "formulas" / "latex_representation_v3.tsv", ROWS + 1))
    qrels = tuple(_head(DATA / "qrels" / "task1-2020.tsv", ROWS))
    run = tuple(_head(next((DATA / "runs").glob("*-task1-*.tsv")), ROWS))
    topics = _topics_slice(DATA / "topics" / "task1-2020.xml", 3)
    return {t.name: t for t in (
        ReaderTarget("posts_xml", posts, posts_rows, lambda p, r: list(iter_posts(p, r)), lambda x: x.post_id, ".xml"),
        ReaderTarget("comments_xml", comments, comments_rows, lambda p, r: list(iter_comments(p, r)),
                     lambda x: x.comment_id, ".xml"),
        ReaderTarget("postlinks_xml", links, links_rows, lambda p, r: list(iter_post_links(p, r)),
                     lambda x: x.link_id, ".xml"),
        ReaderTarget("formula_tsv", tsv, tuple(range(1, len(tsv))), lambda p, r: list(iter_formula_tsv(p, r)),
                     lambda x: x.formula_id, ".tsv"),
        ReaderTarget("qrels", qrels, tuple(range(len(qrels))), lambda p, r: list(iter_qrels(p, r)),
                     lambda x: (x.query_id, x.doc_id), ".tsv"),
        ReaderTarget("run_task1", run, tuple(range(len(run))), lambda p, r: read_trec_run(p, r),
                     lambda x: (x.query_id, x.doc_id), ".tsv"),
        ReaderTarget("topics_xml", topics, tuple(range(1, len(topics) - 1)), lambda p, r: read_topics(p, None, r),
                     lambda x: x.topic_id, ".xml", whole_file=True),
    )}


def _topics_slice(path: Path, n: int) -> tuple[str, ...]:
    """The first ``n`` topics of a topic file, with its root element."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, seen = [], 0
    for line in lines:
        out.append(line)
        if "</Topic>" in line:
            seen += 1
            if seen == n:
                break
    root = next(x for x in lines if x.strip().startswith("<Topics")).strip()
    start = next(i for i, x in enumerate(out) if x.strip().startswith("<Topics"))
    return (*out[start:], "</" + root[1:].split()[0].rstrip(">") + ">")


def check_reader(target: ReaderTarget, row: int, edits: Sequence[Edit], folder: Path) -> str:
    """Damage one row of ``target``'s slice, read it, and check the property; returns what happened
    (``kept``, ``reported``, ``refused``) for the bench's tally.  An AssertionError is a broken
    property; any exception but a MathsearchError escapes as itself."""
    index = target.rows[row % len(target.rows)]
    original = target.lines[index]
    damaged = damage(original, edits)
    lines = list(target.lines)
    lines[index] = damaged
    path = folder / f"{target.name}{target.suffix}"
    good = folder / f"{target.name}.good{target.suffix}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = _undamaged_read(target, good)
    first = index + 1  # 1-based line of the damaged row; a newline in it makes it several lines
    damaged_lines = range(first, first + damaged.count("\n") + damaged.count("\r") + damaged.count("\u2028") + 1)
    report = ReadReport(source=str(path))
    try:
        after = target.read(path, report)
    except FormatError as exc:
        assert exc.line in damaged_lines, f"{target.name}: error names line {exc.line}, the damage is on {first}"
        return "refused"
    except MathsearchError as exc:
        # A file read whole (topics) may be refused whole, by a typed error naming it; any other
        # reader may stop only with a typed error naming the damaged line.
        message = str(exc)
        assert str(path) in message, f"{target.name}: {message!r} does not name the file"
        assert target.whole_file or any(names_line(message, n) for n in damaged_lines), \
            f"{target.name}: {message!r} does not name the damaged line {first}"
        return "refused"
    keys = {target.key(x) for x in after}
    if target.whole_file:  # the damaged line belongs to one topic; the others must stay
        owner = _topic_of_line(target.lines, index)
        undamaged = [target.key(x) for x in before if target.key(x) != owner]
    elif hasattr(before[0], "line"):
        undamaged = [target.key(x) for x in before if x.line != first]
    else:  # every row of the slice is one record, in order
        assert len(before) == len(target.rows)
        i = target.rows.index(index)
        undamaged = [target.key(x) for x in before[:i] + before[i + 1:]]
    lost = [k for k in undamaged if k not in keys]
    assert not lost, f"{target.name}: rows {lost[:3]} lost by damage to line {first}: {damaged!r}"
    if len(after) < len(before) and damaged.strip():  # a row cut to nothing is a blank line: nothing to tell
        named = [p for p in report.problems if any(names_line(p, n) for n in damaged_lines)]
        assert named, f"{target.name}: a row was lost but no problem names line {first}: {report.problems[:3]}; " \
                      f"the line: {damaged[:300]!r}"
        return "reported"
    return "kept"


_read_whole: dict[str, list] = {}


def _undamaged_read(target: ReaderTarget, good: Path) -> list:
    """The records of the undamaged slice (read once a target)."""
    if target.name not in _read_whole:
        good.write_text("\n".join(target.lines) + "\n", encoding="utf-8")
        _read_whole[target.name] = target.read(good, ReadReport(source=str(good)))
    return _read_whole[target.name]


def names_line(message: str, n: int) -> bool:
    """Whether ``message`` names line ``n`` (``path:N`` or ``line N``)."""
    return re.search(rf"(:|line ){n}(?!\d)", message) is not None


def _topic_of_line(lines: Sequence[str], index: int) -> str | None:
    for line in reversed(lines[: index + 1]):
        if "<Topic " in line and 'number="' in line:
            return line.split('number="', 1)[1].split('"', 1)[0]
    return None


# -- the formula parser ---------------------------------------------------------------------------

PARSE_SECONDS = 5.0  # bound on one parse of at most a few hundred characters, on a loaded machine


def check_parse(latex: str) -> bool:
    """Any string: a tree, ``recovered`` exactly when errors are given, never an exception, in
    bounded time.  Returns ``recovered``."""
    from mathsearch.formula import parse_latex
    from mathsearch.formula.slt import SNode

    t = time.perf_counter()
    p = parse_latex(latex)
    took = time.perf_counter() - t
    assert isinstance(p.slt, SNode) and p.opt is not None
    assert p.recovered == bool(p.errors), (latex, p.recovered, p.errors)
    assert took < PARSE_SECONDS + len(latex) / 1000, f"{took:.2f} s for {len(latex)} characters"
    return p.recovered


# -- snippets ----------------------------------------------------------------------------------------


def check_snippet(text: str, words: set[str], width: int) -> None:
    """A snippet never splits a formula: every formula in it is one of the post's, whole (as the page
    shows it), and no ``$`` is left unpaired.  Written against the public
    :func:`mathsearch.readers.snippets.post_snippet`, over the text stored as a post body."""
    import html

    from mathsearch.readers.snippets import formulae_of, post_snippet, tex_shown
    from mathsearch.text.dollar_math import find_math

    body = html.escape(text, quote=False)
    flat = " ".join(text.split())
    whole = {" ".join(tex_shown(latex).split()) for _, _, latex in find_math(flat, is_html=False)}
    cut = post_snippet(body, words, width)
    assert cut.strip(), f"an empty snippet of {flat!r}"
    spans = find_math(cut, is_html=False)
    for latex in formulae_of(cut):
        assert " ".join(latex.split()) in whole, f"{latex!r} is a piece of a formula of {flat!r}"
    outside = "".join(cut[e:s] for (_, e, _), (s, _, _) in zip([(0, 0, "")] + spans, spans + [(len(cut), 0, "")],
                                                                strict=True))
    assert "$" not in outside, f"an unpaired $ in {cut!r}"


# -- typed queries -----------------------------------------------------------------------------------

# What people type into the search box: words, plain-words maths, LaTeX with and without dollars,
# filters, query variables, Unicode maths, and damage.
QUERY_PIECES = ("prove", "the", "a", "I", "x", "n", "A", "sqrt", "sqrt(2)", "√", "2", "10C3", "nCk", "choose",
                "binomial(n,", "k)", "bar", "hat", "squared", "plus", "inverse", "factorial", "integral", "of",
                "from", "to", "dx", "sum", "n=1", "infinity", "lim", "->", "sin", "sinx", "log", "base", "^", "_",
                "(", ")", "[", "]", "{", "}", "|", "/", "*", "=", "<=", "$", "$x^2$", "\\frac{1}{2}", "\\sqrt",
                "[calculus]", "-[calculus]", "[no-such-tag]", "score:2", "score:abc", "answers:", "is:accepted",
                "?a", "?b^2", "\\qvar{a}", "²", "₁", "½", "∫", "∑", "≤", "ℝ", "😀", "\x00", "\n", " ", "'", ",", ".",
                "to the power of", "e^-x^2", "x^2+1", "square root of", "absolute value of", "cubed", "transpose")


def double_script(latex: str) -> bool:
    """``latex`` puts two superscripts or two subscripts on one base ("x^{2}^{3}"), which LaTeX refuses."""
    i = 0
    while i < len(latex):
        c = latex[i]
        if c == "\\":
            i += 2
            continue
        if c in "^_" and i + 1 < len(latex):
            end = i + 2
            if latex[i + 1] == "{":
                depth = 0
                for end in range(i + 1, len(latex)):
                    if latex[end] in "{}" and latex[end - 1] != "\\":
                        depth += 1 if latex[end] == "{" else -1
                        if depth == 0:
                            break
                end += 1
            elif latex[i + 1] == "\\":
                end = i + 2
                while end < len(latex) and latex[end].isalpha():
                    end += 1
            if latex[end:end + 1] == c:
                return True
        i += 1
    return False


def typed_query(rng: random.Random) -> str:
    return " ".join(rng.choice(QUERY_PIECES) for _ in range(rng.randint(1, 40))).replace(" _ ", "_")


def check_typed_query(text: str, task: int) -> str:
    """Any typed query: refused with an :class:`~mathsearch.errors.InputError` or parsed, never
    another exception, in bounded time; every span read as maths is a whole formula (balanced
    braces) that parses; the filters taken out leave none behind.  Returns the outcome."""
    from mathsearch.errors import InputError
    from mathsearch.formula import parse_latex
    from mathsearch.searcher import parse_query
    from mathsearch.text.filters import parse_filters
    from mathsearch.text.plainmath import annotate

    t = time.perf_counter()
    try:
        parsed = parse_query(text, task)
    except InputError:
        return "refused"
    took = time.perf_counter() - t
    assert took < PARSE_SECONDS + len(text) / 1000, f"{took:.2f} s to read {text!r}"
    for typed, latex in parsed.searched_as:
        assert latex.count("{") - latex.count("\\{") == latex.count("}") - latex.count("\\}"), (text, typed, latex)
        if "\\" not in typed:  # read from plain words, not LaTeX typed as the user wrote it
            assert not double_script(latex), (text, typed, latex)  # MathJax would show "Double exponent"
        parse_latex(latex)
    rest, filters = parse_filters(text)
    again = parse_filters(rest)[1]
    assert not (again.tags or again.not_tags or again.min_score is not None or again.min_answers is not None
                or again.accepted), (text, rest, again)
    _, spans = annotate(rest)
    for s in spans:
        assert rest[s.start:s.end] == s.typed, (rest, s)
    return "filtered" if filters else "parsed"
