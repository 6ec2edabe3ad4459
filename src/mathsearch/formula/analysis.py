"""The formula API in one place: parse, analyse (cached), compare."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

from .opt import ONode, build_opt
from .parser import parse_slt
from .representations import (
    opt_key,
    opt_tuples,
    prefix,
    slt_tuples,
    visual_key_of_slt,
)
from .slt import SNode, node_count


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed formula: its SLT and OPT, and whether the parser had to repair the input."""

    latex: str
    slt: SNode
    opt: ONode
    recovered: bool
    errors: tuple[str, ...] = ()
    unknown_macros: tuple[str, ...] = ()


def parse_latex(latex: str) -> Parsed:
    """Parse LaTeX into SLT and OPT. Never raises; ``recovered`` says the input was repaired."""
    if not isinstance(latex, str):
        latex = str(latex)
    slt, state = parse_slt(latex)
    opt = build_opt(slt)
    return Parsed(latex, slt, opt, state.n_errors > 0, tuple(state.errors), tuple(state.unknown))


def visual_key(latex_or_slt: str | SNode | Parsed, lab: bool = True) -> str:
    """Key shared by visually identical formulae (``x_1^2`` and ``x^2_1``, ``\\frac12`` and
    ``\\frac{1}{2}``, ``\\left(`` and ``(``, ``\\dfrac`` and ``\\frac``; spacing and
    ``\\displaystyle`` and upright/italic ignored as in the lab's ids; ``\\mathbb{R}`` and coloured
    symbols kept distinct from ``R`` and plain ones).

    With ``lab`` (the default) the key follows the lab's visual ids where they rest on LaTeX
    rather than on what MathJax shows: MathJax-only macros (``\\lt``, ``\\gt``) are unknown
    symbols, as LaTeXML left them.  ``lab=False`` gives pure visual identity (``\\lt`` is ``<``).
    An SLT given directly is keyed as it is.
    """
    if isinstance(latex_or_slt, SNode):
        return visual_key_of_slt(latex_or_slt)
    if isinstance(latex_or_slt, Parsed):
        latex = latex_or_slt.latex
        if not (lab and needs_latex_only(latex)):
            return visual_key_of_slt(latex_or_slt.slt, latex)
    else:
        latex = latex_or_slt
    return visual_key_of_slt(parse_slt(latex, latex_only=lab)[0], latex)


def needs_latex_only(latex: str) -> bool:
    """Whether the lab's visual key of ``latex`` differs from its visual one (MathJax-only macros)."""
    return "\\lt" in latex or "\\gt" in latex


class Analysis:
    """What the indexes need of one formula: visual key, index tokens, size, and the trees.

    ``slt_tokens``/``opt_tokens`` are symbol-pair tuples as strings (:func:`tuple_token`);
    ``opt_key`` and the token bags used by :func:`similarity` are computed on first use.
    """

    __slots__ = ("latex", "visual_key", "recovered", "n_nodes", "slt_tokens", "opt_tokens", "_parsed",
                 "_opt_key", "_slt_bag", "_opt_bag", "_unified_bag")

    def __init__(self, latex: str, visual_key: str, recovered: bool, n_nodes: int,
                 slt_tokens: tuple[str, ...], opt_tokens: tuple[str, ...], parsed: Parsed | None = None):
        self.latex = latex
        self.visual_key = visual_key
        self.recovered = recovered
        self.n_nodes = n_nodes
        self.slt_tokens = slt_tokens
        self.opt_tokens = opt_tokens
        self._parsed = parsed
        self._opt_key: str | None = None
        self._slt_bag: Counter | None = None
        self._opt_bag: Counter | None = None
        self._unified_bag: Counter | None = None

    def __repr__(self) -> str:
        return f"Analysis({self.latex!r}, visual_key={self.visual_key!r}, recovered={self.recovered})"

    @property
    def parsed(self) -> Parsed:
        """The trees; re-parsed on first use when the analyzer did not keep them (saves memory
        and garbage-collector time in large caches)."""
        if self._parsed is None:
            self._parsed = parse_latex(self.latex)
        return self._parsed

    @property
    def opt_key(self) -> str:
        if self._opt_key is None:
            self._opt_key = opt_key(self.parsed.opt)
        return self._opt_key

    @property
    def slt_bag(self) -> Counter:
        if self._slt_bag is None:
            self._slt_bag = Counter(self.slt_tokens)
        return self._slt_bag

    @property
    def opt_bag(self) -> Counter:
        if self._opt_bag is None:
            self._opt_bag = Counter(self.opt_tokens)
        return self._opt_bag

    @property
    def unified_bag(self) -> Counter:
        """OPT tuples with variables and numbers unified (``V!x`` -> ``V!``, ``N!2`` -> ``N!``):
        the structure alone, so that ``a^2+b^2`` matches ``x^2+y^2``."""
        if self._unified_bag is None:
            self._unified_bag = Counter(_unify_token(t) for t in self.opt_tokens)
        return self._unified_bag

    @property
    def prefix(self) -> str:
        return prefix(self.parsed.opt)


def _unify_token(token: str) -> str:
    parts = token.split("\t")
    for i in (0, 1):
        lab = parts[i]
        if lab[:2] in ("V!", "N!"):
            parts[i] = lab[:2]
    return "\t".join(parts)


@dataclass(frozen=True, slots=True)
class AnalyzerConfig:
    """Settings of a :class:`FormulaAnalyzer` (named and printable, like every system)."""

    slt_window: int = 2
    opt_window: int = 2
    cache_size: int = 200_000
    keep_trees: bool = False  # keep SLT/OPT in cached analyses (else re-parsed when asked for)
    lab_visual_key: bool = True  # visual keys as the lab's ids (see :func:`visual_key`)


class FormulaAnalyzer:
    """Cached LaTeX -> :class:`Analysis` (the collection repeats formulae a lot)."""

    def __init__(self, config: AnalyzerConfig | None = None, **overrides: int):
        base = config or AnalyzerConfig()
        if overrides:
            base = AnalyzerConfig(**{**{f: getattr(base, f) for f in base.__slots__}, **overrides})
        self.config = base
        self.analyze = functools.lru_cache(maxsize=base.cache_size)(self._analyze)

    def _analyze(self, latex: str) -> Analysis:
        p = parse_latex(latex)
        cfg = self.config
        s_tok = tuple(["\t".join(t) for t in slt_tuples(p.slt, cfg.slt_window)])
        o_tok = tuple(["\t".join(t) for t in opt_tuples(p.opt, cfg.opt_window)])
        return Analysis(
            latex=latex,
            visual_key=visual_key(p, lab=cfg.lab_visual_key),
            recovered=p.recovered,
            n_nodes=node_count(p.slt),
            slt_tokens=s_tok,
            opt_tokens=o_tok,
            parsed=p if cfg.keep_trees else None,
        )

    def cache_info(self):  # noqa: ANN201 - functools' named tuple
        return self.analyze.cache_info()


def _dice(a: Counter, b: Counter) -> float:
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    common = sum(min(n, b[t]) for t, n in a.items() if t in b)
    return 2.0 * common / (sum(a.values()) + sum(b.values()))


def similarity(query: Analysis, candidate: Analysis, weights: tuple[float, float, float] = (0.4, 0.4, 0.2)) -> float:
    """Structural similarity in [0, 1]: Dice overlap of symbol-pair tuples of the SLT, of the
    OPT, and of the OPT with variables and numbers unified, mixed by ``weights``; 1.0 exactly
    when the visual keys are equal."""
    if query.visual_key == candidate.visual_key:
        return 1.0
    ws, wo, wu = weights
    total = ws + wo + wu
    score = (ws * _dice(query.slt_bag, candidate.slt_bag) + wo * _dice(query.opt_bag, candidate.opt_bag)
             + wu * _dice(query.unified_bag, candidate.unified_bag)) / total
    return min(0.999, score)
