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
from ..text.tokenize import Tokenizer
from .measures import H_M


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


# -- The development protocol on a sub-collection (issue 10) ---------------------------------------
#
# Without Task 3 judgements a Task 3 answer taken from the collection is judged by its *main
# source*, the first post its Sources field names, under the Task 1 judgements (``AR_src``,
# ``P@1_src``: the lab's Table 7 reading of Task 1 systems, where a hit's grade is its answer's).
# An unjudged or missing source counts 0, as nDCG@10 counts unjudged hits.  LO and CS compare the
# answer with the relevant (H+M) answers of at most 1,200 characters *other than* its sources
# (the lab's ablation of a team's own contributions, applied to sources).  A Task 1 run is read as
# the lab read Task 1 systems: its first hit (trec_eval order), cut to 1,200 characters.

SOURCE_MEASURES = ("AR_src", "P@1_src", "LO", "CS")
MAX_REFERENCE_CHARS = 1200


def parse_sources(sources: str) -> list[str]:
    """Post ids named by a Sources field, main source first: ``answer:12,answer:7`` -> ``["12", "7"]``;
    bare ids are read too, other labels (``Quora``, ``GPT``) are not post ids and are skipped."""
    out: list[str] = []
    for part in sources.replace(";", ",").split(","):
        part = part.strip().strip('"')
        kind, sep, ident = part.partition(":")
        ident = ident.strip() if sep else kind.strip()
        if sep and kind.strip().lower() not in ("answer", "post", "a"):
            continue
        if ident.isdigit() and ident not in out:
            out.append(ident)
    return out


def source_relevance_scores(
    main_source: Mapping[str, str | None], qrels: Mapping[str, Mapping[str, int]], out: Task3Scores
) -> None:
    """``AR_src`` and ``P@1_src`` per qrels topic: the Task 1 grade of the topic's main source
    (0 when the topic has no answer, no source, or a source never judged)."""
    ar: dict[str, float] = {}
    p1: dict[str, float] = {}
    for topic, judged in qrels.items():
        if topic not in main_source:
            out.unanswered.append(topic)
        source = main_source.get(topic)
        if source is not None and source not in judged:
            out.unjudged.append(topic)
        rel = task3_relevance(judged.get(source, 0)) if source is not None else 0
        ar[topic] = float(rel)
        p1[topic] = 1.0 if rel >= H_M else 0.0
    out.per_topic["AR_src"] = ar
    out.per_topic["P@1_src"] = p1


def ablated_references(
    qrels: Mapping[str, Mapping[str, int]],
    texts: Mapping[str, str] | Callable[[str], str | None],
    exclude: Mapping[str, Sequence[str]],
    max_chars: int = MAX_REFERENCE_CHARS,
) -> dict[str, list[str]]:
    """Texts of each topic's H+M judged answers of at most ``max_chars`` characters, leaving out
    the posts ``exclude[topic]`` names (the answer's own sources)."""
    get = texts.get if isinstance(texts, Mapping) else texts
    out: dict[str, list[str]] = {}
    for topic, judged in qrels.items():
        skip = set(exclude.get(topic, ()))
        refs = []
        for doc, rel in judged.items():
            if doc in skip or task3_relevance(rel) < H_M:
                continue
            text = get(doc)
            if text and len(text) <= max_chars:
                refs.append(text)
        out[topic] = refs
    return out


def evaluate_sources(
    qrels_path,
    run_paths,
    text_of: Callable[[str], str | None],
    present: set[str] | None = None,
    tokenizer: Tokenizer | None = None,
    similarity=None,
    categories=None,
    test: str = "t",
):
    """Score Task 3 runs (and Task 1 runs, by their first hit cut to 1,200 characters) with the
    development protocol against Task 1 qrels: an :class:`~.evaluate.EvalReport` of ``AR_src``,
    ``P@1_src``, ``LO`` and (with ``similarity``) ``CS``.  ``present``: the answer ids of the
    indexed collection, for the sub-collection protocol (``--collection-only``)."""
    from pathlib import Path

    from ..errors import InputError
    from ..readers.qrels import qrels_to_dict, read_qrels
    from ..readers.runs import read_run_scores, read_task3_run
    from ..records import ReadReport
    from ..text.tokenize import default_tokenizer
    from .results import EvalReport, RunResult, compare, finish, is_trec_layout
    from .subcollection import restrict_qrels
    from .trec import trec_order

    qrels_path = Path(qrels_path)
    report = EvalReport(3, str(qrels_path), test=test)
    read_q = ReadReport(source=str(qrels_path))
    judged = read_qrels(qrels_path, read_q)
    report.qrels_read = read_q
    if not judged:
        raise InputError(f"qrels file {qrels_path} holds no judgements")
    qrels = qrels_to_dict(judged, graded_only=True)
    if present is not None:
        restricted = restrict_qrels(qrels, present)
        qrels = restricted.qrels
        report.topics_dropped = restricted.topics_dropped
        report.judgements_removed = restricted.judgements_removed
        if not qrels:
            raise InputError("no topic of the qrels has a relevant document in this collection")
    report.topics = len(qrels)
    tokenizer = tokenizer or default_tokenizer()
    topics = list(qrels)
    for path in map(Path, run_paths):
        result = RunResult(path.name, str(path), 3)
        result.read = ReadReport(source=str(path))
        answers: dict[str, str] = {}
        sources: dict[str, list[str]] = {}
        if is_trec_layout(path):
            run = read_run_scores(path, 1, result.read)
            for topic, docs in run.items():
                if docs:
                    top = trec_order(docs)[0]
                    sources[topic] = [top]
                    answers[topic] = (text_of(top) or "")[:MAX_REFERENCE_CHARS]
            result.notes.append("Task 1 run: its first hit per topic, cut to 1,200 characters")
        else:
            for a in read_task3_run(path, result.read):
                answers[a.query_id] = a.answer
                sources[a.query_id] = parse_sources(a.sources)
        scores = Task3Scores()
        main = {t: (s[0] if s else None) for t, s in sources.items()}
        source_relevance_scores(main, qrels, scores)
        references = ablated_references(qrels, text_of, sources)
        overlap_scores(answers, references, scores, tokenizer, similarity)
        result.per_topic = scores.per_topic
        no_source = sum(1 for t in topics if t in main and main[t] is None)
        if no_source:
            result.notes.append(f"{no_source} answer(s) without a post id in Sources: AR_src 0")
        if scores.unjudged:
            result.notes.append(f"{len(scores.unjudged)} main source(s) without a judgement: AR_src 0")
        if scores.unanswered:
            result.notes.append(f"{len(scores.unanswered)} qrels topic(s) without an answer, scored 0")
        if scores.no_reference:
            result.notes.append(f"{len(scores.no_reference)} topic(s) without another relevant answer of "
                                f"<= 1,200 characters left out of LO/CS")
        too_long = sum(1 for t in topics if len(answers.get(t, "")) > MAX_REFERENCE_CHARS)
        if too_long:
            result.notes.append(f"{too_long} answer(s) longer than 1,200 characters")
        judged_n = sum(1 for t in topics if main.get(t) in qrels[t])
        result.judged_at = {1: judged_n / len(topics) if topics else 0.0}
        finish(result, topics, categories)
        report.runs.append(result)
    compare(report, test)  # type: ignore[arg-type]
    report.notes.append("development protocol: AR_src/P@1_src = Task 1 grade of the main source; LO/CS against "
                        "the other relevant answers of <= 1,200 characters")
    report.notes.append(f"LO tokenizer: {tokenizer.name}")
    if similarity is not None:
        report.notes.append(f"CS model: {similarity.name}")
    return report
