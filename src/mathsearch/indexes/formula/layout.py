"""Names and constants of the formula index's on-disk layout (see the package docstring)."""

from __future__ import annotations

FORMULA_DIR = "formula"
MANIFEST = "manifest.json"
VERSION = 4
FAMILIES = ("s", "o", "u", "p")
KINDS = ("title", "question", "answer", "comment")
COMMENT = KINDS.index("comment")  # the kind code of a comment's formula: never a Task 2 hit
RETRIEVABLE = tuple(i for i, k in enumerate(KINDS) if k != "comment")  # kinds that may be Task 2 hits
SLT_WINDOW = 2
OPT_WINDOW = 2
