"""Which part of a hit's formula matched a query formula, and that formula with the part marked.

    nodes = matched_nodes(query_slt, hit_slt)          # the hit's SLT nodes that share a tuple
    latex = marked_latex(hit_latex, [query_latex])     # LaTeX with \\bbox[...]{..} round the parts, or None

A node of the hit matched when it is one end of a Tangent-style symbol pair (:func:`slt_tuples`:
the node, a node at most ``window`` edges below or right of it, and the edges between) that the
query has too; the page marks with neighbouring pairs (:data:`MARK_WINDOW`).  So in ``x^2 + x`` the query ``x^2`` marks the first ``x`` and the ``2``, not the
second ``x`` (a label alone is not a match), and a sub-formula of a larger formula is marked where
it stands.  Bound parts of query variables (``?a``) are given as extra node sets (``bound``).

The marked LaTeX is written from the hit's SLT (the stored LaTeX has no positions to cut at):
:func:`slt_latex`.  It is kept only when it parses back to the same visual key as the stored
formula, so a mark never shows a formula other than the one found; otherwise the caller shows the
stored LaTeX as before.  This runs post hoc on the hits a page shows, never in the search loop.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from .analysis import visual_key
from .parser import parse_slt
from .representations import visual_string
from .slt import SNode, iter_nodes
from .symbols import (
    ACCENT_CMDS,
    BIGOP_CMDS,
    BIN_CMDS,
    CLOSE_CMDS,
    FENCE_CMDS,
    FUNC_ALIAS,
    FUNC_NAMES,
    GREEK,
    IDENT_CMDS,
    OPEN_CMDS,
    PREFIX_CMDS,
    REL_CMDS,
    SYMBOL_CMDS,
    UNDER_ACCENTS,
)

MARK = r"\bbox[#ffe27a,1px]"  # MathJax's \bbox (the "html" package with \class stays off): a yellow box
BOUND = r"\bbox[#c8e6ff,1px]"  # a query variable's bound part: blue
# Pairs of neighbours only (the search's tuples reach two edges): a pair across a symbol, (n, 1) in
# the query's n=1, would box the n and the 1 of n<1 in a hit, which reads as a match that is not.
MARK_WINDOW = 1
MAX_NODES = 400  # a larger hit formula is not marked (its LaTeX is long; the search still found it)


# -- matching ---------------------------------------------------------------------------------------
def node_pairs(slt: SNode, window: int = 2) -> list[tuple[tuple[str, str, str], SNode, SNode | None]]:
    """Every symbol pair of :func:`mathsearch.formula.slt_tuples` with the two nodes it joins
    (a lone symbol: its one tuple ``(label, "", "")`` and no second node)."""
    out: list[tuple[tuple[str, str, str], SNode, SNode | None]] = []
    for node in iter_nodes(slt):
        if window == 1:  # the page's case, once per formula shown: neighbours only
            if node.next is not None:
                out.append(((node.label, node.next.label, "n"), node, node.next))
            for e, child in node.edges or ():
                out.append(((node.label, child.label, e), node, child))
            continue
        frontier: list[tuple[SNode, str]] = [(node, "")]
        for _step in range(window):
            nxt: list[tuple[SNode, str]] = []
            for cur, path in frontier:
                children = ([("n", cur.next)] if cur.next is not None else []) + list(cur.edges or ())
                for e, child in children:
                    out.append(((node.label, child.label, path + e), node, child))
                    nxt.append((child, path + e))
            frontier = nxt
    if not out:
        out.append(((slt.label, "", ""), slt, None))
    return out


def matched_nodes(query: SNode | frozenset, hit: SNode, window: int = 2) -> set[int]:
    """``id()`` of the hit's nodes that are an end of a symbol pair the query has too (blanks,
    ``W!``, never count); ``query`` an SLT or its pairs (:func:`query_pairs`)."""
    wanted = query if isinstance(query, frozenset) else {t for t, _a, _b in node_pairs(query, window)}
    found: set[int] = set()
    for t, a, b in node_pairs(hit, window):
        if t in wanted:
            for n in (a, b):
                if n is not None and n.kind != "W":
                    found.add(id(n))
    return found


@lru_cache(maxsize=256)
def query_pairs(latex: str, window: int) -> frozenset:
    """The symbol pairs of a query formula, made once for every hit formula of a page."""
    return frozenset(t for t, _a, _b in node_pairs(parse_slt(latex)[0], window))


# -- the SLT written as LaTeX ----------------------------------------------------------------------
def _inverse(*tables: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for table in tables:
        for name, ch in table.items():
            out.setdefault(ch, "\\" + name)
    return out


_SYMBOL = _inverse(GREEK, IDENT_CMDS, SYMBOL_CMDS, BIN_CMDS, REL_CMDS, PREFIX_CMDS, BIGOP_CMDS)
_FENCE = {**{ch: cmd + " " for ch, cmd in _inverse(OPEN_CMDS, CLOSE_CMDS, FENCE_CMDS).items()},
          "{": "\\{", "}": "\\}", "‖": "\\|"}
_ACCENT = _inverse({k: v for k, v in ACCENT_CMDS.items() if k not in UNDER_ACCENTS})
_UNDER = _inverse({k: v for k, v in ACCENT_CMDS.items() if k in UNDER_ACCENTS})
_FUNC = {FUNC_ALIAS.get(n, n): n for n in FUNC_NAMES}
_STYLE = {"DOUBLE-STRUCK": "mathbb", "SCRIPT": "mathcal", "FRAKTUR": "mathfrak", "BOLD": "mathbf",
          "BOLD ITALIC": "boldsymbol", "SANS-SERIF": "mathsf", "MONOSPACE": "mathtt"}
_PLAIN = set("+-=<>()[]/|!,.;:'*?@")
_ASCII = {"\u2212": "-", "\u2217": "*"}  # the parser's normal forms of - and *


class _Unwritable(Exception):
    """A node this writer does not know how to write back (the caller keeps the stored LaTeX)."""


def _char(ch: str) -> str:
    """One symbol as LaTeX: ASCII as is, a known command by name, a styled letter with its font."""
    if ch.isascii() and (ch.isalnum() or ch in _PLAIN):
        return ch
    if ch in _ASCII:
        return _ASCII[ch]
    if ch in _SYMBOL:
        return _SYMBOL[ch] + " "
    if ch in _FENCE:
        return _FENCE[ch]
    name = unicodedata.name(ch, "")
    for style, cmd in _STYLE.items():
        for prefix in ("MATHEMATICAL " + style + " ", style + " "):
            if name.startswith(prefix):
                base = name[len(prefix):].replace("CAPITAL ", "LATIN CAPITAL LETTER ").replace("SMALL ", "LATIN SMALL LETTER ")
                try:
                    return f"\\{cmd}{{{unicodedata.lookup(base)}}}"
                except KeyError:
                    continue
    if ch in ("{", "}", "$", "%", "#", "&", "_", "^", "~", "\\"):
        raise _Unwritable(ch)
    return ch  # another Unicode symbol: MathJax reads it as it is


def _symbol(node: SNode) -> str:
    lab, kind = node.label, node.kind
    if lab.startswith(("V!", "N!")):
        body = lab[2:]
        if len(body) > 1 and lab.startswith("V!") and body.isascii():
            return f"\\mathrm{{{body}}}"
        return "".join(_char(c) for c in body)
    if lab.startswith("F!"):
        name = lab[2:]
        if name in _FUNC:
            return f"\\{_FUNC[name]} "
        if not name.isascii() or not name.replace(" ", "").isalnum():
            raise _Unwritable(lab)
        return f"\\operatorname{'*' if kind == 'B' else ''}{{{name}}}"
    if lab.startswith("T!"):
        text = lab[2:]
        if any(c in text for c in "{}\\$%#&^_~"):
            raise _Unwritable(lab)
        return f"\\text{{{text}}}\\,"  # the space after a word, which the tree does not keep
    if lab == "W!":
        return "{}"
    if lab == "mod":
        return "\\bmod "
    if lab.startswith(("E!", "M!")) or lab in ("FRAC", "ATOP", "ROOT"):
        raise _Unwritable(lab)
    if len(lab) != 1:
        if len(lab) == 2 and lab[1] == "\u0338":  # a struck-out relation
            return "\\not" + _char(lab[0])
        raise _Unwritable(lab)
    return _char(lab)


class _Writer:
    """Writes an SLT as LaTeX, each maximal marked part wrapped in its box."""

    def __init__(self, boxes: dict[int, str]):
        self.boxes = boxes  # id(node) -> the box command of its mark
        self._whole: dict[int, str | None] = {}
        self.active: str | None = None  # the box being written (nothing inside it is boxed again)

    def whole(self, node: SNode) -> str | None:
        """The box shared by ``node`` and everything under it (its scripts, its arguments), if any."""
        key = id(node)
        if key not in self._whole:
            box = self.boxes.get(key) if node.kind != "W" else None
            for _e, child in node.edges or ():
                c: SNode | None = child
                while c is not None and box is not None:
                    if self.whole(c) != box:
                        box = None
                    c = c.next
            self._whole[key] = box
        return self._whole[key]

    def line(self, node: SNode | None) -> str:
        out: list[str] = []
        while node is not None:
            box = self.whole(node)
            if box is not None and self.active is None:  # a run of wholly marked nodes in one box
                run: list[str] = []
                self.active = box
                while node is not None and self.whole(node) == box:
                    run.append(self.node(node))
                    node = node.next
                self.active = None
                out.append(f"{box}{{{''.join(run)}}}")
                continue
            out.append(self.node(node))
            node = node.next
        return "".join(out)

    def arg(self, node: SNode | None) -> str:
        return "{" + self.line(node) + "}"

    def node(self, node: SNode) -> str:
        edges: dict[str, list[SNode]] = {}
        for e, child in node.edges or ():
            edges.setdefault(e, []).append(child)
        if "k" in edges or "e" in edges and not node.label.startswith("M!"):
            raise _Unwritable("colour")
        lab = node.label
        if lab in ("FRAC", "ATOP"):
            num, den = self.arg(edges["o"][0]), self.arg(edges["u"][0])
            core = f"\\frac{num}{den}" if lab == "FRAC" else f"{{{num}\\atop{den}}}"
            used = {"o", "u"}
        elif lab == "ROOT":
            # the index braced: a box's own "[...]" inside it would close the bracket early (MathJax)
            index = f"[{{{self.line(edges['c'][0])}}}]" if "c" in edges else ""
            core = f"\\sqrt{index}{self.arg(edges['w'][0])}"
            used = {"c", "w"}
        elif lab.startswith("M!"):
            rows, cols = (int(x) for x in lab[2:].split("x"))
            cells = [self.line(c) for c in edges.get("e", [])]
            if len(cells) != rows * cols:
                raise _Unwritable(lab)
            body = " \\\\ ".join(" & ".join(cells[r * cols:(r + 1) * cols]) for r in range(rows))
            core = f"\\begin{{matrix}}{body}\\end{{matrix}}"
            used = {"e"}
        elif node.kind == "A" and "w" in edges:
            cmd = _ACCENT.get(lab) or _UNDER.get(lab)
            if cmd is None:
                raise _Unwritable(lab)
            core = f"{cmd}{self.arg(edges['w'][0])}"
            used = {"w"}
        else:
            core = _symbol(node)
            used = set()
            if self.active is None and id(node) in self.boxes and node.kind != "W":
                core = f"{self.boxes[id(node)]}{{{core}}}"  # the symbol marked, its scripts apart
        if "o" in edges and "o" not in used:
            core = f"\\overset{self.arg(edges['o'][0])}{{{core}}}"
        if "u" in edges and "u" not in used:
            core = f"\\underset{self.arg(edges['u'][0])}{{{core}}}"
        if ("c" in edges and "c" not in used) or "d" in edges:
            pre = "{}" + (f"^{self.arg(edges['c'][0])}" if "c" in edges else "") + \
                  (f"_{self.arg(edges['d'][0])}" if "d" in edges else "")
            core = pre + "{" + core + "}"
        if "b" in edges:
            core = "{" + core + "}" + "_" + self.arg(edges["b"][0])
        if "a" in edges:
            core = ("{" + core + "}" if "b" not in edges else core) + "^" + self.arg(edges["a"][0])
        for e, children in edges.items():
            if len(children) > 1 and e != "e":
                raise _Unwritable(f"two {e} edges")
        return core


def slt_latex(slt: SNode, boxes: dict[int, str] | None = None) -> str | None:
    """The SLT as LaTeX for MathJax, each part whose ``id()`` is in ``boxes`` wrapped in its box
    command (``\\bbox[..]``); None when the tree holds something this writer cannot write back
    (an unknown macro, a colour)."""
    try:
        return _Writer(boxes or {}).line(slt)
    except (_Unwritable, KeyError, ValueError, RecursionError):
        return None


def marked_latex(hit_latex: str, queries: Iterable[str], bound: Iterable[str] = (), window: int = MARK_WINDOW) -> str | None:
    """The hit formula's LaTeX with the parts that matched the query formulae boxed (and the
    parts bound to query variables, given as LaTeX sub-formulae in ``bound``, boxed blue); None when
    nothing or everything matched (the whole formula is then marked, or not, as before), or when
    the marked LaTeX would not show the same formula."""
    hit, state = parse_slt(hit_latex)  # the SLT only: the OPT is not needed here
    real = [n for n in iter_nodes(hit) if n.kind != "W"]
    if not real or len(real) > MAX_NODES or state.n_errors:
        return None
    boxes: dict[int, str] = {}
    for q in queries:
        for key in matched_nodes(query_pairs(q, window), hit, window):
            boxes[key] = MARK
    for b in bound:
        for key in _occurrences(parse_slt(b)[0], hit):
            boxes[key] = BOUND
    if not boxes or all(boxes.get(id(n)) == MARK for n in real):
        return None
    out = slt_latex(hit, boxes)
    # \bbox adds no symbol: the marked LaTeX must lay out as the stored formula does
    if out is None or visual_string(parse_slt(out)[0]) != visual_string(hit):
        return None
    return out


def _occurrences(part: SNode, hit: SNode) -> set[int]:
    """``id()`` of the nodes of every place in ``hit`` where the line ``part`` stands, symbol for
    symbol (a sub-formula bound to a query variable).  The scripts of its last symbol that ``part``
    lacks belong to the formula round it (``?b^2`` binds ``m`` in ``m^2``), so they are left out."""
    want = visual_key(part)
    ends = list(_line(part))
    keep = {e for e, _c in ends[-1].edges or ()}
    found: set[int] = set()
    for start in iter_nodes(hit):
        run = list(_line(start))[:len(ends)]
        if len(run) != len(ends):
            continue
        last = run[-1]
        saved_next, saved_edges = last.next, last.edges
        last.next = None
        last.edges = [(e, c) for e, c in saved_edges or () if e in keep] or None
        try:
            same = visual_key(start) == want
            if same:
                for n in run:
                    found.update(id(x) for x in iter_nodes_below(n))
        finally:
            last.next, last.edges = saved_next, saved_edges
    return found


def _line(node: SNode | None):
    while node is not None:
        yield node
        node = node.next


def iter_nodes_below(node: SNode):
    """``node`` and everything in its edges (not the nodes after it on its line)."""
    yield node
    for _e, child in node.edges or ():
        yield from iter_nodes(child)
