"""Evaluating runs as the ARQMath lab does: the library API behind ``mathsearch eval``.

:func:`evaluate_runs` reads the qrels once and scores each run file (how: :class:`EvalOptions`);
:func:`evaluate_ranked` scores runs already read.  For Tasks 1 and 2 both go one way, so they
cannot diverge: :func:`prepare_judgements` (Task 2: keyed by visual id), then :class:`RankedScoring`.


* Tasks 1 and 2: nDCG', MAP', P'@10 (unjudged removed, H+M for MAP'/P'@10) and nDCG@10
  (unjudged = non-relevant), via trec_eval semantics (:mod:`.trec`); Task 2 on visual ids
  (:mod:`.formulas`);
* Task 3: AR, P@1, LO, CS (:mod:`.task3`), for Task 3 runs or Task 1 runs cut to their first hit;

with per-topic scores, a 95% Student-t interval for each mean, p-values against the first run,
the share of judged hits at ranks 1..1000, per-category means, and the run checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..readers.qrels import qrels_to_dict, read_qrels
from ..readers.runs import read_run_scores, read_task3_run
from ..records import ReadReport, topic_order
from ..runs.naming import check_run_name
from ..runs.validate import CheckReport, Problem, check_run_scores
from .categories import Categories
from .collection import CollectionFacts
from .formulas import QrelsKey, detect_qrels_key, visual_qrels, visual_run
from .measures import JUDGED_AT, RANKED_MEASURES
from .results import EvalReport, RunResult, Test, compare, finish, is_trec_layout
from .subcollection import restrict_qrels
from .task3 import Task3Scores, overlap_scores, references_by_topic, relevance_scores
from .trec import TrecScorer, judged_fractions, rank_run, trec_order


def run_names(paths: Sequence[str | Path]) -> list[str]:
    """How each run is named in a table: its file name, or its path where two runs share a name
    (``d1/run.tsv``, ``d2/run.tsv``)."""
    names = [Path(p).name for p in paths]
    return [n if names.count(n) == 1 else str(p) for n, p in zip(names, paths, strict=True)]


def _checks(
    path: Path, task: int, run: Mapping[str, Mapping[str, float]], read: ReadReport, facts: CollectionFacts | None
) -> CheckReport:
    report = CheckReport(str(path), task, hits=sum(len(d) for d in run.values()), topics=len(run))
    for reason, n in read.skipped.items():
        report.counts["duplicate document" if "duplicate" in reason else "malformed line"] += n
    report.examples.extend(read.problems[: report.max_examples])
    # Run topics outside the qrels are normal (not every topic was assessed): a note, not a problem.
    for p in check_run_scores(run, task, facts.lookup if facts else None, None):
        report.add(p)
    for message in check_run_name(path.name, task):
        report.add(Problem("bad file name", "", path.name, f"file name {path.name!r}: {message}"))
    return report


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """How :func:`evaluate_runs` scores (everything but the task, the qrels and the runs).

    Unknown names are refused (``EvalOptions(colection_only=True)`` raises ``TypeError``).
    """

    facts: CollectionFacts | None = None  # visual ids (Task 2), answer texts (Task 3), the ids present
    collection_only: bool = False  # sub-collection protocol: judgements of absent documents removed
    qrels_key: QrelsKey = "auto"  # Task 2: judged ids are "visual" ids, "formula" ids, or detected
    categories: Categories | None = None  # per-category means
    test: Test = "t"  # significance test against the first run
    # Task 3 only: the judged answer id of (run name, topic) (the lab's teams_document_id.tsv),
    # texts of judged answers that ``facts`` lacks, Contextual Similarity on/off and its model.
    answer_map: Mapping[tuple[str, str], str] | None = None
    answer_texts: Mapping[str, str] | None = None
    contextual: bool = True
    model_dir: str | Path | None = None


@dataclass(slots=True)
class Judgements:
    """Qrels ready for ranked scoring, keyed by what runs are scored on (visual ids in Task 2).

    ``instance_qrels`` holds Task 2 judgements keyed by formula instance (the 2020 lab file) as
    given: with them, the prime measures follow the 2020 script (see :class:`RankedScoring`).
    """

    qrels: Mapping[str, Mapping[str, int]]
    key: str = ""  # Task 2: "visual" or "formula"
    instance_qrels: Mapping[str, Mapping[str, int]] | None = None
    notes: list[str] = field(default_factory=list)


def prepare_judgements(
    task: int,
    qrels: Mapping[str, Mapping[str, int]],
    visual_of: Mapping[str, str] | None,
    qrels_key: QrelsKey = "auto",
) -> Judgements:
    """Task 1: the qrels as they are.  Task 2: keyed by visual id, detecting (``"auto"``) whether
    the judged ids are visual ids or formula ids; formula-keyed judgements take the maximum
    relevance over a visual id's instances and are kept as ``instance_qrels``."""
    if task != 2:
        return Judgements(qrels)
    if not visual_of:
        raise InputError("Task 2 evaluation needs the visual ids of the formulae: give --formulas TSV or --index DIR")
    key = detect_qrels_key(qrels, visual_of) if qrels_key == "auto" else qrels_key
    if key != "formula":
        return Judgements(qrels, key)
    by_visual, unknown = visual_qrels(qrels, visual_of)
    notes = [f"{unknown} judged formula id(s) without a known visual id left out"] if unknown else []
    return Judgements(by_visual, key, qrels, notes)


class RankedScoring:
    """Scores Task 1/2 runs (``{topic: {id: score}}``) against prepared :class:`Judgements`: the one
    scoring path of :func:`evaluate_runs` and :func:`evaluate_ranked`.

    Task 2 runs are formula-instance runs, scored on visual ids de-duplicated from the top.  With
    formula-keyed judgements the prime measures follow the 2020 lab script, which removed unjudged
    formula *instances* before de-duplicating: a visual id ranks by its best *judged* instance.
    """

    def __init__(self, task: int, judgements: Judgements, visual_of: Mapping[str, str] | None = None):
        if task == 2 and not visual_of:
            raise InputError("Task 2 evaluation needs the visual ids of the formulae: give --formulas TSV or --index DIR")
        self.task = task
        self.judgements = judgements
        self.visual_of = visual_of or {}
        self.topics = list(judgements.qrels)
        self.scorer = TrecScorer(judgements.qrels, RANKED_MEASURES)
        self.prime_scorer = None
        if judgements.instance_qrels is not None:
            self.prime_scorer = TrecScorer(judgements.qrels, [m for m in RANKED_MEASURES if m.judged_only])

    def score(self, result: RunResult, run: Mapping[str, Mapping[str, float]], categories: Categories | None = None) -> None:
        """Fill ``result`` (per-topic scores, means, judged fractions, notes) from one run."""
        qrels = self.judgements.qrels
        if not run:  # an empty file (a write that failed, the wrong file) printed a table of zeros, exit 0
            raise InputError(f"{result.path or result.name}: holds no hits, so there is nothing to score.")
        if qrels and not any(t in qrels for t in run):
            # a table of zeros and two warnings was all it said: a run of another year or task
            ours, judged = sorted(run, key=topic_order), sorted(qrels, key=topic_order)
            raise InputError(f"{result.path or result.name}: none of its {len(run)} topics ({ours[0]} ... {ours[-1]}) is "
                             f"judged in the qrels ({judged[0]} ... {judged[-1]}, {len(judged)} topics): qrels of "
                             f"another year or task?")
        instance_qrels = self.judgements.instance_qrels
        judged_instances = None
        if self.task == 2:
            visual_of = self.visual_of
            if instance_qrels is not None:
                judged_instances = {
                    t: {f: s for f, s in hits.items() if f in instance_qrels.get(t, {})} for t, hits in run.items()
                }
                judged_instances, _ = visual_run(judged_instances, visual_of)
            run, stats = visual_run(run, visual_of)
            if stats.unknown:
                result.notes.append(f"{stats.unknown} formula instance(s) without a known visual id left out")
        ranked = rank_run(run)  # one sort per topic serves every measure
        result.per_topic = self.scorer.score(run, ranked)
        if judged_instances is not None and self.prime_scorer is not None:
            result.per_topic.update(self.prime_scorer.score(judged_instances))
        result.judged_at = judged_fractions(run, qrels, JUDGED_AT, ranked)
        missing = [t for t in self.topics if t not in run]
        if missing:
            result.notes.append(f"{len(missing)} qrels topic(s) not in the run, scored 0")
        unscored = [t for t in run if t not in qrels]
        if unscored:
            result.notes.append(f"{len(unscored)} run topic(s) without judgements, not scored")
        finish(result, self.topics, categories)


def evaluate_ranked(
    task: int,
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[tuple[str, Mapping[str, Mapping[str, float]]]],
    *,
    visual_of: Mapping[str, str] | None = None,
    qrels_key: QrelsKey = "auto",
) -> list[RunResult]:
    """Score already read Task 1/2 runs (``(name, {topic: {id: score}})``) against graded qrels.

    Task 2 runs are formula-instance runs and need ``visual_of``; ``qrels`` may be keyed by visual
    id or by formula id (detected, or given as ``qrels_key``), scored exactly as
    :func:`evaluate_runs` does.  The small, store-free entry point.
    """
    judgements = prepare_judgements(task, qrels, visual_of, qrels_key)
    scoring = RankedScoring(task, judgements, visual_of)
    out = []
    for name, run in runs:
        result = RunResult(name, name, task)
        result.notes.extend(judgements.notes)
        scoring.score(result, run)
        out.append(result)
    return out


def evaluate_runs(
    task: int,
    qrels_path: str | Path,
    run_paths: Sequence[str | Path],
    options: EvalOptions | None = None,
    **settings: Any,
) -> EvalReport:
    """Score run files of ``task`` against a qrels file (see the module text).

    ``options`` (:class:`EvalOptions`), or its fields as keywords, say how: ``facts`` supplies the
    collection (visual ids for Task 2, answer texts for Task 3, the ids present for
    ``collection_only``); the Task 3 fields are read for Task 3 only.

    Examples:
        The official run in the shared data, on the lab's 2020 judgements (the whole collection's):

        >>> report = evaluate_runs(1, "../shared/data/arqmath/qrels/task1-2020.tsv",
        ...     ["../shared/data/arqmath/runs/prim_MathDowsers-task1-alpha05noReRank-auto-both-A.tsv"])
        >>> report.topics, round(report.runs[0].means["nDCG'"], 4)
        (77, 0.3446)
    """
    if options is None:
        options = EvalOptions(**settings)
    elif settings:
        options = replace(options, **settings)
    if task not in (1, 2, 3):
        raise InputError(f"task must be 1, 2 or 3, not {task}")
    qrels_path = Path(qrels_path)
    report = EvalReport(task, str(qrels_path), test=options.test)
    qrels = _read_judgements(report, qrels_path)
    facts = options.facts
    visual_of = facts.visual_of if facts else None
    judgements = prepare_judgements(task, qrels, visual_of, options.qrels_key)
    report.qrels_key = judgements.key
    report.notes.extend(judgements.notes)
    if options.collection_only:
        _restrict(report, judgements, facts, task)
    report.topics = len(judgements.qrels)

    if task == 3:
        _evaluate_task3(report, judgements.qrels, run_paths, options)
    else:
        scoring = RankedScoring(task, judgements, visual_of)
        for path, name in zip(map(Path, run_paths), run_names(run_paths), strict=True):
            result = RunResult(name, str(path), task)
            result.read = ReadReport(source=str(path))
            run = read_run_scores(path, task, result.read)
            result.checks = _checks(path, task, run, result.read, facts)
            scoring.score(result, run, options.categories)
            report.runs.append(result)
    compare(report, options.test)
    return report


def _read_judgements(report: EvalReport, qrels_path: Path) -> dict[str, dict[str, int]]:
    read_q = ReadReport(source=str(qrels_path))
    judgements = read_qrels(qrels_path, read_q)
    report.qrels_read = read_q
    if not judgements:
        raise InputError(f"qrels file {qrels_path} holds no judgements")
    return qrels_to_dict(judgements, graded_only=report.task != 3)


def _restrict(report: EvalReport, judgements: Judgements, facts: CollectionFacts | None, task: int) -> None:
    """The sub-collection protocol: judgements of documents absent from the collection removed."""
    present = facts.present(task) if facts else None
    if present is None:
        raise InputError("--collection-only needs the collection: give --index DIR (or --formulas TSV for Task 2)")
    restricted = restrict_qrels(judgements.qrels, present)
    judgements.qrels = restricted.qrels
    report.topics_dropped = restricted.topics_dropped
    report.judgements_removed = restricted.judgements_removed
    if not restricted.qrels:
        raise InputError("no topic of the qrels has a relevant document in this collection")


def _evaluate_task3(
    report: EvalReport,
    qrels: Mapping[str, Mapping[str, int]],
    run_paths: Sequence[str | Path],
    options: EvalOptions,
) -> None:
    facts, answer_map, answer_texts = options.facts, options.answer_map, options.answer_texts
    from ..text.tokenize import default_tokenizer

    def text_of(doc: str) -> str | None:
        if answer_texts and doc in answer_texts:
            return answer_texts[doc]
        if facts is not None and facts.text_of is not None:
            return facts.text_of(doc)
        return None

    references = references_by_topic(qrels, text_of)
    tokenizer = default_tokenizer()
    similarity = None
    if options.contextual:
        from .similarity import ContextualSimilarity

        similarity = ContextualSimilarity(options.model_dir)
    topics = list(qrels)
    for path, name in zip(map(Path, run_paths), run_names(run_paths), strict=True):
        result = RunResult(name, str(path), 3)
        result.read = ReadReport(source=str(path))
        answer_ids: dict[str, str | None] = {}
        answers: dict[str, str] = {}
        text_unknown: set[str] = set()
        if is_trec_layout(path):
            # A Task 1 run scored with Task 3 measures: its first hit in trec_eval order.
            run = read_run_scores(path, 1, result.read)
            for topic, docs in run.items():
                if docs:
                    top = trec_order(docs)[0]
                    answer_ids[topic] = top
                    text = text_of(top)
                    if text is not None:
                        answers[topic] = text
                    else:
                        text_unknown.add(topic)
            result.notes.append("Task 1 run: truncated to its first hit per topic")
        else:
            run_name = path.stem
            for a in read_task3_run(path, result.read):
                answers[a.query_id] = a.answer
                mapped = answer_map.get((run_name, a.query_id)) if answer_map else None
                if mapped is None and a.sources.strip() in qrels.get(a.query_id, {}):
                    mapped = a.sources.strip()  # an extractive answer naming its judged post
                answer_ids[a.query_id] = mapped
        if not answer_ids and not answers:  # an empty file: a table of zeros was all it said, as for Tasks 1, 2
            raise InputError(f"{result.path or result.name}: holds no answers, so there is nothing to score.")
        scores = Task3Scores()
        relevance_scores(answer_ids, qrels, scores)
        overlap_scores(answers, references, scores, tokenizer, similarity, text_unknown)
        result.per_topic = scores.per_topic
        if scores.unjudged:
            result.notes.append(f"{len(scores.unjudged)} answer(s) without a judgement left out of AR and P@1")
        if scores.unanswered:
            result.notes.append(f"{len(scores.unanswered)} qrels topic(s) without an answer, scored 0")
        if scores.no_answer_text:
            result.notes.append(f"{len(scores.no_answer_text)} answer(s) whose text is unknown left out of LO/CS")
        if scores.no_reference:
            result.notes.append(f"{len(scores.no_reference)} topic(s) without H+M reference text left out of LO/CS")
        judged = sum(1 for t in topics if answer_ids.get(t) in qrels[t])
        result.judged_at = {1: judged / len(answer_ids) if answer_ids else 0.0}
        finish(result, topics, options.categories)
        report.runs.append(result)
    report.notes.append(f"LO tokenizer: {tokenizer.name}")
    if similarity is not None:
        report.notes.append(f"CS model: {similarity.name}")
