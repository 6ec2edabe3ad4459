"""Task 1 topics as people type them without LaTeX, and ``ours`` on them beside the LaTeX topics.

    python bench/plain_topics.py --index INDEX_DIR [--systems ours,bm25-thread] [--show A.1]
    python bench/plain_topics.py --write DIR        # the rewritten topic files, to read or reuse

The converter rewrites every formula of a topic's title and question as ASCII maths: ``\\frac{a}{b}``
-> ``(a)/(b)``, ``\\sqrt{2}`` -> ``sqrt(2)``, ``\\int_0^1`` -> ``integral from 0 to 1``, ``x^{2}`` ->
``x^2`` (braces of a longer script become brackets: ``x^(n+1)``), ``\\sum_{k=1}^n`` -> ``sum from k=1
to n``, ``\\lim_{x\\to 0}`` -> ``lim x->0``, Greek letters spelt out, ``\\le`` -> ``<=``, ``\\in`` ->
``in``, ``\\mathbb{R}`` -> ``R``, ``\\left``/``\\right``, sizes and spacing dropped, unknown commands as
their names; no ``$``, no markup.  It is written for this measurement and knows nothing of the
query-side reader (:mod:`mathsearch.text.plainmath`), which must cope with any such rewriting.

The table: nDCG' and nDCG@10 of each system on the LaTeX topics and on the plain ones, per year
(sample collection, qrels restricted to the collection's answers as ``bench/task1_table.py``), and
the plain topics read with the plain-words reader off (what the engine did before it).
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import re
import sys
from pathlib import Path

from mathsearch.evaluation.measures import RANKED_MEASURES
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.evaluation.trec import TrecScorer, cut_depth
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.records import Topic
from mathsearch.systems import SearchContext, SearchQuery, make_system
from mathsearch.systems.runner import top

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
YEARS = ("2020", "2021")

_SPACED = re.compile(r"(\s*)(\\[A-Za-z]+|\\.|[0-9]+(?:\.[0-9]+)?|\S)", re.S)
_GREEK = set("""alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi
    rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi
    Omega""".split())
_SYMBOLS = {
    "le": "<=", "leq": "<=", "leqslant": "<=", "ge": ">=", "geq": ">=", "geqslant": ">=", "ne": "!=",
    "neq": "!=", "to": "->", "rightarrow": "->", "longrightarrow": "->", "mapsto": "|->",
    "Rightarrow": "=>", "implies": "=>", "Longrightarrow": "=>", "iff": "<=>", "Leftrightarrow": "<=>",
    "infty": "infinity", "in": "in", "notin": "not in", "subset": "subset", "subseteq": "subset",
    "cdot": "*", "times": "*", "ast": "*", "div": "/", "pm": "+-", "mp": "-+", "approx": "~=", "sim": "~",
    "equiv": "equiv", "cong": "~=", "ldots": "...", "cdots": "...", "dots": "...", "vdots": "...",
    "partial": "d", "nabla": "nabla", "circ": "o", "cup": "union", "cap": "intersect", "setminus": "\\",
    "forall": "for all", "exists": "exists", "emptyset": "{}", "varnothing": "{}", "lt": "<", "gt": ">",
    "mid": "|", "vert": "|", "lvert": "|", "rvert": "|", "|": "||", "Vert": "||", "lVert": "||",
    "rVert": "||", "langle": "<", "rangle": ">", "lfloor": "floor(", "rfloor": ")", "lceil": "ceil(",
    "rceil": ")", "{": "{", "}": "}", "prime": "'", "ell": "l", "neg": "not", "land": "and", "wedge": "and",
    "lor": "or", "vee": "or", "oplus": "+", "otimes": "*", "perp": "perp", "angle": "angle", "deg": "deg",
    "hbar": "h", "choose": "choose", "#": "#", "%": "%", "&": "&", "_": "_", "$": "$", "bmod": "mod", "mod": "mod",
}
_FUNCTIONS = set("""sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh log ln lg exp det gcd max min sup
    inf lim liminf limsup dim ker deg arg Pr""".split())
_DROP = set("""left right big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr displaystyle textstyle scriptstyle
    limits nolimits quad qquad , ; : ! > nonumber notag""".split())
_FONTS = set("mathbb mathbf mathrm mathcal mathit mathsf mathfrak boldsymbol bm operatorname text textrm "
             "textbf textit mbox rm bf it".split())
_ACCENTS = {"bar": "bar", "overline": "bar", "hat": "hat", "widehat": "hat", "tilde": "tilde", "widetilde": "tilde",
            "vec": "vec", "dot": "dot", "ddot": "ddot"}


_UNICODE = {"le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "to": "→", "rightarrow": "→",
            "infty": "∞", "in": "∈", "cdot": "·", "times": "×", "pm": "±", "approx": "≈", "Rightarrow": "⇒",
            "implies": "⇒", "iff": "⇔", "forall": "∀", "exists": "∃", "partial": "∂", "subset": "⊂",
            "subseteq": "⊆", "cup": "∪", "cap": "∩", "equiv": "≡", "ldots": "…", "cdots": "…", "dots": "…"}
_GREEK_CHARS = dict(zip("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi "
                        "pi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma "
                        "Upsilon Phi Psi Omega".split(), "αβγδϵεζηθϑικλμνξπρστυϕφχψωΓΔΘΛΞΠΣΥΦΨΩ", strict=True))
_SETS_UNICODE = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ"}


class _Reader:
    """LaTeX tokens read as groups, written as a person types them: ``style`` "ascii" (the issue's
    rewriting: ``(a)/(b)``, ``sqrt(2)``, ``integral from 0 to 1``, Greek spelt out) or "unicode"
    (a second typist: ``a/b`` where both sides are one term, ``√2``, ``∫_0^1``, ``∑_(k=1)^n``, Greek
    letters, ``≤ → ∞ ∈ ℝ``), to check the reader is not fitted to one rewriting, or "words" (a third:
    ASCII, but squares and cubes, roots and bases said in words: ``x squared``, ``square root of 2``,
    ``cube root of (x+1)``, ``log base 2 of x``)."""

    def __init__(self, latex: str, style: str = "ascii"):
        self.style = style
        # each token with the white space typed before it: the plain text keeps the author's spacing
        self.toks = [m.group(2) for m in _SPACED.finditer(latex)]
        self.spaced = [bool(m.group(1)) for m in _SPACED.finditer(latex)]
        self.pos = 0

    def peek(self) -> str:
        return self.toks[self.pos] if self.pos < len(self.toks) else ""

    def take(self) -> str:
        t = self.peek()
        self.pos += 1
        return t

    def group(self) -> str:
        """One argument: a braced group or a single token, as ASCII."""
        t = self.peek()
        if t == "{":
            self.pos += 1
            out = self.sequence("}")
            self.pos += 1
            return out
        if not t:
            return ""
        return self.item()

    def sequence(self, stop: str = "") -> str:
        out = ""
        while self.pos < len(self.toks) and self.peek() != stop:
            if stop == "" and self.peek() == "}":
                self.pos += 1
                continue
            spaced = self.spaced[self.pos]
            word_before = out[-1:].isalpha()
            part = self.item()
            if not part:
                continue
            # a space where the author typed one, and where two names would run together
            if out and (spaced or (word_before and part[0].isalnum()) or part[0] in "<>=" or out[-1] in "<>="):
                out += " "
            out += part
        return _tidy(out)

    def item(self) -> str:
        t = self.take()
        if t == "{":
            inner = self.sequence("}")
            self.pos += 1
            return f"({inner})" if " choose " in f" {inner} " else inner  # {n \choose k}
        if t in ("^", "_"):
            arg = self.group()
            if self.style == "words" and t == "^" and arg in _SPOKEN_POWERS:
                return " " + _SPOKEN_POWERS[arg]
            return t + (arg if _simple(arg) else f"({arg})")
        if not t.startswith("\\"):
            return t
        name = t[1:]
        if name in _DROP:
            return ""
        if name in ("frac", "dfrac", "tfrac", "cfrac"):
            num, den = self.group(), self.group()
            if self.style == "unicode":
                return f"{_term(num)}/{_term(den)}"
            return f"({num})/({den})"
        if name == "sqrt":
            index = ""
            if self.peek() == "[":
                self.pos += 1
                index = self.sequence("]")
                self.pos += 1
            arg = self.group()
            if self.style == "unicode" and not index:
                return f"√{_term(arg)}"
            if self.style == "words" and index in ("", "3"):
                return f"{'cube' if index else 'square'} root of {_term(arg)}"
            return f"root({index}, {arg})" if index else f"sqrt({arg})"
        if name in ("binom", "dbinom", "tbinom"):
            n, k = self.group(), self.group()
            return f"({n} choose {k})"
        if name in ("int", "iint", "oint", "sum", "prod", "lim"):
            return self.big(name)
        if name in _FONTS:
            inner = self.group()
            return _SETS_UNICODE.get(inner, inner) if self.style == "unicode" and name == "mathbb" else inner
        if name in _ACCENTS:
            return f"{_ACCENTS[name]}({self.group()})"
        if name == "pmod":
            return f"(mod {self.group()})"
        if name in ("begin", "end"):
            self.group()
            return ""
        if name == "\\":
            return ";"
        if name in _GREEK:
            return _GREEK_CHARS.get(name, name) if self.style == "unicode" else name
        if self.style == "unicode" and name in _UNICODE:
            return _UNICODE[name]
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        if name in _FUNCTIONS:
            if self.style == "words" and name == "log" and self.peek() == "_":
                self.pos += 1
                return f"log base {_term(self.group())} of"
            return name
        return name  # an unknown command as its name

    def big(self, name: str) -> str:
        low = high = ""
        while self.peek() in ("_", "^", "\\limits", "\\nolimits"):
            mark = self.take()
            if mark.startswith("\\"):
                continue
            value = self.group()
            if mark == "_":
                low = value
            else:
                high = value
        word = {"int": "integral", "iint": "double integral", "oint": "contour integral", "sum": "sum",
                "prod": "product", "lim": "lim"}[name]
        if self.style == "unicode":
            sign = {"int": "∫", "sum": "∑", "prod": "∏"}.get(name, name)
            scripts = (f"_{_term(low)}" if low else "") + (f"^{_term(high)}" if high else "")
            return sign + scripts
        if name == "lim":
            return f"lim {low}" if low else "lim"
        if low and high:
            return f"{word} from {low} to {high}"
        if low:
            return f"{word} over {low}"
        return word


_SPOKEN_POWERS = {"2": "squared", "3": "cubed"}


def _term(text: str) -> str:
    """``text`` bracketed unless it is one term (a name, a number, a letter with a script)."""
    return text if re.fullmatch(r"[\w.^_'√∞πθ]+", text) else f"({text})"


def _simple(arg: str) -> bool:
    return len(arg) == 1 or arg.isdigit() or arg.isalpha() and len(arg) <= 7 and arg in _GREEK


def _tidy(text: str) -> str:
    text = re.sub(r"\s+([)\]},!'^_])", r"\1", text)
    text = re.sub(r"([(\[{^_])\s+", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def latex_to_plain(latex: str, style: str = "ascii") -> str:
    """One formula as a person types it without LaTeX (style "bare": the LaTeX itself, without dollars)."""
    if style == "bare":
        return " ".join(latex.strip().strip("$").split())
    return _Reader(latex.strip().strip("$"), style).sequence()


_SPAN = re.compile(r'(<span class="math-container"[^>]*>)(.*?)(</span>)', re.S)


def plain_markup(markup: str, escaped: bool, style: str = "ascii") -> str:
    """A topic's title or question (HTML) with each math-container span's formula written plain."""
    def one(m: re.Match) -> str:
        latex = html.unescape(m.group(2)) if escaped else m.group(2)
        latex = latex.strip().strip("$").strip()
        return html.escape(latex_to_plain(latex, style), quote=False)

    return _SPAN.sub(one, markup)


def plain_topic(topic: Topic, style: str = "ascii") -> Topic:
    return dataclasses.replace(topic, title=plain_markup(topic.title, True, style),
                               question=plain_markup(topic.question, True, style), formulas=())


def year_topics(present, year: str) -> tuple[list[Topic], TrecScorer]:
    topics = read_topics(DATA / "topics" / f"task1-{year}.xml")
    qrels = restrict_qrels(qrels_to_dict(read_qrels(DATA / "qrels" / f"task1-{year}.tsv")), present).qrels
    return [t for t in topics if t.topic_id in qrels], TrecScorer(qrels, RANKED_MEASURES)


def run(system, ctx: SearchContext, topics: list[Topic], plain_math: bool) -> dict:
    return {t.topic_id: top(system.search(ctx, SearchQuery.from_topic(t, plain_math=plain_math), 1000), 1000)
            for t in topics}


def mean(per_topic: dict, measure: str) -> float:
    values = list(per_topic[measure].values())
    return sum(values) / max(len(values), 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path)
    ap.add_argument("--systems", default="ours,bm25-thread")
    ap.add_argument("--style", default="ascii", choices=("ascii", "unicode", "words", "bare"),
                    help="how the typist writes: the issue's ASCII rewriting, a second one with Unicode symbols, "
                         "a third who says squares, roots and log bases in words, or LaTeX typed without dollars")
    ap.add_argument("--show", default="", help="print these topics (comma-separated ids) as rewritten and read")
    ap.add_argument("--write", type=Path, help="write the plain topics of each year as plain-words text here")
    args = ap.parse_args(argv)
    if args.show or args.write:
        from mathsearch.indexes.documents import topic_text

        for year in YEARS:
            topics = read_topics(DATA / "topics" / f"task1-{year}.xml")
            lines = []
            for t in topics:
                title, question = topic_text(plain_topic(t, args.style))
                if args.show and t.topic_id in args.show.split(","):
                    q = SearchQuery.from_topic(plain_topic(t, args.style))
                    print(f"{t.topic_id} plain:  {title}\n{question}\n--- read as:\n{q.title}\n{q.question}\n")
                lines.append(f"{t.topic_id}\t{title}\t{' '.join(question.split())}")
            if args.write:
                args.write.mkdir(parents=True, exist_ok=True)
                out = args.write / f"task1-{year}-plain.tsv"
                if out.exists():
                    print(f"{out} exists; not overwritten", file=sys.stderr)
                    return 1
                out.write_text("\n".join(lines) + "\n")
        if not args.index:
            return 0
    if not args.index:
        ap.error("--index is required to measure")
    ctx = SearchContext(args.index)
    present = ctx.store.answer_ids()
    print("| system | year | topics | LaTeX nDCG' | LaTeX nDCG@10 | plain nDCG' | plain nDCG@10 | loss nDCG@10 "
          "| plain, reader off nDCG@10 | LaTeX, reader off nDCG@10 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in [s for s in args.systems.split(",") if s]:
        system = make_system(name)
        for year in YEARS:
            topics, scorer = year_topics(present, year)
            plain = [plain_topic(t, args.style) for t in topics]
            latex_on = scorer.score(cut_depth(run(system, ctx, topics, True)))
            plain_on = scorer.score(cut_depth(run(system, ctx, plain, True)))
            plain_off = scorer.score(cut_depth(run(system, ctx, plain, False)))
            latex_off = scorer.score(cut_depth(run(system, ctx, topics, False)))
            a, b = mean(latex_on, "nDCG@10"), mean(plain_on, "nDCG@10")
            print(f"| {name} | {year} | {len(topics)} | {mean(latex_on, Nprime):.3f} | {a:.3f} | "
                  f"{mean(plain_on, Nprime):.3f} | {b:.3f} | {b - a:+.3f} | {mean(plain_off, 'nDCG@10'):.3f} | "
                  f"{mean(latex_off, 'nDCG@10'):.3f} |", flush=True)
    return 0


Nprime = "nDCG'"

if __name__ == "__main__":
    sys.exit(main())
