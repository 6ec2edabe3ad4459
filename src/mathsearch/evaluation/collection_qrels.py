"""Judgements the collection already holds, written as ordinary topics and qrels files.

ARQMath judges answers to questions; a Stack Exchange collection holds thousands of such
judgements made by its own users:

* **duplicate pairs**: a question closed as a duplicate of another (a PostLinks link of type 3,
  from the asking question to its target) is answered by the target's answers.  The asking question
  is a topic (``D.<question id>``), each answer of each target a relevant answer;
* **own-answer pairs** (optional): a question is answered by its own answers (``O.<question id>``).

The asking question is in the collection, so a system would find it from the topic's text alone:
each topic names what it hides in ``hidden-threads.tsv`` (``topic<TAB>thread``, or
``topic<TAB>thread<TAB>question``):

* a duplicate pair hides the asking **thread** (``SearchQuery.hidden_threads``): a system told so
  scores no post of it, starts from no similar question of it and follows no link of it (the link
  would lead to the target);
* an own-answer pair hides the asking **question** (``SearchQuery.hidden_questions``): the same,
  except that the thread's answers, the relevant ones, stay findable by their own text alone (words,
  maths, comments), never by what they borrow from the question (title, body, tags), which is the
  topic itself.

Only relevant answers are judged: nDCG@10 (unjudged counted non-relevant) is the measure to read;
nDCG' (judged answers only) is 1.0 whenever any relevant answer is found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from ..errors import InputError
from ..readers.hidden import HIDDEN_FILE, QUESTION, THREAD
from ..records import LinkType
from ..store import Store

TOPICS_FILE = "topics.xml"
QRELS_FILE = "qrels.tsv"
FILES = (TOPICS_FILE, QRELS_FILE, HIDDEN_FILE)
GRADE = 2  # every judged answer counts as relevant (ARQMath's "medium"); none is graded higher
_DOLLAR = re.compile(r"\$([^$]+)\$")


@dataclass(frozen=True)
class CollectionTopic:
    """One topic drawn from the collection: the asking question, the thread no signal may read for
    it, and the answers judged relevant."""

    topic_id: str
    kind: str  # "duplicate" or "own"
    question_id: int
    hidden_thread: int
    relevant: tuple[int, ...]

    @property
    def hides(self) -> str:
        """What of ``hidden_thread`` the topic hides: the whole ``thread`` (a duplicate pair) or its
        ``question`` only (an own-answer pair: its answers are the relevant ones)."""
        return QUESTION if self.kind == "own" else THREAD


@dataclass(frozen=True)
class Written:
    """What :func:`write_collection_qrels` wrote."""

    files: tuple[Path, ...]
    topics: int
    by_kind: dict[str, int]
    judgements: int
    links: int  # duplicate links in the collection

    def to_json(self) -> dict:
        return {"files": [str(f) for f in self.files], "topics": self.topics, "by_kind": self.by_kind,
                "judgements": self.judgements, "duplicate_links": self.links}


def duplicate_links(store: Store) -> list[tuple[int, int]]:
    """``(asking question, target question)`` of every PostLinks link of type 3, in id order."""
    rows = store.db.execute("SELECT post_id, related_post_id FROM links WHERE link_type=? ORDER BY post_id, "
                            "related_post_id", (int(LinkType.DUPLICATE),)).fetchall()
    return [(int(a), int(b)) for a, b in rows if a != b]


def duplicate_topics(store: Store) -> list[CollectionTopic]:
    """A topic per asking question whose targets have answers in the collection (the asking
    question itself must be there too, to be asked)."""
    targets: dict[int, list[int]] = {}
    for asking, target in duplicate_links(store):
        targets.setdefault(asking, []).append(target)
    questions = store.posts(targets)
    answers = store.answer_ids_of_threads({t for ts in targets.values() for t in ts})
    out = []
    for asking in sorted(targets):
        post = questions.get(asking)
        if post is None or post.post_type != 1:
            continue
        relevant = sorted({a for t in targets[asking] if t != post.thread_id for a in answers.get(t, ())})
        if relevant:
            out.append(CollectionTopic(f"D.{asking}", "duplicate", asking, post.thread_id, tuple(relevant)))
    return out


def own_answer_topics(store: Store, limit: int = 0) -> list[CollectionTopic]:
    """A topic per question with answers (the first ``limit`` by id; 0: every one)."""
    out = []
    for post in store.iter_posts(1):
        answers = store.answer_ids_of_threads([post.thread_id]).get(post.thread_id, [])
        if answers:
            out.append(CollectionTopic(f"O.{post.post_id}", "own", post.post_id, post.thread_id, tuple(sorted(answers))))
            if limit and len(out) >= limit:
                break
    return out


def _title_markup(title: str) -> str:
    """A stored title (formulae as ``$LaTeX$``) as topic-file HTML (formulae in math-container spans)."""
    parts, last = [], 0
    for i, m in enumerate(_DOLLAR.finditer(title)):
        parts.append(_escape(title[last:m.start()]))
        parts.append(f'<span class="math-container" id="t_{i}">${_escape(m.group(1))}$</span>')
        last = m.end()
    parts.append(_escape(title[last:]))
    return "".join(parts)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def topics_xml(store: Store, topics: Iterable[CollectionTopic]) -> bytes:
    """The ARQMath topic file of ``topics``: Title, Question (the post's HTML) and Tags."""
    topics = list(topics)
    posts = store.posts(t.question_id for t in topics)
    root = etree.Element("Topics")
    for t in topics:
        post = posts[t.question_id]
        elem = etree.SubElement(root, "Topic", number=t.topic_id)
        etree.SubElement(elem, "Title").text = _title_markup(post.title or "")
        etree.SubElement(elem, "Question").text = post.body
        etree.SubElement(elem, "Tags").text = ",".join(post.tags)
    return etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True)


def write_collection_qrels(store: Store, out: Path, own: int = 0) -> Written:
    """Write ``topics.xml``, ``qrels.tsv`` and ``hidden-threads.tsv`` of the collection's duplicate
    pairs (and ``own`` own-answer pairs) into ``out``.

    Raises :class:`InputError`, writing nothing, when the collection has no duplicate link or a
    file of those names is already in ``out`` (nothing is overwritten)."""
    links = duplicate_links(store)
    if not links:
        raise InputError(f"{store.index_dir}: the collection has no duplicate links (PostLinks type 3), so there "
                         "are no duplicate pairs to judge; nothing written")
    topics = duplicate_topics(store) + (own_answer_topics(store, own) if own else [])
    if not topics:
        raise InputError(f"{store.index_dir}: no duplicate link leads from a question in the collection to a "
                         "question with answers; nothing written")
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, not a folder: give a folder for {', '.join(FILES)} "
                         "(nothing was written)")
    targets = [out / name for name in FILES]
    there = [str(p) for p in targets if p.exists()]
    if there:
        raise InputError(f"{', '.join(there)} already exist(s); choose another --out (nothing is overwritten)")
    out.mkdir(parents=True, exist_ok=True)
    qrels = "".join(f"{t.topic_id}\t0\t{a}\t{GRADE}\n" for t in topics for a in t.relevant)
    hidden = "".join(f"{t.topic_id}\t{t.hidden_thread}" + ("\n" if t.hides == THREAD else f"\t{t.hides}\n")
                     for t in topics)
    contents = {TOPICS_FILE: topics_xml(store, topics), QRELS_FILE: qrels.encode(), HIDDEN_FILE: hidden.encode()}
    for path in targets:
        with open(path, "xb") as fh:  # "x": never over a file that appeared meanwhile
            fh.write(contents[path.name])
    by_kind: dict[str, int] = {}
    for t in topics:
        by_kind[t.kind] = by_kind.get(t.kind, 0) + 1
    return Written(tuple(targets), len(topics), by_kind, sum(len(t.relevant) for t in topics), len(links))
