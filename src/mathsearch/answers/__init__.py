"""Task 3 answers: one answer of at most 1,200 characters per question, with its sources.

* :mod:`.passages`: a post as sentences, displayed equations, list items and code blocks, and an
  answer fitted to the budget without cutting inside a formula, an item or a code block;
* :mod:`.extract`: which retrieved answer to draw from, and which of its pieces to keep;
* :mod:`.generate`: retrieval-augmented generation through an OpenAI-compatible endpoint.

The systems that use them (``extract``, ``first-hit``, ``generate``) are in
:mod:`mathsearch.systems.task3`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .passages import MAX_ANSWER_CHARS

NO_ANSWER = "No answer to this question was found in the collection."


@dataclass(frozen=True)
class Answer:
    """A Task 3 answer: the text (1..1,200 characters, LaTeX between ``$``) and the answer posts it
    was taken from, main source first."""

    text: str
    sources: tuple[str, ...] = ()  # answer post ids
    score: float = 1.0
    mode: str = "extract"  # extract, generate, or "fallback" (generation failed: the extractive answer)
    notes: tuple[str, ...] = field(default=())  # what went wrong on the way (e.g. the endpoint's error)

    @property
    def sources_field(self) -> str:
        """The run file's Sources field: ``answer:ID,answer:ID``."""
        return ",".join(f"answer:{s}" for s in self.sources)


__all__ = ["MAX_ANSWER_CHARS", "NO_ANSWER", "Answer"]
