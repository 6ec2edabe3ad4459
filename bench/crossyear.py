"""Cross-year selection, shared by the tuning scripts: choose on one year of topics, report the other.

With ~50 topics a year, a setting chosen on both years finds noise.  So every tuning script chooses
its setting on one year (2020 or 2021) and measures it on the other, both ways, and a setting
replaces the simpler one only if, in both directions, it beats the simpler one on the year it was
not chosen on, and a paired t-test over the topics of both out-of-year comparisons together (about
100) says the gain is not noise (p < ``alpha``).  Each direction's own p is printed too; with ~50
topics a year it is often above 0.05 for a gain that holds in both years.

Settings are labels ordered simplest first (ties go to the simpler); scores are per topic, one
objective value a topic (e.g. the mean of nDCG' and nDCG@10, or a Task 3 source grade).  Only 2020
and 2021 may be used: the 2022 judgements are held out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mathsearch.evaluation.stats import paired_t_test

YEARS = ("2020", "2021")
ALPHA = 0.05
PerTopic = Mapping[str, float]  # topic -> objective value
Scores = Mapping[str, Mapping[str, PerTopic]]  # setting -> year -> per-topic values


def mean(values: PerTopic) -> float:
    return sum(values.values()) / len(values) if values else 0.0


def other(year: str, years: Sequence[str] = YEARS) -> str:
    """The year of ``years`` that is not ``year`` (two years only)."""
    rest = [y for y in years if y != year]
    if len(rest) != 1:
        raise ValueError(f"cross-year selection needs two years, got {', '.join(years)}")
    return rest[0]


def check_years(years: Sequence[str]) -> None:
    """Refuse any year but 2020 and 2021 (2022's judgements are held out)."""
    bad = [y for y in years if y not in YEARS]
    if bad:
        raise SystemExit(f"only {', '.join(YEARS)} may be used for tuning or validation, not {', '.join(bad)}")


def best_on(scores: Scores, order: Sequence[str], year: str) -> str:
    """The setting of ``order`` with the highest mean on ``year``; ties (within 1e-9) to the simpler."""
    best = order[0]
    for label in order[1:]:
        if mean(scores[label][year]) > mean(scores[best][year]) + 1e-9:
            best = label
    return best


@dataclass(frozen=True)
class Direction:
    """One direction of the check: ``chosen`` was the best on ``chosen_on``, measured on ``tested_on``."""

    chosen_on: str
    tested_on: str
    chosen: str
    baseline: str  # the simpler setting it would replace
    in_year: float  # the chosen setting's mean on chosen_on (in sample)
    out_of_year: float  # ... on tested_on (out of sample)
    baseline_out: float  # the simpler setting's mean on tested_on
    p: float  # paired t-test over tested_on's topics, chosen against the simpler setting
    pairs: tuple[tuple[float, float], ...] = ()  # per tested_on topic: (chosen, simpler)

    @property
    def gain(self) -> float:
        return self.out_of_year - self.baseline_out

    def holds(self) -> bool:
        """The chosen setting is not the simpler one and beats it out of year (on the mean)."""
        return self.chosen != self.baseline and self.gain > 0


def direction(scores: Scores, order: Sequence[str], chosen_on: str, tested_on: str, baseline: str | None = None,
              chosen: str | None = None) -> Direction:
    """Choose on ``chosen_on`` among ``order`` (or take ``chosen``), measure on ``tested_on``."""
    baseline = order[0] if baseline is None else baseline
    pick = best_on(scores, order, chosen_on) if chosen is None else chosen
    out, base = scores[pick][tested_on], scores[baseline][tested_on]
    if set(out) != set(base):
        raise ValueError(f"{pick} and {baseline} were scored on different {tested_on} topics")
    topics = sorted(out)
    p = paired_t_test([out[t] for t in topics], [base[t] for t in topics])
    return Direction(chosen_on, tested_on, pick, baseline, mean(scores[pick][chosen_on]), mean(out), mean(base), p,
                     tuple((out[t], base[t]) for t in topics))


def cross_year(scores: Scores, order: Sequence[str], baseline: str | None = None,
               years: Sequence[str] = YEARS) -> list[Direction]:
    """Both directions: chosen on each year, measured on the other."""
    check_years(years)
    return [direction(scores, order, y, other(y, years), baseline) for y in years]


def pooled_p(directions: Sequence[Direction]) -> float:
    """Paired t-test over the topics of every direction's out-of-year comparison together."""
    pairs = [pair for d in directions for pair in d.pairs]
    return paired_t_test([a for a, _ in pairs], [b for _, b in pairs])


def decide(directions: Sequence[Direction], alpha: float = ALPHA) -> tuple[bool, str]:
    """(whether the chosen settings hold out of year in every direction, a one-line reason): each
    beats the simpler setting on the year it was not chosen on, and the paired test over all those
    topics together gives p < alpha."""
    gains = "; ".join(f"chosen on {d.chosen_on}: " + ("the simpler setting itself" if d.chosen == d.baseline else
                                                     f"{d.tested_on} {d.gain:+.3f} (p {d.p:.3g})") for d in directions)
    if not all(d.holds() for d in directions):
        return False, f"keep the simpler setting: {gains}"
    p = pooled_p(directions)
    if p >= alpha:
        return False, f"keep the simpler setting: {gains}; both out-of-year years together p {p:.3g}"
    return True, f"holds out of year both ways: {gains}; both together p {p:.3g}"


def table(directions: Sequence[Direction], cells: Callable[[str, str], str], cell_head: Sequence[str]) -> list[str]:
    """Markdown rows, in-year and out-of-year columns side by side: per direction the chosen
    setting's ``cells(label, year)`` on the year it was chosen on and on the other, the simpler
    setting's on the other, the gain of the objective out of year and its paired p, and whether it
    beats the simpler setting there (the verdict, :func:`decide`, adds the test over both years)."""
    heads = [f"in year: {h}" for h in cell_head] + [f"out of year: {h}" for h in cell_head] \
        + [f"simpler, out of year: {h}" for h in cell_head]
    rows = ["| chosen on -> measured on | setting | " + " | ".join(heads) + " | out-of-year gain (p) | beats the simpler |",
            "|" + "---|" * (len(heads) + 4)]
    for d in directions:
        rows.append(f"| {d.chosen_on} -> {d.tested_on} | {d.chosen} | {cells(d.chosen, d.chosen_on)} | "
                    f"{cells(d.chosen, d.tested_on)} | {cells(d.baseline, d.tested_on)} | "
                    f"{d.gain:+.3f} ({d.p:.3g}) | {'yes' if d.holds() else 'no'} |")
    return rows


def to_toml(cfg: dict, prefix: str = "") -> str:
    """A config dict as TOML text (the packaged configs' shapes: tables, numbers, booleans, strings, lists)."""
    plain = {k: v for k, v in cfg.items() if not isinstance(v, dict)}
    lines = [f"[{prefix}]"] if prefix and plain else []
    for k, v in plain.items():
        lines.append(f"{k!r} = {str(v).lower() if isinstance(v, bool) else repr(v)}".replace("'", '"'))
    for k, v in cfg.items():
        if isinstance(v, dict):
            name = f'{prefix}."{k}"' if prefix and not k.isidentifier() else (f"{prefix}.{k}" if prefix else k)
            lines.append(to_toml(v, name))
    return "\n".join(lines)


# The packaged configs whose values were chosen on the 2020 and 2021 topics themselves: a results
# table marks their rows on those years "in sample" and reports beside them the same procedure run
# on the other year only, from OUT_OF_YEAR/<config stem>/tuned-on-<year>.toml where it is there
# (bench/tune_ours.py --out, bench/tune_formula.py --out).
CHOSEN_ON = {"ours.toml": YEARS, "ours_static.toml": YEARS, "ours_lexical.toml": YEARS}
# formula.toml is not among them: its scoring is the plain Tangent-S one, untuned (2026-11-25).
OUT_OF_YEAR = Path(__file__).resolve().parent / "out_of_year"
# Task 3 options chosen on both years (extract's default, the first hit, was not tuned), and for
# each year the option chosen on the other year alone by bench/tune_task3.py on ours' MiniLM ranking
# (2026-11-25; on another ranking the choice may differ).
EXTRACT_OUT_OF_YEAR: dict[str, dict[str, str]] = {
    "extract:consensus=10": {"2020": "extract:consensus=10,consensus_k=6", "2021": "extract:consensus=10,consensus_k=3"},
    "extract:k=2": {"2020": "extract:k=5,rank=0,words=0.5,too_long=0.1,dense=0.1,formula=0.1",
                    "2021": "extract:k=2,rank=0,too_long=0,exact=0.05"},
}


def packaged_config(name: str, index_dir: str | Path) -> str | None:
    """The packaged config file a Task 1 or 2 spec runs on ``index_dir`` (None: a given file, or none)."""
    from mathsearch.systems import make_system
    from mathsearch.systems.ours import LEXICAL_CONFIG, packaged_config_for

    system = make_system(name)
    if system.NAME == "ours" and not system.config:
        return LEXICAL_CONFIG if not system.dense else packaged_config_for(index_dir)
    if system.NAME == "formula" and not getattr(system, "config", ""):
        return "formula.toml"
    return None


@dataclass(frozen=True)
class InSample:
    """Where a system's settings were chosen: the years, and per year the spec of its out-of-year
    counterpart (the same procedure run on the other year only; None where not measured)."""

    chosen_on: tuple[str, ...] = ()
    out_of_year: Mapping[str, str | None] = field(default_factory=dict)

    def mark(self, year: str) -> str:
        return "in sample" if year in self.chosen_on else ""


def in_sample(name: str, index_dir: str | Path) -> InSample:
    """Whether ``name``'s settings were chosen on judged years, and what to report out of year."""
    from mathsearch.systems import make_system, spec

    system = make_system(name)
    if system.TASK == 3:
        tuned = system.NAME == "extract" and (system.k > 1 or system.consensus > 0)
        known = EXTRACT_OUT_OF_YEAR.get(spec(system), {})  # keyed by the canonical spec
        return InSample(YEARS, {y: known.get(y) for y in YEARS}) if tuned else InSample()
    config = packaged_config(name, index_dir)
    if config not in CHOSEN_ON:
        return InSample()
    out: dict[str, str | None] = {}
    for year in CHOSEN_ON[config]:
        path = OUT_OF_YEAR / Path(config).stem / f"tuned-on-{other(year)}.toml"
        spec_ = name + ("," if ":" in name else ":") + f"config={path}"
        out[year] = spec_ if path.is_file() else None
    return InSample(CHOSEN_ON[config], out)
