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


def sources_label(mode: str, n: int) -> str:
    """How an answer came from its ``n`` sources, for a reader (the CLI's and the page's line under
    the answer): "extracted from 2 answers", not the system's internal mode names."""
    posts = f"{n} answer{'s' if n != 1 else ''} of the collection"
    if not n:  # "The answer is ...": a sentence either way
        return "not written: no answer of the collection to draw from" if mode == "declined" else \
            "written without an answer of the collection"
    if mode == "declined":  # Task 3 declined: nothing close enough to answer from
        return f"not written: {posts}, none close to the question, are listed instead"
    if mode == "generate":
        return f"written by a language model from {posts}"
    if mode == "fallback":
        return f"extracted from {posts} (the language model failed)"
    return f"extracted from {posts}"


__all__ = ["MAX_ANSWER_CHARS", "NO_ANSWER", "Answer", "sources_label"]
