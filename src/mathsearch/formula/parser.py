"""LaTeX (as written on Math Stack Exchange) to a symbol layout tree; never raises.

One compiled regular expression splits the string into tokens, and a recursive-descent
parser whose nesting is capped at :data:`MAX_DEPTH` builds :class:`~mathsearch.formula.slt.SNode`
lines.  Past the cap, braces are read flat (their content stays on the current line), so 100 kB
of ``{`` costs one pass and no recursion.  Every repair (a missing ``}``, a ``\\left`` without
``\\right``, a double superscript, a macro expanding without end...) is recorded in ``errors``
and makes ``recovered`` true; unknown macros are kept as ``U!\\name`` symbols and are not errors.
"""

from __future__ import annotations

import html
import re
import unicodedata

from .slt import SNode
from .symbols import (
    ACCENT_CMDS,
    BIGOP_CMDS,
    BIN_CMDS,
    CHAR_NORMAL,
    CHAR_ROLE,
    CLOSE_CMDS,
    FENCE_CMDS,
    FONT_CMDS,
    FONT_SWITCHES,
    FUNC_ALIAS,
    FUNC_NAMES,
    GREEK,
    IDENT_CMDS,
    IGNORED_CMDS,
    LIMIT_FUNCS,
    ONE_ARG_INLINE,
    OPEN_CMDS,
    PREFIX_CMDS,
    REL_CMDS,
    SIZE_CMDS,
    SKIP_ONE_ARG,
    SPACE_CHARS,
    SYMBOL_CMDS,
    TEXT_CMDS,
    UPRIGHT,
    styled,
)

MAX_DEPTH = 40  # structural nesting cap: deeper braces are read flat (and reported)
MAX_ERRORS_KEPT = 16

_TOKEN = re.compile(
    r"\\[a-zA-Z]+|\\.|[0-9]+(?:\.[0-9]+)?|&(?:[a-zA-Z]{2,8}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});"
    r"|\.\.\.|:=|\S",
    re.S,
)

_RBRACE = frozenset({"}"})
_RIGHT = frozenset({"\\right"})
_RBRACK = frozenset({"]"})
_OF = frozenset({"\\of"})
_CELL = frozenset({"&", "\\\\", "\\cr", "\\end"})
_TOP: frozenset[str] = frozenset()
_OVER = {"over": "FRAC", "above": "FRAC", "atop": "ATOP", "choose": "ATOP", "brack": "ATOP",
         "brace": "ATOP"}
_OVER_FENCES = {"choose": ("(", ")"), "brack": ("[", "]"), "brace": ("{", "}")}
_MATRIX_FENCES = {
    "pmatrix": ("(", ")"), "bmatrix": ("[", "]"), "Bmatrix": ("{", "}"), "vmatrix": ("|", "|"),
    "Vmatrix": ("‖", "‖"), "cases": ("{", ""), "dcases": ("{", ""), "numcases": ("{", ""),
    "rcases": ("", "}"), "psmallmatrix": ("(", ")"), "bsmallmatrix": ("[", "]"),
}
_INLINE_ENVS = {"equation", "equation*", "displaymath", "math", "center", "document", "flushleft"}
_ENV_WITH_ARG = {"array", "alignat", "alignat*", "subarray", "tabular", "alignedat", "darray"}


def tokenize(latex: str) -> list[str]:
    """Split LaTeX into tokens: commands, control symbols, numbers, entities, single characters.

    White space is dropped (it never matters in math mode); HTML entities are decoded.
    """
    toks = _TOKEN.findall(latex)
    if "%" in latex:
        # a comment runs to the end of the line; in one-line LaTeX (LaTeXML's alttext) a bare %
        # only marks where a line was broken, so it is dropped
        toks = [t for t in toks if t != "%"]
    if "&" in latex and ";" in latex:
        toks = [html.unescape(t) if len(t) > 2 and t[0] == "&" and t[-1] == ";" else t for t in toks]
    return toks


def _build_table() -> dict[str, tuple]:
    t: dict[str, tuple] = {}
    for name, ch in GREEK.items():
        t[name] = ("sym", "V", "V!" + ch)
    for name, ch in IDENT_CMDS.items():
        t[name] = ("sym", "V", "V!" + ch)
    for name, ch in SYMBOL_CMDS.items():
        t[name] = ("sym", CHAR_ROLE.get(ch, "S"), ch)
    for name, ch in BIN_CMDS.items():
        t[name] = ("sym", "O", ch)
    for name, ch in REL_CMDS.items():
        t[name] = ("sym", "R", ch)
    for name, ch in PREFIX_CMDS.items():
        t[name] = ("sym", "Q", ch)
    for name, ch in OPEN_CMDS.items():
        t[name] = ("sym", "L", ch)
    for name, ch in CLOSE_CMDS.items():
        t[name] = ("sym", "C", ch)
    for name, ch in FENCE_CMDS.items():
        t[name] = ("sym", "X", ch)
    for name, ch in BIGOP_CMDS.items():
        t[name] = ("sym", "B", ch)
    for name in FUNC_NAMES:
        label = "F!" + FUNC_ALIAS.get(name, name)
        t[name] = ("sym", "B" if name in LIMIT_FUNCS else "F", label)
    t["bmod"] = ("sym", "O", "mod")
    t["mod"] = ("sym", "O", "mod")
    for name in ACCENT_CMDS:
        t[name] = ("accent",)
    for name, style in FONT_CMDS.items():
        t[name] = ("font", style, name in FONT_SWITCHES)
    for name in TEXT_CMDS:
        t[name] = ("text",)
    for name in IGNORED_CMDS:
        t[name] = ("ignore",)
    for name in SIZE_CMDS:
        t[name] = ("size",)
    for name in SKIP_ONE_ARG:
        t[name] = ("skiparg",)
    for name in ONE_ARG_INLINE:
        t[name] = ("inline",)
    for name in ("frac", "dfrac", "tfrac", "cfrac", "sfrac", "nicefrac"):
        t[name] = ("frac", "FRAC")
    for name in ("binom", "dbinom", "tbinom", "binomial"):
        t[name] = ("binom",)
    t.update({
        "sqrt": ("sqrt",), "root": ("root",), "left": ("left",), "right": ("right",),
        "middle": ("middle",), "begin": ("begin",), "end": ("end",), "operatorname": ("opname",),
        "operatorname*": ("opname",), "overset": ("overset", "o"), "stackrel": ("overset", "o"),
        "underset": ("overset", "u"), "xrightarrow": ("xarrow", "→"), "xleftarrow": ("xarrow", "←"),
        "xmapsto": ("xarrow", "↦"), "not": ("not",), "pmod": ("pmod",), "pod": ("pmod",),
        "newcommand": ("newcommand",), "renewcommand": ("newcommand",),
        "providecommand": ("newcommand",), "DeclareMathOperator": ("declareop",), "def": ("def",),
        "let": ("let",), "hskip": ("dimen",), "kern": ("dimen",), "mskip": ("dimen",),
        "mkern": ("dimen",), "hspace": ("skiparg",), "textcolor": ("textcolor",),
        "colorbox": ("skiparg",), "bbox": ("inline",), "mathop": ("mathop", "B"),
        "mathrel": ("mathop", "R"), "mathbin": ("mathop", "O"), "genfrac": ("genfrac",),
        "substack": ("substack",), "cr": ("ignore",), "lq": ("sym", "S", "‘"),
        "lim": ("sym", "B", "F!lim"), "sideset": ("sideset",), "cancelto": ("skiparg",),
        "unicode": ("skiparg",), "overbracket": ("accent",), "phantom": ("skiparg",),
    })
    t["\\"] = ("ignore",)
    return t


_TABLE = _build_table()
_CONTROL_SYMBOLS = {"{": ("L", "{"), "}": ("C", "}"), "|": ("X", "‖"), "%": ("S", "%"),
                    "_": ("S", "_"), "#": ("S", "#"), "&": ("S", "&"), "$": ("S", "$"),
                    "^": ("S", "^"), "~": ("S", "~")}
_ARG_MACRO_LIMIT = 9


class ParseState:
    """Mutable state of one parse (tokens, position, macros, errors)."""

    __slots__ = ("toks", "pos", "n", "pending", "errors", "n_errors", "font", "macros", "budget",
                 "unknown", "flat", "flat_left", "stop", "table", "tails", "envs")

    def __init__(self, toks: list[str], table: dict[str, tuple] | None = None):
        self.toks = toks
        self.pos = 0
        self.n = len(toks)
        self.pending: list[str] = []
        self.errors: list[str] = []
        self.n_errors = 0
        self.font = ""
        self.macros: dict[str, tuple[int, list[str] | None, list[str]]] | None = None
        self.budget = 8 * len(toks) + 2000  # tokens macro expansion may add: keeps time linear
        self.unknown: list[str] = []
        self.flat = 0
        self.flat_left = 0
        self.stop: str | None = None
        self.table = _TABLE if table is None else table
        self.tails: dict[int, SNode] | None = None  # last node of script lines grown by primes
        self.envs = 0  # open matrix-like environments

    # -- token stream -------------------------------------------------------------------------
    def next(self) -> str | None:
        if self.pending:
            return self.pending.pop()
        if self.pos < self.n:
            t = self.toks[self.pos]
            self.pos += 1
            return t
        return None

    def peek(self) -> str | None:
        if self.pending:
            return self.pending[-1]
        if self.pos < self.n:
            return self.toks[self.pos]
        return None

    def append_chain(self, existing: SNode, extra: list[SNode]) -> None:
        """Append ``extra`` to the line starting at ``existing`` (primes, x^a^b) in O(len(extra))."""
        if self.tails is None:
            self.tails = {}
        tail = self.tails.get(id(existing), existing)
        while tail.next is not None:
            tail = tail.next
        _link(extra)
        tail.next = extra[0]
        self.tails[id(existing)] = extra[-1]

    def error(self, msg: str) -> None:
        self.n_errors += 1
        if len(self.errors) < MAX_ERRORS_KEPT:
            self.errors.append(msg)

    def raw_group(self) -> list[str]:
        """The tokens of one argument, unparsed: ``{...}`` (braces matched) or one token."""
        t = self.next()
        if t is None:
            return []
        if t != "{":
            return [t]
        out: list[str] = []
        level = 0
        while True:
            t = self.next()
            if t is None:
                self.error("missing } at end of argument")
                return out
            if t == "{":
                level += 1
            elif t == "}":
                if level == 0:
                    return out
                level -= 1
            out.append(t)

    def raw_optional(self) -> list[str] | None:
        """The tokens of an optional ``[...]`` argument, or None when there is none."""
        if self.peek() != "[":
            return None
        self.next()
        out: list[str] = []
        level = 0
        while True:
            t = self.next()
            if t is None:
                self.error("missing ] at end of optional argument")
                return out
            if t == "{":
                level += 1
            elif t == "}":
                level -= 1
            elif t == "]" and level <= 0:
                return out
            out.append(t)

    # -- parsing ------------------------------------------------------------------------------
    def seq(self, depth: int, stops: frozenset[str]) -> list[SNode]:
        """Parse until one of ``stops`` (kept in ``self.stop``) or the end of input."""
        atoms: list[SNode] = []
        saved_font = self.font
        over: tuple[str, int] | None = None
        empty_base = False
        prime_base: SNode | None = None
        color: str | None = None
        color_from = 0
        group_base: SNode | None = None
        blank_scripts = False
        self.stop = None
        while True:
            t = self.next()
            if t is None:
                if stops is not _TOP:
                    self.stop = None
                    if stops is _RBRACE:
                        self.error("missing }")
                    elif stops is _RIGHT:
                        self.error("\\left without \\right")
                    elif stops is _CELL:
                        self.error("\\begin without \\end")
                break
            if t == "}" and self.flat:
                self.flat -= 1
                continue
            if t in stops:
                self.stop = t
                break
            if self.envs and stops is _RBRACE and t in _CELL:
                # LaTeXML writes \begin{matrix}{a&b\\c&d\end{matrix}}: a brace around the
                # cells; the cell break ends the group, and its } is skipped when it comes
                self.pending.append(t)
                self.flat += 1
                break
            c0 = t[0]
            if c0 == "\\":
                name = t[1:]
                if name == "color":
                    if color is not None:
                        _paint(atoms[color_from:], color)
                    color = "".join(self.raw_group())
                    color_from = len(atoms)
                    continue
                if name in _OVER:
                    if over is None:
                        over = (name, len(atoms))
                    else:
                        self.error(f"ambiguous \\{name}")
                    if name == "above":
                        self.skip_dimension()
                    continue
                n_before = len(atoms)
                self.command(t, atoms, depth)
                if len(atoms) != n_before:
                    empty_base = False
                    prime_base = None
                continue
            if c0 == "{":
                if depth >= MAX_DEPTH:
                    self.flat += 1
                    self.error("nesting too deep: braces read flat")
                    continue
                inner = self.seq(depth + 1, _RBRACE)
                self.stop = None
                if inner:
                    atoms.extend(inner)
                    empty_base = False
                    prime_base = None
                    group_base = inner[-1]
                else:
                    empty_base = True
                continue
            if c0 == "^" or c0 == "_":
                if not atoms or empty_base:
                    atoms.append(SNode("W!", "W"))
                    empty_base = False
                    blank_scripts = True
                base = atoms[-1]
                edge = "a" if c0 == "^" else "b"
                arg = self.arg(depth + 1)
                if not arg:
                    continue
                existing = base.edge(edge)
                if existing is None:
                    _link(arg)
                    base.add(edge, arg[0])
                else:
                    # {x_a}_b is a script of a group (fine); x_a_b is TeX's "double subscript"
                    if not (edge == "a" and base is prime_base) and base is not group_base:
                        self.error("double superscript" if edge == "a" else "double subscript")
                    self.append_chain(existing, arg)
                if edge == "a":
                    prime_base = None
                continue
            if c0 == "'":
                if not atoms or empty_base:
                    atoms.append(SNode("W!", "W"))
                    empty_base = False
                base = atoms[-1]
                existing = base.edge("a")
                prime = SNode("′", "S")
                if existing is None:
                    base.add("a", prime)
                    prime_base = base
                elif base is prime_base:
                    self.append_chain(existing, [prime])
                else:
                    self.error("prime after superscript")
                    self.append_chain(existing, [prime])
                continue
            if c0 == "}":
                self.error("unmatched }")
                continue
            if c0 in "&$%~" and len(t) == 1:
                continue  # column separator outside an array, math shift, comment, tie
            if c0 == "#":
                atoms.append(SNode("#", "S"))
            else:
                node = self.char_node(t)
                last = atoms[-1] if atoms else None
                if node.kind == "N" and last is not None and last.kind == "N" and last.edges is None and not empty_base:
                    last.label += node.label[2:]  # "1 0" and "{1}0" are drawn as 10
                    continue
                atoms.append(node)
            empty_base = False
            prime_base = None
        self.font = saved_font
        if blank_scripts:
            atoms = _prescripts(atoms)
        if color is not None:
            _paint(atoms[color_from:], color)
        if over is not None:
            atoms = self.make_over(over[0], atoms[: over[1]], atoms[over[1]:])
        return atoms

    def char_node(self, t: str) -> SNode:
        c0 = t[0]
        if "0" <= c0 <= "9":
            if self.font:
                return SNode("N!" + "".join([styled(c, self.font) if c != "." else c for c in t]), "N")
            return SNode("N!" + t, "N")
        if len(t) == 1:
            role = CHAR_ROLE.get(t)
            if role is None:
                if t.isalpha():
                    font = self.font
                    if not font:
                        return SNode("V!" + t, "V")
                    if font == UPRIGHT:
                        # upright and italic letters are one symbol for the lab ("font differences
                        # ignored"); \mathrm only matters where it makes a word (see below)
                        return SNode("V!" + t, "V")
                    return SNode("V!" + styled(t, font), "V")
                if t.isdigit():
                    return SNode("N!" + t, "N")
                return SNode(t, "S")
            if role == "V":
                return SNode("V!" + t, "V")
            return SNode(CHAR_NORMAL.get(t, t), role)
        if t == "...":
            return SNode("…", "S")
        if t == ":=":
            return SNode("≔", "R")
        # decoded entity or a stray multi-character token
        if len(t) > 1 and t[0] == "&":
            return SNode(t, "S")
        return SNode(t, CHAR_ROLE.get(t, "S"))

    def arg(self, depth: int) -> list[SNode]:
        """One argument: a braced group, or a single token (one digit of a number)."""
        t = self.next()
        while t is not None and (t == "\\limits" or t == "\\nolimits" or t == "\\displaystyle"):
            t = self.next()
        if t is None:
            self.error("missing argument")
            return []
        if t == "{":
            if depth >= MAX_DEPTH:
                self.flat += 1
                self.error("nesting too deep: braces read flat")
                return []
            out = self.seq(depth, _RBRACE)
            self.stop = None
            return out
        c0 = t[0]
        if "0" <= c0 <= "9" and len(t) > 1:
            rest = _TOKEN.findall(t[1:])
            self.pending.extend(reversed(rest))
            return [self.char_node(c0)]
        if c0 == "\\":
            atoms: list[SNode] = []
            if depth >= MAX_DEPTH:
                self.error("nesting too deep")
                atoms.append(SNode("E!" + t, "U"))
                return atoms
            self.command(t, atoms, depth)
            return atoms
        if t == "}":
            self.error("missing argument before }")
            self.pending.append(t)
            return []
        if t in ("^", "_", "&"):
            self.error("missing argument")
            return []
        if t == "'":
            return [SNode("′", "S")]
        return [self.char_node(t)]

    def delim(self) -> str | None:
        """The delimiter after ``\\left``/``\\right``/``\\big``: a character, or None for ``.``."""
        t = self.next()
        braces = 0
        while t == "\\displaystyle" or t == "{":
            if t == "{":
                braces += 1  # \bigg{(} : the delimiter may come braced
            t = self.next()
        while braces and self.peek() == "}":
            self.next()
            braces -= 1
        if t is None:
            self.error("missing delimiter")
            return None
        if t == ".":
            return None
        if t[0] == "\\":
            name = t[1:]
            if name in _CONTROL_SYMBOLS:
                return _CONTROL_SYMBOLS[name][1]
            entry = _TABLE.get(name)
            if entry is not None and entry[0] == "sym":
                lab = entry[2]
                return lab[2:] if lab.startswith("V!") else lab
            if name == "\\":
                return "∖"
            self.error(f"bad delimiter {t}")
            return None
        if t == "<":
            return "⟨"
        if t == ">":
            return "⟩"
        return t

    def skip_dimension(self) -> None:
        """Skip a TeX dimension such as ``-2.5pt`` or ``{3mu}`` after \\hskip, \\kern, \\above."""
        t = self.peek()
        if t == "{":
            self.raw_group()
            return
        if t == "-" or t == "+":
            self.next()
            t = self.peek()
        if t is not None and (t[0].isdigit() or t == "."):
            self.next()
            if t == ".":
                nt = self.peek()
                if nt is not None and nt[0].isdigit():
                    self.next()
            units = 0
            while units < 2:
                u = self.peek()
                if u is not None and len(u) == 1 and u.isalpha():
                    self.next()
                    units += 1
                else:
                    break

    def make_over(self, name: str, num: list[SNode], den: list[SNode]) -> list[SNode]:
        node = SNode(_OVER[name], "K")
        node.add("o", _chain_or_blank(num))
        node.add("u", _chain_or_blank(den))
        fences = _OVER_FENCES.get(name)
        if fences:
            return [SNode(fences[0], "L"), node, SNode(fences[1], "C")]
        return [node]

    def command(self, t: str, atoms: list[SNode], depth: int) -> None:
        """Handle one control sequence ``t``, appending the nodes it yields to ``atoms``.

        Symbols (the common case) are handled here; every other table entry is dispatched by its
        kind (``entry[0]``) through :data:`_COMMANDS` to one ``_cmd_*`` method.
        """
        name = t[1:]
        entry = self.table.get(name)
        if entry is None:
            self.undefined(t, atoms, depth)
            return
        code = entry[0]
        if code == "sym":
            kind = entry[1]
            if kind == "V" and self.font:
                atoms.append(SNode("V!" + styled(entry[2][2:], self.font), "V"))
            else:
                atoms.append(SNode(entry[2], kind))
            return
        if code == "ignore":
            return
        if depth >= MAX_DEPTH and code not in _FLAT_SAFE:
            self.error("nesting too deep")
            atoms.append(SNode("E!" + t, "U"))
            return
        handler = _COMMANDS.get(code)
        if handler is None:  # pragma: no cover - every table kind has a handler
            atoms.append(SNode("E!" + t, "U"))
            return
        handler(self, name, entry, atoms, depth)

    def undefined(self, t: str, atoms: list[SNode], depth: int) -> None:
        """A control sequence not in the table: control symbol, macro, starred form or unknown."""
        name = t[1:]
        if len(name) == 1 and not name.isalpha():
            cs = _CONTROL_SYMBOLS.get(name)
            if cs is not None:
                atoms.append(SNode(cs[1], cs[0]))
            elif name in SPACE_CHARS or name.isspace():
                pass
            else:
                atoms.append(SNode(name, CHAR_ROLE.get(name, "S")))
            return
        macro = self.macros.get(name) if self.macros is not None else None
        if macro is not None:
            self.expand(macro)
            return
        if self.peek() == "*" and name + "*" in self.table:
            self.next()
            self.command(t + "*", atoms, depth)
            return
        if len(self.unknown) < MAX_ERRORS_KEPT:
            self.unknown.append(t)
        atoms.append(SNode("E!" + t, "U"))

    # -- one handler per command kind (see _COMMANDS): (name, table entry, atoms, depth) -------
    def _cmd_frac(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        if name == "cfrac":
            self.raw_optional()
        num = self.arg(depth + 1)
        den = self.arg(depth + 1)
        node = SNode(entry[1], "K")
        node.add("o", _chain_or_blank(num))
        node.add("u", _chain_or_blank(den))
        atoms.append(node)

    def _cmd_font(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        style = entry[1]
        if entry[2]:  # \bf, \rm, \cal ...: switch until the end of the group
            self.font = style
            return
        saved = self.font
        self.font = style
        inner = self.arg(depth + 1)
        self.font = saved
        if style == UPRIGHT and len(inner) > 1 and all(n.kind == "V" and len(n.label) == 3 for n in inner):
            # an upright word is one operator name (\mathrm{Var}), as LaTeXML reads it
            atoms.append(SNode("F!" + "".join(n.label[2] for n in inner), "F"))
        else:
            atoms.extend(inner)

    def _cmd_left(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        d = self.delim()
        if depth >= MAX_DEPTH:
            self.flat_left += 1
            self.error("nesting too deep: \\left read flat")
            if d is not None:
                atoms.append(SNode(d, "L"))
            return
        if d is not None:
            atoms.append(SNode(d, "L"))
        inner = self.seq(depth + 1, _RIGHT)
        atoms.extend(inner)
        if self.stop == "\\right":
            d2 = self.delim()
            if d2 is not None:
                atoms.append(SNode(d2, "C"))
        self.stop = None

    def _cmd_right(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        d2 = self.delim()
        if self.flat_left:
            self.flat_left -= 1
        else:
            self.error("\\right without \\left")
        if d2 is not None:
            atoms.append(SNode(d2, "C"))

    def _cmd_middle(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        d = self.delim()
        if d is not None:
            atoms.append(SNode(d, "R"))

    def _cmd_size(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        d = self.delim()
        if d is not None:
            last = name[-1]
            kind = "L" if last == "l" else "C" if last == "r" else "R" if last == "m" else CHAR_ROLE.get(d, "S")
            atoms.append(SNode(d, kind))

    def _cmd_accent(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        base = self.arg(depth + 1)
        mark = ACCENT_CMDS.get(name, "⎴")
        node = SNode(mark, "A")
        node.add("w", _chain_or_blank(base))
        atoms.append(node)

    def _cmd_sqrt(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        index = None
        if self.peek() == "[":
            self.next()
            index = self.seq(depth + 1, _RBRACK)
            if self.stop != "]":
                self.error("missing ] in \\sqrt")
            self.stop = None
        atoms.append(_radical(self.arg(depth + 1), index))

    def _cmd_root(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        index = self.seq(depth + 1, _OF)
        if self.stop != "\\of":
            self.error("\\root without \\of")
        self.stop = None
        atoms.append(_radical(self.arg(depth + 1), index))

    def _cmd_binom(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        top = self.arg(depth + 1)
        bottom = self.arg(depth + 1)
        node = SNode("ATOP", "K")
        node.add("o", _chain_or_blank(top))
        node.add("u", _chain_or_blank(bottom))
        atoms.append(SNode("(", "L"))
        atoms.append(node)
        atoms.append(SNode(")", "C"))

    def _cmd_genfrac(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        left = self.raw_group()
        right = self.raw_group()
        self.raw_group()
        self.raw_group()
        num = self.arg(depth + 1)
        den = self.arg(depth + 1)
        node = SNode("ATOP" if left or right else "FRAC", "K")
        node.add("o", _chain_or_blank(num))
        node.add("u", _chain_or_blank(den))
        if left:
            atoms.append(SNode(left[0].lstrip("\\") or "(", "L"))
        atoms.append(node)
        if right:
            atoms.append(SNode(right[0].lstrip("\\") or ")", "C"))

    def _cmd_text(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        raw = self.raw_group()
        text = "".join(
            (tok[1:] if tok[0] == "\\" and len(tok) > 1 else tok) for tok in raw if tok not in ("$",)
        )
        if text:
            atoms.append(SNode("T!" + text, "T"))

    def _cmd_opname(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        star = False
        if name.endswith("*"):
            star = True
        elif self.peek() == "*":
            self.next()
            star = True
        raw = self.raw_group()
        word = "".join(tok.lstrip("\\") for tok in raw if tok not in ("{", "}"))
        if word:
            atoms.append(SNode("F!" + word, "B" if star or word in LIMIT_FUNCS else "F"))

    def _cmd_overset(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        top = self.arg(depth + 1)
        base = self.arg(depth + 1)
        if not base:
            base = [SNode("W!", "W")]
        if top:
            _link(top)
            base[-1].add(entry[1], top[0])
        atoms.extend(base)

    def _cmd_xarrow(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        below = self.raw_optional()
        above = self.arg(depth + 1)
        node = SNode(entry[1], "R")
        if above:
            _link(above)
            node.add("o", above[0])
        if below:
            sub = ParseState(below)
            sub.font = self.font
            low = sub.seq(depth + 1, _TOP)
            if low:
                _link(low)
                node.add("u", low[0])
        atoms.append(node)

    def _cmd_not(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        nxt = self.arg(depth + 1)
        if len(nxt) == 1 and len(nxt[0].label) == 1:
            n = nxt[0]
            n.label = unicodedata.normalize("NFC", n.label + "\u0338")
            if n.kind != "Q":
                n.kind = "R"  # a struck-out symbol is a (negated) relation
            atoms.append(n)
        else:
            atoms.append(SNode("¬", "Q"))
            atoms.extend(nxt)

    def _cmd_pmod(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        inner = self.arg(depth + 1)
        atoms.append(SNode("(", "L"))
        if name == "pmod":
            atoms.append(SNode("mod", "O"))
        atoms.extend(inner)
        atoms.append(SNode(")", "C"))

    def _cmd_begin(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        self.environment(atoms, depth)

    def _cmd_end(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        self.raw_group()
        self.error("\\end without \\begin")

    def _cmd_textcolor(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        color = "".join(self.raw_group())
        inner = self.arg(depth + 1)
        _paint(inner, color)
        atoms.extend(inner)

    def _cmd_skiparg(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        if name == "bbox":
            self.raw_optional()
        self.raw_group()

    def _cmd_inline(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        if name == "bbox":
            self.raw_optional()
        atoms.extend(self.arg(depth + 1))

    def _cmd_mathop(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        inner = self.arg(depth + 1)
        if len(inner) > 1 and all(n.kind == "V" and len(n.label) == 3 for n in inner):
            atoms.append(SNode("F!" + "".join(n.label[2] for n in inner), entry[1]))
        elif len(inner) == 1 and entry[1] != "B":
            inner[0].kind = entry[1]
            atoms.append(inner[0])
        else:
            atoms.extend(inner)

    def _cmd_substack(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        inner_atoms: list[SNode] = []
        self.matrix_body("substack", inner_atoms, depth, until_brace=True)
        atoms.extend(inner_atoms)

    def _cmd_sideset(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        atoms.extend(self.arg(depth + 1))
        atoms.extend(self.arg(depth + 1))

    def _cmd_dimen(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        self.skip_dimension()

    def _cmd_define(self, name: str, entry: tuple, atoms: list[SNode], depth: int) -> None:
        self.define(entry[0])

    def environment(self, atoms: list[SNode], depth: int) -> None:
        raw = self.raw_group()
        env = "".join(tok for tok in raw if tok != "%")
        if self.peek() == "*":
            self.next()
            env += "*"
        if env in _INLINE_ENVS or depth >= MAX_DEPTH:
            if depth >= MAX_DEPTH:
                self.error("nesting too deep: environment read flat")
                return
            inner = self.seq(depth + 1, frozenset({"\\end"}))
            if self.stop == "\\end":
                self.raw_group()
            else:
                self.error("\\begin without \\end")
            self.stop = None
            atoms.extend(inner)
            return
        if env in _ENV_WITH_ARG or env.rstrip("*") in _ENV_WITH_ARG:
            self.raw_optional()
            self.raw_group()
        self.matrix_body(env, atoms, depth, until_brace=False)

    def matrix_body(self, env: str, atoms: list[SNode], depth: int, until_brace: bool) -> None:
        stops = _CELL
        if until_brace:
            if self.peek() != "{":
                return
            self.next()
            stops = frozenset({"&", "\\\\", "\\cr", "}"})
        rows: list[list[list[SNode]]] = []
        row: list[list[SNode]] = []
        n_cells = 0
        self.envs += 1
        while True:
            cell = self.seq(depth + 1, stops)
            stop = self.stop
            self.stop = None
            row.append(cell)
            n_cells += 1
            if stop == "&":
                continue
            if stop == "\\\\" or stop == "\\cr":
                rows.append(row)
                row = []
                self.raw_optional()
                continue
            if stop == "\\end":
                name = "".join(tok for tok in self.raw_group() if tok != "%")
                if self.peek() == "*":
                    self.next()
                    name += "*"
                if name != env:
                    self.error(f"\\begin{{{env}}} ended by \\end{{{name}}}")
            elif stop is None and not until_brace:
                pass  # the cell's seq already reported the missing \end
            break
        self.envs -= 1
        if len(row) > 1 or (row and row[0]) or not rows:
            rows.append(row)
        n_rows = len(rows)
        n_cols = max(len(r) for r in rows)
        node = SNode(f"M!{n_rows}x{n_cols}", "M")
        for r in rows:
            for j in range(n_cols):
                cell = r[j] if j < len(r) else []
                node.add("e", _chain_or_blank(cell))
        fences = _MATRIX_FENCES.get(env.rstrip("*"))
        if fences and fences[0]:
            atoms.append(SNode(fences[0], "L"))
        atoms.append(node)
        if fences and fences[1]:
            atoms.append(SNode(fences[1], "C"))

    def define(self, code: str) -> None:
        """Record a macro from \\newcommand, \\DeclareMathOperator, \\def or \\let."""
        if code == "let":
            name_tok = self.next()
            nt = self.peek()
            if nt == "=":
                self.next()
            target = self.next()
            if name_tok and name_tok[0] == "\\" and target is not None:
                self._store(name_tok[1:], 0, None, [target])
            return
        if code == "def":
            name_tok = self.next()
            n_args = 0
            while True:
                p = self.peek()
                if p is None or p == "{":
                    break
                self.next()
                if p == "#":
                    n_args += 1
            body = self.raw_group()
            if name_tok and name_tok[0] == "\\":
                self._store(name_tok[1:], min(n_args, _ARG_MACRO_LIMIT), None, body)
            return
        star = False
        if self.peek() == "*":
            self.next()
            star = True
        name_raw = self.raw_group()
        if not name_raw or name_raw[0][0] != "\\":
            self.error("bad macro name")
            return
        name = name_raw[0][1:]
        if code == "declareop":
            text = self.raw_group()
            body = ["\\operatorname"] + (["*"] if star else []) + ["{"] + text + ["}"]
            self._store(name, 0, None, body)
            return
        n_args = 0
        opt = self.raw_optional()
        if opt:
            try:
                n_args = max(0, min(_ARG_MACRO_LIMIT, int("".join(opt))))
            except ValueError:
                self.error("bad macro argument count")
        default = self.raw_optional()
        body = self.raw_group()
        self._store(name, n_args, default, body)

    def _store(self, name: str, n_args: int, default: list[str] | None, body: list[str]) -> None:
        if self.macros is None:
            self.macros = {}
        self.macros[name] = (n_args, default, body)

    def expand(self, macro: tuple[int, list[str] | None, list[str]]) -> None:
        """Push the body of a user macro, its arguments substituted, back onto the token stream."""
        n_args, default, body = macro
        args: list[list[str]] = []
        for i in range(n_args):
            if i == 0 and default is not None:
                opt = self.raw_optional()
                args.append(default if opt is None else opt)
            else:
                args.append(self.raw_group())
        out: list[str] = []
        it = iter(range(len(body)))
        for i in it:
            tok = body[i]
            if tok == "#" and i + 1 < len(body) and body[i + 1][:1].isdigit():
                num = body[i + 1]
                k = int(num[0])
                if 1 <= k <= len(args):
                    out.extend(args[k - 1])
                if len(num) > 1:
                    out.append(num[1:])
                next(it, None)
            else:
                out.append(tok)
        self.budget -= len(out) + 1
        if self.budget < 0:
            if self.budget > -len(out) - 2:
                self.error("macro expansion limit reached")
            return
        self.pending.extend(reversed(out))


# Command kinds (``entry[0]`` of the table) that still work past MAX_DEPTH: they add no nesting.
_FLAT_SAFE = frozenset({"font", "size", "right", "end", "skiparg"})
# How each command kind of the table is handled ("sym" and "ignore" are handled inline).
_COMMANDS = {
    "frac": ParseState._cmd_frac, "font": ParseState._cmd_font, "left": ParseState._cmd_left,
    "right": ParseState._cmd_right, "middle": ParseState._cmd_middle, "size": ParseState._cmd_size,
    "accent": ParseState._cmd_accent, "sqrt": ParseState._cmd_sqrt, "root": ParseState._cmd_root,
    "binom": ParseState._cmd_binom, "genfrac": ParseState._cmd_genfrac, "text": ParseState._cmd_text,
    "opname": ParseState._cmd_opname, "overset": ParseState._cmd_overset,
    "xarrow": ParseState._cmd_xarrow, "not": ParseState._cmd_not, "pmod": ParseState._cmd_pmod,
    "begin": ParseState._cmd_begin, "end": ParseState._cmd_end, "textcolor": ParseState._cmd_textcolor,
    "skiparg": ParseState._cmd_skiparg, "inline": ParseState._cmd_inline,
    "mathop": ParseState._cmd_mathop, "substack": ParseState._cmd_substack,
    "sideset": ParseState._cmd_sideset, "dimen": ParseState._cmd_dimen,
    "newcommand": ParseState._cmd_define, "declareop": ParseState._cmd_define,
    "def": ParseState._cmd_define, "let": ParseState._cmd_define,
}

def _prescripts(atoms: list[SNode]) -> list[SNode]:
    """``{}^{14}_{6}C``: scripts on a blank base just before a symbol are that symbol's
    pre-scripts (edges ``c`` above, ``d`` below), as in Presentation MathML's mmultiscripts."""
    out: list[SNode] = []
    i = 0
    n = len(atoms)
    while i < n:
        node = atoms[i]
        if (node.kind == "W" and node.edges and i + 1 < n and atoms[i + 1].kind not in "WD"
                and all(e in "ab" for e, _c in node.edges)):
            target = atoms[i + 1]
            for e, child in node.edges:
                target.add("c" if e == "a" else "d", child)
            i += 1
            continue
        out.append(node)
        i += 1
    return out


def _paint(atoms: list[SNode], color: str) -> None:
    """Colour is part of the layout: each coloured symbol gets a ``k`` edge to its colour."""
    for n in atoms:
        n.add("k", SNode("T!" + color, "T"))


def _link(atoms: list[SNode]) -> None:
    for i in range(len(atoms) - 1):
        atoms[i].next = atoms[i + 1]


def _chain_or_blank(atoms: list[SNode]) -> SNode:
    if not atoms:
        return SNode("W!", "W")
    _link(atoms)
    return atoms[0]


# MathJax-only macros that LaTeX (hence LaTeXML, hence the lab's visual ids) does not define.
MATHJAX_ONLY = frozenset({"lt", "gt"})
_LATEX_TABLE = {k: v for k, v in _TABLE.items() if k not in MATHJAX_ONLY}



def _radical(body: list, index: list | None) -> SNode:
    """A radical: the body within it ("w"), the index as a pre-superscript ("c")."""
    node = SNode("ROOT", "D")
    node.add("w", _chain_or_blank(body))
    if index:
        _link(index)
        node.add("c", index[0])
    return node

def parse_slt(latex: str, latex_only: bool = False) -> tuple[SNode, ParseState]:
    """Parse LaTeX into an SLT root (a ``W!`` blank for empty input) and the parse state.

    With ``latex_only``, MathJax-only macros (:data:`MATHJAX_ONLY`) are unknown macros, as they
    are for LaTeX and LaTeXML.
    """
    state = ParseState(tokenize(latex), _LATEX_TABLE if latex_only else None)
    atoms = state.seq(0, _TOP)
    if state.flat:
        state.error("unclosed braces read flat")
    if state.flat_left:
        state.error("\\left without \\right")
    return _chain_or_blank(atoms), state
