"""The grades an assessor can give, in the lab's words (ARQMath-3 overview, Table 2 and section 4.4).

Tasks 1 and 3 judge answers with the Task 1 criteria (the lab judged them together, in one pool);
Task 2 judges formula instances with its own.  Besides the four relevance degrees the assessors
could answer "system failure" (5: e.g. formulae rendered unintelligibly) and "do not know" (6), the
codes of the lab's qrels (:mod:`mathsearch.readers.qrels`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..readers.qrels import DO_NOT_KNOW, GRADED, KNOWN_RELEVANCE, SYSTEM_FAILURE

__all__ = ["DO_NOT_KNOW", "GRADED", "GRADES", "Grade", "H_M", "KNOWN_RELEVANCE", "SYSTEM_FAILURE", "grades_for"]

H_M = 2  # H+M binarisation: High and Medium are relevant


@dataclass(frozen=True, slots=True)
class Grade:
    code: int
    rating: str
    definition: str
    key: str  # the keyboard shortcut on the assessment page


_ANSWERS = (
    Grade(3, "High", "Sufficient to answer the complete question on its own", "3"),
    Grade(2, "Medium", "Provides some path towards the solution. This path might come from clarifying the "
          "question, or identifying steps towards a solution", "2"),
    Grade(1, "Low", "Provides information that could be useful for finding or interpreting an answer, or "
          "interpreting the question", "1"),
    Grade(0, "Not Relevant", "Provides no information pertinent to the question or its answers. A post that "
          "restates the question without providing any new information is considered non-relevant", "0"),
)
_FORMULAE = (
    Grade(3, "High", "Just as good as finding an exact match to the query formula would be", "3"),
    Grade(2, "Medium", "Useful but not as good as the original formula would be", "2"),
    Grade(1, "Low", "There is some chance of finding something useful", "1"),
    Grade(0, "Not Relevant", "Not expected to be useful", "0"),
)
_OTHER = (
    Grade(SYSTEM_FAILURE, "System failure", "System issues such as unintelligible rendering of formulae, or a "
          "thread link not working when it was essential for interpretation (please leave a comment)", "5"),
    Grade(DO_NOT_KNOW, "Do not know", "After viewing the threads (and possibly external sources), still not able "
          "to decide the relevance degree (please leave a comment)", "6"),
)

GRADES = {1: _ANSWERS + _OTHER, 2: _FORMULAE + _OTHER, 3: _ANSWERS + _OTHER}


def grades_for(kind: str) -> tuple[Grade, ...]:
    """The grades of an item kind: ``"formula"`` items use the Task 2 wording, answers Task 1's."""
    return GRADES[2] if kind == "formula" else GRADES[1]
