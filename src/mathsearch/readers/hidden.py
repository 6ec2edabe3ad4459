"""``hidden-threads.tsv``: what each topic drawn from the collection itself hides from a system.

A topic made from a question of the collection (``mathsearch qrels --from-collection``) would find
that question: beside its ``topics.xml`` a ``hidden-threads.tsv`` names, a line per topic,
``topic<TAB>thread`` (the whole thread is hidden: its question, answers and links) or
``topic<TAB>thread<TAB>question`` (its question only: the answers stay findable by their own text).
:func:`~mathsearch.readers.topics.read_topics` reads it when it lies beside the topic file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

HIDDEN_FILE = "hidden-threads.tsv"
THREAD, QUESTION = "thread", "question"  # what a line hides (no third column: the thread)


@dataclass(frozen=True)
class Hidden:
    """What one topic hides (``Topic.hidden_threads`` and ``Topic.hidden_questions``)."""

    threads: tuple[int, ...] = ()
    questions: tuple[int, ...] = ()


def read_hidden_threads(path: str | Path) -> dict[str, Hidden]:
    """``{topic id: what it hides}`` of a ``hidden-threads.tsv``: ``topic<TAB>thread`` lines hide the
    thread, ``topic<TAB>thread<TAB>question`` lines its question only."""
    path = Path(path)
    threads: dict[str, list[int]] = {}
    questions: dict[str, list[int]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        try:
            if len(parts) not in (2, 3) or not parts[0].strip():
                raise ValueError
            topic, number = parts[0].strip(), int(parts[1])
        except ValueError:
            raise InputError(f"{path}:{n}: expected 'topic<TAB>thread id[<TAB>{QUESTION}]', got {line!r}") from None
        hides = parts[2].strip() if len(parts) == 3 else THREAD
        if hides not in (THREAD, QUESTION):
            raise InputError(f"{path}:{n}: the third column says what is hidden, {THREAD} or {QUESTION}, "
                             f"not {hides!r}")
        (questions if hides == QUESTION else threads).setdefault(topic, []).append(number)
    return {t: Hidden(tuple(threads.get(t, ())), tuple(questions.get(t, ()))) for t in {**threads, **questions}}
