"""Representations derived from the trees: tuples, paths, prefix/infix, math terms, MathML, keys.

Everything here is a pure function of an SLT (:class:`SNode`) or an OPT (:class:`ONode`).
Tuples are ``(ancestor label, descendant label, edge path)``; as index tokens they are joined
by tabs (:func:`tuple_token`), because labels may contain any printable character but never a tab.
"""

from __future__ import annotations

import hashlib
from html import escape

from .opt import OPS, ONode
from .slt import SNode

_EDGE_ORDER = {e: i for i, e in enumerate("abcdouwek")}
_INFIX = {("U!" if comm else "O!") + name for name, comm, _p in OPS.values()}


# -- symbol-pair tuples -------------------------------------------------------------------------
def slt_tuples(slt: SNode, window: int = 2) -> list[tuple[str, str, str]]:
    """Tangent-style symbol pairs of the SLT: every node with each node at most ``window`` edges
    below or to the right of it, with the spatial edges between (``n`` next, ``a`` above...)."""
    out: list[tuple[str, str, str]] = []
    if window == 2:
        _slt_pairs2(slt, out)
        if not out:
            out.append((slt.label, "", ""))
        return out
    stack = [slt]
    while stack:
        node = stack.pop()
        if node.next is not None:
            stack.append(node.next)
        if node.edges:
            for _e, child in node.edges:
                stack.append(child)
        # pairs starting at ``node``: bounded walk
        lab = node.label
        frontier: list[tuple[SNode, str]] = [(node, "")]
        for _step in range(window):
            nxt: list[tuple[SNode, str]] = []
            for cur, path in frontier:
                if cur.next is not None:
                    p = path + "n"
                    out.append((lab, cur.next.label, p))
                    nxt.append((cur.next, p))
                if cur.edges:
                    for e, child in cur.edges:
                        p = path + e
                        out.append((lab, child.label, p))
                        nxt.append((child, p))
            if not nxt:
                break
            frontier = nxt
    if not out:
        out.append((slt.label, "", ""))  # a lone symbol still gets one token
    return out


def _slt_pairs2(root: SNode, out: list[tuple[str, str, str]]) -> None:
    """``slt_tuples`` for the usual window of 2, unrolled (it runs once per formula indexed)."""
    append = out.append
    stack = [root]
    pop = stack.pop
    push = stack.append
    while stack:
        node = pop()
        lab = node.label
        nxt = node.next
        if nxt is not None:
            push(nxt)
            append((lab, nxt.label, "n"))
            n2 = nxt.next
            if n2 is not None:
                append((lab, n2.label, "nn"))
            if nxt.edges:
                for e2, c2 in nxt.edges:
                    append((lab, c2.label, "n" + e2))
        if node.edges:
            for e, child in node.edges:
                push(child)
                append((lab, child.label, e))
                after = child.next
                if after is not None:
                    append((lab, after.label, e + "n"))
                if child.edges:
                    for e2, c3 in child.edges:
                        append((lab, c3.label, e + e2))


def opt_tuples(opt: ONode, window: int = 2) -> list[tuple[str, str, str]]:
    """Symbol pairs of the OPT; the edge is the argument position, ``c`` for any argument of a
    commutative operator, so ``a+b`` and ``b+a`` give the same tuples."""
    out: list[tuple[str, str, str]] = []
    stack = [opt]
    while stack:
        node = stack.pop()
        if not node.children:
            continue
        stack.extend(node.children)
        lab = node.label
        frontier: list[tuple[ONode, str]] = [(node, "")]
        for _step in range(window):
            nxt: list[tuple[ONode, str]] = []
            for cur, path in frontier:
                comm = cur.label.startswith("U!")
                for i, child in enumerate(cur.children):
                    p = path + ("c" if comm else str(i) if i < 10 else "9")
                    out.append((lab, child.label, p))
                    if child.children:
                        nxt.append((child, p))
            if not nxt:
                break
            frontier = nxt
    if not out:
        out.append((opt.label, "", ""))
    return out


def tuple_token(t: tuple[str, str, str]) -> str:
    """One tuple as an index token: the three fields joined by tabs."""
    return f"{t[0]}\t{t[1]}\t{t[2]}"


# -- OPT linearisations -------------------------------------------------------------------------
def leaf_paths(opt: ONode, max_length: int = 32) -> list[str]:
    """Approach0-style leaf-to-root paths: ``leaf/parent/.../root`` for every leaf, keeping at
    most ``max_length`` ancestors (the nearest) so that very deep trees cost linear work."""
    out: list[str] = []
    stack: list[tuple[ONode, tuple[str, ...]]] = [(opt, ())]
    while stack:
        node, above = stack.pop()
        if not node.children:
            out.append("/".join((node.label,) + above))
            continue
        here = (node.label,) + above[: max_length - 1] if max_length > 0 else ()
        for child in node.children:
            stack.append((child, here))
    out.reverse()
    return out


def prefix(opt: ONode) -> str:
    """Prefix notation: the OPT's labels in depth-first order (seed section 2.1)."""
    out: list[str] = []
    stack = [opt]
    while stack:
        node = stack.pop()
        out.append(node.label)
        if node.children:
            stack.extend(reversed(node.children))
    return " ".join(out)


def infix(opt: ONode) -> str:
    """Infix notation: operands parenthesised, infix operators between them (seed section 2.1)."""
    out: list[str] = []
    _infix(opt, out, 0)
    return " ".join(out)


def _infix(node: ONode, out: list[str], depth: int) -> None:
    if not node.children:
        out.append(node.label)
        return
    if depth > 200:
        out.append(prefix(node))
        return
    kids = node.children
    if node.label in _INFIX and len(kids) >= 2:
        out.append("(")
        for i, c in enumerate(kids):
            if i:
                out.append(node.label)
            _infix(c, out, depth + 1)
        out.append(")")
        return
    out.append(node.label)
    out.append("(")
    for i, c in enumerate(kids):
        if i:
            out.append(",")
        _infix(c, out, depth + 1)
    out.append(")")


def opt_key(opt: ONode) -> str:
    """Canonical string of the OPT: arguments of commutative operators sorted, so equal keys
    mean equal trees up to commutativity (``a+b`` and ``b+a``, but not ``a-b`` and ``b-a``)."""
    return _canon(opt, 0)


def _canon(node: ONode, depth: int) -> str:
    if not node.children:
        return node.label
    if depth > 200:
        return prefix(node)
    parts = [_canon(c, depth + 1) for c in node.children]
    if node.label.startswith("U!"):
        parts.sort()
    return node.label + "(" + ",".join(parts) + ")"


def subexpression_terms(opt: ONode, unify: bool = True, max_terms: int = 2000, max_tokens: int = 128) -> list[str]:
    """MIaS-style M-terms: every subexpression in prefix notation (commutative arguments sorted);
    with ``unify``, also each with variables renamed ``id1, id2...`` in order of appearance and
    with numbers replaced by ``const``.  Subexpressions longer than ``max_tokens`` tokens are
    left out (they are unlikely to recur, and skipping them keeps the work linear)."""
    terms: list[str] = []
    seen: set[str] = set()
    _terms(opt, terms, seen, unify, max_terms, max_tokens)
    return terms


def _terms(node: ONode, terms: list[str], seen: set[str], unify: bool, cap: int, max_tokens: int) -> list[str] | None:
    """Collect terms under ``node`` (iteratively); returns its canonical prefix tokens, or None
    when longer than ``max_tokens``."""
    results: dict[int, list[str] | None] = {}
    stack: list[tuple[ONode, bool]] = [(node, False)]
    while stack:
        cur, done = stack.pop()
        if not done:
            stack.append((cur, True))
            for c in cur.children:
                stack.append((c, False))
            continue
        if not cur.children:
            toks: list[str] | None = [cur.label]
        else:
            child_toks = [results.pop(id(c), None) for c in cur.children]
            kids = [ct for ct in child_toks if ct is not None]
            if len(kids) < len(child_toks) or sum(len(ct) for ct in kids) >= max_tokens:
                toks = None
            else:
                if cur.label.startswith("U!"):
                    kids.sort(key=" ".join)
                toks = [cur.label]
                for ct in kids:
                    toks.extend(ct)
        results[id(cur)] = toks
        if toks is None or len(terms) >= cap:
            continue
        _add(" ".join(toks), terms, seen)
        if unify and len(toks) > 1:
            ids: dict[str, str] = {}
            uni = []
            for t in toks:
                if t.startswith("V!"):
                    uni.append(ids.setdefault(t, f"id{len(ids) + 1}"))
                elif t.startswith("N!"):
                    uni.append("const")
                else:
                    uni.append(t)
            _add(" ".join(uni), terms, seen)
    return results.get(id(node))


def _add(term: str, terms: list[str], seen: set[str]) -> None:
    if term not in seen:
        seen.add(term)
        terms.append(term)


# -- visual key ---------------------------------------------------------------------------------
def visual_string(slt: SNode) -> str:
    """Canonical depth-first string of the SLT (edges in a fixed order), the basis of the key."""
    out: list[str] = []
    _vis(slt, out, 0)
    return "".join(out)


def _vis(node: SNode | None, out: list[str], depth: int) -> None:
    while node is not None:
        out.append(node.label)
        edges = node.edges
        if edges:
            if depth > 200:
                out.append("[…]")
            else:
                if len(edges) > 1 and edges[0][0] != "e":
                    edges = sorted(edges, key=lambda x: _EDGE_ORDER[x[0]])
                for e, child in edges:
                    out.append("[" + e)
                    _vis(child, out, depth + 1)
                    out.append("]")
        node = node.next
        if node is not None:
            out.append(" ")


def visual_key_of_slt(slt: SNode, latex: str | None = None) -> str:
    """A short stable key (16 hex digits) of the canonical SLT string.

    A formula with nothing visible (only spacing or unknown set-up commands) has no layout to
    compare: as the lab does where LaTeXML gave no tree, its LaTeX without white space is used.
    """
    text = visual_string(slt)
    if text == "W!" and latex is not None:
        text = "latex:" + "".join(latex.split())
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


# -- MathML -------------------------------------------------------------------------------------
_MO_KINDS = set("ROPLCXQZBS")


def slt_to_pmathml(slt: SNode) -> str:
    """Presentation MathML of the SLT (one ``<math>`` element)."""
    out = ['<math xmlns="http://www.w3.org/1998/Math/MathML">']
    _pm_line(slt, out, 0)
    out.append("</math>")
    return "".join(out)


def _pm_line(node: SNode | None, out: list[str], depth: int) -> None:
    out.append("<mrow>")
    while node is not None:
        _pm_node(node, out, depth)
        node = node.next
    out.append("</mrow>")


def _pm_token(node: SNode) -> str:
    lab = node.label
    k = node.kind
    if k == "V":
        return f"<mi>{escape(lab[2:])}</mi>"
    if k == "N":
        return f"<mn>{escape(lab[2:])}</mn>"
    if k == "T":
        return f"<mtext>{escape(lab[2:])}</mtext>"
    if k == "F" or (k == "B" and lab.startswith("F!")):
        return f"<mi>{escape(lab[2:])}</mi>"
    if k == "U":
        return f"<merror><mtext>{escape(lab[2:])}</mtext></merror>"
    if k == "W":
        return "<mrow/>"
    return f"<mo>{escape(lab)}</mo>"


def _pm_node(node: SNode, out: list[str], depth: int) -> None:
    k = node.kind
    d1 = depth + 1
    core: list[str] = []
    if depth > 200:
        core.append(_pm_token(node))
    elif k == "K":
        core.append('<mfrac linethickness="0">' if node.label == "ATOP" else "<mfrac>")
        _pm_line(node.edge("o"), core, d1)
        _pm_line(node.edge("u"), core, d1)
        core.append("</mfrac>")
    elif k == "D":
        idx = node.edge("c")
        core.append("<mroot>" if idx is not None else "<msqrt>")
        _pm_line(node.edge("w"), core, d1)
        if idx is not None:
            _pm_line(idx, core, d1)
        core.append("</mroot>" if idx is not None else "</msqrt>")
    elif k == "A":
        tag = "munder" if node.label in ("⏟", "_", "⏝") else "mover"
        core.append(f'<{tag} accent="true">')
        _pm_line(node.edge("w"), core, d1)
        core.append(f"<mo>{escape(node.label)}</mo></{tag}>")
    elif k == "M":
        cells = [c for e, c in (node.edges or ()) if e == "e"]
        try:
            n_cols = max(1, int(node.label[2:].split("x")[1]))
        except (ValueError, IndexError):
            n_cols = max(1, len(cells))
        core.append("<mtable>")
        for i in range(0, len(cells), n_cols):
            core.append("<mtr>")
            for c in cells[i:i + n_cols]:
                core.append("<mtd>")
                _pm_line(c, core, d1)
                core.append("</mtd>")
            core.append("</mtr>")
        core.append("</mtable>")
    else:
        core.append(_pm_token(node))
    scripts = {e: c for e, c in (node.edges or ()) if e in "abou" and not (k in "KA" and e in "ou")}
    if not scripts or depth > 200:
        out.extend(core)
        return
    base = "".join(core)
    sub = scripts.get("b") or scripts.get("u")
    sup = scripts.get("a") or scripts.get("o")
    under = "u" in scripts or "o" in scripts
    if sub is not None and sup is not None:
        tag = "munderover" if under else "msubsup"
    elif sub is not None:
        tag = "munder" if under else "msub"
    else:
        tag = "mover" if under else "msup"
    out.append(f"<{tag}>")
    out.append(base)
    if sub is not None:
        _pm_line(sub, out, d1)
    if sup is not None:
        _pm_line(sup, out, d1)
    out.append(f"</{tag}>")


def opt_to_cmathml(opt: ONode) -> str:
    """Content MathML of the OPT: ``<apply>`` with a ``<csymbol>`` per operator."""
    out = ['<math xmlns="http://www.w3.org/1998/Math/MathML">']
    _cm(opt, out, 0)
    out.append("</math>")
    return "".join(out)


def _cm(node: ONode, out: list[str], depth: int) -> None:
    lab = node.label
    kind, _, name = lab.partition("!")
    if not node.children:
        if kind == "V":
            out.append(f"<ci>{escape(name)}</ci>")
        elif kind == "N":
            out.append(f"<cn>{escape(name)}</cn>")
        elif kind == "W":
            out.append("<csymbol>blank</csymbol>")
        else:
            out.append(f'<csymbol cd="{escape(kind)}">{escape(name)}</csymbol>')
        return
    out.append("<apply>")
    out.append(f'<csymbol cd="{"commutative" if kind == "U" else escape(kind)}">{escape(name)}</csymbol>')
    if depth > 200:
        out.append(f"<ci>{escape(prefix(node))}</ci>")
    else:
        for c in node.children:
            _cm(c, out, depth + 1)
    out.append("</apply>")
