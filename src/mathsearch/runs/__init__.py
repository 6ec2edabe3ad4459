"""Run files: writing them in the lab's layouts, validating hits, and the naming convention."""

from .lookup import CollectionLookup, FormulaTsvLookup
from .naming import RunName, check_run_name, parse_run_name, suggest_run_name
from .validate import (
    CheckReport,
    Problem,
    check_run_file,
    check_task1_hits,
    check_task2_hits,
    check_task3_answers,
)
from .writer import check_run_tag, write_formula_run, write_task3_run, write_trec_run

__all__ = [
    "check_run_tag",
    "CheckReport",
    "CollectionLookup",
    "FormulaTsvLookup",
    "Problem",
    "RunName",
    "check_run_file",
    "check_run_name",
    "check_task1_hits",
    "check_task2_hits",
    "check_task3_answers",
    "parse_run_name",
    "suggest_run_name",
    "write_formula_run",
    "write_task3_run",
    "write_trec_run",
]
