"""Query variables (wildcards) in formula queries, as Tangent-S and Approach Zero offer them.

``?a`` (a question mark and a name) or ``\\qvar{a}`` in a formula query matches any subexpression
there; every occurrence of one name must match the same subexpression (compared by operator-tree
key, so ``x+1`` and ``1+x`` are the same).  ``?a^2+?b^2`` matches ``x^2+y^2`` and ``(n+1)^2+m^2``
(also inside a larger formula, ``x^2+y^2=1``, and among more terms, ``a^2+b^2+c^2``), not
``x^2+y^3``.  Names are letters (``?a``, ``?rhs``; case counts).

:func:`query_variables` rewrites the query's variables as placeholder macros the parser keeps as
leaves (``\\qvara`` -> ``E!\\qvara``); :func:`match` looks for the query's operator tree in a
candidate's, the placeholders binding subtrees; :func:`to_latex` writes a bound subtree back as
LaTeX for people (and for highlighting).  Commutative operators (``+``, ``=``, ``\\times``) match
their operands in any order.
"""

from __future__ import annotations

import itertools
import re

from .opt import ONode
from .representations import opt_key
from .symbols import BIN_CMDS, GREEK, IDENT_CMDS, REL_CMDS

# Unicode symbols of the trees back to commands (the first command of each symbol)
_COMMAND: dict[str, str] = {}
for _table in (GREEK, IDENT_CMDS, REL_CMDS, BIN_CMDS):
    for _name, _ch in _table.items():
        _COMMAND.setdefault(_ch, "\\" + _name)

_QVAR = re.compile(r"\\qvar\s*\{\s*([A-Za-z]+)\s*\}|\?([A-Za-z]+)")
PLACEHOLDER = "qvar"  # \qvarNAME: a macro no collection defines
_LABEL = "E!\\" + PLACEHOLDER
MAX_PERMUTED = 6  # operands of a commutative operator tried in every order up to this many


def query_variables(latex: str) -> tuple[str, tuple[str, ...]]:
    """``(LaTeX with placeholders, the variable names in first-seen order)``; no variable: as given."""
    names: list[str] = []

    def one(m: re.Match) -> str:
        name = m.group(1) or m.group(2)
        if name not in names:
            names.append(name)
        return "{\\" + PLACEHOLDER + name + "}"

    out = _QVAR.sub(one, latex)
    return out, tuple(names)


def has_variables(latex: str) -> bool:
    return bool(_QVAR.search(latex))


def _name(node: ONode) -> str | None:
    return node.label[len(_LABEL):] if node.label.startswith(_LABEL) and not node.children else None


def _match(q: ONode, c: ONode, bound: dict[str, ONode]) -> dict[str, ONode] | None:
    name = _name(q)
    if name is not None:
        if name in bound:
            return bound if opt_key(bound[name]) == opt_key(c) else None
        return {**bound, name: c}
    if q.label != c.label:
        return None
    if q.commutative and 1 < len(q.children) <= len(c.children) <= MAX_PERMUTED:
        # operands in any order; a sum of more terms holds the query's ("?a^2+?b^2" in "a^2+b^2+c^2")
        for order in itertools.permutations(c.children, len(q.children)):
            got = _match_all(q.children, list(order), bound)
            if got is not None:
                return got
        return None
    if len(q.children) != len(c.children):
        return None
    if not q.children:
        return bound
    return _match_all(q.children, c.children, bound)


def _match_all(qs: list[ONode], cs: list[ONode], bound: dict[str, ONode]) -> dict[str, ONode] | None:
    got: dict[str, ONode] | None = bound
    for qc, cc in zip(qs, cs, strict=True):
        got = _match(qc, cc, got)
        if got is None:
            return None
    return got


def match(query: ONode, candidate: ONode) -> dict[str, ONode] | None:
    """The bindings ``{name: subtree}`` of the first subtree of ``candidate`` (itself first, then
    its subtrees depth first) that ``query`` matches; None when none does."""
    stack = [candidate]
    while stack:
        node = stack.pop()
        got = _match(query, node, {})
        if got is not None:
            return got
        stack.extend(reversed(node.children))
    return None


_INFIX = {"U!plus": "+", "O!minus": "-", "U!eq": "=", "O!lt": "<", "O!gt": ">", "O!leq": r"\leq", "O!geq": r"\geq",
          "U!neq": r"\neq", "U!times": r"\cdot", "O!to": r"\to", "O!in": r"\in", "U!union": r"\cup",
          "U!intersect": r"\cap", "O!pm": r"\pm", "O!list": ",", "U!equiv": r"\equiv", "O!compose": r"\circ"}


def to_latex(node: ONode, depth: int = 0) -> str:
    """A subtree as LaTeX for a person (not the source's spelling: ``x+1`` may come back ``x + 1``)."""
    if depth > 60:
        return r"\ldots"
    label, kids = node.label, node.children
    head = label[2:] if len(label) > 2 and label[1] == "!" else label
    if not kids:
        if label.startswith("F!"):
            return "\\" + head
        return _COMMAND.get(head, head)
    parts = [to_latex(k, depth + 1) for k in kids]

    def wrap(i: int) -> str:
        inner = kids[i]
        return f"({parts[i]})" if inner.label in _INFIX or inner.label in ("O!divide",) and label == "O!SUP" else parts[i]

    if label == "O!SUP":
        return f"{{{wrap(0)}}}^{{{parts[1]}}}"
    if label == "O!SUB":
        return f"{{{wrap(0)}}}_{{{parts[1]}}}"
    if label == "O!divide":
        return rf"\frac{{{parts[0]}}}{{{parts[1]}}}"
    if label == "O!root":
        return rf"\sqrt{{{parts[0]}}}" if len(parts) == 1 else rf"\sqrt[{parts[1]}]{{{parts[0]}}}"
    if label in _INFIX:
        if label == "O!minus" and len(parts) == 1:
            return "-" + wrap(0)
        return f" {_INFIX[label]} ".join(wrap(i) if label == "U!times" else parts[i] for i in range(len(parts)))
    if label == "O!apply":
        return parts[0] + "(" + ", ".join(parts[1:]) + ")"
    if label == "O!factorial":
        return wrap(0) + "!"
    if label in ("O!paren", "O!abs"):
        return ("(" + parts[0] + ")") if label == "O!paren" else ("|" + parts[0] + "|")
    if label.startswith("F!"):
        return "\\" + head + "(" + ", ".join(parts) + ")"
    if label == "O!seq":
        return " ".join(parts)
    return "\\operatorname{" + head + "}(" + ", ".join(parts) + ")"
