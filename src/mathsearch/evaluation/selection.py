"""Choosing a setting on all the evidence: repeated cross-validation over every judged topic.

About 50 judged topics a year are too few to choose among settings on one year and test on the
other with a significance gate: a true gain of +0.02-0.03 nDCG@10 almost never reaches p < 0.05,
so such a gate keeps the simpler setting nearly every time.  Instead every judged year's topics are
pooled (2020 + 2021; 2022's judgements are held out and refused here) and a choice is scored by
repeated k-fold cross-validation over topics, the folds stratified by year and their seeds fixed:

* a *setting* is a label with per-topic scores (``{measure: {(year, topic): value}}``), computed
  once; everything below is arithmetic over those scores, so it is cheap to repeat;
* *choosing* among settings ordered simplest first (:func:`choose`): a later setting replaces the
  current choice only when its mean on the primary measure (nDCG@10) is higher by more than the tie
  band (0.002); ties keep the simpler setting;
* *cross-validating the choice* (:func:`cross_validate`): in every fold of every repeat the choice
  is made on the other folds and scored on this one; the mean out-of-fold score is what choosing
  among these settings is worth on topics it did not see (a fixed setting's out-of-fold mean is its
  plain mean: each topic is out of fold once a repeat);
* a choice made in *steps* (``steps``): each step chooses among the settings that the previous
  step's pick leads to (e.g. the links of a config, then a stage laid over whichever links were
  chosen); cross-validating it chooses every step on the training folds alone (nested), so the
  figure is that of the whole procedure, not of its last step given the first;
* *deciding* (:func:`decide`): the setting chosen on all the pooled topics replaces the simplest
  one when the cross-validated choice beats the simplest setting by more than the tie band on the
  primary measure; the mean difference comes with a bootstrap 95% interval (topics resampled within
  each year) and per-year figures, and the leave-one-year-out figures (chosen on 2020, measured on
  2021, and back) are reported beside it.  No p-value gates anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

YEARS = ("2020", "2021")  # every judged year; 2022's judgements are held out
PRIMARY = "nDCG@10"  # the measure choices are made on
SECONDARY = "nDCG'"  # reported beside it
MEASURES = (SECONDARY, PRIMARY)
TIE = 0.002  # a gain within this keeps the simpler setting
FOLDS = 5
REPEATS = 10
SEED = 39
BOOTSTRAP = 10_000

Topic = tuple[str, str]  # (year, topic id): topic ids may repeat across years
# A choice in steps: step i maps each setting step i - 1 may pick (the first step: "") to the
# settings it chooses among, simplest first; its pick is what step i + 1 starts from.
Steps = Sequence[Mapping[str, Sequence[str]]]
PerTopic = Mapping[Topic, float]
SettingScores = Mapping[str, PerTopic]  # measure -> per-topic values
Scores = Mapping[str, SettingScores]  # setting -> measure -> per-topic values


def check_years(years: Sequence[str]) -> None:
    """Refuse any year but 2020 and 2021 (2022's judgements are held out); a pool that is not a
    year (``collection``: judgements drawn from the collection itself) may be used."""
    bad = [y for y in years if y not in YEARS and (y.isdigit() or y.startswith("20"))]
    if bad:
        raise SystemExit(f"only {', '.join(YEARS)} may be used to choose settings, not {', '.join(bad)}")


def pool(per_year: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, dict[Topic, float]]:
    """``{year: {measure: {topic: value}}}`` -> ``{measure: {(year, topic): value}}`` (2020/2021 only)."""
    check_years(list(per_year))
    out: dict[str, dict[Topic, float]] = {}
    for year, measures in per_year.items():
        for measure, values in measures.items():
            out.setdefault(measure, {}).update({(year, t): float(v) for t, v in values.items()})
    return out


def mean_on(values: PerTopic, topics: Sequence[Topic] | None = None) -> float:
    keys = list(values) if topics is None else topics
    return float(sum(values[t] for t in keys) / len(keys)) if keys else 0.0


def topics_of(scores: Scores, order: Sequence[str], measure: str = PRIMARY) -> list[Topic]:
    """The topics every setting was scored on (sorted); an error when they differ."""
    first = set(scores[order[0]][measure])
    for label in order[1:]:
        if set(scores[label][measure]) != first:
            raise ValueError(f"{label} and {order[0]} were scored on different topics")
    return sorted(first)


def folds(topics: Sequence[Topic], k: int = FOLDS, seed: int = SEED) -> tuple[tuple[Topic, ...], ...]:
    """``k`` folds of ``topics``, each year's topics shuffled (by ``seed``) and dealt in turn, so
    every fold holds each year's share within one topic."""
    if k < 2:
        raise ValueError("cross-validation needs at least 2 folds")
    rng = np.random.default_rng(seed)
    dealt: list[list[Topic]] = [[] for _ in range(k)]
    start = 0
    for year in sorted({y for y, _ in topics}):
        mine = sorted(t for t in topics if t[0] == year)
        for i, j in enumerate(rng.permutation(len(mine))):
            dealt[(start + i) % k].append(mine[j])
        start = (start + len(mine)) % k  # the next year fills the smaller folds first
    return tuple(tuple(sorted(f)) for f in dealt)


def choose(scores: Scores, order: Sequence[str], topics: Sequence[Topic] | None = None, measure: str = PRIMARY,
           tie: float = TIE) -> str:
    """The setting of ``order`` (simplest first) chosen on ``topics``: a later one replaces the
    current choice only when its mean ``measure`` is higher by more than ``tie``."""
    best = order[0]
    best_mean = mean_on(scores[best][measure], topics)
    for label in order[1:]:
        m = mean_on(scores[label][measure], topics)
        if m > best_mean + tie:
            best, best_mean = label, m
    return best


def choose_in_steps(scores: Scores, steps: Steps, topics: Sequence[Topic] | None = None, measure: str = PRIMARY,
                    tie: float = TIE) -> str:
    """What :func:`choose` picks at each step in turn, every step on ``topics``."""
    pick = ""
    for step in steps:
        if pick not in step:
            raise ValueError(f"a step of the choice does not say what follows {pick or 'the start'!r}")
        pick = choose(scores, step[pick], topics, measure, tie)
    return pick


def one_step(order: Sequence[str]) -> list[dict[str, Sequence[str]]]:
    """The choice among ``order`` as :data:`Steps` of one step."""
    return [{"": list(order)}]


def bootstrap_interval(diffs: Mapping[Topic, float], samples: int = BOOTSTRAP, seed: int = SEED,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-topic ``diffs``, topics resampled within
    each year (the years keep their sizes)."""
    if not diffs:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    total = np.zeros(samples)
    n = len(diffs)
    for year in sorted({y for y, _ in diffs}):
        values = np.array([v for (y, _), v in sorted(diffs.items()) if y == year])
        picks = rng.integers(0, len(values), size=(samples, len(values)))
        total += values[picks].sum(axis=1)
    means = total / n
    tail = (1 - level) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


@dataclass(frozen=True)
class Difference:
    """``setting`` minus ``baseline`` on one measure: the mean over the pooled topics, its
    bootstrap 95% interval, and the mean of each year."""

    measure: str
    mean: float
    low: float
    high: float
    per_year: tuple[tuple[str, float], ...]

    def cell(self) -> str:
        years = ", ".join(f"{y} {d:+.3f}" for y, d in self.per_year)
        return f"{self.mean:+.3f} [{self.low:+.3f}, {self.high:+.3f}] ({years})"


def difference(a: PerTopic, b: PerTopic, measure: str, samples: int = BOOTSTRAP, seed: int = SEED) -> Difference:
    """Per-topic ``a - b`` summarised (the topics of ``a`` and ``b`` must be the same)."""
    if set(a) != set(b):
        raise ValueError("a difference needs the same topics on both sides")
    diffs = {t: a[t] - b[t] for t in a}
    low, high = bootstrap_interval(diffs, samples, seed)
    years = sorted({y for y, _ in diffs})
    per_year = tuple((y, mean_on({t: v for t, v in diffs.items() if t[0] == y})) for y in years)
    return Difference(measure, mean_on(diffs), low, high, per_year)


@dataclass(frozen=True)
class CrossValidation:
    """The choice among ``order`` scored out of fold: per measure, the mean over repeats of the
    out-of-fold mean, and per topic its out-of-fold value averaged over repeats; how often each
    setting was chosen (of ``k * repeats`` folds)."""

    order: tuple[str, ...]
    k: int
    repeats: int
    seed: int
    means: Mapping[str, float]  # measure -> mean out-of-fold score of the choice
    per_repeat: Mapping[str, tuple[float, ...]]  # measure -> out-of-fold mean of each repeat
    out_of_fold: Mapping[str, Mapping[Topic, float]]  # measure -> topic -> mean out-of-fold value
    chosen: Mapping[str, int]  # setting -> folds it was chosen in


def cross_validate(scores: Scores, order: Sequence[str], k: int = FOLDS, repeats: int = REPEATS, seed: int = SEED,
                   measure: str = PRIMARY, tie: float = TIE, steps: Steps | None = None) -> CrossValidation:
    """Repeated stratified k-fold cross-validation of :func:`choose` over ``order`` (seeds ``seed``,
    ``seed + 1``, ...: the same folds every run); with ``steps``, of the whole choice in steps
    (every step made on the training folds), ``order`` listing every setting the steps name."""
    steps = steps or one_step(order)
    topics = topics_of(scores, order, measure)
    measures = [m for m in scores[order[0]] if all(m in scores[s] for s in order)]
    sums = {m: dict.fromkeys(topics, 0.0) for m in measures}
    per_repeat: dict[str, list[float]] = {m: [] for m in measures}
    chosen = dict.fromkeys(order, 0)
    for r in range(repeats):
        parts = folds(topics, k, seed + r)
        value: dict[str, dict[tuple[str, str], float]] = {m: {} for m in measures}
        for i, held in enumerate(parts):
            train = [t for j, part in enumerate(parts) if j != i for t in part]
            pick = choose_in_steps(scores, steps, train, measure, tie)
            chosen[pick] = chosen.get(pick, 0) + 1
            for m in measures:
                value[m].update({t: scores[pick][m][t] for t in held})
        for m in measures:
            per_repeat[m].append(mean_on(value[m]))
            for t, v in value[m].items():
                sums[m][t] += v
    out_of_fold = {m: {t: v / repeats for t, v in sums[m].items()} for m in measures}
    means = {m: float(np.mean(per_repeat[m])) for m in measures}
    return CrossValidation(tuple(order), k, repeats, seed, means, {m: tuple(v) for m, v in per_repeat.items()},
                           out_of_fold, chosen)


@dataclass(frozen=True)
class YearOut:
    """Leave one year out: ``chosen`` (among the order) on ``chosen_on``, measured on ``tested_on``
    beside the simplest setting there."""

    chosen_on: str
    tested_on: str
    chosen: str
    baseline: str
    chosen_means: Mapping[str, float]  # measure -> the chosen setting's mean on tested_on
    baseline_means: Mapping[str, float]

    def gain(self, measure: str = PRIMARY) -> float:
        return self.chosen_means[measure] - self.baseline_means[measure]


def leave_one_year_out(scores: Scores, order: Sequence[str], measure: str = PRIMARY, tie: float = TIE,
                       steps: Steps | None = None) -> list[YearOut]:
    """Chosen on each judged year alone (every step of ``steps``, when given), measured on the other."""
    steps = steps or one_step(order)
    topics = topics_of(scores, order, measure)
    years = sorted({y for y, _ in topics})
    check_years(years)
    out = []
    for year in years:
        for other in years:
            if other == year:
                continue
            train = [t for t in topics if t[0] == year]
            test = [t for t in topics if t[0] == other]
            pick = choose_in_steps(scores, steps, train, measure, tie)
            ms = [m for m in scores[pick] if m in scores[order[0]]]
            out.append(YearOut(year, other, pick, order[0], {m: mean_on(scores[pick][m], test) for m in ms},
                               {m: mean_on(scores[order[0]][m], test) for m in ms}))
    return out


@dataclass(frozen=True)
class Decision:
    """What the evidence chooses among ``order`` (simplest first) and every figure behind it."""

    order: tuple[str, ...]
    chosen: str  # the setting to package: order[0] unless the cross-validated choice beats it
    on_all: str  # the setting chosen on all the pooled topics
    in_sample: Mapping[str, Mapping[str, float]]  # setting -> measure -> pooled mean (its out-of-fold mean too)
    per_year: Mapping[str, Mapping[str, Mapping[str, float]]]  # setting -> year -> measure -> mean
    against_simplest: Mapping[str, Mapping[str, Difference]]  # setting -> measure -> difference vs order[0]
    cv: CrossValidation
    cv_gain: Mapping[str, Difference]  # measure -> out-of-fold choice minus the simplest setting
    years: tuple[YearOut, ...]
    tie: float
    primary: str = PRIMARY
    measures: tuple[str, ...] = MEASURES

    @property
    def replaces(self) -> bool:
        return self.chosen != self.order[0]

    def reason(self) -> str:
        p = self.primary
        g = self.cv_gain[p]
        loyo = "; ".join(f"chosen on {y.chosen_on}: {y.chosen}, {y.tested_on} {p} {y.gain(p):+.3f}"
                         for y in self.years)
        if self.replaces:
            verdict = f"{self.chosen} replaces {self.order[0]}"
        elif self.on_all != self.order[0]:
            verdict = f"keep {self.order[0]} ({self.on_all} is best on all topics, but the choice does not hold out of fold)"
        else:
            verdict = f"keep {self.order[0]}"
        return (f"{verdict}: cross-validated gain {p} {g.cell()} (tie band {self.tie})"
                + (f"; leave one year out: {loyo}" if loyo else ""))


def decide(scores: Scores, order: Sequence[str], k: int = FOLDS, repeats: int = REPEATS, seed: int = SEED,
           tie: float = TIE, samples: int = BOOTSTRAP, primary: str = PRIMARY,
           measures: Sequence[str] = MEASURES, steps: Steps | None = None) -> Decision:
    """Every figure of the choice among ``order`` (simplest first) and the setting it keeps, chosen
    on ``primary`` (``measures`` reported).  With ``steps`` the choice is made in those steps
    (``order``: every setting they name, the simplest first, against which all are measured)."""
    if not order:
        raise ValueError("nothing to choose from")
    order = list(dict.fromkeys(order))
    steps = steps or one_step(order)
    named = {s for step in steps for nxt in step.values() for s in nxt}
    if named - set(order):
        raise ValueError(f"the steps name settings that order does not list: {', '.join(sorted(named - set(order)))}")
    topics = topics_of(scores, order, primary)
    measures = [m for m in measures if all(m in scores[s] for s in order)]
    if primary not in measures:
        raise ValueError(f"every setting needs per-topic {primary}")
    years = sorted({y for y, _ in topics})
    check_years(years)
    base = order[0]
    in_sample = {s: {m: mean_on(scores[s][m]) for m in measures} for s in order}
    per_year = {s: {y: {m: mean_on(scores[s][m], [t for t in topics if t[0] == y]) for m in measures}
                    for y in years} for s in order}
    against = {s: {m: difference(scores[s][m], scores[base][m], m, samples, seed) for m in measures} for s in order}
    cv = cross_validate(scores, order, k, repeats, seed, primary, tie, steps)
    cv_gain = {m: difference(cv.out_of_fold[m], scores[base][m], m, samples, seed) for m in measures}
    on_all = choose_in_steps(scores, steps, topics, primary, tie)
    chosen = on_all if cv.means[primary] - in_sample[base][primary] > tie else base
    return Decision(tuple(order), chosen, on_all, in_sample, per_year, against, cv, cv_gain,
                    tuple(leave_one_year_out(scores, order, primary, tie, steps) if tuple(years) == YEARS else ()), tie,
                    primary, tuple(measures))


def report(decision: Decision, title: str = "", shown: Sequence[str] | None = None) -> list[str]:
    """Markdown: one row per setting (pooled means = out-of-fold means of a fixed setting, the
    difference against the simplest with its interval and per-year figures, how often the
    cross-validated choice took it), then the cross-validated choice and the leave-one-year-out rows,
    then the verdict.  ``shown``: the settings to list (default every one; the simplest always)."""
    d = decision
    ms = list(d.measures)
    years = sorted(d.per_year[d.order[0]])
    folds_total = d.cv.k * d.cv.repeats
    oof = d.cv.out_of_fold[d.primary]
    lines = [f"{title}" if title else "", f"pooled topics: {len(oof)} "
             f"({', '.join(f'{y}: {sum(1 for t in oof if t[0] == y)}' for y in years)}); "
             f"{d.cv.repeats} x {d.cv.k}-fold cross-validation" + (" stratified by year" if len(years) > 1 else "")
             + f", seeds {d.cv.seed}-{d.cv.seed + d.cv.repeats - 1}; intervals: bootstrap 95% over topics"
             + (" within years" if len(years) > 1 else "") + "; "
             f"chosen on {d.primary}, ties within {d.tie} keep the simpler", ""]
    head = (["setting"] + [f"pooled {m}" for m in ms] + [f"{y} {m}" for y in years for m in ms]
            + [f"{m} against {d.order[0]} [95%] (per year)" for m in ms] + [f"chosen in folds (of {folds_total})"])
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in d.order:
        if shown is not None and s not in shown and s != d.order[0]:
            continue
        cells = ([s] + [f"{d.in_sample[s][m]:.3f}" for m in ms] + [f"{d.per_year[s][y][m]:.3f}" for y in years for m in ms]
                 + [("(the simplest)" if s == d.order[0] else d.against_simplest[s][m].cell()) for m in ms]
                 + [str(d.cv.chosen[s])])
        lines.append("| " + " | ".join(cells) + " |")
    oof_years = {y: {m: mean_on({t: v for t, v in d.cv.out_of_fold[m].items() if t[0] == y}) for m in ms}
                 for y in years}
    lines.append("| **the choice, cross-validated** | " + " | ".join(f"{d.cv.means[m]:.3f}" for m in ms) + " | "
                 + " | ".join(f"{oof_years[y][m]:.3f}" for y in years for m in ms) + " | "
                 + " | ".join(d.cv_gain[m].cell() for m in ms) + " | |")
    for y in d.years:
        cells = [f"**chosen on {y.chosen_on}, measured on {y.tested_on}**: {y.chosen}"] + ["" for _ in ms]
        cells += [f"{y.chosen_means[m]:.3f}" if yy == y.tested_on else "" for yy in years for m in ms]
        cells += [f"{y.gain(m):+.3f} ({y.tested_on})" for m in ms] + [""]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"verdict: {d.reason()}"]
    if shown is not None and len(shown) < len(d.order):
        lines.append(f"({len(d.order) - len(set(shown) | {d.order[0]})} other settings not shown)")
    return lines[1:] if not title else lines
