"""Scoring run files as ``mathsearch eval`` is asked to, from the files and switches it is given:
:class:`EvalFiles` (one typed record) to :func:`evaluate_files`, an :class:`~.results.EvalReport`.

This is the library side of the command: which collection facts the files give (an index, formula
TSVs, a Posts XML), the lab's Task 3 answer map and answer texts, and the Task 3 development
protocol (``sources``).  The command only parses its options and prints the report.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..readers.runs import first_line_problem
from .categories import read_categories
from .collection import CollectionFacts, from_formula_tsv, from_index, from_posts_xml, read_answer_texts
from .evaluate import evaluate_runs
from .formulas import QrelsKey
from .results import EvalReport, Test

QRELS_KEYS = ("auto", "visual", "formula")
TESTS = ("t", "randomisation")
TOKENIZERS = ("default", "regex")


@dataclass(frozen=True, kw_only=True)
class EvalFiles:
    """What to score and how: ``runs`` of ``task`` against ``qrels``, with the collection from
    ``index`` (or ``formulas`` TSVs, or ``posts`` XML), Task 3's ``answers`` texts and lab
    ``answer_map``, topic ``categories``, the significance ``test``; ``sources``: the Task 3
    development protocol with Task 1 qrels, its LO tokens by ``tokenizer``."""

    task: int
    qrels: Path
    runs: tuple[Path, ...]
    index: Path | None = None
    formulas: tuple[Path, ...] = ()
    posts: Path | None = None
    answers: Path | None = None
    answer_map: Path | None = None
    collection_only: bool = False
    qrels_key: str = "auto"
    categories: Path | None = None
    test: str = "t"
    contextual: bool = True  # Task 3: Contextual Similarity (loads a model)
    model: Path | None = None
    sources: bool = False
    tokenizer: str = "default"

    def check(self) -> None:
        """Raise InputError (one sentence) for a value no option takes, before any file is read."""
        if self.qrels_key not in QRELS_KEYS:
            raise InputError(f"--qrels-key must be auto, visual or formula, not {self.qrels_key!r}")
        if self.test not in TESTS:
            raise InputError(f"--test must be t or randomisation, not {self.test!r}")
        if self.tokenizer not in TOKENIZERS:
            raise InputError(f"--tokenizer must be default or regex, not {self.tokenizer!r}")
        if self.sources and self.task != 3:
            raise InputError("--sources is the Task 3 development protocol: give --task 3")


def read_answer_map(path: Path) -> dict[tuple[str, str], str]:
    """The lab's map from (run name, topic) to the synthetic id its Task 3 qrels use."""
    out: dict[tuple[str, str], str] = {}
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            for i, row in enumerate(csv.reader(handle, delimiter="\t"), 1):
                if not row:
                    continue
                if len(row) != 3:
                    raise InputError(f"{path}, line {i}: expected 3 fields (run name, topic, answer id)")
                out[(row[0].strip(), row[1].strip())] = row[2].strip()
    except FileNotFoundError:
        raise InputError(f"answer map {path} does not exist") from None
    return out


def collection_facts(files: EvalFiles) -> CollectionFacts | None:
    """The collection facts the files give: an index, else formula TSVs, else a Posts XML (whose
    answer texts also complete an index's)."""
    facts = None
    if files.index is not None:
        facts = from_index(files.index)
    elif files.formulas:
        facts = from_formula_tsv(*files.formulas)
    elif files.posts is not None:
        facts = from_posts_xml(files.posts)
    if files.index is not None and files.posts is not None and facts is not None:
        facts.text_of = from_posts_xml(files.posts).text_of
    return facts


def check_runs(runs: tuple[Path, ...] | list[Path], tasks: tuple[int, ...]) -> None:
    """Refuse (one sentence, exit 2) a file whose first line is no run line of the task: a topics
    XML or a qrels file given as a run would be scored as a run of zeros, a warning a line."""
    for run in runs:
        problems = [first_line_problem(run, t) for t in tasks]
        if all(problems):
            raise InputError(f"{run} is not a Task {tasks[-1]} run: its first line is not a run line ({problems[-1]}).")


def evaluate_files(files: EvalFiles) -> EvalReport:
    """Score ``files.runs`` as ``mathsearch eval`` does (see :class:`EvalFiles`)."""
    files.check()
    check_runs(files.runs, (1, 3) if files.sources else (files.task,))
    facts = collection_facts(files)
    test: Test = "t" if files.test == "t" else "randomisation"
    if files.sources:
        return _evaluate_sources(files, facts, test)
    key: QrelsKey = "visual" if files.qrels_key == "visual" else "formula" if files.qrels_key == "formula" else "auto"
    return evaluate_runs(
        files.task,
        files.qrels,
        list(files.runs),
        facts=facts,
        collection_only=files.collection_only,
        qrels_key=key,
        categories=read_categories(files.categories) if files.categories else None,
        test=test,
        answer_map=read_answer_map(files.answer_map) if files.answer_map else None,
        answer_texts=read_answer_texts(files.answers) if files.answers else None,
        contextual=files.contextual,
        model_dir=files.model,
    )


def _evaluate_sources(files: EvalFiles, facts: CollectionFacts | None, test: Test) -> EvalReport:
    """The Task 3 development protocol (:func:`mathsearch.evaluation.task3.evaluate_sources`)."""
    from ..text.tokenize import MathRegexTokenizer
    from .task3 import evaluate_sources

    if facts is None or facts.text_of is None:
        raise InputError("--sources needs the answers' texts: give --index DIR (or --posts POSTS.xml)")
    present = None
    if files.collection_only:
        present = facts.present(1)
        if present is None:
            raise InputError("--collection-only needs the collection: give --index DIR")
    similarity = None
    if files.contextual:
        from .similarity import ContextualSimilarity

        similarity = ContextualSimilarity(files.model)
    report: EvalReport = evaluate_sources(
        files.qrels, list(files.runs), facts.text_of, present, MathRegexTokenizer() if files.tokenizer == "regex" else None,
        similarity, read_categories(files.categories) if files.categories else None, test,
    )
    return report
