"""What run validation and Task 2 evaluation need to know about the collection.

:class:`CollectionLookup` is the small protocol; the store implements it, and
:class:`FormulaTsvLookup` answers it from a formula index TSV file alone (posts known only
through the formulas they hold: a post without formulas has an unknown type there).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..errors import InputError
from ..records import ReadReport

POST_QUESTION = 1
POST_ANSWER = 2


@runtime_checkable
class CollectionLookup(Protocol):
    def post_type(self, post_id: str | int) -> int | None:
        """1 question, 2 answer, ``None`` when the post is unknown (or a comment id)."""

    def formula_kind(self, formula_id: str) -> str | None:
        """``title``, ``question``, ``answer`` or ``comment``; ``None`` when unknown."""

    def visual_id(self, formula_id: str) -> str | None:
        """The visual id of a formula instance; ``None`` when unknown."""


class FormulaTsvLookup:
    """A :class:`CollectionLookup` over one or more formula index TSV files.

    Reads only the columns it needs (id, post_id, type, visual_id), from either layout of the
    lab's files: 6 columns ``id post_id thread_id type visual_id formula`` (v3) or the older
    ``id post_id thread_id type formula [visual_id]``; the header names which.
    """

    def __init__(self, *paths: str | Path, report: ReadReport | None = None):
        self.report = report if report is not None else ReadReport(source=", ".join(map(str, paths)))
        self._kind: dict[str, str] = {}
        self._visual: dict[str, str] = {}
        self._post: dict[str, str] = {}
        self._post_type: dict[str, int] = {}
        for path in paths:
            self._load(Path(path))

    def _load(self, path: Path) -> None:
        csv.field_size_limit(sys.maxsize)
        try:
            handle = path.open(encoding="utf-8", newline="")
        except FileNotFoundError:
            raise InputError(f"formula file {path} does not exist") from None
        with handle:
            reader = csv.reader(handle, delimiter="\t", quotechar='"')
            header = next(reader, None)
            if not header or header[0].strip().lower() not in ("id", "formula_id"):
                raise InputError(f"formula file {path} has no header line starting with 'id'")
            names = [h.strip().lower() for h in header]
            try:
                i_id, i_post, i_type = names.index(names[0]), names.index("post_id"), names.index("type")
            except ValueError:
                raise InputError(f"formula file {path}: header must name post_id and type columns") from None
            i_vis = names.index("visual_id") if "visual_id" in names else None
            for row in reader:
                if len(row) <= max(i_post, i_type, i_vis or 0):
                    self.report.skip("formula row with too few fields", f"{path}:{reader.line_num}")
                    continue
                self.report.rows += 1
                fid, post, kind = row[i_id], row[i_post], row[i_type].strip().lower()
                self._kind[fid] = kind
                self._post[fid] = post
                if i_vis is not None and row[i_vis]:
                    self._visual[fid] = row[i_vis]
                if kind in ("question", "title"):
                    self._post_type[post] = POST_QUESTION
                elif kind == "answer":
                    self._post_type[post] = POST_ANSWER

    def post_type(self, post_id: str | int) -> int | None:
        return self._post_type.get(str(post_id))

    def formula_kind(self, formula_id: str) -> str | None:
        return self._kind.get(str(formula_id))

    def visual_id(self, formula_id: str) -> str | None:
        return self._visual.get(str(formula_id))

    def formula_post(self, formula_id: str) -> str | None:
        """The post id a formula instance occurs in."""
        return self._post.get(str(formula_id))

    def visual_map(self) -> dict[str, str]:
        """``{formula_id: visual_id}`` for every formula with a visual id."""
        return dict(self._visual)
