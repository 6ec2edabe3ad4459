"""Text analysis shared by indexing and querying: words, math tokens, LaTeX as words.

Index and query must tokenise identically, so every token a search index holds is made
here, in Python, and the index stores them split on white space only.  Texts come as
plain text with formulae written ``$LaTeX$`` (the store's ``title``/``text`` columns and
topics read through :mod:`mathsearch.readers.html`).

Token families (each lands in its own index field):

* **words**: lower-cased, stop words dropped, light plural stemming (Harman's S-stemmer).
* **math tokens**: LaTeX symbols (``m:\\frac``, ``m:x``), adjacent symbol pairs
  (``p:x|^``) and one token per whole formula (``f:`` + hash of the normalised LaTeX)
  so that an exact occurrence of the topic's formula counts most.
* **raw LaTeX terms**: what a generic tokeniser makes of text with raw LaTeX in it
  (alphanumeric runs), as the lab's Terrier baseline saw it.
* **LaTeX words**: formulae mapped to English words (``\\frac`` -> ``frac``, ``^`` ->
  ``sup``), as the lab's PyTerrier baseline: :func:`mathsearch.formula.latex_to_words`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from .._compiled import load_kernel
from ..formula import latex_to_words
from ..formula.words import CHAR_WORDS, SKIPPED_COMMANDS
from .dollar_math import find_math

# Short, generic English stop words; mathematical words ("prove", "limit") are kept.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just let me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those through
    to too under until up very was we were what when where which while who whom why will with would you
    your yours yourself yourselves also us may might must shall get got im ive dont doesnt thanks thank
    hi hello please""".split()
)

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_LATEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|[0-9]+(?:\.[0-9]+)?|[A-Za-z]|[^\sA-Za-z0-9\\]")
# Tokens that carry no content of their own: grouping, spacing and sizing.
_LATEX_DROP = frozenset(
    r"{ } \left \right \big \Big \bigg \Bigg \bigl \bigr \Bigl \Bigr \biggl \biggr \, \; \: \! \quad \qquad"
    r" \displaystyle \textstyle \limits \nolimits \mathrm \text \operatorname \mathit \rm \it & \\ ~ \
    \hspace \vspace \tag \label \nonumber \notag $".split()
)
_LATEX_ALIAS = {
    r"\dfrac": r"\frac", r"\tfrac": r"\frac", r"\le": r"\leq", r"\ge": r"\geq", r"\ne": r"\neq",
    r"\to": r"\rightarrow", r"\gets": r"\leftarrow", r"\lbrace": "{", r"\rbrace": "}", r"\{": "{", r"\}": "}",
    r"\lvert": "|", r"\rvert": "|", r"\vert": "|", r"\mid": "|", r"\lVert": r"\|", r"\rVert": r"\|",
    r"\Vert": r"\|", r"\langle": "<", r"\rangle": ">", r"\cdot": "*", r"\times": "*", r"\ast": "*",
    r"\varepsilon": r"\epsilon", r"\varphi": r"\phi", r"\lbrack": "[", r"\rbrack": "]", r"\iff": r"\Leftrightarrow",
    r"\implies": r"\Rightarrow", r"\dots": r"\ldots", r"\cdots": r"\ldots",
}
_DIGITS = frozenset("0123456789")


# -- words --------------------------------------------------------------------------------
# Vocabularies and formulae repeat across a collection: caching the per-token work pays.
@lru_cache(maxsize=500_000)
def stem(word: str) -> str:
    """Harman's S-stemmer: plural endings only (keeps "analysis", "series" readable)."""
    if len(word) > 4 and word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and not word.endswith(("aes", "ees", "oes", "ses", "xes")):
        return word[:-1]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("us", "ss", "is")):
        return word[:-1]
    return word


class _WordTerms(dict):
    """word -> its index term ("" for a stop word or an over-long run), filled on first sight.

    A plain dict lookup per word is what makes analysing millions of posts affordable; the
    vocabulary is bounded by clearing the table when it grows past ``_WORD_CACHE_MAX``.
    """

    __slots__ = ()

    def __missing__(self, word: str) -> str:
        term = "" if word in STOPWORDS or len(word) > 40 else stem.__wrapped__(word)  # this table is its cache
        if len(self) >= _WORD_CACHE_MAX:
            self.clear()
        self[word] = term
        return term


_WORD_CACHE_MAX = 1_000_000
_WORD_TERMS = _WordTerms()


def words(text: str) -> list[str]:
    """Content words of plain text (formulae must already be removed)."""
    if _WORDS is not None:
        return _WORDS.words(text)
    return _words_py(text)


def word_terms(text: str) -> list[tuple[str, str]]:
    """``(word as typed, lower-cased; its term)`` for each content word of plain text: the terms of
    :func:`words` with the words they came from, to name a word back to the person who typed it."""
    return [(w, t) for w in _WORD.findall(text.lower()) if (t := _WORD_TERMS[w])]


def _words_py(text: str) -> list[str]:
    """:func:`words`, the reference of the compiled kernel."""
    return [t for t in map(_WORD_TERMS.__getitem__, _WORD.findall(text.lower())) if t]


# -- prose and formulae ---------------------------------------------------------------------
def split_math(text: str) -> tuple[str, list[str]]:
    """``(prose, formulae)``: the text with each ``$LaTeX$`` replaced by a space, and the LaTeX."""
    if "$" not in text and "\\(" not in text and "\\[" not in text:
        return text, []  # no delimiter, no formula (most comments): skip the regex scan
    if _KERNEL is not None:
        return _KERNEL.split_math(text)
    return _split_math_py(text)


def _split_math_py(text: str) -> tuple[str, list[str]]:
    """:func:`split_math`, the reference of the compiled kernel."""
    found = find_math(text, is_html=False)
    if not found:
        return text, []
    prose: list[str] = []
    pos = 0
    for start, end, _ in found:
        prose.append(text[pos:start])
        pos = end
    prose.append(text[pos:])
    return " ".join(prose), [latex for _, _, latex in found]


class _SymbolTerms(dict):
    """LaTeX token -> its symbol after aliasing ("" when dropped), filled on first sight."""

    __slots__ = ()

    def __missing__(self, tok: str) -> str:
        sym = _LATEX_ALIAS.get(tok, tok)
        sym = "" if sym in _LATEX_DROP else sym
        if len(self) >= _SYMBOL_CACHE_MAX:  # numbers make the only unbounded family
            self.clear()
        self[tok] = sym
        return sym


_SYMBOL_CACHE_MAX = 200_000
_SYMBOL_TERMS = _SymbolTerms()


@lru_cache(maxsize=200_000)
def _latex_symbols(latex: str) -> tuple[str, ...]:
    return tuple([s for s in map(_SYMBOL_TERMS.__getitem__, _LATEX_TOKEN.findall(latex)) if s])


def formula_key(latex: str) -> str:
    """One token for a whole formula: equal for LaTeX strings that differ only in spacing/grouping."""
    return symbols_key(_latex_symbols(latex))


def symbols_key(symbols: Iterable[str]) -> str:
    """:func:`formula_key` of a formula whose symbols are ``symbols``."""
    return "f:" + hashlib.blake2b("".join(symbols).encode("utf-8"), digest_size=8).hexdigest()


def math_tokens(latex: str) -> list[str]:
    """Symbols, adjacent symbol pairs and the whole-formula key of one formula."""
    return list(_math_tokens(latex))


def _kernel_first(method: str, reference: Callable[[str], tuple[str, ...]]) -> Callable[[str], tuple[str, ...]]:
    """A formula's terms by the compiled kernel's ``method`` where it takes the formula, else by
    ``reference``; cached per formula (a collection repeats its formulae)."""

    @lru_cache(maxsize=200_000)
    def terms(latex: str) -> tuple[str, ...]:
        out = getattr(_TERMS, method)(latex) if _TERMS is not None else None
        return reference(latex) if out is None else out

    return terms


def _math_tokens_py(latex: str) -> tuple[str, ...]:
    """:func:`math_tokens`, the reference (the compiled kernel declines what it cannot read exactly)."""
    syms = _latex_symbols(latex)
    if not syms:
        return ()
    # Numbers other than small ones say little alone; keep them, but as a class in the pairs.
    out = [f"m:{s}" for s in syms]
    # A symbol of two characters or more is a command (backslash first) or a number of
    # _LATEX_TOKEN (digit first): numbers are told apart by their first character.
    classed = ["#" if len(s) > 1 and s[0] in _DIGITS else s for s in syms]
    out += [f"p:{a}|{b}" for a, b in zip(classed, classed[1:], strict=False)]
    out.append(formula_key(latex))
    return tuple(out)


_math_tokens = _kernel_first("math_tokens", _math_tokens_py)


# Recorded in index manifests: an index built with one mapping cannot be queried with another.
LATEX_WORDS_SOURCE = latex_to_words.__module__


def raw_latex_terms(text: str) -> list[str]:
    """Text with raw LaTeX cut into alphanumeric runs, lower-cased: what a generic tokeniser keeps."""
    if _WORDS is not None:
        return _WORDS.raw(text)
    return _raw_latex_terms_py(text)


def _raw_latex_terms_py(text: str) -> list[str]:
    """:func:`raw_latex_terms`, the reference of the compiled kernel."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) <= 40]


def latex_word_terms(text: str) -> list[str]:
    """Text with each formula replaced by its LaTeX words, as words."""
    prose, formulae = split_math(text)
    return words(prose) + formula_word_terms(formulae)


def formula_word_terms(formulae: Iterable[str]) -> list[str]:
    """The LaTeX words of formulae, as words: the part of :func:`latex_word_terms` they make."""
    out: list[str] = []
    for latex in formulae:
        out += _formula_words(latex)
    return out


def _formula_words_py(latex: str) -> tuple[str, ...]:
    """The LaTeX words of one formula, the reference of the compiled kernel."""
    return tuple([w for w in _WORD.findall(latex_to_words(latex).lower()) if len(w) <= 40])


_formula_words = _kernel_first("formula_words", _formula_words_py)


def formula_math_tokens(formulae: Iterable[str]) -> list[str]:
    """The math tokens (:func:`math_tokens`) of formulae, one formula after another."""
    out: list[str] = []
    for latex in formulae:
        out += _math_tokens(latex)
    return out


# The hot loops compiled (_terms.pyx), over this module's and formula.words' own tables; None
# where not built or the pure path is asked for: the functions above are its reference.
_KERNEL = load_kernel("mathsearch.text._terms")
_TERMS = (_KERNEL.FormulaTerms(_SYMBOL_TERMS.__getitem__, symbols_key, CHAR_WORDS, SKIPPED_COMMANDS)
          if _KERNEL is not None else None)
_WORDS = _KERNEL.WordTerms(_WORD_TERMS.__getitem__, STOPWORDS) if _KERNEL is not None else None


def tag_terms(tags: Iterable[str]) -> list[str]:
    return [t.lower() for t in tags if t and not any(c.isspace() for c in t)]
