"""Judgement pools built from run files, as the ARQMath lab built them.

* **Task 1** (ARQMath-3 overview, section 4.4): per topic, the top ``depth`` answers of every
  primary run and the top ``alternate_depth`` of every alternate run (45 and 20 in ARQMath-3);
  Task 3 runs given with them add their single answer per topic (the lab judged Tasks 1 and 3
  in one pool).  Duplicates are merged.
* **Task 2** (ARQMath-2 overview, section 5.3; ARQMath-3, 5.4): pooling goes down each ranked
  list until ``depth`` visually distinct formulae (visual ids) have been seen (25 for primary,
  15 for alternate runs in ARQMath-3); for each pooled visual id at most ``instances`` (5)
  formula instances are shown, chosen by votes: each instance votes by the sum of its reciprocal
  ranks in the runs that returned it (over the whole of each run), ties broken at random (seeded).
* **Task 3**: every run's answer to each topic; identical answers (same text) are judged once.

Primary and alternate runs are told apart by the run-file naming convention of the participant
guidelines (``...-P.tsv`` / ``...-A.tsv``, :mod:`mathsearch.runs.naming`); a name that breaks it is
refused, with a name that keeps it suggested.  Ranks are positions in the lab's ranking order
(score descending, then id descending: :func:`mathsearch.ranking.ranked`), never the rank column.

The display order of a topic's items is random but reproducible: items are sorted by a hash of
(seed, topic, id), so neither run order nor file order shows through, and the same runs and seed
give the same pool.  Task 2 keeps the instances of one visual id together, best voted first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..ranking import ranked
from ..readers.runs import read_formula_rankings, read_run_scores, read_task3_run
from ..records import ReadReport, topic_order
from ..runs.naming import check_run_name, parse_run_name, suggest_run_name

ANSWER = "answer"  # a Task 1 answer post (doc_id: the post id)
FORMULA = "formula"  # a Task 2 formula instance (doc_id: the formula id; visual_id, post_id)
TASK3 = "task3"  # a Task 3 run's answer text (doc_id: a content hash "t3-...")
KINDS = (ANSWER, FORMULA, TASK3)

# ARQMath-3 depths (primary, alternate): Task 1 45/20 answers, Task 2 25/15 visually distinct formulae.
LAB_DEPTHS = {1: (45, 20), 2: (25, 15), 3: (1, 1)}
LAB_INSTANCES = 5  # formula instances shown per pooled visual id

# Which run files a pool of each task reads (by the task field of their names).
RUN_TASKS = {1: ("task1", "task3"), 2: ("task2",), 3: ("task3",)}

VisualLookup = Callable[[Iterable[str]], Mapping[str, str | None]]


@dataclass(frozen=True, slots=True)
class PoolRun:
    """A run file to pool: its path, the task its name declares, and whether it is primary."""

    path: Path
    task: int
    primary: bool

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def stem(self) -> str:
        """The run name of the Task 3 answer map (``mathsearch eval --answer-map``): the file stem."""
        return self.path.stem

    @property
    def role(self) -> str:
        return "primary" if self.primary else "alternate"


@dataclass(slots=True)
class PoolItem:
    """One thing to judge for one topic."""

    topic_id: str
    kind: str
    doc_id: str
    post_id: str | None = None
    visual_id: str | None = None
    votes: float = 0.0  # Task 2: the instance's reciprocal-rank votes
    answer: str | None = None  # Task 3: the answer text
    sources: str | None = None  # Task 3: the run's Sources field
    ranks: dict[str, int] = field(default_factory=dict)  # run file name -> rank of the item in that run


@dataclass(slots=True)
class RunSummary:
    name: str
    path: str
    task: int
    role: str
    depth: int
    topics: int = 0
    hits: int = 0  # lines read
    pooled: int = 0  # items of the pool this run returned within its depth
    unique: int = 0  # ... and no other run did


@dataclass(slots=True)
class Pool:
    task: int
    depth: int
    alternate_depth: int
    seed: int
    instances: int
    runs: list[RunSummary]
    topics: dict[str, list[PoolItem]]  # topic -> items in display order (topics in natural order)
    report: ReadReport
    notes: list[str] = field(default_factory=list)

    @property
    def items(self) -> int:
        return sum(len(v) for v in self.topics.values())

    def counts(self) -> dict[str, object]:
        """What ``mathsearch pool --json`` prints."""
        out: dict[str, object] = {"task": self.task, "topics": len(self.topics), "items": self.items}
        if self.task == 2:
            out["visual_ids"] = sum(len({i.visual_id for i in items}) for items in self.topics.values())
        kinds = {k: sum(1 for items in self.topics.values() for i in items if i.kind == k) for k in KINDS}
        out["kinds"] = {k: n for k, n in kinds.items() if n}
        out["depth"] = self.depth
        out["alternate_depth"] = self.alternate_depth
        out["seed"] = self.seed
        out["per_topic"] = {t: len(items) for t, items in self.topics.items()}
        out["runs"] = [{"name": r.name, "role": r.role, "depth": r.depth, "topics": r.topics, "hits": r.hits,
                        "pooled": r.pooled, "unique": r.unique} for r in self.runs]
        out["skipped_lines"] = self.report.skipped_total
        return out


def shuffle_key(seed: int, topic_id: str, key: str) -> bytes:
    """The seeded random position of ``key`` in a topic: a hash, so no input order shows through."""
    return hashlib.blake2b(f"{seed}\x00{topic_id}\x00{key}".encode(), digest_size=8).digest()


def task3_answer_id(answer: str) -> str:
    """The judged id of a Task 3 answer: a hash of its text (identical answers are judged once)."""
    return "t3-" + hashlib.blake2b(answer.strip().encode(), digest_size=8).hexdigest()


def classify_runs(paths: Sequence[str | Path], task: int) -> list[PoolRun]:
    """The run files of a ``task`` pool, primary or alternate by their names.

    Raises :class:`InputError` (one sentence naming the file) for a name that breaks the
    convention, a run of another task, or a file given twice.
    """
    if task not in RUN_TASKS:
        raise InputError(f"--task must be 1, 2 or 3, not {task}")
    if not paths:
        raise InputError("give at least one run file to pool")
    out: list[PoolRun] = []
    names: dict[str, Path] = {}
    for p in map(Path, paths):
        if not p.is_file():
            raise InputError(f"run file {p} does not exist" if not p.exists() else f"run path {p} is not a file")
        problems = check_run_name(p.name)
        parsed = parse_run_name(p.name)
        if problems or parsed is None:
            suggestion = suggest_run_name(p.name, task=task if task != 1 or "task3" not in p.name else 3)
            raise InputError(
                f"run file {p}: its name breaks the lab's run-file naming ({problems[0] if problems else 'unreadable'}), "
                f"which tells primary (-P) from alternate (-A) runs; rename it, e.g. {suggestion}")
        if parsed.task not in RUN_TASKS[task]:
            allowed = " or ".join(RUN_TASKS[task])
            raise InputError(f"run file {p}: its name says {parsed.task}, but a Task {task} pool reads {allowed} runs")
        if p.name in names:
            raise InputError(f"run file {p}: a run of the same name was given already ({names[p.name]})")
        names[p.name] = p
        out.append(PoolRun(p, int(parsed.task[-1]), parsed.primary))
    return out


def build_pool(
    task: int,
    runs: Sequence[PoolRun],
    *,
    depth: int | None = None,
    alternate_depth: int | None = None,
    seed: int = 0,
    visual_ids: VisualLookup | None = None,
    instances: int = LAB_INSTANCES,
    report: ReadReport | None = None,
) -> Pool:
    """The pool of ``runs`` for ``task`` (see the module docstring).

    ``depth`` and ``alternate_depth`` default to the lab's (ARQMath-3); Task 2 needs ``visual_ids``,
    a function from formula ids to their visual ids (a formula without one cannot be pooled by
    visual id: it is left out and counted in the notes).  Malformed run lines are skipped and
    reported in ``report`` with file and line.
    """
    lab_primary, lab_alternate = LAB_DEPTHS[task]
    depth = lab_primary if depth is None else depth
    alternate_depth = lab_alternate if alternate_depth is None else alternate_depth
    if depth < 1 or alternate_depth < 1:
        raise InputError("pool depths must be at least 1")
    if instances < 1:
        raise InputError("--instances must be at least 1")
    if task == 2 and visual_ids is None:
        raise InputError("a Task 2 pool needs the formulae's visual ids: give --index IDX or --formulas TSV")
    report = report if report is not None else ReadReport(source=", ".join(str(r.path) for r in runs))
    pool = Pool(task, depth, alternate_depth, seed, instances, [], {}, report)
    items: dict[tuple[str, str, str], PoolItem] = {}
    if task == 2:
        _pool_formulas(pool, runs, items, visual_ids)  # type: ignore[arg-type]
    else:
        for run in runs:
            read = ReadReport(source=str(run.path))
            if run.task == 3:
                summary = _pool_task3(run, items, read, pool.notes)
            else:
                summary = _pool_answers(run, depth if run.primary else alternate_depth, items, read)
            report.merge(read)
            pool.runs.append(summary)
    _order(pool, items)
    _count_contributions(pool)
    return pool


def _summary(run: PoolRun, depth: int) -> RunSummary:
    return RunSummary(run.name, str(run.path), run.task, run.role if run.task != 3 else "answers", depth)


def _pool_answers(run: PoolRun, depth: int, items: dict, read: ReadReport) -> RunSummary:
    scores = read_run_scores(run.path, 1, read)
    summary = _summary(run, depth)
    summary.topics, summary.hits = len(scores), read.rows
    for topic, docs in scores.items():
        for rank, doc in enumerate(ranked(docs)[:depth], 1):
            item = items.get((topic, ANSWER, doc))
            if item is None:
                item = items[(topic, ANSWER, doc)] = PoolItem(topic, ANSWER, doc, post_id=doc)
            item.ranks[run.name] = rank
    return summary


def _pool_task3(run: PoolRun, items: dict, read: ReadReport, notes: list[str]) -> RunSummary:
    answers = read_task3_run(run.path, read)
    summary = _summary(run, 1)
    summary.topics, summary.hits = len({a.query_id for a in answers}), read.rows
    empty = 0
    for a in answers:
        if not a.answer.strip():
            empty += 1
            continue
        doc = task3_answer_id(a.answer)
        item = items.get((a.query_id, TASK3, doc))
        if item is None:
            item = items[(a.query_id, TASK3, doc)] = PoolItem(a.query_id, TASK3, doc, answer=a.answer.strip(),
                                                              sources=a.sources)
        item.ranks[run.name] = 1
    if empty:
        notes.append(f"{run.name}: {empty} empty answer(s) left out of the pool")
    return summary


def _pool_formulas(pool: Pool, runs: Sequence[PoolRun], items: dict, visual_ids: VisualLookup) -> None:
    rankings = []
    for run in runs:
        read = ReadReport(source=str(run.path))
        found = read_formula_rankings(run.path, read)
        pool.report.merge(read)
        summary = _summary(run, pool.depth if run.primary else pool.alternate_depth)
        summary.topics, summary.hits = len(found), read.rows
        pool.runs.append(summary)
        rankings.append((run, summary, {t: (r.ordered(), r) for t, r in found.items()}))
    wanted = {fid for _, _, by_topic in rankings for order, _ in by_topic.values() for fid in order}
    vmap = {f: v for f, v in visual_ids(wanted).items() if v is not None}
    unknown = len(wanted - vmap.keys())
    if unknown:
        pool.notes.append(f"{unknown:,} formula instance(s) of the runs have no visual id: they cannot be pooled "
                          "by visual id and were left out")
    # Which visual ids each run pools: the first `depth` visually distinct formulae of its list.
    pooled_by: dict[tuple[str, str], set[str]] = {}
    for run, summary, by_topic in rankings:
        for topic, (order, _) in by_topic.items():
            seen: set[str] = set()
            for fid in order:
                vid = vmap.get(fid)
                if vid is None or vid in seen:
                    continue
                if len(seen) == summary.depth:
                    break
                seen.add(vid)
                pooled_by.setdefault((topic, vid), set()).add(run.name)
    for names in pooled_by.values():
        for summary in pool.runs:
            if summary.name in names:
                summary.pooled += 1
                summary.unique += len(names) == 1
    # Votes: each instance of a pooled visual id, the sum of its reciprocal ranks over the runs.
    votes: dict[tuple[str, str], dict[str, float]] = {}
    ranks: dict[tuple[str, str], dict[str, int]] = {}
    posts: dict[tuple[str, str], str | None] = {}
    for run, _, by_topic in rankings:
        for topic, (order, ranking) in by_topic.items():
            for rank, fid in enumerate(order, 1):
                vid = vmap.get(fid)
                if vid is None or (topic, vid) not in pooled_by:
                    continue
                per_vid = votes.setdefault((topic, vid), {})
                per_vid[fid] = per_vid.get(fid, 0.0) + 1.0 / rank
                ranks.setdefault((topic, fid), {})[run.name] = rank
                if posts.get((topic, fid)) is None:
                    posts[(topic, fid)] = ranking.post_of(fid)
    for (topic, vid), candidates in votes.items():
        # Ties by a seeded shuffle, not by id: the pool must not favour low or high ids.
        chosen = sorted(candidates, key=lambda f: (-candidates[f], shuffle_key(pool.seed, topic, f)))[: pool.instances]
        for fid in chosen:
            items[(topic, FORMULA, fid)] = PoolItem(topic, FORMULA, fid, post_id=posts.get((topic, fid)), visual_id=vid,
                                                    votes=candidates[fid], ranks=ranks[(topic, fid)])


def _order(pool: Pool, items: Mapping[tuple[str, str, str], PoolItem]) -> None:
    by_topic: dict[str, list[PoolItem]] = {}
    for item in items.values():
        by_topic.setdefault(item.topic_id, []).append(item)
    for topic in sorted(by_topic, key=topic_order):
        found = by_topic[topic]
        if pool.task == 2:
            # Visual ids in random order, the instances of one together, best voted first.
            found.sort(key=lambda i: (shuffle_key(pool.seed, topic, i.visual_id or ""), -i.votes,
                                      shuffle_key(pool.seed, topic, i.doc_id)))
        else:
            found.sort(key=lambda i: shuffle_key(pool.seed, topic, f"{i.kind}:{i.doc_id}"))
        pool.topics[topic] = found


def _count_contributions(pool: Pool) -> None:
    """Items each run returned within its depth, and those no other run did (Tasks 1 and 3; Task 2
    counts visual ids as it pools them)."""
    if pool.task == 2:
        return
    by_name = {r.name: r for r in pool.runs}
    for items in pool.topics.values():
        for item in items:
            for n in item.ranks:
                by_name[n].pooled += 1
                by_name[n].unique += len(item.ranks) == 1
