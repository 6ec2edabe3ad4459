"""Rendering an :class:`~.evaluate.EvalReport`: the JSON object and the plain-text tables."""

from __future__ import annotations

from typing import Any

from .measures import JUDGED_AT
from .results import EvalReport, RunResult


def run_json(run: RunResult, measures: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {m: run.means[m] for m in measures if m in run.means}
    out["topics"] = run.topics
    out["per_topic"] = run.topic_table()
    out["ci95"] = {m: [ci.low, ci.high] for m, ci in run.ci.items()}
    out["judged_at"] = {str(k): v for k, v in run.judged_at.items()}
    if run.p_values:
        out["p_values"] = dict(run.p_values)
    if run.categories:
        out["categories"] = {
            m: {dim: {label: {"mean": mean, "topics": n} for label, (mean, n) in groups.items()} for dim, groups in dims.items()}
            for m, dims in run.categories.items()
        }
    warnings = list(run.notes)
    if run.checks is not None:
        warnings.extend(run.checks.summary())
    if warnings:
        out["warnings"] = warnings
    return out


def to_json(report: EvalReport) -> dict[str, Any]:
    """``{run file name: {measure: mean, "topics": n, "per_topic": {...}, ...}}``."""
    measures = report.measures
    names = [run.name for run in report.runs]
    # Two runs with one file name (different folders) are told apart by their paths.
    return {(run.name if names.count(run.name) == 1 else run.path): run_json(run, measures) for run in report.runs}


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.4f}"


def _fmt_p(p: float | None) -> str:
    if p is None:
        return "-"
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))  # noqa: E731
    return [line(header), "  ".join("-" * w for w in widths), *[line(r) for r in rows]]


def to_text(report: EvalReport, per_topic: bool = False) -> str:
    """The tables a person reads: runs by measures (mean and 95% interval), judged shares,
    p-values against the first run, categories, warnings, optionally every topic."""
    measures = report.measures
    out: list[str] = []
    head = f"Task {report.task}, qrels {report.qrels}: {report.topics} topics"
    if report.qrels_key:
        head += f", judgements keyed by {report.qrels_key} id"
    out.append(head)
    if report.topics_dropped:
        out.append(
            f"sub-collection protocol: {report.judgements_removed} judgements of absent documents removed, "
            f"{len(report.topics_dropped)} topic(s) without a relevant document dropped: {' '.join(report.topics_dropped)}"
        )
    if report.qrels_read.skipped_total:
        out.append(f"qrels: {report.qrels_read.skipped_total} line(s) skipped: " + "; ".join(report.qrels_read.problems[:5]))
    out.extend(report.notes)
    out.append("")
    rows = [[r.name, *[_fmt(r.means.get(m)) for m in measures], str(r.topics)] for r in report.runs]
    out.extend(_table(["run", *measures, "topics"], rows))
    out.append("")
    out.append("95% Student-t confidence intervals")
    rows = [[r.name, *[f"{r.ci[m].low:.4f}-{r.ci[m].high:.4f}" if m in r.ci else "-" for m in measures]] for r in report.runs]
    out.extend(_table(["run", *measures], rows))
    ranks = JUDGED_AT if report.task != 3 else (1,)
    out.append("")
    out.append("share of judged hits in the top k")
    rows = [[r.name, *[_fmt(r.judged_at.get(k)) for k in ranks]] for r in report.runs]
    out.extend(_table(["run", *[f"@{k}" for k in ranks]], rows))
    if len(report.runs) > 1:
        test = "randomisation test" if report.test == "randomisation" else "paired t-test"
        out.append("")
        out.append(f"p-values against {report.runs[0].name} ({test}, two-sided)")
        rows = [[r.name, *[_fmt_p(r.p_values.get(m)) for m in measures]] for r in report.runs[1:]]
        out.extend(_table(["run", *measures], rows))
    for r in report.runs:
        if not r.categories:
            continue
        out.append("")
        out.append(f"by topic category: {r.name}")
        rows = []
        first = measures[0]
        for dim, groups in r.categories.get(first, {}).items():
            for label, (_, n) in groups.items():
                vals = [r.categories.get(m, {}).get(dim, {}).get(label) for m in measures]
                rows.append([f"{dim}={label}", str(n), *[_fmt(v[0] if v else None) for v in vals]])
        out.extend(_table(["category", "topics", *measures], rows))
    for r in report.runs:
        warnings = list(r.notes)
        if r.checks is not None:
            warnings.extend(r.checks.summary())
            warnings.extend(f"  e.g. {e}" for e in r.checks.examples[:5])
        if warnings:
            out.append("")
            out.append(f"warnings for {r.name}:")
            out.extend(f"  {w}" for w in warnings)
    if per_topic:
        for r in report.runs:
            out.append("")
            out.append(f"per topic: {r.name}")
            table = r.topic_table()
            rows = [[t, *[_fmt(v.get(m)) for m in measures]] for t, v in table.items()]
            out.extend(_table(["topic", *measures], rows))
    return "\n".join(out) + "\n"
