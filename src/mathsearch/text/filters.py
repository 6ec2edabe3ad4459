"""Filters people know from Stack Exchange's search, written in the query: ``[tag]``, ``-[tag]``,
``score:N``, ``answers:N``, ``is:accepted``.

:func:`parse_filters` takes them out of a query and returns the rest (what is searched) and a
:class:`QueryFilters`; the searcher keeps the hits they allow (:mod:`mathsearch.searcher`).  A
``[...]`` is a tag only where it stands alone between spaces and reads as a tag name (letters,
digits, ``-.+#``, at least two characters, a letter among them): ``[0, 1]``, ``x in [a,b]`` and
anything between dollars stay maths.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .dollar_math import find_math

_FILTER = re.compile(
    r"(?<!\S)(?:(?P<neg>-)?\[(?P<tag>[A-Za-z0-9][A-Za-z0-9.+#-]*[A-Za-z0-9+#]?)\]"
    r"|score:(?P<score>-?\d{1,9})|answers:(?P<answers>\d{1,9})|is:(?P<is>accepted|answer|question))(?!\S)",
    re.I,
)


# A word shaped like a filter that is not one ("score:abc", "answers:-1", "is:closed"): searched as
# words, and said so (QueryFilters.unread)
_NEAR_FILTER = re.compile(r"(?<!\S)(?:score|answers|is):\S*", re.I)
_SAID_FORM = {"score": "score:N takes a whole number, as score:2 or score:-1",
              "answers": "answers:N takes a whole number, as answers:2", "is": "of is: there is is:accepted"}


@dataclass(frozen=True, slots=True)
class QueryFilters:
    """What a query asks its hits' threads and posts to be: every tag of ``tags`` and none of
    ``not_tags`` on the thread; at least ``min_score`` (the post's score), at least ``min_answers``
    answers in the thread; with ``accepted``, the answer its thread's asker accepted."""

    tags: tuple[str, ...] = ()
    not_tags: tuple[str, ...] = ()
    min_score: int | None = None
    min_answers: int | None = None
    accepted: bool = False
    unread: tuple[str, ...] = ()  # words shaped like a filter that are none ("score:abc"): searched as words

    def __bool__(self) -> bool:  # the filters that narrow the hits (``unread`` narrows nothing)
        return bool(self.tags or self.not_tags or self.min_score is not None or self.min_answers is not None
                    or self.accepted)

    def describe(self) -> str:
        """The filters as typed (for a line on the page): ``[calculus] -[limits] score:2``."""
        parts = [f"[{t}]" for t in self.tags] + [f"-[{t}]" for t in self.not_tags]
        if self.min_score is not None:
            parts.append(f"score:{self.min_score}")
        if self.min_answers is not None:
            parts.append(f"answers:{self.min_answers}")
        if self.accepted:
            parts.append("is:accepted")
        return " ".join(parts)

    def unread_notices(self) -> list[str]:
        """A line for each word shaped like a filter that is none: what it was taken for, and the form."""
        return [f"{word} is not a filter ({_SAID_FORM[word.split(':', 1)[0].lower()]}); it was searched as words."
                for word in self.unread]


def _is_tag(name: str) -> bool:
    return len(name) >= 2 and any(c.isalpha() for c in name)


def parse_filters(query: str) -> tuple[str, QueryFilters]:
    """``(the query without its filters, the filters)``; a query without any is returned as it is.

    Examples:
        >>> parse_filters("harmonic series [sequences-and-series] -[calculus] answers:2")
        ('harmonic series', QueryFilters(tags=('sequences-and-series',), not_tags=('calculus',), min_score=None, min_answers=2, accepted=False, unread=()))
        >>> parse_filters("x in [0, 1] and $[a]$")[1]
        QueryFilters(tags=(), not_tags=(), min_score=None, min_answers=None, accepted=False, unread=())
    """
    if "[" not in query and ":" not in query:
        return query, QueryFilters()
    maths = [(s, e) for s, e, _ in find_math(query, is_html=False)]
    unread = tuple(m.group() for m in _NEAR_FILTER.finditer(query)
                   if not _FILTER.fullmatch(m.group()) and not any(s <= m.start() < e for s, e in maths)
                   and m.group().lower() not in ("is:answer", "is:question"))
    tags: list[str] = []
    not_tags: list[str] = []
    min_score = min_answers = None
    accepted = False
    kept: list[str] = []
    pos = 0
    for m in _FILTER.finditer(query):
        if any(s <= m.start() < e for s, e in maths):
            continue
        if m.group("tag") is not None:
            tag = m.group("tag").lower()
            if not _is_tag(tag):
                continue
            (not_tags if m.group("neg") else tags).append(tag)
        elif m.group("score") is not None:
            min_score = int(m.group("score"))
        elif m.group("answers") is not None:
            min_answers = int(m.group("answers"))
        elif m.group("is").lower() == "accepted":
            accepted = True
        else:
            continue  # is:answer / is:question: every Task 1 hit is an answer; kept as words
        kept.append(query[pos:m.start()])
        pos = m.end()
    if pos == 0:
        return query, QueryFilters(unread=unread)
    kept.append(query[pos:])
    rest = " ".join(" ".join(kept).split())
    return rest, QueryFilters(tuple(dict.fromkeys(tags)), tuple(dict.fromkeys(not_tags)), min_score, min_answers,
                              accepted, unread)
