"""Judgements of an assessment database as the lab's qrels files, which ``mathsearch eval`` reads.

One judgement per item is exported: that of the topic's first assessor (whoever judged an item of
the topic first), or, for items that assessor left, the next assessor's in the same order;
``prefer`` puts one assessor first everywhere.  The other assessors' judgements of the shared
overlap set serve agreement (:mod:`.agreement`), as in the lab, where a second assessor's
judgements measured agreement and the first assessor's made the qrels.

Files (``topic<TAB>0<TAB>id<TAB>grade``, the layout of the lab's files; codes 5 and 6 kept, which
``eval`` reads as unjudged for Tasks 1 and 2 and as 0 for Task 3):

``qrels-task1.tsv``          Task 1: answer post ids
``qrels-task2-visual.tsv``   Task 2: visual ids, each the maximum grade of its judged instances
                             (ARQMath-2/3 files; codes 5/6 only where no instance got a grade)
``qrels-task2-formula.tsv``  Task 2: formula instance ids as judged (the 2020 lab file's keys)
``qrels-task3.tsv``          Task 3: answer ids (a hash of the answer text)
``task3-answer-map.tsv``     Task 3: ``run<TAB>topic<TAB>answer id`` (``eval --answer-map``)
``task3-answers.tsv``        Task 3: ``answer id<TAB>text`` of the judged answers (``eval --answers``)
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..records import topic_order
from ..runs.output import check_output
from .db import AssessDB, ItemRow, Judgement, as_umask_allows, check_assessor
from .grades import GRADED
from .pool import ANSWER, FORMULA, TASK3

FILES = {
    "task1": "qrels-task1.tsv",
    "task2_visual": "qrels-task2-visual.tsv",
    "task2_formula": "qrels-task2-formula.tsv",
    "task3": "qrels-task3.tsv",
    "task3_answer_map": "task3-answer-map.tsv",
    "task3_answers": "task3-answers.tsv",
}


@dataclass(slots=True)
class Export:
    files: dict[str, str] = field(default_factory=dict)  # FILES key -> path written
    judgements: dict[str, int] = field(default_factory=dict)  # FILES key -> lines written
    topics: int = 0
    by_assessor: dict[str, int] = field(default_factory=dict)  # exported judgements per assessor

    def to_json(self) -> dict:
        return {"files": self.files, "lines": self.judgements, "topics": self.topics, "by_assessor": self.by_assessor}


def chosen_judgements(db: AssessDB, prefer: str | None = None) -> dict[int, Judgement]:
    """The judgement exported for each judged item (see the module docstring)."""
    if prefer is not None:
        prefer = check_assessor(prefer)
        if prefer not in db.assessors():
            raise InputError(f"no assessor named {prefer!r} in {db.path} (assessors: {', '.join(db.assessors()) or 'none'})")
    topic_of = {i.item_id: i.topic_id for i in db.items()}
    by_item: dict[int, dict[str, Judgement]] = {}
    first_in_topic: dict[tuple[str, str], int] = {}
    for j in db.judgements():  # in first_seq order
        by_item.setdefault(j.item_id, {})[j.assessor] = j
        key = (topic_of[j.item_id], j.assessor)
        first_in_topic[key] = min(first_in_topic.get(key, j.first_seq), j.first_seq)
    out: dict[int, Judgement] = {}
    for item_id, per in by_item.items():
        topic = topic_of[item_id]
        order = sorted(per, key=lambda a: (a != prefer, first_in_topic[(topic, a)]))
        out[item_id] = per[order[0]]
    return out


def _id_order(doc: str) -> tuple:
    return (0, int(doc), "") if doc.isdigit() else (1, 0, doc)


def _qrels_text(rows: Mapping[tuple[str, str], int]) -> str:
    ordered = sorted(rows, key=lambda k: (topic_order(k[0]), _id_order(k[1])))
    return "".join(f"{t}\t0\t{d}\t{rows[(t, d)]}\n" for t, d in ordered)


def _visual_grade(grades: list[int]) -> int:
    graded = [g for g in grades if g in GRADED]
    if graded:
        return max(graded)
    return min(grades)  # 5 (system failure) before 6 (do not know)


def export_qrels(db: AssessDB, out_dir: str | Path, *, prefer: str | None = None, overwrite: bool = False) -> Export:
    """Write the qrels files of the database's judgements into ``out_dir`` (created if missing).

    Files that exist are refused (nothing written) unless ``overwrite``; each file is written beside
    and renamed into place.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out {out_dir} is a file; give a folder for the qrels files")
    chosen = chosen_judgements(db, prefer)
    items: dict[int, ItemRow] = {i.item_id: i for i in db.items()}
    answers: dict[tuple[str, str], int] = {}
    formulas: dict[tuple[str, str], int] = {}
    visual: dict[tuple[str, str], list[int]] = {}
    task3: dict[tuple[str, str], int] = {}
    texts: dict[str, str] = {}
    result = Export()
    for item_id, j in chosen.items():
        item = items[item_id]
        key = (item.topic_id, item.doc_id)
        if item.kind == ANSWER:
            answers[key] = j.grade
        elif item.kind == FORMULA:
            formulas[key] = j.grade
            if item.visual_id is not None:
                visual.setdefault((item.topic_id, item.visual_id), []).append(j.grade)
        elif item.kind == TASK3:
            task3[key] = j.grade
            texts[item.doc_id] = item.answer or ""
        result.by_assessor[j.assessor] = result.by_assessor.get(j.assessor, 0) + 1
    result.topics = len({items[i].topic_id for i in chosen})
    contents: dict[str, tuple[str, int]] = {}
    task = db.task
    if task == 1:
        contents["task1"] = (_qrels_text(answers), len(answers))
    if task == 2:
        contents["task2_visual"] = (_qrels_text({k: _visual_grade(v) for k, v in visual.items()}), len(visual))
        contents["task2_formula"] = (_qrels_text(formulas), len(formulas))
    if task == 3 or any(i.kind == TASK3 for i in items.values()):
        contents["task3"] = (_qrels_text(task3), len(task3))
        answer_map = db.run_answers()
        contents["task3_answer_map"] = ("".join(f"{r}\t{t}\t{a}\n" for r, t, a in answer_map), len(answer_map))
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter="\t", lineterminator="\n")
        for doc in sorted(texts):
            writer.writerow([doc, texts[doc]])
        contents["task3_answers"] = (buf.getvalue(), len(texts))
    targets = {k: out_dir / FILES[k] for k in contents}
    for target in targets.values():
        if (target.exists() or target.is_symlink()) and not target.is_file():
            raise InputError(f"{target} exists and is not a regular file; refusing to write to it")
        # Judgements are never replaced by surprise: the lab's qrels share these files' layout, so
        # any existing file, ours or not, needs --force (the check of every output).
        check_output(target, [db.path], option="--out", force=overwrite, ours=lambda _: "may hold judgements")
    out_dir.mkdir(parents=True, exist_ok=True)
    for key, target in targets.items():
        text, n = contents[key]
        _write_atomic(target, text)
        result.files[key] = str(target)
        result.judgements[key] = n
    return result


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    as_umask_allows(Path(tmp))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
