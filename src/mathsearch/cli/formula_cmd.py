"""``mathsearch formula``: every representation of one formula, or one JSON line per formula of a TSV."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..errors import InputError
from ..formula import (
    FormulaAnalyzer,
    infix,
    latex_to_words,
    leaf_paths,
    node_count,
    opt_key,
    opt_to_cmathml,
    opt_tuples,
    parse_latex,
    prefix,
    slt_string,
    slt_to_pmathml,
    slt_tuples,
    subexpression_terms,
    visual_key,
)
from ..records import ReadReport
from ._common import err_console, friendly_errors, print_json


def representations(latex: str) -> dict:
    """Every representation of one formula, as a JSON-able dict (the library's view, verbatim)."""
    p = parse_latex(latex)
    return {
        "latex": latex,
        "recovered": p.recovered,
        "errors": list(p.errors),
        "unknown_macros": list(p.unknown_macros),
        "visual_key": visual_key(p),
        "node_count": node_count(p.slt),
        "slt": slt_string(p.slt),
        "opt": infix(p.opt),
        "opt_key": opt_key(p.opt),
        "prefix": prefix(p.opt),
        "infix": infix(p.opt),
        "slt_tuples": [list(t) for t in slt_tuples(p.slt)],
        "opt_tuples": [list(t) for t in opt_tuples(p.opt)],
        "leaf_paths": leaf_paths(p.opt),
        "math_terms": subexpression_terms(p.opt),
        "words": latex_to_words(latex),
        "pmathml": slt_to_pmathml(p.slt),
        "cmathml": opt_to_cmathml(p.opt),
        "slt_tree": p.slt.to_json(),
        "opt_tree": p.opt.to_dict(),
    }


def register(app: typer.Typer) -> None:
    @app.command("formula")
    @friendly_errors
    def formula(
        latex: str = typer.Argument(None, help="A LaTeX formula (without $ delimiters)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
        tsv: Path = typer.Option(None, "--tsv", help="A formula TSV (ARQMath latex_representation file)."),
        jsonl: bool = typer.Option(False, "--jsonl", help="With --tsv: one JSON object per formula."),
    ) -> None:
        """Parse LaTeX into SLT and OPT and print every representation.

        With --tsv, read an ARQMath formula TSV and print one line per formula: tab-separated
        id, visual key, recovered (0/1) and prefix notation, or with --jsonl one JSON object
        {"id", "visual_key", "recovered", "slt", "opt", "prefix"}.  Broken lines are reported
        on stderr and counted; the exit status is then 1.
        """
        if tsv is not None:
            if latex is not None:
                raise InputError("give either a LaTeX formula or --tsv FILE, not both.")
            if not tsv.is_file():
                raise InputError(f"no such formula TSV: {tsv}")
            from ..readers.formula_tsv import iter_formula_tsv

            report = ReadReport(source=str(tsv))
            analyzer = FormulaAnalyzer(keep_trees=True, cache_size=100_000)
            n = recovered = 0
            for rec in iter_formula_tsv(tsv, report):
                a = analyzer.analyze(rec.formula)
                n += 1
                recovered += a.recovered
                obj = {"id": rec.formula_id, "visual_key": a.visual_key, "recovered": a.recovered,
                       "slt": slt_string(a.parsed.slt), "opt": infix(a.parsed.opt), "prefix": a.prefix}
                if jsonl:
                    print_json(obj)
                else:
                    sys.stdout.write(f"{rec.formula_id}\t{a.visual_key}\t{int(a.recovered)}\t{a.prefix}\n")
            err_console.print(f"{n:,} formulae, {recovered:,} parsed with recovery; "
                              f"{report.skipped_total:,} lines skipped", highlight=False)
            for problem in report.problems[:10]:
                err_console.print(f"  skipped {problem}", highlight=False)
            if report.skipped_total:
                raise typer.Exit(1)
            return
        if latex is None:
            raise InputError("give a LaTeX formula, or --tsv FILE.")
        rep = representations(latex)
        if as_json:
            print_json(rep)
            return
        for key, value in rep.items():
            if key in ("slt_tree", "opt_tree"):
                continue
            if isinstance(value, list):
                value = " ; ".join("\t".join(v) if isinstance(v, list) else str(v) for v in value)
            sys.stdout.write(f"{key}: {value}\n")
