"""Find the files of a collection folder and stream its posts, comments and formulae.

Two kinds are recognised:

* ``arqmath``: ``Posts.V1.x.xml``, ``Comments.V1.x.xml``, ``PostLinks.V1.x.xml`` and, when
  present, ``formulas/latex_representation*.tsv`` (the formula instances, with visual ids);
* ``stackexchange``: a raw dump (``Posts.xml``, ``Comments.xml``, ``PostLinks.xml``) whose
  math is ``$``-delimited.  Formulae get sequential ids in file order (posts, then
  comments), stable for a given dump, and are rewritten as ARQMath spans.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import count
from pathlib import Path

from ..errors import InputError
from ..records import Comment, FormulaKind, FormulaRecord, Post, PostType, ReadReport
from ..text.dollar_math import annotate_math
from .arqmath import iter_comments, iter_posts
from .html import body_text, markup_text, plain_text, span_ids

_VERSIONED = re.compile(r"^(Posts|Comments|PostLinks)\.V(\d+(?:\.\d+)*)\.xml$")


@dataclass(frozen=True, slots=True)
class CollectionFiles:
    kind: str  # "arqmath" or "stackexchange"
    root: Path
    posts: Path
    comments: Path | None
    links: Path | None
    formulas_tsv: Path | None


def _version_key(path: Path) -> tuple[int, ...]:
    m = _VERSIONED.match(path.name)
    return tuple(int(x) for x in m.group(2).split(".")) if m else ()


def detect_collection(root: str | Path) -> CollectionFiles:
    """The files of the collection in ``root``; InputError if it is not a collection folder."""
    root = Path(root)
    if not root.exists():
        raise InputError(f"{root} does not exist.")
    if not root.is_dir():
        raise InputError(f"{root} is not a folder: give the folder that holds the Posts file.")
    versioned: dict[str, list[Path]] = {}
    for p in root.iterdir():
        m = _VERSIONED.match(p.name)
        if m:
            versioned.setdefault(m.group(1), []).append(p)
    if "Posts" in versioned:
        newest = {k: max(v, key=_version_key) for k, v in versioned.items()}
        tsvs = sorted((root / "formulas").glob("latex_representation*.tsv")) if (root / "formulas").is_dir() else []
        return CollectionFiles(
            "arqmath", root, newest["Posts"], newest.get("Comments"), newest.get("PostLinks"), tsvs[-1] if tsvs else None
        )
    if (root / "Posts.xml").is_file():
        comments, links = root / "Comments.xml", root / "PostLinks.xml"
        return CollectionFiles(
            "stackexchange", root, root / "Posts.xml", comments if comments.is_file() else None,
            links if links.is_file() else None, None,
        )
    raise InputError(
        f"{root} holds neither an ARQMath collection (Posts.V1.x.xml) nor a Stack Exchange dump (Posts.xml)."
    )


@dataclass(frozen=True, slots=True)
class TextPost:
    """A post with its plain text (formulae as ``$LaTeX$``) and the formula instances found in it."""

    post: Post
    title_text: str
    text: str
    formulas: list[FormulaRecord]


@dataclass(frozen=True, slots=True)
class TextComment:
    comment: Comment
    text: str
    formulas: list[FormulaRecord]


class CollectionReader:
    """Streams a collection folder; one ReadReport per file accounts for every row."""

    def __init__(self, files: CollectionFiles):
        self.files = files
        self.raw = files.kind == "stackexchange"
        self._ids = count(1)
        self.reports: dict[str, ReadReport] = {}
        self.thread_of: dict[int, int] = {}

    def _report(self, path: Path) -> ReadReport:
        return self.reports.setdefault(path.name, ReadReport(source=str(path)))

    def _next_id(self) -> int:
        return next(self._ids)

    def posts(self, progress: Callable[[int], None] | None = None, *, formulas: bool = True) -> Iterator[TextPost]:
        """Posts with their plain text; ``formulas=False`` skips the formula list (faster: the
        collection's formula TSV has them)."""
        for post in iter_posts(self.files.posts, self._report(self.files.posts), progress):
            if not formulas and not self.raw:
                title_text = markup_text(post.title, is_html=False) if post.title else ""
                yield TextPost(post, title_text, markup_text(post.body, is_html=True), [])
                continue
            if self.raw:
                body, in_body = annotate_math(post.body, self._next_id, is_html=True)
                title, in_title = (annotate_math(post.title, self._next_id, is_html=False) if post.title else (None, []))
                post = replace(post, body=body, title=title)
            self.thread_of[post.post_id] = post.thread_id
            title_text, title_formulas = plain_text(post.title) if post.title else ("", [])
            text, body_formulas = body_text(post.body)
            body_kind = FormulaKind.QUESTION if post.post_type == PostType.QUESTION else FormulaKind.ANSWER
            # (named apart from the ``formulas`` flag: reusing it made the next post skip its formulae)
            records = [
                FormulaRecord(f.formula_id, post.post_id, post.thread_id, kind, f.latex)
                for kind, found in ((FormulaKind.TITLE, title_formulas), (body_kind, body_formulas))
                for f in found
            ]
            yield TextPost(post, title_text, text, records)

    def comments(self, progress: Callable[[int], None] | None = None, *, formulas: bool = True) -> Iterator[TextComment]:
        """Comments; call after :meth:`posts` so formulae know their thread.

        ``formulas=False``: the formula records carry only their ids (no LaTeX, thread unknown)."""
        if self.files.comments is None:
            return
        for comment in iter_comments(self.files.comments, self._report(self.files.comments), progress):
            if not formulas and not self.raw:
                ids = [
                    FormulaRecord(fid, comment.post_id, 0, FormulaKind.COMMENT, "", comment_id=comment.comment_id)
                    for fid in span_ids(comment.text)
                ]
                yield TextComment(comment, markup_text(comment.text, is_html=False), ids)
                continue
            if self.raw:
                text_markup, _ = annotate_math(comment.text, self._next_id, is_html=False)
                comment = replace(comment, text=text_markup)
            text, found = plain_text(comment.text)
            thread = self.thread_of.get(comment.post_id, comment.post_id)
            records = [
                FormulaRecord(f.formula_id, comment.post_id, thread, FormulaKind.COMMENT, f.latex, comment_id=comment.comment_id)
                for f in found
            ]
            yield TextComment(comment, text, records)
