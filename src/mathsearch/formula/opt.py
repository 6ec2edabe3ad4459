"""Operator trees (OPT) built from symbol layout trees.

Each writing line of the SLT is read as a token stream: fences are matched first (``|`` opens or
closes by context, an unmatched ``|`` is *divides*), then an operator-precedence parser applies,
from loosest to tightest: separators ``, ;``, logical connectives (⇒ ⟺), ``∧ ∨``, ``:``,
relations (= < ∈ → ...), additive (+ − ± ∪ ∩), multiplicative (× ⋅ / ∘ mod), implicit
multiplication (juxtaposition), prefix (− ¬ ∀ ∃), postfix ``!``, then scripts and function
application.  Big operators (∑ ∫ ⋃ lim ...) take their bounds and a multiplicative-level body.

Labels follow the seed's figure 4: ``U!`` commutative operator, ``O!`` non-commutative operator,
``V!`` variable, ``N!`` number, ``F!`` named function, ``T!`` text, ``S!`` other symbol,
``E!`` unknown macro, ``W!`` blank (a missing operand).  Operands are ``children`` in order.
"""

from __future__ import annotations

from collections.abc import Iterator

from .slt import SNode

P_LIST, P_LOGIC, P_OR, P_COLON, P_REL, P_ADD, P_MUL, P_IMPL = 10, 20, 30, 35, 40, 50, 60, 70
FENCE_MAX = 24  # fence nesting kept in the tree; deeper fences become plain symbols
DEPTH_BUDGET = 160  # nested parse calls allowed before the builder reads the rest flat


class ONode:
    """One OPT node: ``label`` and ordered ``children`` (empty for leaves)."""

    __slots__ = ("label", "children")

    def __init__(self, label: str, children: list[ONode] | None = None):
        self.label = label
        self.children: list[ONode] = children if children is not None else []

    @property
    def commutative(self) -> bool:
        return self.label.startswith("U!")

    def __repr__(self) -> str:
        return f"ONode({self.label!r}, {len(self.children)})"

    def to_dict(self, _depth: int = 0) -> dict:
        """JSON-able nested dict; below depth 200 a subtree is given by its prefix notation."""
        if not self.children:
            return {"label": self.label}
        if _depth > 200:
            out: list[str] = []
            stack = [self]
            while stack:
                node = stack.pop()
                out.append(node.label)
                stack.extend(reversed(node.children))
            return {"label": self.label, "prefix": " ".join(out)}
        return {"label": self.label, "children": [c.to_dict(_depth + 1) for c in self.children]}


def _ops() -> dict[str, tuple[str, bool, int]]:
    t: dict[str, tuple[str, bool, int]] = {}

    def put(chars: str, name: str, comm: bool, prec: int) -> None:
        for ch in chars:
            t[ch] = (name, comm, prec)

    put(",", "list", False, P_LIST)
    put(";", "semicolon", False, P_LIST)
    put(".", "period", False, P_LIST)
    put("?", "question", False, P_LIST)
    put("⇒⟹", "implies", False, P_LOGIC)
    put("⇐⟸", "impliedby", False, P_LOGIC)
    put("⇔⟺", "iff", True, P_LOGIC)
    put("⊢", "proves", False, P_LOGIC)
    put("⊨", "models", False, P_LOGIC)
    put("∧", "and", True, P_OR)
    put("∨", "or", True, P_OR)
    put(":", "colon", False, P_COLON)
    put("=", "eq", True, P_REL)
    put("≠", "neq", True, P_REL)
    put("<", "lt", False, P_REL)
    put(">", "gt", False, P_REL)
    put("≤⩽≦", "leq", False, P_REL)
    put("≥⩾≧", "geq", False, P_REL)
    put("≡", "equiv", True, P_REL)
    put("≈", "approx", True, P_REL)
    put("∼", "sim", True, P_REL)
    put("≃", "simeq", True, P_REL)
    put("≅", "cong", True, P_REL)
    put("∝", "propto", False, P_REL)
    put("∈", "in", False, P_REL)
    put("∉", "notin", False, P_REL)
    put("∋", "ni", False, P_REL)
    put("⊂", "subset", False, P_REL)
    put("⊆", "subseteq", False, P_REL)
    put("⊊", "subsetneq", False, P_REL)
    put("⊃", "supset", False, P_REL)
    put("⊇", "supseteq", False, P_REL)
    put("→⟶", "to", False, P_REL)
    put("←⟵", "from", False, P_REL)
    put("↔⟷", "leftrightarrow", True, P_REL)
    put("↦⟼", "mapsto", False, P_REL)
    put("∣", "divides", False, P_COLON)  # also the "such that" bar of set-builder notation
    put("∤", "ndivides", False, P_REL)
    put("∥", "parallel", True, P_REL)
    put("⊥", "perp", True, P_REL)
    put("≪", "ll", False, P_REL)
    put("≫", "gg", False, P_REL)
    put("≔", "assign", False, P_REL)
    put("+", "plus", True, P_ADD)
    put("−-", "minus", False, P_ADD)
    put("±", "pm", False, P_ADD)
    put("∓", "mp", False, P_ADD)
    put("∪", "union", True, P_ADD)
    put("∩", "intersect", True, P_ADD)
    put("∖\\", "setminus", False, P_ADD)
    put("⊕", "oplus", True, P_ADD)
    put("⊔", "sqcup", True, P_ADD)
    put("×⋅∙", "times", True, P_MUL)
    put("∗", "ast", False, P_MUL)
    put("⋆", "star", False, P_MUL)
    put("÷/", "divide", False, P_MUL)
    put("∘", "compose", False, P_MUL)
    put("⊗", "otimes", False, P_MUL)
    t["mod"] = ("mod", False, P_MUL)
    return t


OPS = _ops()
_UNARY = {"plus", "minus", "pm", "mp"}
_PREFIX_NAMES = {"¬": "not", "∀": "forall", "∃": "exists", "∄": "nexists"}
BIG_NAMES = {
    "∑": "sum", "∏": "prod", "∐": "coprod", "∫": "int", "∬": "iint", "∭": "iiint", "∮": "oint",
    "∯": "oiint", "⋃": "bigcup", "⋂": "bigcap", "⨁": "bigoplus", "⨂": "bigotimes", "⨀": "bigodot",
    "⋁": "bigvee", "⋀": "bigwedge", "⨆": "bigsqcup", "⨄": "biguplus",
}
ACCENT_NAMES = {
    "^": "hat", "ˇ": "check", "~": "tilde", "¯": "bar", "→": "vec", "←": "overleftarrow",
    "↔": "overleftrightarrow", "˙": "dot", "¨": "ddot", "⃛": "dddot", "˘": "breve", "´": "acute",
    "`": "grave", "˚": "ring", "⏞": "overbrace", "⏟": "underbrace", "_": "underline",
    "⏜": "overparen", "⏝": "underparen",
}
FENCE_NAMES = {
    ("|", "|"): "abs", ("‖", "‖"): "norm", ("{", "}"): "set", ("⟨", "⟩"): "angle",
    ("⌊", "⌋"): "floor", ("⌈", "⌉"): "ceil",
}
# letters that, followed by a parenthesis, usually name a function (f(x), ζ(s), Γ(z), π(x))
_FUNC_VARS = {"V!" + c for c in "fghFGHPφϕψΦΨζΓγλμσρτχπΛ"}
_PRIMES = {1: "prime", 2: "double-prime", 3: "triple-prime"}
BLANK = "W!"


def _blank() -> ONode:
    return ONode(BLANK)


class _Builder:
    """Converts SLT lines to OPT nodes; one instance per formula (holds the depth budget)."""

    __slots__ = ("budget",)

    def __init__(self) -> None:
        self.budget = DEPTH_BUDGET

    # -- SLT node -> items --------------------------------------------------------------------
    def line(self, node: SNode | None) -> ONode:
        """The OPT of one writing line (blank when empty)."""
        if node is None:
            return _blank()
        self.budget -= 1
        try:
            if self.budget <= 0:
                return self.flat(node)
            items = self.items(node)
            items = _match_fences(items)
            return _Pratt(self, items).top()
        finally:
            self.budget += 1

    def flat(self, node: SNode) -> ONode:
        """Fallback past the depth budget: the line's symbols as a plain sequence."""
        return ONode("O!seq", [ONode(_leaf_label(n)) for n in _iter_line(node)])

    def items(self, node: SNode | None) -> list[tuple]:
        out: list[tuple] = []
        while node is not None:
            k = node.kind
            if k in "VNTUWS":
                out.append(("x", self.scripted(ONode(_leaf_label(node)), node), node))
            elif k == "R" or k == "O" or k == "P":
                op = OPS.get(node.label)
                if op is None:
                    op = (node.label, False, P_REL if k == "R" else P_ADD if k == "O" else P_LIST)
                out.append(("op", op, node))
            elif k == "K":
                name = "O!divide" if node.label == "FRAC" else "O!atop"
                on = ONode(name, [self.line(node.edge("o")), self.line(node.edge("u"))])
                out.append(("x", self.scripted(on, node), node))
            elif k == "D":
                children = [self.line(node.edge("w"))]
                idx = node.edge("c")
                if idx is not None:
                    children.append(self.line(idx))
                out.append(("x", self.scripted(ONode("O!root", children), node), node))
            elif k == "A":
                on = ONode("O!" + ACCENT_NAMES.get(node.label, node.label), [self.line(node.edge("w"))])
                out.append(("x", self.scripted(on, node), node))
            elif k == "M":
                out.append(("x", self.scripted(self.matrix(node), node), node))
            elif k == "Q":
                out.append(("pre", _PREFIX_NAMES.get(node.label, node.label), node))
            elif k == "Z":
                out.append(("post", None, node))
            elif k == "B":
                out.append(("big", None, node))
            elif k == "F":
                out.append(("fn", self.scripted(ONode(node.label), node), node))
            elif k == "L" or k == "C" or k == "X":
                out.append((k, node.label, node))
            else:
                out.append(("x", ONode(_leaf_label(node)), node))
            node = node.next
        return out

    def matrix(self, node: SNode) -> ONode:
        cells = [self.line(c) for e, c in (node.edges or ()) if e == "e"]
        try:
            n_rows, n_cols = (int(x) for x in node.label[2:].split("x"))
        except ValueError:
            n_rows, n_cols = 1, len(cells)
        rows = [ONode("O!row", cells[i * n_cols:(i + 1) * n_cols]) for i in range(n_rows)]
        return ONode("O!matrix", rows)

    def scripted(self, on: ONode, node: SNode) -> ONode:
        """Wrap an operand in its scripts: sub first, then superscript (primes by name)."""
        edges = node.edges
        if not edges or node.kind in "KDAM" and not _has_script(edges):
            return on
        sub = sup = presub = presup = over = under = None
        for e, child in edges:
            if e == "b":
                sub = child
            elif e == "a":
                sup = child
            elif e == "c" and node.kind != "D":
                presup = child
            elif e == "d":
                presub = child
            elif e == "o" and node.kind not in "KA":
                over = child
            elif e == "u" and node.kind not in "KA":
                under = child
        if presub is not None:
            on = ONode("O!PRESUB", [on, self.line(presub)])
        if presup is not None:
            on = ONode("O!PRESUP", [on, self.line(presup)])
        if sub is not None:
            on = ONode("O!SUB", [on, self.line(sub)])
        if sup is not None:
            n_primes = 0
            p: SNode | None = sup
            while p is not None and p.label == "′" and not p.edges:
                n_primes += 1
                p = p.next
            if p is None and n_primes in _PRIMES:
                on = ONode("O!" + _PRIMES[n_primes], [on])
            else:
                on = ONode("O!SUP", [on, self.line(sup)])
        if over is not None:
            on = ONode("O!over", [on, self.line(over)])
        if under is not None:
            on = ONode("O!under", [on, self.line(under)])
        return on


def _leaf_label(node: SNode) -> str:
    lab = node.label
    k = node.kind
    if k in "VNTUW" or lab[:2] in ("F!", "V!", "N!", "T!", "E!", "W!"):
        return lab
    return "S!" + lab


def _iter_line(node: SNode | None) -> Iterator[SNode]:
    while node is not None:
        yield node
        node = node.next


def _match_fences(items: list[tuple]) -> list[tuple]:
    """Pair opening and closing fences into ``("G", open, close, inner, close_node)`` items."""
    if not any(it[0] in "LCX" for it in items):
        return items
    bars: dict[str, int] = {}
    for it in items:
        if it[0] == "X":
            bars[it[1]] = bars.get(it[1], 0) + 1
    root: list[tuple] = []
    stack = [root]
    opens: list[tuple] = []
    for it in items:
        k = it[0]
        if k == "L":
            if len(opens) >= FENCE_MAX:
                stack[-1].append(("x", ONode("S!" + it[1]), it[2]))
                continue
            opens.append(it)
            stack.append([])
        elif k == "C":
            if opens:
                o = opens.pop()
                inner = stack.pop()
                stack[-1].append(("G", o[1], it[1], inner, it[2]))
            # an unmatched closing fence carries no structure: dropped
        elif k == "X":
            ch = it[1]
            bars[ch] -= 1
            top = opens[-1] if opens else None
            if top is not None and top[0] == "X" and top[1] == ch and stack[-1] and stack[-1][-1][0] != "op":
                opens.pop()
                inner = stack.pop()
                stack[-1].append(("G", ch, ch, inner, it[2]))
            elif bars[ch] > 0 and len(opens) < FENCE_MAX:
                opens.append(it)
                stack.append([])
            else:
                name = "divides" if ch == "|" else "parallel"
                stack[-1].append(("op", (name, name == "parallel", P_COLON if ch == "|" else P_REL), it[2]))
        else:
            stack[-1].append(it)
    while opens:
        o = opens.pop()
        inner = stack.pop()
        if o[0] == "X":
            name = "divides" if o[1] == "|" else "parallel"
            stack[-1].append(("op", (name, name == "parallel", P_COLON if o[1] == "|" else P_REL), o[2]))
            stack[-1].extend(inner)
        else:
            stack[-1].append(("G", o[1], None, inner, None))
    return root


_OPERAND_START = frozenset({"x", "G", "fn", "big"})


def _has_script(edges: list[tuple[str, SNode]]) -> bool:
    """Whether a node has a sub-, super- or prescript (a loop, not ``any()``: the compiled core's
    methods cannot hold a generator)."""
    for e, _child in edges:
        if e in "abcd":
            return True
    return False


def _has_quantifier(chain: list[tuple]) -> bool:
    for c in chain:
        if c[0] == "pre" and c[1] in ("forall", "exists", "nexists"):
            return True
    return False


class _Pratt:
    """Operator-precedence parsing of one token list (one line or one fenced group)."""

    __slots__ = ("b", "items", "i", "n")

    def __init__(self, builder: _Builder, items: list[tuple]):
        self.b = builder
        self.items = items
        self.i = 0
        self.n = len(items)
        # a trailing full stop or comma ends the sentence, it is not an operator
        while self.n and items[self.n - 1][0] == "op" and items[self.n - 1][1][2] == P_LIST:
            self.n -= 1

    def peek(self) -> tuple | None:
        return self.items[self.i] if self.i < self.n else None

    def top(self) -> ONode:
        parts: list[ONode] = []
        while self.i < self.n:
            start = self.i
            e = self.expr(0)
            if e is not None:
                parts.append(e)
            if self.i == start:  # no progress: keep the token as a leaf
                it = self.items[self.i]
                self.i += 1
                parts.append(ONode("S!" + it[2].label if it[2] is not None else BLANK))
        if not parts:
            return _blank()
        if len(parts) == 1:
            return parts[0]
        return ONode("O!seq", parts)

    def expr(self, min_prec: int) -> ONode | None:
        b = self.b
        b.budget -= 1
        try:
            left = self.unary()
            while self.i < self.n:
                it = self.items[self.i]
                k = it[0]
                if k == "op":
                    name, comm, prec = it[1]
                    if prec < min_prec:
                        break
                    self.i += 1
                    right = self.expr(prec + 1)
                    if left is None and right is None:
                        left = ONode("S!" + it[2].label)  # a lone operator (x^*, (R, ≤)) is a symbol
                        continue
                    left = _combine(name, comm, left if left is not None else _blank(),
                                    right if right is not None else _blank())
                elif k == "post":
                    self.i += 1
                    if left is not None and left.label == "O!factorial" and self._prev_was_post():
                        left.label = "O!double-factorial"
                    else:
                        left = ONode("O!factorial", [left if left is not None else _blank()])
                elif k in _OPERAND_START:
                    if P_IMPL < min_prec:
                        break
                    if left is None:
                        left = self.unary()
                        continue
                    right = self.expr(P_IMPL + 1)
                    if right is None:
                        break
                    left = _combine("times", True, left, right)
                else:
                    break
            return left
        finally:
            b.budget += 1

    def _prev_was_post(self) -> bool:
        return self.i >= 2 and self.items[self.i - 2][0] == "post"

    def unary(self) -> ONode | None:
        it = self.peek()
        if it is None:
            return None
        k = it[0]
        if k == "pre" or (k == "op" and it[1][0] in _UNARY):
            chain: list[tuple] = []
            while True:
                it = self.peek()
                if it is None:
                    break
                if it[0] == "pre" or (it[0] == "op" and it[1][0] in _UNARY):
                    chain.append(it)
                    self.i += 1
                else:
                    break
            quantifier = _has_quantifier(chain)
            operand = self.expr(P_REL if quantifier else P_IMPL)
            if operand is None and len(chain) == 1:
                return ONode("S!" + chain[0][2].label)  # a lone sign (ℝ^+) is a symbol
            node = operand if operand is not None else _blank()
            for c in reversed(chain):
                if c[0] == "pre":
                    node = ONode("O!" + c[1], [node])
                else:
                    name, comm, _prec = c[1]
                    node = ONode(("U!" if comm else "O!") + name, [node])
            return node
        return self.primary()

    def primary(self) -> ONode | None:
        it = self.peek()
        if it is None:
            return None
        k = it[0]
        if k == "op" or k == "pre":
            return None
        self.i += 1
        if k == "x":
            on = it[1]
            nxt = self.peek()
            if nxt is not None and nxt[0] == "G" and nxt[1] == "(" and (
                    on.label.startswith("T!") or _is_function_like(on, nxt)):
                self.i += 1
                return ONode("O!apply", [on] + self.group_args(nxt))
            return on
        if k == "G":
            return self.group(it)
        if k == "big" and it[2].label.startswith("F!") and not it[2].edges:
            k = "fn"  # \max, \gcd, \lim without bounds: plain function application
            it = ("fn", ONode(it[2].label), it[2])
        if k == "fn":
            fexpr = it[1]
            nxt = self.peek()
            args: list[ONode] | None = None
            if nxt is not None:
                if nxt[0] == "G" and nxt[1] == "(":
                    self.i += 1
                    args = self.group_args(nxt)
                elif nxt[0] in _OPERAND_START and self.b.budget > 0:
                    arg = self.expr(P_IMPL)
                    args = [arg] if arg is not None else None
            if args is None:
                return fexpr
            if not fexpr.children:
                return ONode(fexpr.label, args)
            return ONode("O!apply", [fexpr] + args)
        if k == "big":
            node = it[2]
            lab = node.label
            label = lab if lab.startswith("F!") else "O!" + BIG_NAMES.get(lab, lab)
            lower = node.edge("b") or node.edge("u")
            upper = node.edge("a") or node.edge("o")
            children = [self.b.line(lower) if lower is not None else _blank()]
            if upper is not None or not lab.startswith("F!"):
                children.append(self.b.line(upper) if upper is not None else _blank())
            nxt = self.peek()
            if nxt is not None and nxt[0] in _OPERAND_START and self.b.budget > 0:
                body = self.expr(P_MUL)
                if body is not None:
                    children.append(body)
            return ONode(label, children)
        if k == "post":
            return ONode("S!!")
        if k in "LCX":
            return ONode("S!" + it[1])
        return ONode(BLANK)

    def group_args(self, it: tuple) -> list[ONode]:
        content = _Pratt(self.b, it[3]).top()
        if content.label == "O!list":
            return content.children
        if content.label == BLANK:
            return []
        return [content]

    def group(self, it: tuple) -> ONode:
        _g, op, cl, inner, close_node = it
        content = _Pratt(self.b, inner).top()
        is_list = content.label == "O!list"
        args = content.children if is_list else ([] if content.label == BLANK else [content])
        name = FENCE_NAMES.get((op, cl))
        if name == "abs" and len(args) == 1 and args[0].label == "O!abs":
            result = ONode("O!norm", args[0].children)  # ||x|| written with bars
        elif name is not None:
            result = ONode("O!" + name, args)
        elif op == "(" and cl in (")", "]") and len(args) == 1 and not is_list:
            result = ONode("O!binom", content.children) if content.label == "O!atop" and op == "(" else content
        elif op == "{" and cl is None and content.label == "O!matrix":
            result = ONode("O!cases", content.children)
        else:
            result = ONode("O!" + op + (cl or ""), args)
        if close_node is not None and close_node.edges:
            result = self.b.scripted(result, close_node)
        return result


def _is_function_like(on: ONode, group: tuple) -> bool:
    base = on
    primed = False
    while base.children and base.label in ("O!SUB", "O!SUP", "O!prime", "O!double-prime"):
        if base.label.endswith("prime"):
            primed = True
        base = base.children[0]
    if base.label in _FUNC_VARS or primed:
        return True
    return base.label.startswith("V!") and any(x[0] == "op" and x[1][0] == "list" for x in group[3])


def _combine(name: str, comm: bool, left: ONode, right: ONode) -> ONode:
    label = ("U!" if comm else "O!") + name
    if comm or name == "list":
        # n-ary: extend the left node in place (it was built here, nothing else holds it),
        # so a chain of n operands costs O(n), not O(n^2)
        node = left if left.label == label else ONode(label, [left])
        if right.label == label:
            node.children.extend(right.children)
        else:
            node.children.append(right)
        return node
    return ONode(label, [left, right])


def build_opt(slt: SNode) -> ONode:
    """The operator tree of an SLT (never raises; very deep input is read flat)."""
    builder = _Builder()
    try:
        return builder.line(slt)
    except RecursionError:
        return builder.flat(slt)
