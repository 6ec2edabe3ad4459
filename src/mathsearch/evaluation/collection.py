"""What the evaluator needs to know about the collection, from a store, a formula TSV or a Posts file.

The evaluation functions take plain values (a ``{formula_id: visual_id}`` map, a set of present
ids, a text getter) so they are testable without any of these; :class:`CollectionFacts` gathers
them from what the user has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..records import ReadReport
from ..runs.lookup import CollectionLookup, FormulaTsvLookup

RETRIEVABLE_KINDS = ("title", "question", "answer")  # Task 2 hits may not come from comments


@dataclass(slots=True)
class CollectionFacts:
    source: str = ""
    lookup: CollectionLookup | None = None
    visual_of: dict[str, str] = field(default_factory=dict)  # every formula instance with a visual id
    visual_present: set[str] = field(default_factory=set)  # visual ids of question/answer formulae
    answers_present: set[str] | None = None  # answer post ids of the collection (None: unknown)
    text_of: Callable[[str], str | None] | None = None  # plain text of an answer post

    def present(self, task: int) -> set[str] | None:
        """Ids a run of ``task`` could retrieve from this collection (for ``--collection-only``)."""
        if task == 2:
            return self.visual_present or None
        return self.answers_present


def from_formula_tsv(*paths: str | Path, report: ReadReport | None = None) -> CollectionFacts:
    """Facts from formula index TSV files (visual ids, formula kinds, posts holding formulae)."""
    lookup = FormulaTsvLookup(*paths, report=report)
    visual_of = lookup.visual_map()
    present = {v for f, v in visual_of.items() if lookup.formula_kind(f) in RETRIEVABLE_KINDS}
    return CollectionFacts(", ".join(map(str, paths)), lookup, visual_of, present)


def from_index(index_dir: str | Path) -> CollectionFacts:
    """Facts from the collection store under ``index_dir`` (``mathsearch index``, sharded or not)."""
    from ..indexes.directory import open_store

    store = open_store(index_dir)
    visual_of: dict[str, str] = {}
    present: set[str] = set()
    for f in store.iter_formulas():
        if f.visual_id is None:
            continue
        fid = str(f.formula_id)
        visual_of[fid] = str(f.visual_id)
        if f.kind in RETRIEVABLE_KINDS:
            present.add(str(f.visual_id))

    def text_of(post_id: str) -> str | None:
        post = store.post(post_id)
        return post.text if post is not None else None

    return CollectionFacts(str(index_dir), store, visual_of, present, store.answer_ids(), text_of)


def from_posts_xml(path: str | Path, report: ReadReport | None = None) -> CollectionFacts:
    """Answer ids and answer texts (formulae as ``$LaTeX$``) from a Posts XML file."""
    from ..readers.arqmath import iter_posts
    from ..readers.html import body_text

    texts: dict[str, str] = {}
    types: dict[str, int] = {}
    for post in iter_posts(path, report):
        types[str(post.post_id)] = int(post.post_type)
        if int(post.post_type) == 2:
            texts[str(post.post_id)] = body_text(post.body)[0]

    class _Posts:
        def post_type(self, post_id: str | int) -> int | None:
            return types.get(str(post_id))

        def formula_kind(self, formula_id: str) -> str | None:
            return None

        def visual_id(self, formula_id: str) -> str | None:
            return None

    return CollectionFacts(str(path), _Posts(), answers_present=set(texts), text_of=texts.get)


def read_answer_texts(path: str | Path, report: ReadReport | None = None) -> dict[str, str]:
    """``id<TAB>text`` lines (csv quoting) -> ``{id: text}``: reference answers for Task 3."""
    import csv
    import sys

    path = Path(path)
    report = report if report is not None else ReadReport(source=str(path))
    csv.field_size_limit(sys.maxsize)
    out: dict[str, str] = {}
    try:
        handle = path.open(encoding="utf-8", newline="")
    except FileNotFoundError:
        raise InputError(f"answer file {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"answer path {path} is a directory, not a file") from None
    with handle:
        reader = csv.reader(handle, delimiter="\t")
        try:
            for row in reader:
                if not row:
                    continue
                if len(row) != 2:
                    report.skip(f"expected 2 fields (id text), found {len(row)}", f"{path}:{reader.line_num}")
                    continue
                report.rows += 1
                out[row[0].strip()] = row[1]
        except (UnicodeDecodeError, csv.Error) as exc:
            raise InputError(f"answer file {path}, line {reader.line_num}: cannot be read ({exc})") from None
    return out
