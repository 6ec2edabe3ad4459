"""ARQMath in ir_datasets: ``arqmath/...`` datasets read from the user's files in ``$ARQMATH_HOME``.

``import mathsearch.irds`` (or ``import pyterrier``, when mathsearch is installed with the
``pyterrier`` extra: its entry point loads this module) registers one ir_datasets name pattern,
``arqmath`` and ``arqmath/...``; nothing is read until a name is loaded, and nothing is ever
downloaded: the files are the user's, in a folder laid out as the lab published them::

    $ARQMATH_HOME/collection/   Posts.V1.x.xml, Comments.V1.x.xml, formulas/latex_representation*.tsv (+ slt, opt)
    $ARQMATH_HOME/topics/       task1-2020.xml ... task2-2022.xml, formulas/formulas-YEAR-latex.tsv
    $ARQMATH_HOME/qrels/        task1-2020.tsv, task2-2021.tsv, ...

The names:

* ``arqmath`` and ``arqmath/answers``: the answers (Task 1 documents); ``arqmath/questions``,
  ``arqmath/comments``; ``arqmath/formulae``: every formula instance with its LaTeX, SLT and (when
  the file is there) OPT representation (Task 2 documents).
* ``arqmath/task1/YEAR`` (2020-2022), ``arqmath/task2/YEAR`` (2020-2022), ``arqmath/task3/2022``:
  the task's documents, its topics as queries and, where the file exists, its judgements.  Task 2
  judgements are keyed by **visual id**, not by the formula instance ids of its documents (score
  runs with :func:`mathsearch.pyterrier.measures`, which de-duplicates by visual id as the lab did).
  The 2022 judgements are never read: in this project they are held out.

Every record comes from the project's readers (:mod:`mathsearch.readers`), so ir_datasets yields the
posts, topics and judgements that ``mathsearch index``/``run``/``eval`` read.  A name that does not
exist, or files that are missing, raise :class:`ArqmathDataError`: one line naming what is missing.
``python -m mathsearch.irds [NAME]`` lists the names with their counts, or says that line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from .errors import InputError

ENV = "ARQMATH_HOME"
YEARS = {1: (2020, 2021, 2022), 2: (2020, 2021, 2022), 3: (2022,)}
HELD_OUT = (2022,)  # judgements never read here (the project's rule: no tuning or looking at them)
COLLECTIONS = ("answers", "questions", "comments", "formulae")
RELEVANCE = {0: "not relevant", 1: "low", 2: "medium", 3: "high", 5: "system failure (assessor)",
             6: "do not know (assessor)"}


class ArqmathDataError(InputError, KeyError):
    """A name that ``arqmath/...`` does not have, or a file it needs that is missing (one line).

    A ``KeyError`` too, as ir_datasets raises for an unknown name."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


# --- records (one per source schema; field names from the ARQMath files) -------------------------


class ArqmathAnswer(NamedTuple):
    doc_id: str  # the answer's post id
    thread_id: str  # its question's id
    text: str  # plain text, formulae as $LaTeX$
    body: str  # the HTML of the Posts file

    def default_text(self) -> str:
        """The answer's plain text (formulae as ``$LaTeX$``)."""
        return self.text


class ArqmathQuestion(NamedTuple):
    doc_id: str
    title: str  # plain text, formulae as $LaTeX$
    text: str  # the body's plain text
    tags: tuple[str, ...]
    body: str  # the HTML of the Posts file

    def default_text(self) -> str:
        """Title and body text joined by a newline."""
        return f"{self.title}\n{self.text}"


class ArqmathComment(NamedTuple):
    doc_id: str  # the comment's id
    post_id: str  # the post it comments on
    text: str  # plain text, formulae as $LaTeX$

    def default_text(self) -> str:
        """The comment's plain text."""
        return self.text


class ArqmathFormula(NamedTuple):
    doc_id: str  # the formula instance id
    post_id: str
    thread_id: str
    type: str  # title, question, answer or comment
    visual_id: str  # "" where the file leaves it empty
    latex: str
    slt: str  # Presentation MathML ("" without the SLT file or the formula's MathML)
    opt: str  # Content MathML ("" without the OPT file)

    def default_text(self) -> str:
        """The formula's LaTeX."""
        return self.latex


class ArqmathQuery(NamedTuple):
    query_id: str  # A.N (Tasks 1, 3) or B.N (Task 2)
    query: str  # Tasks 1, 3: title and question text; Task 2: the LaTeX of the formula searched for
    title: str  # plain text, formulae as $LaTeX$
    question: str
    tags: tuple[str, ...]
    formula_id: str  # Task 2: the formula searched for ("" in Tasks 1, 3)
    latex: str  # Task 2: its LaTeX
    formula_ids: tuple[str, ...]  # every formula of title and question, in order

    def default_text(self) -> str:
        """The ``query`` field."""
        return self.query


# --- where the files are -------------------------------------------------------------------------


def home() -> Path:
    """``$ARQMATH_HOME`` as a folder; :class:`ArqmathDataError` when unset or missing."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        raise ArqmathDataError(f"{ENV} is not set: set it to the folder that holds the ARQMath files "
                               "(collection/, topics/, qrels/); nothing is downloaded")
    root = Path(value).expanduser()
    if not root.is_dir():
        raise ArqmathDataError(f"{ENV}={value}: no such folder")
    return root


def _need(path: Path, name: str, what: str) -> Path:
    if not path.exists():
        raise ArqmathDataError(f"{name}: {what} {path} is missing")
    return path


def _parse(name: str) -> tuple[str, int | None, int | None]:
    """``("answers", None, None)`` or ``("task", task, year)``; :class:`ArqmathDataError` otherwise."""
    parts = name.split("/")
    known = "arqmath/{" + ",".join(COLLECTIONS) + "}, arqmath/task1/2020-2022, arqmath/task2/2020-2022, arqmath/task3/2022"
    if parts == ["arqmath"]:
        return "answers", None, None
    if len(parts) == 2 and parts[1] in COLLECTIONS:
        return parts[1], None, None
    if len(parts) == 3 and parts[1] in ("task1", "task2", "task3"):
        task = int(parts[1][-1])
        if parts[2].isdigit() and int(parts[2]) in YEARS[task]:
            return "task", task, int(parts[2])
        years = ", ".join(map(str, YEARS[task]))
        raise ArqmathDataError(f"{name}: ARQMath Task {task} has no year {parts[2]!r} (its years: {years})")
    raise ArqmathDataError(f"{name}: no such ARQMath dataset (known: {known})")


# --- components ----------------------------------------------------------------------------------


class _Docs:
    """One kind of collection record, streamed from the collection folder by the project's readers."""

    def __init__(self, root: Path, kind: str):
        self.root = root
        self.kind = kind

    @cached_property
    def files(self):
        from .readers.collection import detect_collection

        return detect_collection(self.root)

    def docs_iter(self) -> Iterator[Any]:
        return {"answers": self._answers, "questions": self._questions, "comments": self._comments,
                "formulae": self._formulae}[self.kind]()

    def _posts(self):
        from .readers.collection import CollectionReader

        return CollectionReader(self.files).posts()

    def _answers(self) -> Iterator[ArqmathAnswer]:
        for tp in self._posts():
            if tp.post.post_type == 2:
                yield ArqmathAnswer(str(tp.post.post_id), str(tp.post.thread_id), tp.text, tp.post.body)

    def _questions(self) -> Iterator[ArqmathQuestion]:
        for tp in self._posts():
            if tp.post.post_type == 1:
                yield ArqmathQuestion(str(tp.post.post_id), tp.title_text, tp.text, tp.post.tags, tp.post.body)

    def _comments(self) -> Iterator[ArqmathComment]:
        from .readers.collection import CollectionReader

        for tc in CollectionReader(self.files).comments():
            yield ArqmathComment(str(tc.comment.comment_id), str(tc.comment.post_id), tc.text)

    def representation(self, rep: str) -> Path | None:
        """The formula TSV of ``rep`` (slt, opt) beside the LaTeX one, when it is there."""
        latex = self.files.formulas_tsv
        if latex is None:
            return None
        other = latex.with_name(latex.name.replace("latex", rep))
        return other if other != latex and other.is_file() else None

    def _formulae(self) -> Iterator[ArqmathFormula]:
        from .readers.formula_tsv import iter_formula_tsv

        latex = self.files.formulas_tsv
        if latex is None:
            raise ArqmathDataError(f"arqmath/formulae: no formulas/latex_representation*.tsv in {self.root}")
        others = {rep: _aligned(iter_formula_tsv(p), p) for rep in ("slt", "opt") if (p := self.representation(rep))}
        for rec in iter_formula_tsv(latex):
            reps = {rep: stream.get(rec.formula_id) for rep, stream in others.items()}
            yield ArqmathFormula(rec.formula_id, str(rec.post_id), str(rec.thread_id), rec.kind.value,
                                 rec.visual_id or "", rec.formula, reps.get("slt", ""), reps.get("opt", ""))

    def docs_cls(self) -> type:
        return {"answers": ArqmathAnswer, "questions": ArqmathQuestion, "comments": ArqmathComment,
                "formulae": ArqmathFormula}[self.kind]

    @cached_property
    def _count(self) -> int:
        return sum(1 for _ in self.docs_iter())

    def docs_count(self) -> int:
        return self._count

    def docs_store(self) -> _Store:
        return _Store(self)

    def docs_handler(self):
        return self

    def docs_namespace(self) -> str:
        return "arqmath"

    def docs_lang(self) -> str:
        return "en"

    def has_docs(self) -> bool:
        return True


class _aligned:  # noqa: N801 - a small iterator helper
    """A second representation file read in step with the LaTeX one (the lab's files share one
    order); its row for a formula id, or ``""`` where the file has none."""

    def __init__(self, records, path: Path):
        self.records = iter(records)
        self.path = path
        self.head = next(self.records, None)

    def get(self, formula_id: str) -> str:
        while self.head is not None and _id_key(self.head.formula_id) < _id_key(formula_id):
            self.head = next(self.records, None)
        if self.head is not None and self.head.formula_id == formula_id:
            return self.head.formula
        return ""


def _id_key(formula_id: str) -> tuple[int, str]:
    return (int(formula_id), "") if formula_id.isdigit() else (-1, formula_id)


class _Store:
    """``docs_store()``: documents by id (read once into memory: the store of a local sample)."""

    def __init__(self, docs: _Docs):
        self.docs = docs

    @cached_property
    def _by_id(self) -> dict[str, NamedTuple]:
        return {d.doc_id: d for d in self.docs.docs_iter()}  # type: ignore[attr-defined]

    def get(self, doc_id: str, field: str | None = None):
        doc = self._by_id[doc_id]
        return getattr(doc, field) if field else doc

    def get_many(self, doc_ids, field: str | None = None) -> dict:
        return {d: self.get(d, field) for d in doc_ids if d in self._by_id}


class _Queries:
    def __init__(self, topics: Path, formulas: Path | None, task: int):
        self.topics = topics
        self.formulas = formulas
        self.task = task

    def queries_iter(self) -> Iterator[ArqmathQuery]:
        from .indexes.documents import topic_text
        from .readers.topics import read_topics

        for topic in read_topics(self.topics, self.formulas):
            title, question = topic_text(topic)  # what a system is given (SearchQuery.from_topic)
            q = topic.query_formula
            latex = (q.latex if q is not None else topic.latex) or ""
            query = latex if self.task == 2 else f"{title}\n{question}".strip()
            yield ArqmathQuery(topic.topic_id, query, title, question, topic.tags, topic.formula_id or "", latex,
                               tuple(f.formula_id for f in topic.formulas))

    def queries_count(self) -> int:
        """The topics of the file (``ir_datasets``' ``queries_count()``; read once, then kept)."""
        if getattr(self, "_count", None) is None:
            self._count = sum(1 for _ in self.queries_iter())
        return self._count

    def queries_cls(self) -> type:
        return ArqmathQuery

    def queries_handler(self):
        return self

    def queries_namespace(self) -> str:
        return "arqmath"

    def queries_lang(self) -> str:
        return "en"


class _Qrels:
    def __init__(self, path: Path):
        self.path = path

    def qrels_iter(self):
        from ir_datasets.formats import TrecQrel

        from .readers.qrels import iter_qrels

        for q in iter_qrels(self.path):
            yield TrecQrel(q.query_id, q.doc_id, q.relevance, q.iteration)

    def qrels_count(self) -> int:
        """The judgements of the file (``ir_datasets``' ``qrels_count()``; read once, then kept)."""
        if getattr(self, "_count", None) is None:
            self._count = sum(1 for _ in self.qrels_iter())
        return self._count

    def qrels_cls(self) -> type:
        from ir_datasets.formats import TrecQrel

        return TrecQrel

    def qrels_defs(self) -> dict[int, str]:
        return dict(RELEVANCE)

    def qrels_path(self) -> str:
        return str(self.path)

    def qrels_handler(self):
        return self


# --- the datasets --------------------------------------------------------------------------------


def build(name: str):
    """The ir_datasets ``Dataset`` of ``name`` (``arqmath/task1/2020``, ...), its files checked now."""
    from ir_datasets.datasets.base import Dataset

    kind, task, year = _parse(name)
    root = home()
    if kind != "task":
        collection = _need(root / "collection", name, "the collection folder")
        collection_docs = _Docs(collection, kind)
        try:
            collection_docs.files  # noqa: B018 - a folder without a Posts file is refused here, not on first read
        except InputError as exc:
            raise ArqmathDataError(f"{name}: {exc}") from None
        return Dataset(collection_docs)
    assert task is not None and year is not None
    topic_file = "task1" if task == 3 else f"task{task}"  # Task 3 topics are the Task 1 topics of 2022
    topics = _need(root / "topics" / f"{topic_file}-{year}.xml", name, "the topic file")
    formulas = root / "topics" / "formulas" / f"formulas-{year}-latex.tsv"
    queries = _Queries(topics, formulas if formulas.is_file() else None, task)
    qrels_path = root / "qrels" / f"task{task}-{year}.tsv"
    qrels = _Qrels(qrels_path) if year not in HELD_OUT and qrels_path.is_file() else None
    docs: _Docs | None = None
    if (root / "collection").is_dir():
        docs = _Docs(root / "collection", "formulae" if task == 2 else "answers")
    return Dataset(docs, queries, qrels)


def names() -> list[str]:
    """Every ``arqmath/...`` name (whether or not its files are there)."""
    out = ["arqmath", *(f"arqmath/{c}" for c in COLLECTIONS)]
    out += [f"arqmath/task{t}/{y}" for t, years in YEARS.items() for y in years]
    return out


def _initializer(key: str, _groups: tuple) -> object:
    return build(key)


_registered: list[bool] = []


def register() -> None:
    """Register the ``arqmath`` names with ir_datasets (once; nothing is read)."""
    try:
        import ir_datasets
    except ImportError:  # the core install: one line that names the extra
        raise ImportError("mathsearch.irds needs the pyterrier extra (ir_datasets is not installed): "
                          "pip install 'mathsearch[pyterrier]'") from None

    if not _registered:
        ir_datasets.registry.register_pattern(r"^arqmath(/.*)?$", _initializer)
        _registered.append(True)


register()


def main(argv: list[str] | None = None) -> int:
    """``python -m mathsearch.irds [NAME...]``: counts of each name's docs, queries and qrels."""
    import sys

    import ir_datasets

    args = sys.argv[1:] if argv is None else argv
    status = 0
    for name in args or names():
        try:
            ds = ir_datasets.load(name)
            parts = []
            if ds.has_docs():
                parts.append(f"{ds.docs_count():,} docs")
            if ds.has_queries():
                parts.append(f"{ds.queries_count():,} queries")
            if ds.has_qrels():
                parts.append(f"{ds.qrels_count():,} qrels")
            print(f"{name}: {', '.join(parts)}")
        except InputError as exc:
            msg = str(exc)
            print(f"error: {msg}" if msg.startswith(name) else f"error: {name}: {msg}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    raise SystemExit(main())
