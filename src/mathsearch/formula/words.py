"""LaTeX to words, as the lab's PyTerrier baseline does: symbols become English tokens so that a
text tokenizer keeps them (``x^2 \\leq 1`` -> ``x sup 2 leq 1``)."""

from __future__ import annotations

from .opt import OPS
from .parser import tokenize
from .symbols import IGNORED_CMDS, SIZE_CMDS

# A token that is not a command -> its word ("" for none).
CHAR_WORDS = {ch: name for ch, (name, _c, _p) in OPS.items() if len(ch) == 1}
CHAR_WORDS.update({
    "^": "sup", "_": "sub", "(": "lparen", ")": "rparen", "[": "lbracket", "]": "rbracket",
    "|": "vbar", "!": "factorial", "'": "prime", "&": "", "{": "", "}": "", "~": "", "$": "",
    "%": "", "\\": "", "#": "hash", "@": "at", '"': "quote", "`": "backtick",
})
# Commands that make no word (\begin and \end also pass over their environment's name).
SKIPPED_COMMANDS = IGNORED_CMDS | SIZE_CMDS | {"left", "right", "middle", "begin", "end", ",", ";", ":", "!", " ",
                                               "\\", "limits", "nolimits"}


def latex_to_words(latex: str) -> str:
    """Space-separated words for a LaTeX formula (commands by name, symbols by English name)."""
    words: list[str] = []
    skip_env_name = False
    env: list[str] = []
    for tok in tokenize(latex):
        c0 = tok[0]
        if c0 == "\\":
            name = tok[1:]
            if name in SKIPPED_COMMANDS:
                skip_env_name = name in ("begin", "end")
                continue
            if name in ("{", "}"):
                words.append("lbrace" if name == "{" else "rbrace")
            elif name == "|":
                words.append("norm")
            elif name.isalpha():
                words.append(name)
            continue
        if skip_env_name:
            if tok == "{":
                continue
            if tok == "}":
                skip_env_name = False
                if env:
                    words.append("".join(env))
                    env.clear()
                continue
            env.append(tok)
            continue
        if c0.isalnum():
            words.append(tok)
            continue
        w = CHAR_WORDS.get(tok)
        if w is None:
            w = tok if tok.isalnum() else ""
        if w:
            words.append(w)
    return " ".join(words)
