"""What the text indexes hold: the analysed fields of an answer (with its thread) and of a question,
and the same analysis of a query (a topic or a typed-in search).

Every field is a list of tokens from :mod:`mathsearch.text.analysis`; the index joins them with
spaces and splits on white space, so a query token matches an index token only when the same
function made both.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..readers.html import body_text, extract_math
from ..records import Topic
from ..text import analysis as ta

# Fields of the answer index (one document per answer post).
ANSWER_FIELDS = (
    "body",  # the answer's words
    "body_math",  # the answer's math tokens
    "body_raw",  # the answer with raw LaTeX, generic tokeniser (Terrier-like baseline)
    "body_lw",  # the answer with LaTeX as words (PyTerrier-like baseline)
    "comments",  # words of the comments on the answer
    "title",  # thread context: the question's title words
    "question",  # ... its body words
    "tags",  # ... its tags
    "q_math",  # ... math tokens of its title and body
)
# Fields of the question index (one document per question that has an answer in the collection).
QUESTION_FIELDS = ("title", "question", "tags", "q_math")


def _prose_and_math(text: str) -> tuple[list[str], list[str]]:
    prose, formulae = ta.split_math(text or "")
    return ta.words(prose), ta.formula_math_tokens(formulae)


@dataclass(slots=True)
class QuestionBags:
    """The analysed thread context of one question, computed once for all its answers."""

    title: list[str]
    question: list[str]
    tags: list[str]
    q_math: list[str]

    @classmethod
    def of(cls, title: str | None, text: str, tags: tuple[str, ...]) -> QuestionBags:
        t_words, t_math = _prose_and_math(title or "")
        q_words, q_math = _prose_and_math(text)
        return cls(t_words, q_words, ta.tag_terms(tags), t_math + q_math)

    def fields(self) -> dict[str, list[str]]:
        return {"title": self.title, "question": self.question, "tags": self.tags, "q_math": self.q_math}


def answer_fields(text: str, comments: list[str], thread: QuestionBags | None) -> dict[str, list[str]]:
    """Index fields of one answer: its own text, its comments and its thread's question."""
    prose, formulae = ta.split_math(text)
    body = ta.words(prose)
    out = {
        "body": body,
        "body_math": ta.formula_math_tokens(formulae),
        "body_raw": ta.raw_latex_terms(text),
        "body_lw": body + ta.formula_word_terms(formulae),  # = latex_word_terms(text), prose analysed once
        # One pass over the comments' prose joined by spaces: the words of each, in order.
        "comments": ta.words(" ".join([ta.split_math(c)[0] for c in comments])),
    }
    ctx = thread.fields() if thread is not None else {f: [] for f in QUESTION_FIELDS}
    out.update(ctx)
    return out


def field_texts(fields: dict[str, list[str]]) -> dict[str, str]:
    """Fields as the index takes them: tokens joined by spaces, empty fields left out."""
    return {name: " ".join(tokens) for name, tokens in fields.items() if tokens}


@dataclass(slots=True)
class QueryBags:
    """A query analysed every way an index field can be matched.

    ``title_*`` and ``question_*`` are kept apart so that systems may weight the topic's title
    (short, on point) differently from its body.
    """

    title_words: list[str] = field(default_factory=list)
    question_words: list[str] = field(default_factory=list)
    title_math: list[str] = field(default_factory=list)
    question_math: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)  # raw LaTeX terms of title and question
    latex_words: list[str] = field(default_factory=list)  # LaTeX-as-words of title and question
    formulae: list[str] = field(default_factory=list)  # the LaTeX of every formula, title first

    @classmethod
    def of_text(cls, title: str, question: str = "", tags: tuple[str, ...] = ()) -> QueryBags:
        """From plain text with ``$LaTeX$`` formulae (what ``mathsearch search`` is given)."""
        t_prose, t_formulae = ta.split_math(title)
        q_prose, q_formulae = ta.split_math(question)
        both = f"{title}\n{question}"
        return cls(
            title_words=ta.words(t_prose),
            question_words=ta.words(q_prose),
            title_math=ta.formula_math_tokens(t_formulae),
            question_math=ta.formula_math_tokens(q_formulae),
            tags=ta.tag_terms(tags),
            raw=ta.raw_latex_terms(both),
            latex_words=ta.latex_word_terms(both),
            formulae=t_formulae + q_formulae,
        )

    @classmethod
    def of_topic(cls, topic: Topic) -> QueryBags:
        title, _ = extract_math(topic.title, escaped=True, is_html=True)
        question, _ = body_text(topic.question)
        return cls.of_text(title, question, topic.tags)

    def bag(self, name: str) -> Counter[str]:
        """Token counts of a named part; ``words``/``math`` join title and question."""
        if name == "words":
            return Counter(self.title_words + self.question_words)
        if name == "math":
            return Counter(self.title_math + self.question_math)
        return Counter(getattr(self, name))


def topic_text(topic: Topic) -> tuple[str, str]:
    """A topic's title and question as plain text with ``$LaTeX$`` formulae."""
    title, _ = extract_math(topic.title, escaped=True, is_html=True)
    question, _ = body_text(topic.question)
    return title, question
