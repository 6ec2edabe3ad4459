"""Extractive answers: which retrieved answer post to draw from, and what of it to keep.

Given a Task 1 ranking, :func:`choose` scores the top ``k`` answer posts with what is known of
each: its retrieval score (relative to the first hit's), its rank, how much of the question's
math it holds (the topic's formulae exactly, or their symbols and symbol pairs), how many of the
question's words, whether it fits in the budget whole, and the community's votes and the
accepted flag where the collection records them.  :func:`extract` then keeps the most useful
pieces of the chosen post (:mod:`.passages`): a piece that holds the topic's formula, or one
close to it, is worth more, and so is one that shares the question's words.

Consensus (:func:`agreement`): an answer that says what the other top answers say is more likely
a good one (the centroid / LexRank idea of multi-document summarisation).  Each of the top ``k``
candidates is compared with the other answers among the ranking's top ``consensus`` by token F1
over math-aware tokens, the j-th weighted by 1 / (1 + j); with ``consensus`` set, :func:`choose`
orders the candidates by reciprocal-rank fusion of the ranking's order and the agreement's order.

Condensation by agreement (:func:`agreeing_pieces`, ``condense`` > 0, off by default): with the
consensus choice, the chosen answer is cut to what the other top answers also say, whether or not
it fits the budget.  It raises LO (README, Task 3) but can drop what the kept text needs (a
definition, the setting of a proof) or stop after a one-sentence opening, so ``extract`` keeps
answers that fit whole unless asked.  Its opening piece is kept; then, one at a time, the piece
(sentence, displayed equation, list item or code block, kept whole; a piece ending with ":"
together with the piece it announces) that most raises the answer's token F1 with its
``condense`` peers (the other answers of the ranking's top
``consensus`` that fit in 1,200 characters, the j-th weighted 1 / (1 + j)), while the F1 rises and
the text fits, then (``floor``) the best of the rest until the text holds ``floor`` characters;
the pieces stay in the post's order.  A digression, a remark on a comment or a step
the others do without goes; what they share stays.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..text.analysis import formula_key, math_tokens, split_math, words
from ..text.tokenize import MathRegexTokenizer
from .passages import MAX_ANSWER_CHARS, Piece, compose, condense, pieces


@dataclass(frozen=True)
class QueryProfile:
    """What of a question an answer is matched against: its words and its formulae."""

    words: frozenset[str]
    title_words: frozenset[str]
    formula_keys: frozenset[str]
    math: frozenset[str]  # symbols and symbol pairs of the question's formulae

    @classmethod
    def of(cls, title: str, question: str = "") -> QueryProfile:
        _, formulae = split_math(f"{title}\n{question}")
        return cls(
            frozenset(words(f"{title} {question}")),
            frozenset(words(title)),
            frozenset(formula_key(f) for f in formulae),
            frozenset(t for f in formulae for t in math_tokens(f) if not t.startswith("f:")),
        )

    def formula_match(self, formulae: Sequence[str]) -> tuple[bool, float]:
        """(holds one of the question's formulae exactly, share of the question's math tokens it holds)."""
        if not formulae or not self.math:
            return False, 0.0
        exact = any(formula_key(f) in self.formula_keys for f in formulae)
        tokens = {t for f in formulae for t in math_tokens(f)}
        return exact, len(self.math & tokens) / len(self.math)

    def word_match(self, text: str) -> float:
        """Share of the question's words that ``text`` holds."""
        if not self.words:
            return 0.0
        return len(self.words & set(words(text))) / len(self.words)


@dataclass(frozen=True)
class Candidate:
    """One retrieved answer post and what the choice weighs."""

    post_id: int
    rank: int  # 0 = the ranking's first hit
    score: float  # retrieval score relative to the first hit's (1.0 for the first)
    text: str
    body: str
    votes: int | None = None
    accepted: bool | None = None
    pieces: tuple[Piece, ...] = ()
    exact_formula: bool = False
    math_share: float = 0.0
    word_share: float = 0.0
    dense: float | None = None  # cosine of the question's and the answer's vectors, where the index has them
    peers: tuple[str, ...] = ()  # texts of the other top answers its pieces are condensed to agree with


@dataclass(frozen=True)
class ChoiceWeights:
    """Weights of :func:`choose`.  The ``extract`` system's values are in ``systems/task3.toml``: there
    k = 1 (the first hit), since no rule chosen on one year of the sample beat the first hit on the
    other in both directions (``bench/tune_task3.py``); the weights here are the linear rule's, the
    best of the grid over 2020 + 2021 with an earlier ``ours`` as the ranking (``extract:k=2``).
    Cross-year on the packaged ranking, tuned on 2020 the rule moves 2021's AR_src by +0.035 from the
    first hit; tuned on 2021 (another rule), 2020's by -0.064: the sample's ~50 topics a year do not
    support more than a small nudge away from the ranking's order."""

    k: int = 2  # candidates: the top k of the ranking
    retrieval: float = 1.0  # relative retrieval score
    rank: float = 0.01  # per rank below the first
    formula: float = 0.0  # share of the question's math tokens held
    exact: float = 0.0  # holds one of the question's formulae exactly
    words: float = 0.1  # share of the question's words held
    too_long: float = 0.05  # longer than the budget (it has to be cut)
    votes: float = 0.0  # log(1 + votes), where the collection has votes
    accepted: float = 0.0  # the accepted answer, where the collection says
    dense: float = 0.0  # cosine similarity to the question, where the index has vectors
    consensus: int = 0  # > 0: fuse the ranking's order with agreement among its top `consensus` answers
    consensus_k: int = 4  # candidates when `consensus` is set: the ranking's top consensus_k
    condense: int = 0  # > 0 (with `consensus`): cut the chosen answer to what this many peers also say


@dataclass(frozen=True)
class PieceWeights:
    """Weights of a piece when a post is longer than the budget."""

    formula: float = 1.0  # share of the question's math tokens the piece holds
    exact: float = 1.0  # holds one of the question's formulae exactly
    words: float = 1.0  # question words held, per square root of the piece's words
    position: float = 0.5  # 1 / (1 + index): earlier pieces state the answer
    lead: int = 1  # opening pieces always kept
    floor: int = 0  # condensation (``condense`` > 0) keeps adding pieces until the answer holds this many characters


def candidates(store, ranking: Sequence[tuple[str, float]], profile: QueryProfile, k: int,
               accepted_ids: set[int] | None = None, dense: Mapping[int, float] | None = None) -> list[Candidate]:
    """The top ``k`` hits of ``ranking`` (``(id, score)`` in ranking order) read from the store;
    ``dense``: the question's cosine similarity to answers, where known."""
    top = ranking[:k]
    if not top:
        return []
    posts = store.posts([d for d, _ in top])
    first = top[0][1]
    out = []
    for rank, (doc, score) in enumerate(top):
        post = posts.get(int(doc))
        if post is None or not post.text.strip():
            continue
        parts = tuple(pieces(post.body)) or ()
        formulae = split_math(post.text)[1]
        exact, share = profile.formula_match(formulae)
        rel = score / first if first > 0 else (1.0 if rank == 0 else 0.0)
        accepted = (post.post_id in accepted_ids) if accepted_ids is not None else None
        out.append(Candidate(post.post_id, rank, rel, post.text, post.body, post.score, accepted, parts,
                             exact, share, profile.word_match(post.text),
                             dense.get(post.post_id) if dense is not None else None))
    return out


def choice_score(c: Candidate, w: ChoiceWeights, budget: int = MAX_ANSWER_CHARS) -> float:
    s = w.retrieval * c.score - w.rank * c.rank + w.formula * c.math_share + w.words * c.word_share
    if c.exact_formula:
        s += w.exact
    if len(c.text) > budget:
        s -= w.too_long
    if c.votes is not None and w.votes:
        s += w.votes * math.log1p(max(c.votes, 0))
    if c.accepted and w.accepted:
        s += w.accepted
    if c.dense is not None and w.dense:
        s += w.dense * c.dense
    return s


_TOKENIZER = MathRegexTokenizer()
RRF_K = 60  # the usual constant of reciprocal-rank fusion (Cormack et al. 2009)
# Peers of the condensation when asked (extract:condense=4): chosen on 2020 alone (2, 3, 4, 5, 6, 9
# peers: LO 0.473-0.482, best at 4), 2021 measured out of sample (README, Task 3).
CONDENSE_PEERS = 4


def agreement_tokens(text: str) -> list[str]:
    """Words, numbers, LaTeX control sequences and single symbols, lower-cased: the evaluation's
    math-aware regex tokenizer.  Compared with the index's analysis (stop words dropped, formulae as
    symbol pairs) it keeps the function words and the layout symbols; on the sample only these
    tokens gave a consensus that held in both years."""
    return _TOKENIZER.tokenize(text)


def token_f1(a: Counter, b: Counter) -> float:
    """F1 of two token multisets (2 * common / (|a| + |b|))."""
    total = sum(a.values()) + sum(b.values())
    return 2 * sum((a & b).values()) / total if total else 0.0


def agreement(cands: Sequence[Candidate], k: int, depth: int) -> list[float]:
    """For each of the first ``k`` of ``cands`` (ranking order), its mean token F1 with the other
    candidates among the first ``depth``, the j-th (from 0) weighted by 1 / (1 + j)."""
    bags = [Counter(agreement_tokens(c.text)) for c in cands[: max(k, depth)]]
    out = []
    for i in range(min(k, len(cands))):
        num = den = 0.0
        for j in range(min(depth, len(cands))):
            if j != i:
                w = 1.0 / (1 + j)
                num += w * token_f1(bags[i], bags[j])
                den += w
        out.append(num / den if den else 0.0)
    return out


def choose(cands: Sequence[Candidate], w: ChoiceWeights, budget: int = MAX_ANSWER_CHARS) -> list[Candidate]:
    """``cands`` best first (ties: the ranking's order).

    With ``w.consensus``, ``cands`` are the ranking's top answers in its order: the first
    ``w.consensus_k`` are ordered by reciprocal-rank fusion of the ranking's order and their
    :func:`agreement` with the first ``w.consensus``; the others follow by :func:`choice_score`.
    """
    if not w.consensus:
        return sorted(cands, key=lambda c: (-choice_score(c, w, budget), c.rank))
    k = min(w.consensus_k, len(cands))
    agree = agreement(cands, k, w.consensus)
    by_agreement = sorted(range(k), key=lambda i: (-agree[i], i))
    place = {i: r for r, i in enumerate(by_agreement)}
    fused = sorted(range(k), key=lambda i: (-(1 / (RRF_K + i) + 1 / (RRF_K + place[i])), i))
    rest = sorted(cands[k:], key=lambda c: (-choice_score(c, w, budget), c.rank))
    if w.condense <= 0:  # off (a negative count would slice peers from the wrong end)
        return [cands[i] for i in fused] + rest
    return [with_peers(cands[i], cands[: w.consensus], w.condense) for i in fused] + rest


def with_peers(c: Candidate, top: Sequence[Candidate], n: int = CONDENSE_PEERS) -> Candidate:
    """``c`` with the texts of its first ``n`` peers among ``top`` (ranking order, ``c`` left out):
    the answers that fit in 1,200 characters (as the answers an answer is compared with do), all of
    them where none fits."""
    others = [p for p in top if p.post_id != c.post_id]
    fitting = [p.text for p in others if len(p.text) <= MAX_ANSWER_CHARS] or [p.text for p in others]
    return dataclasses.replace(c, peers=tuple(fitting[:n]))


def announced_units(parts: Sequence[Piece]) -> list[list[Piece]]:
    """``parts`` in post order as the units an answer keeps or drops whole: a piece that ends with
    ":" announces the next one ("We have:" and its equation, "Hint:" and the hint) and goes with it."""
    units: list[list[Piece]] = []
    for p in parts:
        if units and units[-1][-1].text.rstrip().endswith(":"):
            units[-1].append(p)
        else:
            units.append([p])
    return units


def agreeing_pieces(parts: Sequence[Piece], peers: Sequence[str], budget: int = MAX_ANSWER_CHARS,
                    lead: int = 1, floor: int = 0) -> list[Piece]:
    """The pieces of ``parts`` to keep, in post order: the units (:func:`announced_units`) of the
    first ``lead`` pieces, then greedily the unit that most raises the weighted token F1 of the kept
    text with ``peers`` (the j-th weighted 1 / (1 + j)), while it rises and the text fits in
    ``budget``; then, while the text is shorter than ``floor`` characters, the unit that leaves the
    F1 highest, risen or not (an answer of one or two sentences loses the steps it needs).  [] when
    the opening does not fit or there is nothing to agree with."""
    if not parts or not peers:
        return []
    bags = [Counter(agreement_tokens(p)) for p in peers]
    weights = [1.0 / (1 + j) for j in range(len(bags))]
    total = sum(weights)

    def value(chosen: Sequence[Piece]) -> float:
        bag = Counter(agreement_tokens(compose(chosen)))
        return sum(wj * token_f1(bag, b) for wj, b in zip(weights, bags, strict=True)) / total

    def joined(units: Sequence[list[Piece]]) -> list[Piece]:
        return sorted((p for u in units for p in u), key=lambda q: q.index)

    units = announced_units(parts)
    opening = {p.index for p in parts[:lead]}
    kept = [u for u in units if any(p.index in opening for p in u)]
    rest = [u for u in units if not any(p.index in opening for p in u)]
    if not kept or len(compose(joined(kept))) > budget:
        return []

    def best_unit(above: float) -> tuple[list[Piece] | None, float]:
        """The unit of ``rest`` that leaves the F1 highest (above ``above``) with the text in budget."""
        best, best_value = None, above
        for u in rest:
            trial = joined([*kept, u])
            if len(compose(trial)) > budget:
                continue
            v = value(trial)
            if v > best_value:
                best, best_value = u, v
        return best, best_value

    current = value(joined(kept))
    while rest:  # while the F1 rises
        best, current = best_unit(current)
        if best is None:
            break
        kept.append(best)
        rest.remove(best)
    while rest and len(compose(joined(kept))) < floor:  # then to the floor, risen or not
        best, _ = best_unit(-1.0)
        if best is None:
            break
        kept.append(best)
        rest.remove(best)
    return joined(kept)


def piece_value(p: Piece, profile: QueryProfile, w: PieceWeights) -> float:
    exact, share = profile.formula_match(p.formulae)
    prose = split_math(p.text)[0]
    terms = words(prose)
    held = len(profile.words & set(terms)) / math.sqrt(len(terms)) if terms else 0.0
    return w.formula * share + (w.exact if exact else 0.0) + w.words * held + w.position / (1 + p.index)


def extract(c: Candidate, profile: QueryProfile, w: PieceWeights | None = None,
            budget: int = MAX_ANSWER_CHARS, prefix: bool = False) -> str:
    """The text of ``c`` in at most ``budget`` characters: with peers (the consensus choice), the
    pieces that agree with them (:func:`agreeing_pieces`); else whole when it fits, else its best
    pieces (``prefix``: its longest opening that fits)."""
    w = w or PieceWeights()
    parts = c.pieces or (Piece(" ".join(c.text.split()), "sentence", 0, 0),)
    if c.peers and not prefix and len(parts) > 1:
        kept = agreeing_pieces(parts, c.peers, budget, w.lead, w.floor)
        if kept:
            return compose(kept)
    value = None if prefix else (lambda p: piece_value(p, profile, w))
    return condense(parts, budget, value, w.lead)
