"""Readers for the Posts, Comments and PostLinks XML files (ARQMath V1.x and Stack Exchange dumps).

Both share one row layout; attributes that a file lacks stay ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

from ..records import Comment, LinkType, Post, PostLink, PostType, ReadReport
from .xml_rows import iter_xml_rows

_TAG = re.compile(r"<([^<>]+)>")


def parse_tags(value: str | None) -> tuple[str, ...]:
    """``<calculus><derivatives>`` (dumps), ``|calculus|derivatives|`` (Stack Exchange dumps since
    2024) or ``calculus, derivatives`` (topics) -> tuple of tags."""
    if not value:
        return ()
    found = _TAG.findall(value)
    if found:
        return tuple(t.strip() for t in found if t.strip())
    return tuple(t.strip() for t in re.split(r"[|,\s]+", value) if t.strip())


def _int(attrs: dict[str, str], name: str) -> int | None:
    value = attrs.get(name)
    if value is None or value == "":
        return None
    return int(value)


def iter_posts(
    path: str | Path, report: ReadReport | None = None, progress: Callable[[int], None] | None = None
) -> Iterator[Post]:
    """Questions and answers of a Posts file.

    Rows of other post types (tag wikis, ...) are counted under ``skipped`` as
    ``"other post type"``; rows without a valid Id, PostTypeId, Body or (answers)
    ParentId are reported as malformed.
    """
    report = report if report is not None else ReadReport(source=str(path))
    for line, a in iter_xml_rows(path, report, progress):
        where = f"{path}:{line}"
        try:
            post_id = _int(a, "Id")
            type_id = _int(a, "PostTypeId")
            if post_id is None or type_id is None:
                report.skip("post row without Id or PostTypeId", where)
                continue
            if type_id not in (1, 2):
                report.skip("other post type", where)
                continue
            parent_id = _int(a, "ParentId")
            if type_id == 2 and parent_id is None:
                report.skip("answer without ParentId", where)
                continue
            post = Post(
                post_id=post_id,
                post_type=PostType(type_id),
                body=a.get("Body", ""),
                thread_id=post_id if type_id == 1 else parent_id,  # type: ignore[arg-type]
                parent_id=parent_id,
                title=a.get("Title") if type_id == 1 else None,
                tags=parse_tags(a.get("Tags")),
                score=_int(a, "Score"),
                creation_date=a.get("CreationDate"),
                answer_count=_int(a, "AnswerCount"),
                comment_count=_int(a, "CommentCount"),
                view_count=_int(a, "ViewCount"),
                favorite_count=_int(a, "FavoriteCount"),
                accepted_answer_id=_int(a, "AcceptedAnswerId"),
                owner_user_id=_int(a, "OwnerUserId"),
                line=line,
            )
        except ValueError as exc:
            report.skip("post row with a non-numeric field", f"{where} ({exc})")
            continue
        report.rows += 1
        yield post


def iter_comments(
    path: str | Path, report: ReadReport | None = None, progress: Callable[[int], None] | None = None
) -> Iterator[Comment]:
    report = report if report is not None else ReadReport(source=str(path))
    for line, a in iter_xml_rows(path, report, progress):
        where = f"{path}:{line}"
        try:
            comment_id = _int(a, "Id")
            post_id = _int(a, "PostId")
            if comment_id is None or post_id is None:
                report.skip("comment row without Id or PostId", where)
                continue
            comment = Comment(
                comment_id=comment_id,
                post_id=post_id,
                text=a.get("Text", ""),
                score=_int(a, "Score"),
                creation_date=a.get("CreationDate"),
                user_id=_int(a, "UserId"),
                line=line,
            )
        except ValueError as exc:
            report.skip("comment row with a non-numeric field", f"{where} ({exc})")
            continue
        report.rows += 1
        yield comment


def iter_post_links(
    path: str | Path, report: ReadReport | None = None, progress: Callable[[int], None] | None = None
) -> Iterator[PostLink]:
    """Links between questions: LinkTypeId 3 = duplicate, 1 = related (others are skipped and counted)."""
    report = report if report is not None else ReadReport(source=str(path))
    for line, a in iter_xml_rows(path, report, progress):
        where = f"{path}:{line}"
        try:
            link_id = _int(a, "Id")
            post_id = _int(a, "PostId")
            related = _int(a, "RelatedPostId")
            type_id = _int(a, "LinkTypeId")
            if None in (link_id, post_id, related, type_id):
                report.skip("link row without Id, PostId, RelatedPostId or LinkTypeId", where)
                continue
            if type_id not in (1, 3):
                report.skip("other link type", where)
                continue
            link = PostLink(link_id, post_id, related, LinkType(type_id), a.get("CreationDate"), line)  # type: ignore[arg-type]
        except ValueError as exc:
            report.skip("link row with a non-numeric field", f"{where} ({exc})")
            continue
        report.rows += 1
        yield link
