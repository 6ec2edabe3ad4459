"""What the results tables need to know about how the packaged settings were chosen.

Settings are chosen by :mod:`mathsearch.evaluation.selection` (repeated cross-validation over the
pooled 2020 + 2021 topics; the tuning scripts in bench/ use it).  A results table marks a row whose
settings were chosen on the year it reports "in sample", and gives beside it the cross-validated
figure the tuning recorded (``OUT_OF_YEAR/<config stem>/selection.json``) and the leave-one-year-out
figure: the config the same choice makes on the other year alone
(``OUT_OF_YEAR/<config stem>/tuned-on-<year>.toml``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mathsearch.evaluation.selection import YEARS, Decision, check_years

__all__ = ["YEARS", "check_years", "in_sample", "other", "record", "recorded", "to_toml"]


def other(year: str, years: Sequence[str] = YEARS) -> str:
    """The year of ``years`` that is not ``year`` (two years only)."""
    rest = [y for y in years if y != year]
    if len(rest) != 1:
        raise ValueError(f"cross-year selection needs two years, got {', '.join(years)}")
    return rest[0]


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
CHOSEN_ON = {"ours.toml": YEARS, "ours_static.toml": YEARS, "ours_lexical.toml": YEARS, "formula.toml": YEARS}
OUT_OF_YEAR = Path(__file__).resolve().parent / "out_of_year"
# Task 3 settings chosen on both years (``first-hit`` is not tuned), and for each year the setting
# chosen on the other year alone by bench/tune_task3.py on ours' MiniLM ranking (extract's default,
# the consensus choice at consensus_k 4 and consensus 5: 2026-11-30; the options: 2026-11-25, on the
# ranking of then; on another ranking the choice may differ).
EXTRACT_OUT_OF_YEAR: dict[str, dict[str, str]] = {
    "extract": {"2020": "extract", "2021": "extract:consensus=15"},
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


def record(decision: Decision, configs: Mapping[str, dict], folder: Path, command: str) -> list[Path]:
    """Write what a table shows of ``decision`` into ``folder`` (made if missing; files of the same
    names there are refused): ``selection.json`` (the cross-validated figures and the command) and
    ``tuned-on-<year>.toml``, the config chosen on each year alone."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {"selection.json": json.dumps({
        "command": command, "chosen": decision.chosen, "primary": decision.primary,
        "in_sample": decision.in_sample[decision.chosen],
        "per_year": decision.per_year[decision.chosen],
        "cross_validated": dict(decision.cv.means),
        "cross_validated_per_year": {y: {m: sum(v for t, v in per.items() if t[0] == y)
                                         / max(1, sum(1 for t in per if t[0] == y))
                                         for m, per in decision.cv.out_of_fold.items()}
                                     for y in sorted(decision.per_year[decision.chosen])},
        "cross_validated_gain": {m: {"mean": d.mean, "low": d.low, "high": d.high, "per_year": dict(d.per_year)}
                                 for m, d in decision.cv_gain.items()},
        "folds": decision.cv.k, "repeats": decision.cv.repeats, "seed": decision.cv.seed,
        "leave_one_year_out": {y.tested_on: {"chosen_on": y.chosen_on, "chosen": y.chosen, **y.chosen_means}
                               for y in decision.years},
    }, indent=1) + "\n"}
    for y in decision.years:
        files[f"tuned-on-{y.chosen_on}.toml"] = to_toml(configs[y.chosen]) + "\n"
    there = [str(folder / n) for n in files if (folder / n).exists()]
    if there:
        from mathsearch.errors import InputError

        raise InputError(f"{', '.join(there)} already exist(s); choose another folder (nothing is overwritten)")
    for name, text in files.items():
        (folder / name).write_text(text)
    return [folder / n for n in files]


def recorded(config: str) -> dict | None:
    """The selection.json a tuning script recorded for a packaged config (None: not made)."""
    path = OUT_OF_YEAR / Path(config).stem / "selection.json"
    return json.loads(path.read_text()) if path.is_file() else None


@dataclass(frozen=True)
class InSample:
    """Where a system's settings were chosen: the years, and per year the spec of its out-of-year
    counterpart (the same procedure run on the other year only; None where not measured)."""

    chosen_on: tuple[str, ...] = ()
    out_of_year: Mapping[str, str | None] = field(default_factory=dict)
    selection: Mapping | None = None  # what the tuning recorded: cross-validated figures (selection.json)

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
    return InSample(CHOSEN_ON[config], out, recorded(config))
