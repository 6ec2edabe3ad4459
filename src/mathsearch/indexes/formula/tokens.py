"""A formula as the index sees it: per token family, hashed symbol-pair tuples and their counts."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ...formula import Analysis, FormulaAnalyzer, leaf_paths

_VAR = re.compile(r"V![^\t]*")


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class TokenHasher:
    """``family + token`` -> 64-bit id, cached (the tuple vocabulary is far smaller than its uses)."""

    LIMIT = 2_000_000  # cached ids, over all families

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}
        self._by_family: dict[str, dict[str, int]] = {}  # many()'s: token -> id, no key built per token
        self._cached = 0

    def __call__(self, key: str) -> int:
        h = self._cache.get(key)
        if h is None:
            h = _hash(key)
            if len(self._cache) < self.LIMIT:
                self._cache[key] = h
        return h

    def many(self, family: str, tokens: list[str]) -> np.ndarray:
        """``[self(family + t) for t in tokens]`` as uint64, each distinct token hashed once."""
        known = self._by_family.get(family)
        if known is None:
            known = self._by_family[family] = {}
        get = known.get
        ids = [get(t) for t in tokens]  # one dict read per token: most are known
        if None in ids:
            fresh: dict[str, int] = {}  # unknown ones once each, even when the cache is full
            for i, h in enumerate(ids):
                if h is None:
                    t = tokens[i]
                    h = fresh.get(t)
                    if h is None:
                        h = fresh[t] = _hash(family + t)
                    ids[i] = h
            room = self.LIMIT - self._cached
            if room > 0:
                for t, h in list(fresh.items())[:room]:
                    known[t] = h
                self._cached += min(room, len(fresh))
        return np.array(ids, dtype=np.uint64)


def _bag(tokens: Iterable[str]) -> dict[str, int]:
    """Each token's count, in the order of first occurrence (as a ``Counter``: a formula's few
    dozen tokens cost less counted here than a ``Counter``'s set-up, ~30 us, four times a formula)."""
    bag: dict[str, int] = {}
    for t in tokens:
        bag[t] = bag.get(t, 0) + 1
    return bag


# SLT token -> the same with every variable unified ("V!x" -> "V!"): a regular expression per token
# took half of the bags' time; the tokens repeat across formulae, so each is rewritten once.
_UNIFIED: dict[str, str] = {}
_UNIFIED_LIMIT = 500_000


def _unified_bag(tokens: Iterable[str]) -> dict[str, int]:
    """:func:`_bag` of the tokens with their variables unified."""
    bag: dict[str, int] = {}
    cache = _UNIFIED
    for t in tokens:
        u = cache.get(t)
        if u is None:
            u = _VAR.sub("V!", t) if "V!" in t else t
            if len(cache) < _UNIFIED_LIMIT:
                cache[t] = u
        bag[u] = bag.get(u, 0) + 1
    return bag


def family_tokens(analysis: Analysis) -> dict[str, dict[str, int]]:
    """The token bags of each family of one analysed formula: token -> count, first occurrence first."""
    slt_tokens = analysis.slt_tokens
    return {
        "s": _bag(slt_tokens),
        "o": _bag(analysis.opt_tokens),
        "u": _unified_bag(slt_tokens),
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


