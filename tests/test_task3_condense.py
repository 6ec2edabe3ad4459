"""Task 3: the chosen answer condensed to what the other top answers also say (``condense`` > 0
with the consensus choice; off by default):
the opening kept, a digression dropped, whole pieces in the post's order, the budget held, a floor
of characters kept, and nothing changed without peers."""

from __future__ import annotations

import dataclasses

from mathsearch.answers.extract import (
    CONDENSE_PEERS,
    Candidate,
    ChoiceWeights,
    QueryProfile,
    agreeing_pieces,
    announced_units,
    choose,
    extract,
)
from mathsearch.answers.passages import compose, pieces

PROFILE = QueryProfile.of("Derivative of $x^2$", "What is the derivative of $x^2$?")
BODY = (
    "<p>Write $f(x)=x^2$. "
    "Despite being down-voted on this one, I am sticking to my guns, whatever the comments say. "
    "By the power rule the derivative of $x^n$ is $n x^{n-1}$, so for $x^2$ it is $2x$.</p>"
    "<ul><li>Check: the slope of $x^2$ at $x=1$ is $2$.</li></ul>"
)
PEERS = (
    "By the power rule, the derivative of $x^2$ is $2x$.",
    "Use the power rule: the derivative of $x^n$ is $n x^{n-1}$, so the derivative of $x^2$ is $2x$.",
    "The slope of $x^2$ at $x$ is $2x$: the derivative of $x^2$ is $2x$ by the power rule.",
)


def _cand(pid: int, rank: int, text: str, body: str = "", peers: tuple[str, ...] = ()) -> Candidate:
    body = body or f"<p>{text}</p>"
    return Candidate(pid, rank, 1.0 - 0.01 * rank, text, body, pieces=tuple(pieces(body)), peers=peers)


def test_agreeing_pieces_drop_the_digression_and_keep_the_opening_in_post_order():
    parts = pieces(BODY)
    assert len(parts) == 4
    kept = agreeing_pieces(parts, PEERS)
    texts = [p.text for p in kept]
    assert texts[0] == parts[0].text  # the opening is always kept
    assert not any("down-voted" in t for t in texts)  # shares nothing the others say
    assert any("power rule" in t for t in texts)  # what they share stays
    assert [p.index for p in kept] == sorted(p.index for p in kept)  # the post's order
    assert all(p in parts for p in kept)  # whole pieces, never cut
    assert agreeing_pieces(parts, ()) == [] and agreeing_pieces([], PEERS) == []


def test_a_piece_ending_with_a_colon_goes_with_the_piece_it_announces():
    body = ("<p>Write $f(x)=x^2$.</p>"
            "<p>By the power rule, the derivative of $x^2$ is $2x$, as we see from:</p>"
            '<p><span class="math-container" id="1">\\lim_{h\\to 0}\\frac{(x+h)^{2}-x^{2}}{h}=\\lim_{h\\to 0}(2x+h)</span></p>'
            "<p>I am sticking to my guns, whatever the comments say.</p>")
    parts = pieces(body)
    assert [len(u) for u in announced_units(parts)] == [1, 2, 1]
    assert announced_units(parts)[1][1].kind == "display"
    kept = agreeing_pieces(parts, PEERS)
    # The announcement agrees with the peers and the limit does not: alone, the sentence would be
    # kept with its colon dangling; as a unit, both are kept.
    assert parts[1] in kept and parts[2] in kept and parts[3] not in kept


def test_a_floor_keeps_adding_what_agrees_best_until_the_answer_is_long_enough():
    parts = pieces(BODY)
    short = agreeing_pieces(parts, PEERS)
    assert len(short) < len(parts)  # the digression went
    assert agreeing_pieces(parts, PEERS, floor=0) == short
    assert agreeing_pieces(parts, PEERS, floor=len(compose(short))) == short  # already long enough
    whole = agreeing_pieces(parts, PEERS, floor=10_000)
    assert whole == list(parts)  # every piece fits the budget: all of them, in the post's order
    # the floor never breaks the budget: nothing more fits, so nothing more is added
    assert agreeing_pieces(parts, PEERS, len(compose(short)) + 1, floor=10_000) == short


def test_agreeing_pieces_hold_the_budget_and_refuse_an_opening_that_does_not_fit():
    parts = pieces(BODY)
    budget = len(parts[0].text) + 5  # the opening fits, nothing else does
    assert compose(agreeing_pieces(parts, PEERS, budget)) == parts[0].text
    assert agreeing_pieces(parts, PEERS, len(parts[0].text) - 1) == []


def test_extract_condenses_only_with_peers():
    text = compose(pieces(BODY))
    plain = _cand(1, 0, text, BODY)
    assert extract(plain, PROFILE) == text  # it fits: whole, as before
    condensed = extract(dataclasses.replace(plain, peers=PEERS), PROFILE)
    assert condensed != text and "down-voted" not in condensed and condensed.startswith("Write $f(x)=x^2$.")
    assert extract(dataclasses.replace(plain, peers=PEERS), PROFILE, prefix=True) == text  # first-hit: unchanged
    # An opening longer than the budget: the usual cut, never an empty or over-long answer.
    cut = extract(dataclasses.replace(plain, peers=PEERS), PROFILE, budget=30)
    assert 0 < len(cut) <= 30


def test_consensus_choice_gives_peers_that_fit_and_leaves_the_chosen_answer_out():
    long_text = "The derivative of $x^2$ is $2x$. " * 40  # over 1,200 characters: not a peer while others fit
    texts = [PEERS[0], long_text, PEERS[1], PEERS[2], "Apples grow on trees.", "The derivative is $2x$.",
             "Power rule: $2x$."]
    cands = [_cand(i + 1, i, t) for i, t in enumerate(texts)]
    w = ChoiceWeights(k=4, rank=0, words=0, too_long=0, consensus=7, consensus_k=3, condense=CONDENSE_PEERS)
    order = choose(cands, w)
    for c in order[:3]:
        assert 0 < len(c.peers) <= CONDENSE_PEERS and c.text not in c.peers and long_text not in c.peers
        others = [t for t in texts if t != c.text and t != long_text]
        assert list(c.peers) == others[:CONDENSE_PEERS]  # the ranking's order
    assert all(not c.peers for c in order[3:])
    assert all(not c.peers for c in choose(cands, dataclasses.replace(w, consensus=0)))
    # off unless asked: the consensus choice alone leaves answers that fit whole
    assert [c.post_id for c in choose(cands, dataclasses.replace(w, condense=0))] == [c.post_id for c in order]
    assert all(not c.peers for c in choose(cands, dataclasses.replace(w, condense=0)))
    assert all(not c.peers for c in choose(cands, dataclasses.replace(w, condense=-2)))  # negative: off too
