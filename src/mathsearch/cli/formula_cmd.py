"""``mathsearch formula``: every representation of one formula, or one JSON line per formula of a TSV."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..errors import InputError
from ..formula import FormulaAnalyzer, infix, slt_string
from ..formula.view import representations  # noqa: F401  (the library's view, printed here)
from ..records import ReadReport
from ._common import err_console, friendly_errors, print_json


def _is_blank(path: Path) -> bool:
    """The file holds nothing but white space: not a formula TSV at all (no header, no row)."""
    with path.open("rb") as fh:
        return not any(chunk.strip() for chunk in iter(lambda: fh.read(1 << 16), b""))


def _topic_header(path: Path) -> bool:
    """The file opens with a topic formula TSV's header (``id topic_id ...``)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            first = fh.readline().lower().split("\t")
    except OSError:
        return False
    return [c.strip() for c in first[:2]] == ["id", "topic_id"]


def register(app: typer.Typer) -> None:
    @app.command("formula")
    @friendly_errors
    def formula(
        latex: str = typer.Argument(None, help="A LaTeX formula (without $ delimiters)."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
        tsv: Path = typer.Option(None, "--tsv", help="A formula TSV (ARQMath latex_representation file, "
                                 "or a topic formula TSV)."),
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
            if tsv.is_dir():
                raise InputError(f"--tsv {tsv} is a folder; give one formula TSV (a latex_representation file) in it.")
            if not tsv.is_file():
                raise InputError(f"no such formula TSV: {tsv}")
            if as_json:
                raise InputError("--json prints one formula; with --tsv use --jsonl (one JSON object per formula).")
            if _is_blank(tsv):  # a header-only file is a TSV of no formulae; a blank one is a mistake
                raise InputError(f"--tsv {tsv} is empty: no header and no formula; give a latex_representation "
                                 "file or a topic formula TSV.")
            from ..readers.formula_tsv import iter_formula_tsv, read_topic_formulas

            report = ReadReport(source=str(tsv))
            analyzer = FormulaAnalyzer(keep_trees=True, cache_size=100_000)
            n = recovered = 0
            # a topic formula TSV (its header: id, topic_id, thread_id, type, formula) is read as one
            rows = ((f.formula_id, f.latex) for f in read_topic_formulas(tsv, report)) if _topic_header(tsv) else \
                ((rec.formula_id, rec.formula) for rec in iter_formula_tsv(tsv, report))
            for formula_id, latex_of in rows:
                a = analyzer.analyze(latex_of)
                n += 1
                recovered += a.recovered
                obj = {"id": formula_id, "visual_key": a.visual_key, "recovered": a.recovered,
                       "slt": slt_string(a.parsed.slt), "opt": infix(a.parsed.opt), "prefix": a.prefix}
                if jsonl:
                    print_json(obj)
                else:
                    sys.stdout.write(f"{formula_id}\t{a.visual_key}\t{int(a.recovered)}\t{a.prefix}\n")
            err_console.print(f"{n:,} formulae, {recovered:,} parsed with recovery; "
                              f"{report.skipped_total:,} lines skipped", highlight=False)
            for problem in report.problems[:10]:
                err_console.print(f"  skipped {problem}", highlight=False)
            if report.skipped_total:
                raise typer.Exit(1)
            return
        if jsonl:
            raise InputError("--jsonl reads --tsv FILE (one JSON object per formula); for one formula use --json.")
        if latex is None or not latex.strip():
            raise InputError("give a LaTeX formula, or --tsv FILE." if latex is None else "the formula is empty; give LaTeX.")
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
