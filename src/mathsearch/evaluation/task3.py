"""Task 3 measures: Average Relevance, P@1, Lexical Overlap, Contextual Similarity.

* **AR** (DCG@1): the graded relevance (0-3) of the topic's single answer; "system failure" (5)
  and "do not know" (6) count 0, as the lab did.
* **P@1**: 1 when that relevance is >= 2 (H+M binarisation).
  Both are averaged over the qrels topics: a topic without an answer scores 0; an answer that
  was never judged is left out of the mean and counted (the lab's script skipped it too).
* **LO**: token F1 (SQuAD style: bag-of-tokens overlap) of the answer against each relevant (H+M)
  reference answer; the topic's score is the maximum; averaged over topics that have references.
* **CS**: the same with BERTScore-style F1 over contextual token embeddings (:mod:`.similarity`).

Task 1 runs are scored with these measures by keeping each topic's first hit in trec_eval order.
The lab's ablation that excluded references contributed by the same team is not reproduced
(pool provenance is not in the qrels).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ..readers.qrels import task3_relevance
from .measures import H_M
from .tokenize import Tokenizer


def token_f1(candidate: Sequence[str], reference: Sequence[str]) -> float:
    """F1 of the token multisets (SQuAD): 2PR/(P+R) over the common token count."""
    if not candidate or not reference:
        return float(list(candidate) == list(reference))
    common = sum((Counter(candidate) & Counter(reference)).values())
    if common == 0:
        return 0.0
    precision = common / len(candidate)
    recall = common / len(reference)
    return 2 * precision * recall / (precision + recall)


@dataclass(slots=True)
class Task3Scores:
    per_topic: dict[str, dict[str, float]] = field(default_factory=dict)  # {measure: {topic: value}}
    unjudged: list[str] = field(default_factory=list)  # topics whose answer has no judgement
    unanswered: list[str] = field(default_factory=list)  # qrels topics the run does not answer
    no_reference: list[str] = field(default_factory=list)  # topics without H+M reference text
    no_answer_text: list[str] = field(default_factory=list)  # answered, but the text is unknown
    tokenizer: str = ""
    model: str = ""


def relevance_scores(
    answer_ids: Mapping[str, str | None], qrels: Mapping[str, Mapping[str, int]], out: Task3Scores
) -> None:
    """AR and P@1 per topic into ``out`` (``qrels`` may hold the codes 5 and 6).

    ``answer_ids`` maps each answered topic to the judged id of its answer, ``None`` where the
    answer cannot be matched to a judgement (e.g. a generated answer without a map entry).
    """
    ar: dict[str, float] = {}
    p1: dict[str, float] = {}
    for topic, judged in qrels.items():
        if topic not in answer_ids:
            out.unanswered.append(topic)
            ar[topic] = p1[topic] = 0.0
            continue
        answer = answer_ids[topic]
        if answer is None or answer not in judged:
            out.unjudged.append(topic)
            continue
        rel = task3_relevance(judged[answer])
        ar[topic] = float(rel)
        p1[topic] = 1.0 if rel >= H_M else 0.0
    out.per_topic["AR"] = ar
    out.per_topic["P@1"] = p1


def references_by_topic(
    qrels: Mapping[str, Mapping[str, int]], texts: Mapping[str, str] | Callable[[str], str | None]
) -> dict[str, list[str]]:
    """Texts of each topic's H+M judged answers, where the text is known."""
    get = texts.get if isinstance(texts, Mapping) else texts
    out: dict[str, list[str]] = {}
    for topic, judged in qrels.items():
        refs = []
        for doc, rel in judged.items():
            if task3_relevance(rel) >= H_M:
                text = get(doc)
                if text:
                    refs.append(text)
        out[topic] = refs
    return out


def overlap_scores(
    answers: Mapping[str, str],
    references: Mapping[str, list[str]],
    out: Task3Scores,
    tokenizer: Tokenizer | None = None,
    similarity=None,
    text_unknown: frozenset[str] | set[str] = frozenset(),
) -> None:
    """LO (and CS when ``similarity`` is given) per topic into ``out``.

    Topics without reference text are left out of both means and listed in ``out.no_reference``;
    so are topics in ``text_unknown`` (answered, but the answer's text is not available, e.g. a
    Task 1 hit outside the indexed collection), listed in ``out.no_answer_text``.
    """
    lo: dict[str, float] = {}
    cs: dict[str, float] = {}
    for topic, refs in references.items():
        if not refs:
            out.no_reference.append(topic)
            continue
        if topic in text_unknown:
            out.no_answer_text.append(topic)
            continue
        answer = answers.get(topic)
        if answer is None:
            lo[topic] = 0.0
            if similarity is not None:
                cs[topic] = 0.0
            continue
        if tokenizer is not None:
            cand = tokenizer.tokenize(answer)
            lo[topic] = max(token_f1(cand, tokenizer.tokenize(r)) for r in refs)
        if similarity is not None:
            cs[topic] = similarity.best_f1(answer, refs)
    if tokenizer is not None:
        out.per_topic["LO"] = lo
        out.tokenizer = tokenizer.name
    if similarity is not None:
        out.per_topic["CS"] = cs
        out.model = similarity.name
