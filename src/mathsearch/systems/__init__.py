"""Retrieval systems: named, configured objects usable from Python and the CLI.

``make_system("bm25-thread")`` or ``make_system("ours:dense=0")``; ``system_names(task)`` lists them;
``resolve(task, spec, index)`` is what every face runs (the task's default where none is named).
Each module below registers its systems on import (one line per module).
"""

# Importing a module registers its systems (formula: formula, tangent-s-formula, tangent-s and
# ours' formula signal).
# mirmu: MIRMU's systems (seed 002): mias, scm, scm-formula, formula2vec, formula2vec-formula, compubert.
from . import combined, formula, lexical, linked, mirmu, ours, task3  # noqa: F401
from .base import (
    Answerer,
    Ranker,
    Ranking,
    SearchContext,
    SearchQuery,
    System,
    check_hiding,
    hides_threads,
    make_system,
    needs_of,
    register,
    spec,
    system_class,
    system_names,
)
from .resolve import resolve
from .runner import run_rankings, run_system

__all__ = [
    "Answerer",
    "Ranker",
    "Ranking",
    "SearchContext",
    "SearchQuery",
    "System",
    "check_hiding",
    "hides_threads",
    "make_system",
    "needs_of",
    "register",
    "resolve",
    "run_rankings",
    "run_system",
    "spec",
    "system_class",
    "system_names",
]
