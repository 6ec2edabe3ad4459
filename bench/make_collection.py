"""Scale generator: an ARQMath-format collection of any size, resampled from the real sample.

    python bench/make_collection.py --answers 100000 --out /tmp/arq100k [--seed 1] [--slt] [--raw-dump]

The sample (``../shared/data/arqmath/collection``: 2,769 questions, 3,395 answers, 16,712
comments, 76,968 formula instances) is read once into templates: every title, body and
comment becomes literal text pieces (attribute-escaped once, in a few lightly perturbed
word variants) around formula slots.  Generating a post is then string joins only, so the
full ARQMath size (1.4M answers, ~1M questions, ~28M formulae) fits in minutes.

What stays realistic:

* questions = answers / 1.4; answers per question ~ Poisson (some questions unanswered);
  an answer reuses an answer of its question's template most of the time, so a thread's
  text and formulae belong together;
* comments and links per post as in the sample template; link targets are generated questions;
* formula instances per answer (all types) scaled to ~20 (28M formulae / 1.4M answers) by
  picking templates with a mild bias when the sample's rate is higher;
* each formula instance either repeats its sample LaTeX verbatim (short formulae mostly do)
  or is a variant: one or two variables renamed (x->t, \\alpha->\\beta) or numbers changed.
  Variants are numbered per base formula and drawn Zipf-like, so common variants repeat
  across the collection as real formulae do; a share of them are fresh (random number), so
  distinct formulae keep growing with size (distinct visual ids / instances: 0.49 in the
  sample, ~0.45 at 100k answers, lower at full size).  The visual id is the sample's id for a LaTeX
  string of the sample, else a 48-bit hash of the LaTeX: identical LaTeX => same visual id,
  with no table of all formulae in memory.

Output files (ARQMath layout, as the sample README describes): ``Posts.V1.3.xml``,
``Comments.V1.3.xml``, ``PostLinks.V1.3.xml``, ``formulas/latex_representation_v3.tsv``
(and with ``--slt`` ``formulas/slt_representation_v3.tsv``).  ``--raw-dump`` writes a Stack
Exchange dump instead (``Posts.xml``, ``Comments.xml``, ``PostLinks.xml``, math as
``$...$`` / ``$$...$$``, with CreationDate, Score, ... attributes) and no formula TSV.

Work is split in chunks of questions whose ids are fixed up front from one plan, so the
output is byte-identical for a seed whatever ``--workers`` is; memory stays flat (each
chunk is formatted, written and dropped).  A JSON summary of the counts goes to stdout.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import html
import io
import json
import multiprocessing
import os
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "arqmath" / "collection"

ANSWERS_PER_QUESTION = 1.4  # ARQMath: ~1.4M answers, ~1M questions
FORMULAE_PER_ANSWER = 20.0  # ARQMath: ~28M formula instances for ~1.4M answers
OWN_ANSWER_SHARE = 0.7  # answers that reuse an answer template of their question's template
TEXT_VARIANTS = 4  # variant 0 is the sample text, the others have some words replaced
WORD_REPLACE_P = 0.05
VARIANT_ZIPF_A = 1.15  # variant number k of a perturbed formula ~ Zipf(a) ...
FRESH_VARIANT_P = 0.4  # ... or, this often, a random 62-bit k (most likely a new formula)
CACHE_VARIANTS = 8  # variants 1..8 of every base formula are kept once computed
VID_BASE = 1_000_000_000  # hashed visual ids live above the sample's (< 1e8)
CHUNK_QUESTIONS = 2000
MASK64 = (1 << 64) - 1

XML_DECL = '<?xml version="1.0" encoding="utf-8"?>\n'
ROW_INDENT = "   "  # as the sample and the official ARQMath files
SPAN_OPEN = "&lt;span class=&quot;math-container&quot; id=&quot;"  # attribute-escaped markup
SPAN_MID = "&quot;&gt;"
SPAN_CLOSE = "&lt;/span&gt;"

# An id'd formula span; its content may not hold another span (the sample nests id'd spans
# inside un-annotated ones, which stay literal text here).
MATH_SPAN = re.compile(r'<span class="math-container" id="([^"]+)">([^<]*(?:<(?!/?span\b)[^<]*)*)</span>')
# Un-annotated math in bodies, possibly holding id'd spans: the wrapper goes in raw dumps.
UNANNOTATED_SPAN = re.compile(
    r'<span class="math-container">((?:[^<]|<(?!/?span\b)|<span class="math-container" id="[^"]+">'
    r"[^<]*(?:<(?!/?span\b)[^<]*)*</span>)*)</span>"
)
# Words that may be replaced: lowercase, outside tags, entities, $...$ math and control words.
TEXT_TOKEN = re.compile(r"<[^>]*>|&#?\w+;|\$[^$]*\$|(?<![\\\w])([a-z]{3,})(?!\w)")
# LaTeX tokens: control words, control symbols, single letters, integers, anything else.
LATEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[A-Za-z]|[0-9]+|.", re.S)
# Brace groups after these commands are names, not mathematics.
PROTECTED = frozenset(
    r"\begin \end \text \textrm \textbf \textit \texttt \textsf \mathrm \operatorname \mbox \hbox "
    r"\label \tag \color \textcolor \href \url \hspace \vspace \kern \mathop \DeclareMathOperator "
    r"\newcommand \renewcommand \rm \verb \ref \eqref \unicode \style \class \cssId".split()
)
LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
GREEK = tuple(
    r"\alpha \beta \gamma \delta \epsilon \varepsilon \zeta \eta \theta \vartheta \iota \kappa "
    r"\lambda \mu \nu \xi \pi \rho \sigma \tau \upsilon \phi \varphi \chi \psi \omega".split()
)
GREEK_INDEX = {g: i for i, g in enumerate(GREEK)}
KIND_LOWER, KIND_UPPER, KIND_GREEK, KIND_NUMBER = range(4)

_NEEDS_ESCAPE = re.compile(r'[&<>"\n\r\t]')


def attr(value: str) -> str:
    """Escape a string for a double-quoted XML attribute.

    Chained ``str.replace`` (C loops that return the same object when there is nothing
    to do) is several times faster than ``str.translate`` on non-ASCII text.
    """
    if _NEEDS_ESCAPE.search(value) is None:
        return value
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\n", "&#xA;")
        .replace("\r", "&#xD;")
        .replace("\t", "&#x9;")
    )


def html_escape(latex: str) -> str:
    """LaTeX inside a body span: ``& < >`` escaped, quotes kept (as in the sample)."""
    return latex.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def hashed_visual_id(latex: str) -> str:
    digest = hashlib.blake2b(latex.encode("utf-8"), digest_size=6).digest()
    return str(VID_BASE + int.from_bytes(digest, "big"))


def mix64(x: int) -> int:
    """SplitMix64 finaliser: a cheap, well-spread hash of an integer."""
    x &= MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


# --------------------------------------------------------------------------- formulae


@dataclass(slots=True)
class BaseFormula:
    """One distinct LaTeX string of the sample, split (on first use) around the tokens a variant may change."""

    latex: str
    visual_id: str
    keep_p: float  # probability an instance repeats this LaTeX verbatim
    mathml: str = ""
    groups: list[tuple[int, str]] = field(default_factory=list)  # (kind, token) of each symbol / number
    # str.format template of the LaTeX: slot of group g is {g}, or {G+g} where a decoration may follow.
    template: str | None = None

    def split(self) -> None:
        if self.template is not None:
            return
        pieces, slots, self.groups = split_formula(self.latex)
        n_groups = len(self.groups)
        out = [pieces[0].replace("{", "{{").replace("}", "}}")]
        for i, g in enumerate(slots):
            after = pieces[i + 1]
            # No decoration where the symbol has a script or prime (x_n must not become x_{1}_n)
            # or is one (x_i must not become x_h_{5}).
            plain = after.startswith(("_", "^", "'")) or pieces[i].endswith(("_", "^"))
            out.append(f"{{{g if plain else n_groups + g}}}")
            out.append(after.replace("{", "{{").replace("}", "}}"))
        self.template = "".join(out)


def split_formula(latex: str) -> tuple[list[str], list[int], list[tuple[int, str]]]:
    """Cut ``latex`` at single-letter variables, Greek letters and integers outside name groups."""
    tokens = LATEX_TOKEN.findall(latex)
    pieces: list[str] = []
    slots: list[int] = []
    groups: list[tuple[int, str]] = []
    group_of: dict[str, int] = {}
    literal: list[str] = []
    protect_next = 0  # brace groups still to skip
    depth = 0  # > 0 while inside a protected brace group
    n = len(tokens)
    for i, tok in enumerate(tokens):
        kind = -1
        if depth:
            depth += (tok == "{") - (tok == "}")
        elif tok in PROTECTED:
            protect_next = 2 if tok == r"\begin" else 1  # \begin{array}{cc}: skip both
        elif tok == "{" and protect_next:
            protect_next -= 1
            depth = 1
        else:
            if protect_next and tok not in (" ",):
                protect_next = 0
            if tok in GREEK_INDEX:
                kind = KIND_GREEK
            elif len(tok) == 1 and tok.isascii() and tok.isalpha():
                prev_letter = i > 0 and len(tokens[i - 1]) == 1 and tokens[i - 1].isalpha()
                next_letter = i + 1 < n and len(tokens[i + 1]) == 1 and tokens[i + 1].isalpha()
                if not prev_letter and not next_letter:  # not part of a word like "sin"
                    kind = KIND_LOWER if tok.islower() else KIND_UPPER
            elif tok.isdigit() and tok.isascii():
                kind = KIND_NUMBER
        if kind < 0:
            literal.append(tok)
            continue
        g = group_of.get(tok)
        if g is None:
            g = group_of[tok] = len(groups)
            groups.append((kind, tok))
        pieces.append("".join(literal))
        literal = []
        slots.append(g)
    pieces.append("".join(literal))
    return pieces, slots, groups


def replacement(kind: int, token: str, h: int) -> str:
    if kind == KIND_LOWER:
        return LOWER[(LOWER.index(token) + 1 + h % 25) % 26]
    if kind == KIND_UPPER:
        return UPPER[(UPPER.index(token) + 1 + h % 25) % 26]
    if kind == KIND_GREEK:
        return GREEK[(GREEK_INDEX[token] + 1 + h % (len(GREEK) - 1)) % len(GREEK)]
    value = int(token)
    delta = 1 + h % 9
    if len(token) == 1:
        return str((value + delta) % 10)
    return str(value - delta if (h >> 8) & 1 and value > delta else value + delta)


def decoration(kind: int, h: int) -> str:
    """Sometimes a renamed variable gets a subscript or a prime (x -> t_{2}, x -> y')."""
    if kind == KIND_NUMBER:
        return ""
    d = h % 16
    if d < 2:
        return "_{" + str((h >> 4) % 10) + "}"
    if d == 2:
        return "'"
    return ""


def variant_latex(base: BaseFormula, h: int) -> tuple[str, dict[str, tuple[str, str]]]:
    """Variant of ``base`` chosen by the hash ``h``: one or two symbol groups changed.

    Returns the LaTeX and, for the SLT file, each changed token -> (new token, decoration).
    """
    base.split()
    groups = base.groups
    if not groups:  # nothing to rename (\infty, \mathbb{R}, ...)
        return base.latex, {}
    new = [tok for _, tok in groups]
    suffix = [""] * len(groups)
    changes = min(len(groups), 1 + (h >> 60) % 3)
    mapping: dict[str, tuple[str, str]] = {}
    for c in range(changes):
        g = (h >> (20 * c)) % len(groups)
        kind, tok = groups[g]
        new[g] = replacement(kind, tok, h >> (20 * c + 7))
        suffix[g] = decoration(kind, h >> (20 * c + 13))
        mapping[tok] = (new[g], suffix[g])
    assert base.template is not None
    return base.template.format(*new, *[n + x for n, x in zip(new, suffix, strict=True)]), mapping


_MATHML_TOKEN = re.compile(r"<(mi|mn)>([^<]*)</\1>")
_ALTTEXT = re.compile(r'alttext="[^"]*"')
_GREEK_CHARS = {html.unescape("&" + g[1:] + ";"): g for g in GREEK}  # MathML character -> \\name


def variant_mathml(mathml: str, latex: str, mapping: dict[str, tuple[str, str]]) -> str:
    """The base's MathML with the same renaming, its alttext set to the new LaTeX."""
    if not mathml:
        return ""
    greek_chars = _GREEK_CHARS

    def swap(m: re.Match[str]) -> str:
        text = m.group(2)
        key = greek_chars.get(text, text)
        change = mapping.get(key)
        if change is None:
            return m.group(0)
        new, suffix = change
        if new.startswith("\\"):
            new = html.unescape("&" + new[1:] + ";")
        element = f"<{m.group(1)}>{new}</{m.group(1)}>"
        if suffix == "'":
            return f"<msup>{element}<mo>\u2032</mo></msup>"
        if suffix:
            return f"<msub>{element}<mn>{suffix[2:-1]}</mn></msub>"
        return element

    out = _MATHML_TOKEN.sub(swap, mathml)
    alt = latex.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return _ALTTEXT.sub(lambda _m: f'alttext="{alt}"', out, count=1)


def keep_probability(latex: str) -> float:
    """Short formulae (x, n, f(x)) recur verbatim far more than long ones."""
    n = len(latex)
    if n <= 2:
        return 0.7
    if n <= 6:
        return 0.45
    if n <= 15:
        return 0.25
    return 0.1


# --------------------------------------------------------------------------- templates


@dataclass(slots=True)
class Piece:
    """Title, body or comment text: sample text pieces around formula slots (base ids).

    ``texts`` holds, per text piece, ``TEXT_VARIANTS`` attribute-escaped variants; they are
    made on first use from a generator seeded by the piece's index, so the output does not
    depend on which process or chunk makes them.
    """

    index: int
    source: list[str]
    formulas: list[int]
    display: list[bool]  # raw dump: formula alone in a paragraph -> $$...$$
    texts: list[tuple[str, ...]] | None = None


@dataclass(slots=True)
class PostTemplate:
    body: Piece
    comments: list[Piece]
    title: Piece | None = None
    tags: str = ""  # attribute-escaped
    links: list[int] = field(default_factory=list)  # LinkTypeId of each link
    answers: list[int] = field(default_factory=list)  # answer template indexes (questions)
    n_formulas: int = 0  # title + body + comments
    n_comments: int = 0


@dataclass(slots=True)
class Templates:
    bases: list[BaseFormula]
    base_forms: list[tuple[str, str, str, str, str]]  # (latex, body-, raw-escaped, visual id, MathML)
    visual_ids: dict[str, str]  # sample LaTeX -> visual id ("" where the sample has none)
    base_index: dict[str, int]  # sample LaTeX -> base formula
    questions: list[PostTemplate]
    answers: list[PostTemplate]
    vocabulary: list[str]


def _iter_rows(path: Path):
    for _event, elem in etree.iterparse(str(path), tag="row", huge_tree=True):
        yield dict(elem.attrib)
        elem.clear()
        while elem.getprevious() is not None:
            del elem.getparent()[0]


class _TemplateBuilder:
    def __init__(self, sample: Path, seed: int, with_mathml: bool, raw_dump: bool = False):
        self.raw_dump = raw_dump
        self.sample = sample
        self.rnd = random.Random(seed)
        self.bases: list[BaseFormula] = []
        self.base_of: dict[str, int] = {}
        self.formula_latex: dict[str, str] = {}
        self.formula_vid: dict[str, str] = {}
        self.with_mathml = with_mathml
        self.n_pieces = 0
        self.text_parts: list[str] = []

    def read_formulas(self) -> None:
        tsv = self.sample / "formulas" / "latex_representation_v3.tsv"
        vids: dict[str, str] = {}
        with tsv.open(newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh, delimiter="\t")
            next(reader)
            for fid, _post, _thread, _kind, vid, latex in reader:
                self.formula_latex[fid] = latex
                self.formula_vid[fid] = vid
                if vid or latex not in vids:
                    vids[latex] = vid
        self.visual_ids = vids
        self.mathml: dict[str, str] = {}
        if self.with_mathml:
            slt = self.sample / "formulas" / "slt_representation_v3.tsv"
            with slt.open(newline="", encoding="utf-8") as fh:
                reader = csv.reader(fh, delimiter="\t")
                next(reader)
                for fid, _post, _thread, _kind, _vid, mathml in reader:
                    latex = self.formula_latex.get(fid)
                    if latex is not None and mathml and latex not in self.mathml:
                        self.mathml[latex] = mathml

    def base(self, latex: str) -> int:
        b = self.base_of.get(latex)
        if b is None:
            vid = self.visual_ids.get(latex, "")
            # Formulae without a visual id in the sample (LaTeXML failures) stay verbatim.
            keep = keep_probability(latex) if vid else 1.0
            b = self.base_of[latex] = len(self.bases)
            self.bases.append(BaseFormula(latex, vid, keep, self.mathml.get(latex, "")))
        return b

    def unannotated(self, m: re.Match[str], escaped: bool) -> str:
        """A span whose id the TSV lacks becomes un-annotated math, as the sample writes it."""
        if m.group(1) in self.formula_latex:
            return m.group(0)
        if escaped and not self.raw_dump:
            return f'<span class="math-container">${m.group(2)}$</span>'
        return f"${m.group(2)}$"

    def split(self, markup: str, *, escaped: bool) -> tuple[list[str], list[int], list[bool]]:
        texts: list[str] = []
        formulas: list[int] = []
        display: list[bool] = []
        pos = 0
        if self.raw_dump and escaped:  # a dump body has bare $...$, no un-annotated spans
            markup = UNANNOTATED_SPAN.sub(r"\1", markup)
        if any(m.group(1) not in self.formula_latex for m in MATH_SPAN.finditer(markup)):
            markup = MATH_SPAN.sub(lambda m: self.unannotated(m, escaped), markup)
        for m in MATH_SPAN.finditer(markup):
            latex = self.formula_latex[m.group(1)]
            texts.append(markup[pos : m.start()])
            formulas.append(self.base(latex))
            before = markup[max(0, m.start() - 3) : m.start()]
            after = markup[m.end() : m.end() + 4]
            display.append(escaped and before == "<p>" and after == "</p>")
            pos = m.end()
        texts.append(markup[pos:])
        return texts, formulas, display

    def piece(self, markup: str, *, escaped: bool) -> Piece:
        texts, formulas, display = self.split(markup, escaped=escaped)
        self.n_pieces += 1
        self.text_parts.extend(texts)
        return Piece(self.n_pieces, texts, formulas, display)

    def build(self) -> Templates:
        self.read_formulas()
        col = self.sample
        comments_of: dict[int, list[Piece]] = {}
        for a in _iter_rows(col / "Comments.V1.3.xml"):
            comments_of.setdefault(int(a["PostId"]), []).append(self.piece(a.get("Text", ""), escaped=False))
        links_of: dict[int, list[int]] = {}
        for a in _iter_rows(col / "PostLinks.V1.3.xml"):
            links_of.setdefault(int(a["PostId"]), []).append(int(a["LinkTypeId"]))
        questions: list[PostTemplate] = []
        answers: list[PostTemplate] = []
        question_index: dict[int, int] = {}
        parents: list[int] = []
        for a in _iter_rows(col / "Posts.V1.3.xml"):
            pid = int(a["Id"])
            t = PostTemplate(
                body=self.piece(a.get("Body", ""), escaped=True), comments=comments_of.get(pid, [])
            )
            if a.get("PostTypeId") == "1":
                t.title = self.piece(a.get("Title", ""), escaped=False)
                t.tags = attr(a.get("Tags", ""))
                t.links = links_of.get(pid, [])
                question_index[pid] = len(questions)
                questions.append(t)
            else:
                parents.append(int(a["ParentId"]))
                answers.append(t)
        for i, parent in enumerate(parents):
            q = question_index.get(parent)
            if q is not None:
                questions[q].answers.append(i)
        for t in questions + answers:
            ps = [t.body, *t.comments] + ([t.title] if t.title else [])
            t.n_formulas = sum(len(p.formulas) for p in ps)
            t.n_comments = len(t.comments)
        forms = []
        for b in self.bases:
            forms.append((b.latex, attr(html_escape(b.latex)), attr(b.latex), b.visual_id, b.mathml))
        return Templates(
            self.bases, forms, self.visual_ids, self.base_of, questions, answers, self.vocabulary()
        )

    def vocabulary(self) -> list[str]:
        """Lowercase words of the sample text, one entry per occurrence (frequency-weighted)."""
        text = _TAG_OR_MATH.sub(" ", "\n".join(self.text_parts))
        return _WORD.findall(text) or ["text"]


_TAG_OR_MATH = re.compile(r"<[^>]*>|&#?\w+;|\$[^$]*\$")
_WORD = re.compile(r"(?<![\\\w])[a-z]{3,}(?!\w)")


def text_variants(piece: Piece, vocabulary: list[str], seed: int) -> list[tuple[str, ...]]:
    """Variant 0 is the sample text; the others replace ~WORD_REPLACE_P of its lowercase words."""
    rnd = random.Random(seed * 1_000_003 + piece.index)
    variants = []
    for text in piece.source:
        spans = [m.span(1) for m in TEXT_TOKEN.finditer(text) if m.group(1)]
        out = [attr(text)]
        for _v in range(1, TEXT_VARIANTS):
            k = min(len(spans), int(len(spans) * WORD_REPLACE_P + rnd.random()))
            if not k:
                out.append(out[0])
                continue
            parts = []
            pos = 0
            for s, e in sorted(rnd.sample(spans, k)):
                parts.append(text[pos:s])
                parts.append(rnd.choice(vocabulary))
                pos = e
            parts.append(text[pos:])
            out.append(attr("".join(parts)))
        variants.append(tuple(out))
    return variants


def build_templates(sample: Path, seed: int, with_mathml: bool = False, raw_dump: bool = False) -> Templates:
    return _TemplateBuilder(sample, seed, with_mathml, raw_dump).build()


# --------------------------------------------------------------------------- plan


@dataclass(slots=True)
class Plan:
    """Which template each generated post uses and where every chunk's ids start."""

    n_answers: int
    n_questions: int
    q_template: np.ndarray
    answer_count: np.ndarray
    a_template: np.ndarray
    a_start: np.ndarray  # first answer index of each question (len Q + 1)
    chunk: int  # questions per chunk
    chunk_starts: list[tuple[int, int, int, int, int]]  # (question, post id, comment id, formula id, link id)
    totals: dict[str, int]


def make_plan(tpl: Templates, n_answers: int, seed: int, chunk: int = CHUNK_QUESTIONS) -> Plan:
    rng = np.random.default_rng([seed, 0])
    n_q = max(1, round(n_answers / ANSWERS_PER_QUESTION))
    q_forms = np.array([t.n_formulas for t in tpl.questions], dtype=np.float64)
    a_forms = np.array([t.n_formulas for t in tpl.answers], dtype=np.float64)
    # The sample is richer in formulae than ARQMath (22.7 per answer); tilt template choice
    # towards formula-poor posts, w = exp(-beta * formulas), until the mean is ~20 per answer.
    target = FORMULAE_PER_ANSWER * ANSWERS_PER_QUESTION  # per question with its answers

    # Per question template: the mean formulae of its own answers, and how often they are used.
    own_mean = np.array(
        [np.mean([a_forms[a] for a in t.answers]) if t.answers else 0.0 for t in tpl.questions]
    )
    own_share = np.array([OWN_ANSWER_SHARE if t.answers else 0.0 for t in tpl.questions])

    def expected(beta: float) -> float:
        wq = np.exp(-beta * q_forms)
        wa = np.exp(-beta * a_forms)
        pq = wq / wq.sum()
        share = float(pq @ own_share)
        per_answer = float(pq @ (own_share * own_mean)) + (1 - share) * float(wa @ a_forms) / wa.sum()
        return float(pq @ q_forms) + ANSWERS_PER_QUESTION * per_answer

    lo, hi = 0.0, 1.0
    if expected(0.0) > target:
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if expected(mid) > target else (lo, mid)
    beta = lo
    wq = np.exp(-beta * q_forms)
    wa = np.exp(-beta * a_forms)
    q_template = rng.choice(len(tpl.questions), size=n_q, p=wq / wq.sum())
    answer_count = np.bincount(rng.integers(0, n_q, size=n_answers), minlength=n_q)
    a_start = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(answer_count, out=a_start[1:])
    # Answer j of a question reuses answer j of its template's question when there is one.
    qi = np.repeat(np.arange(n_q), answer_count)
    j = np.arange(n_answers) - a_start[qi]
    own_len = np.array([len(t.answers) for t in tpl.questions], dtype=np.int64)
    own_off = np.zeros(len(tpl.questions) + 1, dtype=np.int64)
    np.cumsum(own_len, out=own_off[1:])
    own_flat = np.array([a for t in tpl.questions for a in t.answers] or [0], dtype=np.int64)
    tq = q_template[qi]
    has_own = own_len[tq] > 0
    own = own_flat[own_off[tq] + j % np.maximum(own_len[tq], 1)]
    random_pick = rng.choice(len(tpl.answers), size=n_answers, p=wa / wa.sum())
    use_own = has_own & (rng.random(n_answers) < OWN_ANSWER_SHARE)
    a_template = np.where(use_own, own, random_pick)

    q_comments = np.array([t.n_comments for t in tpl.questions], dtype=np.int64)[q_template]
    a_comments = np.array([t.n_comments for t in tpl.answers], dtype=np.int64)[a_template]
    q_formulas = q_forms.astype(np.int64)[q_template]
    a_formulas = a_forms.astype(np.int64)[a_template]
    q_links = np.array([len(t.links) for t in tpl.questions], dtype=np.int64)[q_template]
    chunk_starts = []
    post = comment = formula = link = 1
    for q0 in range(0, n_q, chunk):
        q1 = min(n_q, q0 + chunk)
        chunk_starts.append((q0, post, comment, formula, link))
        a0, a1 = int(a_start[q0]), int(a_start[q1])
        post += (q1 - q0) + (a1 - a0)
        comment += int(q_comments[q0:q1].sum() + a_comments[a0:a1].sum())
        formula += int(q_formulas[q0:q1].sum() + a_formulas[a0:a1].sum())
        link += int(q_links[q0:q1].sum() if n_q > 1 else 0)
    totals = {
        "questions": n_q,
        "answers": n_answers,
        "comments": comment - 1,
        "post_links": link - 1,
        "formulas": formula - 1,
    }
    return Plan(n_answers, n_q, q_template, answer_count, a_template, a_start, chunk, chunk_starts, totals)


# --------------------------------------------------------------------------- generation


@dataclass(slots=True)
class Options:
    seed: int
    raw_dump: bool
    slt: bool


_STATE: dict[str, object] = {}  # templates, plan and options, shared with forked workers
# Variants 1..CACHE_VARIANTS of each base, per process; a pure function of (seed, base, k).
_VARIANT_CACHE: dict[int, tuple[str, str, str, str, str]] = {}


class _ChunkWriter:
    """Formats one chunk of threads; ids continue from the plan's chunk start."""

    def __init__(self, tpl: Templates, plan: Plan, opts: Options, chunk: int):
        self.tpl = tpl
        self.plan = plan
        self.opts = opts
        self.q0, self.post_id, self.comment_id, self.formula_id, self.link_id = plan.chunk_starts[chunk]
        self.rng = np.random.default_rng([opts.seed, 1, chunk])
        self.seed_mix = mix64(opts.seed * 0x9E3779B97F4A7C15 + 12345)
        self.posts: list[str] = []
        self.comments: list[str] = []
        self.links: list[str] = []
        self.latex_rows: list[tuple] = []
        self.slt_rows: list[tuple] = []
        self.by_type: Counter[str] = Counter()
        # Random numbers are drawn in blocks and consumed as Python floats/ints.
        self._u: list[float] = []
        self._k: list[int] = []
        self._r: list[int] = []

    def _refill(self) -> None:
        self._u = self.rng.random(4096).tolist()
        self._k = self.rng.zipf(VARIANT_ZIPF_A, 4096).tolist()
        self._r = self.rng.integers(0, 1 << 62, 4096).tolist()

    def formula(self, b: int) -> tuple[str, str, str, str, str]:
        """(latex, body-escaped, raw-escaped, visual id, MathML) of one instance of base formula ``b``."""
        if not self._u:
            self._refill()
        u = self._u.pop()
        k = self._k.pop()
        r = self._r.pop()
        base = self.tpl.bases[b]
        keep = base.keep_p
        if u < keep:
            return self.tpl.base_forms[b]
        if u - keep < FRESH_VARIANT_P * (1 - keep):
            k = r | (1 << 62)  # a fresh variant: keeps distinct formulae growing with the collection
        key = b * 64 + k
        if k <= CACHE_VARIANTS:
            hit = _VARIANT_CACHE.get(key)
            if hit is not None:
                return hit
        h = mix64(self.seed_mix ^ mix64(b * 0x100000001B3 + k))
        latex, mapping = variant_latex(base, h)
        same = self.tpl.base_index.get(latex)
        if same is not None:  # the variant is a formula of the sample (C -> R in \mathbb{C})
            forms = self.tpl.base_forms[same]
            if k <= CACHE_VARIANTS:
                _VARIANT_CACHE[key] = forms
            return forms
        vid = self.tpl.visual_ids.get(latex)
        if vid is None:
            vid = hashed_visual_id(latex)
        mathml = variant_mathml(base.mathml, latex, mapping) if self.opts.slt else ""
        if _NEEDS_ESCAPE.search(latex):
            forms = (latex, attr(html_escape(latex)), attr(latex), vid, mathml)
        else:
            forms = (latex, latex, latex, vid, mathml)
        if k <= CACHE_VARIANTS:
            _VARIANT_CACHE[key] = forms
        return forms

    def rand(self) -> int:
        if not self._r:
            self._refill()
        self._u.pop()
        self._k.pop()
        return self._r.pop()

    def text(self, piece: Piece, post_id: int, thread_id: int, kind: str, body: bool) -> str:
        """The escaped attribute value of a title, body or comment, with new formula ids."""
        r = self.rand()
        texts = piece.texts
        if texts is None:
            texts = piece.texts = text_variants(piece, self.tpl.vocabulary, self.opts.seed)
        out = [texts[0][r % TEXT_VARIANTS]]
        raw = self.opts.raw_dump
        rows = self.latex_rows
        slt = self.opts.slt
        for i, b in enumerate(piece.formulas):
            latex, body_form, raw_form, vid, mathml = self.formula(b)
            shown = body_form if body else raw_form
            if raw:
                delim = "$$" if piece.display[i] else "$"
                out.append(delim + shown + delim)
            else:
                fid = self.formula_id
                self.formula_id += 1
                out.append(f"{SPAN_OPEN}{fid}{SPAN_MID}{shown}{SPAN_CLOSE}")
                rows.append((fid, post_id, thread_id, kind, vid, latex))
                if slt:
                    self.slt_rows.append((fid, post_id, thread_id, kind, vid, mathml))
            r >>= 2
            if r < TEXT_VARIANTS:
                r = self.rand()
            out.append(texts[i + 1][r % TEXT_VARIANTS])
        self.by_type[kind] += len(piece.formulas)
        return "".join(out)

    def date(self, post_id: int) -> str:
        """Raw dump: creation dates spread over 2010-2018 in id order."""
        total = self.plan.n_questions + self.plan.n_answers
        seconds = 1279584000 + int(post_id * 268_000_000 / max(total, 1)) + (post_id * 7919) % 600
        t = time.gmtime(seconds)
        return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{post_id % 1000:03d}"

    def comments_of(self, t: PostTemplate, post_id: int, thread_id: int) -> None:
        for c in t.comments:
            cid = self.comment_id
            self.comment_id += 1
            text = self.text(c, post_id, thread_id, "comment", body=False)
            if self.opts.raw_dump:
                r = self.rand()
                self.comments.append(
                    f'{ROW_INDENT}<row Id="{cid}" PostId="{post_id}" Score="{r % 4}" Text="{text}" '
                    f'CreationDate="{self.date(post_id)}" UserId="{1 + (r >> 3) % 500000}" '
                    f'ContentLicense="CC BY-SA 3.0"/>\n'
                )
            else:
                self.comments.append(f'{ROW_INDENT}<row Id="{cid}" PostId="{post_id}" Text="{text}"/>\n')

    def thread(self, q: int) -> None:
        plan, tpl, raw = self.plan, self.tpl, self.opts.raw_dump
        qt = tpl.questions[int(plan.q_template[q])]
        qid = self.post_id
        a0, a1 = int(plan.a_start[q]), int(plan.a_start[q + 1])
        self.post_id += 1 + (a1 - a0)
        assert qt.title is not None
        title = self.text(qt.title, qid, qid, "title", body=False)
        body = self.text(qt.body, qid, qid, "question", body=True)
        if raw:
            r = self.rand()
            d = self.date(qid)
            self.posts.append(
                f'{ROW_INDENT}<row Id="{qid}" PostTypeId="1" CreationDate="{d}" Score="{r % 13 - 2}" '
                f'ViewCount="{20 + (r >> 4) % 5000}" Body="{body}" OwnerUserId="{1 + (r >> 17) % 500000}" '
                f'LastActivityDate="{d}" Title="{title}" Tags="{qt.tags}" AnswerCount="{a1 - a0}" '
                f'CommentCount="{qt.n_comments}" ContentLicense="CC BY-SA 3.0"/>\n'
            )
        else:
            self.posts.append(
                f'{ROW_INDENT}<row Id="{qid}" PostTypeId="1" Title="{title}" Body="{body}" '
                f'AnswerCount="{a1 - a0}" Tags="{qt.tags}"/>\n'
            )
        self.comments_of(qt, qid, qid)
        if plan.n_questions > 1:
            for link_type in qt.links:
                r = self.rand()
                # Duplicates point to an older question, related links anywhere.
                span = q if link_type == 3 and q > 0 else plan.n_questions
                target = r % span
                if target == q:
                    target = (q + 1) % plan.n_questions
                target_id = target + 1 + int(plan.a_start[target])
                lid = self.link_id
                self.link_id += 1
                if raw:
                    self.links.append(
                        f'{ROW_INDENT}<row Id="{lid}" CreationDate="{self.date(qid)}" PostId="{qid}" '
                        f'RelatedPostId="{target_id}" LinkTypeId="{link_type}"/>\n'
                    )
                else:
                    self.links.append(
                        f'{ROW_INDENT}<row Id="{lid}" PostId="{qid}" RelatedPostId="{target_id}" '
                        f'LinkTypeId="{link_type}"/>\n'
                    )
        for a in range(a0, a1):
            at = tpl.answers[int(plan.a_template[a])]
            aid = qid + 1 + (a - a0)
            body = self.text(at.body, aid, qid, "answer", body=True)
            if raw:
                r = self.rand()
                d = self.date(aid)
                self.posts.append(
                    f'{ROW_INDENT}<row Id="{aid}" PostTypeId="2" ParentId="{qid}" CreationDate="{d}" '
                    f'Score="{r % 15 - 2}" Body="{body}" OwnerUserId="{1 + (r >> 17) % 500000}" '
                    f'LastActivityDate="{d}" CommentCount="{at.n_comments}" ContentLicense="CC BY-SA 3.0"/>\n'
                )
            else:
                self.posts.append(
                    f'{ROW_INDENT}<row Id="{aid}" PostTypeId="2" Body="{body}" ParentId="{qid}"/>\n'
                )
            self.comments_of(at, aid, qid)

    def run(self) -> dict[str, object]:
        q1 = min(self.plan.n_questions, self.q0 + self.plan.chunk)
        for q in range(self.q0, q1):
            self.thread(q)
        out: dict[str, object] = {
            "posts": "".join(self.posts).encode("utf-8"),
            "comments": "".join(self.comments).encode("utf-8"),
            "links": "".join(self.links).encode("utf-8"),
            "by_type": dict(self.by_type),
            "ids": (self.post_id, self.comment_id, self.formula_id, self.link_id),
        }
        if not self.opts.raw_dump:
            out["latex"] = _tsv(self.latex_rows)
            if self.opts.slt:
                out["slt"] = _tsv(self.slt_rows)
        return out


def _tsv(rows: list[tuple]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, delimiter="\t", quoting=csv.QUOTE_MINIMAL, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode("utf-8")


def _run_chunk(chunk: int) -> dict[str, object]:
    return _ChunkWriter(_STATE["tpl"], _STATE["plan"], _STATE["opts"], chunk).run()  # type: ignore[arg-type]


TSV_HEADER = "id\tpost_id\tthread_id\ttype\tvisual_id\tformula\n"


def generate(
    n_answers: int,
    out: Path,
    *,
    seed: int = 1,
    sample: Path = SAMPLE,
    slt: bool = False,
    raw_dump: bool = False,
    workers: int = 1,
    chunk: int = CHUNK_QUESTIONS,
) -> dict[str, object]:
    """Write a collection with ``n_answers`` answers to ``out``; return the summary."""
    start = time.perf_counter()
    tpl = build_templates(sample, seed, with_mathml=slt and not raw_dump, raw_dump=raw_dump)
    plan = make_plan(tpl, n_answers, seed, chunk)
    opts = Options(seed, raw_dump, slt and not raw_dump)
    templates_s = time.perf_counter() - start
    _STATE.update(tpl=tpl, plan=plan, opts=opts)
    out.mkdir(parents=True, exist_ok=True)
    if raw_dump:
        names = {"posts": "Posts.xml", "comments": "Comments.xml", "links": "PostLinks.xml"}
    else:
        names = {"posts": "Posts.V1.3.xml", "comments": "Comments.V1.3.xml", "links": "PostLinks.V1.3.xml"}
        (out / "formulas").mkdir(exist_ok=True)
        names["latex"] = "formulas/latex_representation_v3.tsv"
        if opts.slt:
            names["slt"] = "formulas/slt_representation_v3.tsv"
    roots = {"posts": "posts", "comments": "comments", "links": "postlinks"}
    files = {key: (out / name).open("wb") for key, name in names.items()}
    by_type: Counter[str] = Counter()
    try:
        for key, fh in files.items():
            fh.write((XML_DECL + f"<{roots[key]}>\n" if key in roots else TSV_HEADER).encode("utf-8"))
        chunks = range(len(plan.chunk_starts))
        if workers > 1 and len(chunks) > 1:
            ctx = multiprocessing.get_context("fork")
            with ctx.Pool(workers) as pool:
                results = pool.imap(_run_chunk, chunks)
                by_type = _write(results, files)
        else:
            by_type = _write(map(_run_chunk, chunks), files)
        for key, fh in files.items():
            if key in roots:
                fh.write(f"</{roots[key]}>\n".encode())
    finally:
        for fh in files.values():
            fh.close()
        _STATE.clear()
        _VARIANT_CACHE.clear()
    summary: dict[str, object] = {
        "out": str(out),
        "seed": seed,
        "format": "raw-dump" if raw_dump else "arqmath",
    }
    summary.update(plan.totals)
    if raw_dump:
        summary["formulas_in_text"] = summary.pop("formulas")
    summary["formulas_by_type"] = {k: by_type.get(k, 0) for k in ("title", "question", "answer", "comment")}
    summary["formulas_per_answer"] = round(plan.totals["formulas"] / max(n_answers, 1), 2)
    summary["bytes"] = {name: (out / name).stat().st_size for name in names.values()}
    summary["seconds"] = {"templates": round(templates_s, 2), "total": round(time.perf_counter() - start, 2)}
    return summary


def _write(results, files) -> Counter[str]:
    by_type: Counter[str] = Counter()
    for res in results:
        for key, fh in files.items():
            fh.write(res[key])
        by_type.update(res["by_type"])
    return by_type


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--answers", type=int, required=True, help="number of answers (ARQMath: 1400000)")
    p.add_argument("--out", type=Path, default=Path("generated-collection"), help="output directory")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sample", type=Path, default=SAMPLE, help="the real sample collection directory")
    p.add_argument("--slt", action="store_true", help="also write formulas/slt_representation_v3.tsv")
    p.add_argument("--raw-dump", action="store_true", help="write a raw Stack Exchange dump ($...$ math)")
    p.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes (output is the same)"
    )
    p.add_argument(
        "--chunk", type=int, default=CHUNK_QUESTIONS, help="questions per chunk (part of what the seed fixes)"
    )
    args = p.parse_args(argv)
    if args.answers < 1 or args.chunk < 1:
        print("error: --answers and --chunk must be at least 1", file=sys.stderr)
        return 2
    for name in (
        "Posts.V1.3.xml",
        "Comments.V1.3.xml",
        "PostLinks.V1.3.xml",
        "formulas/latex_representation_v3.tsv",
    ):
        if not (args.sample / name).is_file():
            print(f"error: the sample collection lacks {args.sample / name}", file=sys.stderr)
            return 2
    summary = generate(
        args.answers,
        args.out,
        seed=args.seed,
        sample=args.sample,
        slt=args.slt,
        raw_dump=args.raw_dump,
        workers=max(1, args.workers),
        chunk=args.chunk,
    )
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
