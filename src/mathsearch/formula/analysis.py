"""The formula API in one place: parse, analyse (cached), compare."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

from .opt import ONode, build_opt
from .parser import parse_slt
from .representations import (
    opt_key,
    opt_tuples,
    prefix,
    slt_tuples,
    tuple_token,
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


def visual_key(latex_or_slt: str | SNode | Parsed) -> str:
    """Key shared by visually identical formulae (``x_1^2`` and ``x^2_1``, ``\\frac12`` and
    ``\\frac{1}{2}``, ``\\left(`` and ``(``, ``\\dfrac`` and ``\\frac``; spacing and
    ``\\displaystyle`` ignored, ``\\mathbb{R}`` kept distinct from ``R``)."""
    if isinstance(latex_or_slt, Parsed):
        return visual_key_of_slt(latex_or_slt.slt)
    if isinstance(latex_or_slt, SNode):
        return visual_key_of_slt(latex_or_slt)
    return visual_key_of_slt(parse_slt(latex_or_slt)[0])


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the indexes need of one formula: keys, index tokens and trees."""

    latex: str
    visual_key: str
    recovered: bool
    n_nodes: int
    slt_tokens: tuple[str, ...]
    opt_tokens: tuple[str, ...]
    opt_key: str
    parsed: Parsed = field(repr=False, compare=False)
    slt_bag: Counter = field(repr=False, compare=False, default_factory=Counter)
    opt_bag: Counter = field(repr=False, compare=False, default_factory=Counter)

    @property
    def prefix(self) -> str:
        return prefix(self.parsed.opt)


@dataclass(frozen=True, slots=True)
class AnalyzerConfig:
    """Settings of a :class:`FormulaAnalyzer` (named and printable, like every system)."""

    slt_window: int = 2
    opt_window: int = 2
    cache_size: int = 200_000


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
        s_tok = tuple(tuple_token(t) for t in slt_tuples(p.slt, cfg.slt_window))
        o_tok = tuple(tuple_token(t) for t in opt_tuples(p.opt, cfg.opt_window))
        return Analysis(
            latex=latex,
            visual_key=visual_key_of_slt(p.slt),
            recovered=p.recovered,
            n_nodes=node_count(p.slt),
            slt_tokens=s_tok,
            opt_tokens=o_tok,
            opt_key=opt_key(p.opt),
            parsed=p,
            slt_bag=Counter(s_tok),
            opt_bag=Counter(o_tok),
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


def similarity(query: Analysis, candidate: Analysis, slt_weight: float = 0.5) -> float:
    """Structural similarity in [0, 1]: Dice overlap of symbol-pair tuples, SLT and OPT mixed
    by ``slt_weight``; 1.0 for the same visual key."""
    if query.visual_key == candidate.visual_key:
        return 1.0
    s = _dice(query.slt_bag, candidate.slt_bag)
    o = _dice(query.opt_bag, candidate.opt_bag)
    return min(0.999, slt_weight * s + (1.0 - slt_weight) * o)
