"""What run validation and Task 2 evaluation need to know about the collection.

:class:`CollectionLookup` is the small protocol; the store implements it, and
:class:`FormulaTsvLookup` answers it from a formula index TSV file alone (posts known only
through the formulas they hold: a post without formulas has an unknown type there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

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
    """A :class:`CollectionLookup` over one or more formula index TSV files (any layout that
    :func:`~mathsearch.readers.formula_tsv.iter_formula_tsv` reads)."""

    def __init__(self, *paths: str | Path, report: ReadReport | None = None):
        from ..readers.formula_tsv import iter_formula_tsv

        self.report = report if report is not None else ReadReport(source=", ".join(map(str, paths)))
        self._kind: dict[str, str] = {}
        self._visual: dict[str, str] = {}
        self._post: dict[str, str] = {}
        self._post_type: dict[str, int] = {}
        for path in paths:
            for f in iter_formula_tsv(path, self.report):
                kind = f.kind.value
                post = str(f.post_id)
                self._kind[f.formula_id] = kind
                self._post[f.formula_id] = post
                if f.visual_id is not None:
                    self._visual[f.formula_id] = f.visual_id
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
