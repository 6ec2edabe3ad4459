"""Symbol tables: LaTeX commands to Unicode characters, and each character's role.

A role is one letter, shared by the SLT node kinds and the operator-tree builder:
``R`` relation, ``O`` binary operator, ``P`` punctuation, ``L``/``C`` opening/closing fence,
``X`` fence that may open or close (``|``, ``‖``), ``Q`` prefix operator (¬ ∀ ∃),
``Z`` postfix operator (!), ``B`` big operator or function taking limits, ``F`` function name,
``V`` identifier, ``S`` other symbol used as an operand (… ⋯ ′ °).
"""

from __future__ import annotations

import unicodedata

GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "varkappa": "ϰ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "omicron": "ο", "pi": "π",
    "varpi": "ϖ", "rho": "ρ", "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ",
    "upsilon": "υ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
    "Upsilon": "Υ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "varGamma": "Γ", "varDelta": "Δ",
    "digamma": "ϝ",
}

# Identifiers and other operands that are not letters.
IDENT_CMDS = {
    "infty": "∞", "infin": "∞", "emptyset": "∅", "varnothing": "⌀", "ell": "ℓ", "aleph": "ℵ",
    "beth": "ℶ", "gimel": "ℷ", "partial": "∂", "nabla": "∇", "hbar": "ℏ", "hslash": "ℏ", "Re": "ℜ",
    "Im": "ℑ", "wp": "℘", "imath": "ı", "jmath": "ȷ", "mho": "℧", "eth": "ð", "Finv": "Ⅎ",
    "top": "⊤", "bot": "⊥", "angle": "∠", "measuredangle": "∡", "triangle": "△", "square": "□",
    "Box": "□", "blacksquare": "■", "diamond": "⋄", "Diamond": "◊", "clubsuit": "♣",
    "spadesuit": "♠", "heartsuit": "♡", "diamondsuit": "♢", "flat": "♭", "sharp": "♯",
    "natural": "♮", "checkmark": "✓", "dagger": "†", "ddagger": "‡", "S": "§", "P": "¶",
    "copyright": "©", "circledS": "Ⓢ", "complement": "∁", "Bbbk": "𝕜", "backprime": "‵",
    "blacktriangle": "▴", "bigstar": "★", "lozenge": "◊", "degree": "°",
}

SYMBOL_CMDS = {
    "ldots": "…", "dots": "…", "dotsc": "…", "dotso": "…", "dotsb": "⋯", "dotsm": "⋯",
    "dotsi": "⋯", "cdots": "⋯", "vdots": "⋮", "ddots": "⋱", "iddots": "⋰", "prime": "′",
    "therefore": "∴", "because": "∵", "colon": ":",
}

BIN_CMDS = {
    "pm": "±", "mp": "∓", "times": "×", "cdot": "⋅", "centerdot": "⋅", "div": "÷", "ast": "∗",
    "star": "⋆", "circ": "∘", "bullet": "∙", "oplus": "⊕", "ominus": "⊖", "otimes": "⊗",
    "oslash": "⊘", "odot": "⊙", "cup": "∪", "cap": "∩", "sqcup": "⊔", "sqcap": "⊓", "uplus": "⊎",
    "setminus": "∖", "smallsetminus": "∖", "backslash": "\\", "wedge": "∧", "land": "∧",
    "vee": "∨", "lor": "∨", "curlywedge": "⋏", "curlyvee": "⋎", "amalg": "⨿", "wr": "≀",
    "dotplus": "∔", "ltimes": "⋉", "rtimes": "⋊", "bowtie": "⋈", "diamond": "⋄",
    "bigtriangleup": "△", "bigtriangledown": "▽", "triangleleft": "◁", "triangleright": "▷",
    "boxplus": "⊞", "boxtimes": "⊠", "cdotp": "⋅", "intercal": "⊺",
}

REL_CMDS = {
    "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "leqslant": "⩽", "geqslant": "⩾", "leqq": "≦",
    "geqq": "≧", "neq": "≠", "ne": "≠", "lt": "<", "gt": ">", "equiv": "≡", "approx": "≈",
    "sim": "∼", "simeq": "≃", "cong": "≅", "propto": "∝", "in": "∈", "notin": "∉", "ni": "∋",
    "owns": "∋", "subset": "⊂", "subseteq": "⊆", "subsetneq": "⊊", "subsetneqq": "⫋",
    "supset": "⊃", "supseteq": "⊇", "supsetneq": "⊋", "nsubseteq": "⊈", "nsupseteq": "⊉",
    "sqsubset": "⊏", "sqsubseteq": "⊑", "sqsupseteq": "⊒", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "gets": "←", "leftrightarrow": "↔", "Rightarrow": "⇒", "Leftarrow": "⇐",
    "Leftrightarrow": "⇔", "implies": "⟹", "impliedby": "⟸", "iff": "⟺",
    "Longrightarrow": "⟹", "Longleftarrow": "⟸", "Longleftrightarrow": "⟺",
    "longrightarrow": "⟶", "longleftarrow": "⟵", "longleftrightarrow": "⟷", "mapsto": "↦",
    "longmapsto": "⟼", "hookrightarrow": "↪", "hookleftarrow": "↩", "twoheadrightarrow": "↠",
    "rightharpoonup": "⇀", "uparrow": "↑", "downarrow": "↓", "Uparrow": "⇑", "Downarrow": "⇓",
    "updownarrow": "↕", "nearrow": "↗", "searrow": "↘", "leadsto": "⇝", "rightrightarrows": "⇉",
    "rightleftharpoons": "⇌", "mid": "∣", "nmid": "∤", "parallel": "∥", "nparallel": "∦",
    "perp": "⊥", "ll": "≪", "gg": "≫", "prec": "≺", "preceq": "⪯", "succ": "≻", "succeq": "⪰",
    "succcurlyeq": "≽", "preccurlyeq": "≼", "vdash": "⊢", "dashv": "⊣", "models": "⊨",
    "vDash": "⊨", "Vdash": "⊩", "nvdash": "⊬", "asymp": "≍", "doteq": "≐", "bumpeq": "≏",
    "triangleq": "≜", "nleq": "≰", "ngeq": "≱", "nless": "≮", "ngtr": "≯", "nsim": "≁",
    "ncong": "≇", "lesssim": "≲", "gtrsim": "≳", "unlhd": "⊴", "unrhd": "⊵", "lhd": "⊲",
    "rhd": "⊳", "trianglelefteq": "⊴", "trianglelefteqslant": "⊴", "smile": "⌣", "frown": "⌢",
    "multimap": "⊸", "nexists": "∄", "less": "<", "eq": "=", "coloneqq": "≔", "Coloneqq": "⩴",
    "approxeq": "≊", "vartriangleleft": "⊲", "ntriangleleft": "⋪", "circeq": "≗",
    "restriction": "↾", "upharpoonright": "↾", "xrightarrow": "→", "xleftarrow": "←",
}

PREFIX_CMDS = {"neg": "¬", "lnot": "¬", "forall": "∀", "exists": "∃", "nexists": "∄"}

OPEN_CMDS = {
    "lbrace": "{", "{": "{", "langle": "⟨", "lfloor": "⌊", "lceil": "⌈", "lbrack": "[",
    "lvert": "|", "lVert": "‖", "ulcorner": "⌜", "llcorner": "⌞", "lgroup": "⟮", "lparen": "(",
}
CLOSE_CMDS = {
    "rbrace": "}", "}": "}", "rangle": "⟩", "rfloor": "⌋", "rceil": "⌉", "rbrack": "]",
    "rvert": "|", "rVert": "‖", "urcorner": "⌝", "lrcorner": "⌟", "rgroup": "⟯", "rparen": ")",
}
FENCE_CMDS = {"vert": "|", "Vert": "‖", "|": "‖"}

BIGOP_CMDS = {
    "sum": "∑", "prod": "∏", "coprod": "∐", "int": "∫", "iint": "∬", "iiint": "∭", "oint": "∮",
    "oiint": "∯", "bigcup": "⋃", "bigcap": "⋂", "bigoplus": "⨁", "bigotimes": "⨂", "bigodot": "⨀",
    "bigvee": "⋁", "bigwedge": "⋀", "bigsqcup": "⨆", "biguplus": "⨄", "intop": "∫", "smallint": "∫",
}

# Named functions; those in LIMIT_FUNCS take limits like big operators (lim_{x\to 0}).
FUNC_NAMES = {
    "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "coth", "sech", "csch",
    "arcsin", "arccos", "arctan", "arccot", "arcsec", "arccsc", "exp", "log", "ln", "lg", "det",
    "dim", "ker", "deg", "gcd", "hom", "arg", "sup", "inf", "max", "min", "lim", "limsup",
    "liminf", "Pr", "sgn", "lcm", "tr", "Tr", "rank", "diag", "mod", "injlim", "projlim",
}
LIMIT_FUNCS = {"lim", "limsup", "liminf", "sup", "inf", "max", "min", "Pr", "det", "gcd",
               "injlim", "projlim", "argmax", "argmin"}
FUNC_ALIAS = {"limsup": "lim sup", "liminf": "lim inf"}

# accent command -> (mark, edge of the mark relative to its base: o over, u under)
ACCENT_CMDS = {
    "hat": "^", "widehat": "^", "check": "ˇ", "widecheck": "ˇ", "tilde": "~", "widetilde": "~",
    "bar": "¯", "overline": "¯", "vec": "→", "overrightarrow": "→", "overleftarrow": "←",
    "overleftrightarrow": "↔", "dot": "˙", "ddot": "¨", "dddot": "⃛", "breve": "˘", "acute": "´",
    "grave": "`", "mathring": "˚", "overbrace": "⏞", "underbrace": "⏟", "underline": "_",
    "underrightarrow": "→", "underleftarrow": "←", "utilde": "~", "overparen": "⏜",
    "underparen": "⏝",
}
UNDER_ACCENTS = {"underbrace", "underline", "underrightarrow", "underleftarrow", "utilde",
                 "underparen"}

# Font styles: the name used in Unicode's "MATHEMATICAL <STYLE> ..." characters.
FONT_CMDS = {
    "mathbb": "DOUBLE-STRUCK", "Bbb": "DOUBLE-STRUCK", "mathbbm": "DOUBLE-STRUCK",
    "mathcal": "SCRIPT", "mathscr": "SCRIPT", "cal": "SCRIPT", "scr": "SCRIPT", "mathfrak": "FRAKTUR",
    "frak": "FRAKTUR", "mathbf": "BOLD", "bf": "BOLD", "textbf": "BOLD", "bm": "BOLD ITALIC",
    "boldsymbol": "BOLD ITALIC", "pmb": "BOLD ITALIC", "mathbfit": "BOLD ITALIC", "mathsf": "SANS-SERIF",
    "sf": "SANS-SERIF", "mathtt": "MONOSPACE", "tt": "MONOSPACE", "mathrm": "UPRIGHT", "rm": "UPRIGHT",
    "mathup": "UPRIGHT", "textrm": "UPRIGHT", "mathit": "", "it": "", "mathnormal": "",
    "mathsfit": "SANS-SERIF ITALIC",
}
UPRIGHT = "UPRIGHT"  # not a Unicode style: marks \mathrm-like fonts (a word in it is a name)
FONT_SWITCHES = {"bf", "rm", "it", "cal", "sf", "tt", "scr", "frak", "bold"}

TEXT_CMDS = {"text", "textrm", "textit", "textsf", "texttt", "textnormal", "textup", "mbox",
             "hbox", "emph", "textmd", "fbox", "intertext", "textsl", "mathtext"}

IGNORED_CMDS = {
    "displaystyle", "textstyle", "scriptstyle", "scriptscriptstyle", "limits", "nolimits",
    "quad", "qquad", "enspace", "enskip", "thinspace", "medspace", "thickspace", "negthinspace",
    "negmedspace", "negthickspace", "space", "hfil", "hfill", "hss", "large", "Large", "LARGE", "huge",
    "Huge", "small", "tiny", "normalsize", "scriptsize", "footnotesize", "nonumber", "notag",
    "par", "hline", "noindent", "allowbreak", "mathstrut", "strut", "relax", "nobreak",
    "displaylimits", "newline", "linebreak", "qedhere", "protect", "unskip", "ignorespaces",
    "vfill", "centering", "bigskip", "medskip", "smallskip", "break", "nopagebreak", "leavevmode",
    "global", "long", "displaybreak", "nulldelimiterspace",
    "vcenter",
}
SPACE_CHARS = {",", ":", ";", "!", ">", " ", "\t", "\n", "/", "-", "@", "\r"}
SIZE_CMDS = {"big", "Big", "bigg", "Bigg", "bigl", "Bigl", "biggl", "Biggl", "bigr", "Bigr",
             "biggr", "Biggr", "bigm", "Bigm", "biggm", "Biggm"}
SKIP_ONE_ARG = {"label", "tag", "require", "ref", "eqref", "hspace", "vspace", "phantom",
                "vphantom", "hphantom", "pagecolor", "hspace*", "vspace*", "tag*",
                "class", "cssId", "style", "href", "htmlClass",
                "htmlStyle", "htmlId"}
ONE_ARG_INLINE = {"boxed", "cancel", "bcancel", "xcancel", "smash", "mathord", "mathopen",
                  "mathclose", "mathpunct", "mathinner", "rlap", "llap", "clap", "mathclap",
                  "mathllap", "mathrlap", "ensuremath",
                  }

CHAR_ROLE: dict[str, str] = {}
for _c in "=<>≤≥≠≡≈∼≃≅∝∈∉∋⊂⊆⊊⊃⊇⊋→←↔⇒⇐⇔⟹⟸⟺⟶⟵⟷↦⟼↪↠↑↓∣∤∥⊥≪≫≺⪯≻⪰⊢⊣⊨⊩≍≐≜⩽⩾≦≧≮≯≰≱≁≲≳⊴⊵⊲⊳≔∷⊈⊉⊏⊑⇝⇉⇌↾":
    CHAR_ROLE[_c] = "R"
for _c in "+-−±∓×⋅·÷∗⋆∘∙⊕⊖⊗⊘⊙∪∩⊔⊓⊎∖∧∨*/\\⋏⋎⨿≀∔⋉⋊⋈⊞⊠":
    CHAR_ROLE[_c] = "O"
for _c in ",;.:?":
    CHAR_ROLE[_c] = "P"
for _c in "([⟨⌊⌈⟮⌜⌞":
    CHAR_ROLE[_c] = "L"
for _c in ")]⟩⌋⌉⟯⌝⌟":
    CHAR_ROLE[_c] = "C"
for _c in "|‖":
    CHAR_ROLE[_c] = "X"
for _c in "¬∀∃∄":
    CHAR_ROLE[_c] = "Q"
CHAR_ROLE["!"] = "Z"
for _c in "∑∏∐∫∬∭∮∯⋃⋂⨁⨂⨀⋁⋀⨆⨄":
    CHAR_ROLE[_c] = "B"
for _c in "…⋯⋮⋱⋰′″‴°∴∵'\"#%$&@_~^`":
    CHAR_ROLE[_c] = "S"
CHAR_ROLE["{"] = "L"
CHAR_ROLE["}"] = "C"
CHAR_ROLE["∞"] = "V"
CHAR_ROLE["∅"] = "V"
CHAR_ROLE["∂"] = "V"
CHAR_ROLE["∇"] = "V"

# Plain-ASCII stand-ins that people type and LaTeXML renders as the proper sign.
CHAR_NORMAL = {"-": "−", "*": "∗", "'": "′", "·": "⋅", "…": "…", "\u2212": "−"}

_STYLE_CACHE: dict[tuple[str, str], str] = {}
_FALLBACK_PREFIX = {"DOUBLE-STRUCK": "DOUBLE-STRUCK", "SCRIPT": "SCRIPT", "FRAKTUR": "BLACK-LETTER"}


def styled(ch: str, style: str) -> str:
    """The Unicode mathematical alphanumeric character for ``ch`` in ``style`` (or ``ch``).

    LaTeXML writes ``\\mathbb{R}`` as ``ℝ`` and ``\\mathcal{A}`` as ``𝒜``: those are different
    symbols from ``R`` and ``A`` for visual identity, while ``\\mathrm`` and ``\\mathit`` are not.
    """
    if not style:
        return ch
    key = (ch, style)
    got = _STYLE_CACHE.get(key)
    if got is not None:
        return got
    result = ch
    try:
        name = unicodedata.name(ch)
    except ValueError:
        name = ""
    rest = None
    if name.startswith("LATIN CAPITAL LETTER "):
        rest = "CAPITAL " + name[21:]
    elif name.startswith("LATIN SMALL LETTER "):
        rest = "SMALL " + name[19:]
    elif name.startswith("GREEK CAPITAL LETTER "):
        rest = "CAPITAL " + name[21:]
    elif name.startswith("GREEK SMALL LETTER "):
        rest = "SMALL " + name[19:]
    elif name.startswith("DIGIT "):
        rest = name
    if rest is not None:
        candidates = [f"MATHEMATICAL {style} {rest}"]
        if style in _FALLBACK_PREFIX:
            candidates.append(f"{_FALLBACK_PREFIX[style]} {rest}")
        if style == "BOLD ITALIC" and rest.startswith("DIGIT"):
            candidates.append(f"MATHEMATICAL BOLD {rest}")
        for cand in candidates:
            try:
                result = unicodedata.lookup(cand)
                break
            except KeyError:
                continue
    _STYLE_CACHE[key] = result
    return result
