"""A formula as the index sees it: per token family, hashed symbol-pair tuples and their counts."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ...formula import Analysis, FormulaAnalyzer, leaf_paths

_VAR = re.compile(r"V![^\t]*")


class TokenHasher:
    """``family + token`` -> 64-bit id, cached (the tuple vocabulary is far smaller than its uses)."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def __call__(self, key: str) -> int:
        h = self._cache.get(key)
        if h is None:
            h = int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")
            if len(self._cache) < 2_000_000:
                self._cache[key] = h
        return h

    def many(self, family: str, tokens: list[str]) -> np.ndarray:
        """``[self(family + t) for t in tokens]`` as uint64, each distinct token hashed once."""
        ids = dict.fromkeys(tokens)
        cache = self._cache
        for t in ids:
            key = family + t
            h = cache.get(key)  # the cache read here, not through __call__: most tokens are known
            ids[t] = h if h is not None else self(key)
        return np.fromiter(map(ids.__getitem__, tokens), dtype=np.uint64, count=len(tokens))


def _bag(tokens: Iterable[str]) -> dict[str, int]:
    """Each token's count, in the order of first occurrence (as a ``Counter``: a formula's few
    dozen tokens cost less counted here than a ``Counter``'s set-up, ~30 us, four times a formula)."""
    bag: dict[str, int] = {}
    for t in tokens:
        bag[t] = bag.get(t, 0) + 1
    return bag


def family_tokens(analysis: Analysis) -> dict[str, dict[str, int]]:
    """The token bags of each family of one analysed formula: token -> count, first occurrence first."""
    slt_tokens = analysis.slt_tokens
    return {
        "s": _bag(slt_tokens),
        "o": _bag(analysis.opt_tokens),
        "u": _bag([_VAR.sub("V!", t) if "V!" in t else t for t in slt_tokens]),  # the test skips most regex calls
        "p": _bag(leaf_paths(analysis.parsed.opt)),
    }


@dataclass(slots=True)
class QueryTokens:
    """A query formula as the index sees it: per family, token hashes and their frequencies."""

    hashes: dict[str, np.ndarray]
    tfs: dict[str, np.ndarray]
    vkey: int
    n_nodes: int


def vkey_int(key: str) -> int:
    try:
        return int(key, 16) & 0xFFFFFFFFFFFFFFFF
    except ValueError:
        return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def query_tokens(analyzer: FormulaAnalyzer, latex: str, hasher: TokenHasher) -> QueryTokens:
    a = analyzer.analyze(latex)
    hashes, tfs = {}, {}
    for fam, bag in family_tokens(a).items():
        hashes[fam] = np.fromiter((hasher(fam + t) for t in bag), dtype=np.uint64, count=len(bag))
        tfs[fam] = np.fromiter(bag.values(), dtype=np.float64, count=len(bag))
    return QueryTokens(hashes, tfs, vkey_int(a.visual_key), a.n_nodes)


