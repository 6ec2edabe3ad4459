"""Symbol layout tree (SLT) nodes, as in Tangent-S.

Each :class:`SNode` is one symbol on a writing line. ``next`` is the symbol to its right on the
same line; ``edges`` hold the other spatial relations, each a ``(label, SNode)`` pair:

=====  ==========================================================
``a``  above / superscript          ``b``  below / subscript
``c``  pre-superscript (also the index of a radical)
``d``  pre-subscript                ``o``  over (numerator, limits written over)
``u``  under (denominator)          ``w``  within (radicand, accented base)
``e``  element of a matrix (row-major order)
``k``  colour of the symbol (``\\color``), a ``T!`` node
=====  ==========================================================

Node labels carry their type as in the seed's figure 3: ``V!x`` variable or identifier,
``N!2`` number, ``F!sin`` function name, ``T!if`` text, ``FRAC`` fraction bar, ``ATOP`` fraction
without a bar (binomials), ``ROOT`` radical, ``M!2x3`` matrix, ``W!`` blank, ``E!\\foo`` unknown
macro; operators, relations, fences and other symbols are the Unicode character itself
(``+``, ``=``, ``(``, ``∑``, ``¯``).  ``kind`` is the one-letter role from
:mod:`mathsearch.formula.symbols` (``K`` fraction, ``D`` radical, ``M`` matrix, ``A`` accent,
``N`` number, ``T`` text, ``W`` blank, ``U`` unknown macro).
"""

from __future__ import annotations

from collections.abc import Iterator

EDGE_LABELS = "abcdouwek"


class SNode:
    """One symbol of an SLT; compact (``__slots__``) because formulae come by the million."""

    __slots__ = ("label", "kind", "next", "edges")

    def __init__(self, label: str, kind: str):
        self.label = label
        self.kind = kind
        self.next: SNode | None = None
        self.edges: list[tuple[str, SNode]] | None = None

    def add(self, edge: str, child: SNode) -> None:
        if self.edges is None:
            self.edges = [(edge, child)]
        else:
            self.edges.append((edge, child))

    def edge(self, label: str) -> SNode | None:
        """The first child on ``label`` (None when absent)."""
        if self.edges:
            for e, child in self.edges:
                if e == label:
                    return child
        return None

    def __repr__(self) -> str:
        return f"SNode({self.label!r})"

    def to_json(self) -> list[dict]:
        """The writing line starting here as a JSON-able list of nodes; each node is
        ``{"label", "kind", "edges": [[edge, line], ...]}`` (no nesting along a line, so long
        lines cost no recursion)."""
        out: list[dict] = []
        node: SNode | None = self
        while node is not None:
            d: dict = {"label": node.label, "kind": node.kind}
            if node.edges:
                d["edges"] = [[e, c.to_json()] for e, c in node.edges]
            out.append(d)
            node = node.next
        return out


def baseline(node: SNode | None) -> Iterator[SNode]:
    """The nodes of one writing line, left to right."""
    while node is not None:
        yield node
        node = node.next


def iter_nodes(root: SNode) -> Iterator[SNode]:
    """Every node of the tree, depth first (iterative)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node.next is not None:
            stack.append(node.next)
        if node.edges:
            for _e, child in reversed(node.edges):
                stack.append(child)


def node_count(slt: SNode) -> int:
    """Number of symbols in the SLT (blank placeholders excluded), as Tangent-S counts them."""
    count = 0
    stack = [slt]
    while stack:
        node = stack.pop()
        if node.kind != "W":
            count += 1
        if node.next is not None:
            stack.append(node.next)
        if node.edges:
            stack.extend(child for _e, child in node.edges)
    return count


def slt_string(slt: SNode) -> str:
    """A readable one-line rendering, e.g. ``V!x[a:N!2] + N!1`` (for debugging and tests)."""
    parts: list[str] = []
    _render(slt, parts, 0)
    return "".join(parts)


def _render(node: SNode | None, parts: list[str], depth: int) -> None:
    first = True
    while node is not None:
        if not first:
            parts.append(" ")
        first = False
        parts.append(node.label)
        if node.edges:
            parts.append("[")
            for i, (e, child) in enumerate(node.edges):
                if i:
                    parts.append(",")
                parts.append(e + ":")
                _render(child, parts, depth + 1)
            parts.append("]")
        node = node.next
