"""What MIRMU's artifacts share: where they live under INDEX_DIR, their manifests (config, seed,
training data, counts, seconds), their build configs (the ``[build]`` table of each system's TOML
in :mod:`mathsearch.systems.mirmu`) and the tokens they are made of.

Tokens (seed 002, section 2.1):

* :func:`prefix_tokens`: a formula in prefix notation, the OPT's labels in depth-first order
  (``U!eq O!minus ... N!0``), what MIRMU's SCM and Formula2Vec ingested.
* :func:`mixed_tokens`: a post's text with each formula replaced in place by its prefix tokens and
  the prose as content words (:func:`mathsearch.text.analysis.words`): fastText sees math and text
  in their order.  The seed lower-cases words and upper-cases math tokens to tell their subwords
  apart (4.1); our labels carry a type prefix (``V!``, ``N!``, ``O!``, ``U!``) that does the same.
* :func:`mterm_tokens`: MIaS M-terms (every subexpression, and with unification each with
  variables renamed and numbers made ``const``), each hashed to one whitespace-free index token
  whose first letter says whether it is unified (``u``) or not (``m``).
"""

from __future__ import annotations

import hashlib
import json
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...errors import InputError

MIRMU_DIR = "mirmu"
MANIFEST = "manifest.json"
TRAINED_ON = "the collection's posts only (no topics, no judgements)"


def artifact_dir(index_dir: str | Path, name: str) -> Path:
    return Path(index_dir) / MIRMU_DIR / name


def build_config(name: str, path: str = "") -> dict[str, Any]:
    """The ``[build]`` table of the system's packaged TOML (``systems/mirmu/NAME.toml``) or of ``path``."""
    from ...config import read_toml

    return dict(read_toml(path, f"mirmu/{name}.toml").get("build", {}))


def write_manifest(root: Path, name: str, version: int, config: dict[str, Any], counts: dict[str, Any],
                   started: float) -> dict[str, Any]:
    """Written last: its presence says the artifact is whole (the INDEX_KINDS marker)."""
    from ... import __version__

    manifest = {
        "kind": f"mirmu-{name}", "version": version, "mathsearch": __version__,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": config, "seed": config.get("seed"), "trained_on": TRAINED_ON,
        "counts": counts, "seconds": round(time.perf_counter() - started, 2),
    }
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def read_manifest(root: Path, name: str, version: int) -> dict[str, Any]:
    path = root / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise InputError(f"{root.parent.parent} has no {name} artifacts: build them with "
                         f"`mathsearch index COLLECTION --index {root.parent.parent} --with {name}`.") from None
    if manifest.get("version") != version:
        raise InputError(f"the {name} artifacts in {root.parent.parent} are of version {manifest.get('version')}, "
                         f"this mathsearch reads {version}: rebuild with `mathsearch index ... --with {name}`.")
    return manifest


# -- tokens --------------------------------------------------------------------------------------
@lru_cache(maxsize=200_000)
def prefix_tokens(latex: str) -> tuple[str, ...]:
    """The formula in prefix notation (seed 2.1), one token a node."""
    from ...formula import parse_latex, prefix

    return tuple(prefix(parse_latex(latex).opt).split())


def mixed_tokens(text: str) -> list[str]:
    """Words and formulae (as prefix tokens) of plain text with ``$LaTeX$``, in their order."""
    from ...text.analysis import words
    from ...text.dollar_math import find_math

    if "$" not in text and "\\(" not in text and "\\[" not in text:
        return words(text)
    out: list[str] = []
    pos = 0
    for start, end, latex in find_math(text, is_html=False):
        out.extend(words(text[pos:start]))
        out.extend(prefix_tokens(latex))
        pos = end
    out.extend(words(text[pos:]))
    return out


def _is_unified(term: str) -> bool:
    return any(t == "const" or (t.startswith("id") and t[2:].isdigit()) for t in term.split())


def _hashed(term: str) -> str:
    return hashlib.blake2b(term.encode("utf-8"), digest_size=8).hexdigest()


@lru_cache(maxsize=200_000)
def mterm_tokens(latex: str, unify: bool = True, max_tokens: int = 128) -> tuple[str, ...]:
    """M-terms of one formula (:func:`mathsearch.formula.subexpression_terms`) as index tokens:
    ``m`` + hash for a subexpression as written, ``u`` + hash for a unified one."""
    from ...formula import parse_latex, subexpression_terms

    terms = subexpression_terms(parse_latex(latex).opt, unify=unify, max_tokens=max_tokens)
    return tuple(("u" if _is_unified(t) else "m") + _hashed(t) for t in terms)


def visual_formulae(store) -> tuple[list[int], list[int], list[str], list[list[int]]]:
    """The Task 2 retrieval units: one per visual formula of a question or an answer (comments left
    out, seed 4.4): ``(representative instance ids (the first), their posts, their LaTeX, the answers
    holding each)``; formulae without a visual id are grouped by their LaTeX."""
    row_of: dict[str, int] = {}
    instance_ids: list[int] = []
    post_ids: list[int] = []
    latex: list[str] = []
    answers: list[list[int]] = []
    for f in store.iter_formulas(("question", "answer")):
        key = f.visual_id or f"latex:{f.latex}"
        row = row_of.get(key)
        if row is None:
            row = row_of[key] = len(instance_ids)
            instance_ids.append(f.formula_id)
            post_ids.append(f.post_id)
            latex.append(f.latex)
            answers.append([])
        if f.kind == "answer" and (not answers[row] or answers[row][-1] != f.post_id):
            answers[row].append(f.post_id)
    return instance_ids, post_ids, latex, answers
