"""The assessment page (``/assess``) and its JSON API (``/api/assess/...``) over one assessment database.

    make_router(index_dir=INDEX_DIR, pool_db=POOL_DB) -> fastapi.APIRouter

Mounted by :func:`mathsearch.web.app.create_app` when ``mathsearch serve`` is given ``--pool``.
The page shows the topic on the left and the candidate on the right: an answer (with the question
of its thread above it) or the post holding a formula instance (the instance marked), or a Task 3
answer; formulae matching the topic's are marked.  The assessor grades with the keyboard
(``static/assess.js``); each grade is one POST that is committed to the database before it is
acknowledged (:class:`mathsearch.assess.AssessDB`), so a reload, a second assessor or a killed
server loses nothing that was acknowledged.

API (every request names its assessor; nothing tells an assessor which run returned an item or how
another assessor graded it):

``GET  /api/assess/state?assessor=A``            task, grades, assessors, topics with progress
``GET  /api/assess/topics/{topic}?assessor=A``   the topic rendered and its items with A's grades
``GET  /api/assess/items/{item_id}``             the candidate rendered
``POST /api/assess/judgements``                  ``{item_id, assessor, grade, comment}``: record a grade
``DELETE /api/assess/judgements/{item_id}?assessor=A``  withdraw A's grade
``GET  /api/assess/agreement``                   Cohen's kappa between assessors (four-way and H+M)
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from pydantic import BaseModel, Field, field_validator

from ..assess import AssessDB, AssessmentError, agreement, grades_for
from ..assess.db import ItemRow, TopicRow
from ..assess.pool import ANSWER, FORMULA, TASK3
from ..errors import MathsearchError, NotFoundError
from ..store import Store
from ..text.analysis import formula_key
from .render import TEMPLATES_DIR, comment_html, post_html, text_html

MAX_ITEM_ID = 2**53 - 1  # the largest integer a JSON number (a double) holds exactly: schema checks compare as floats
MAX_COMMENT = 2000
MAX_TOPIC_ID = 64
# An assessor's name (mathsearch.assess.db.check_assessor): a letter or digit, then up to 39 more of these.
NAME_PATTERN = r"^\w[\w .@'-]{0,39}$"


class Problem(BaseModel):
    detail: str


ERRORS: dict[int | str, dict[str, Any]] = {400: {"model": Problem}, 404: {"model": Problem}}


class JudgementIn(BaseModel):
    item_id: int = Field(ge=1, le=MAX_ITEM_ID)
    assessor: str = Field(min_length=1, max_length=40, pattern=NAME_PATTERN)
    grade: Literal[0, 1, 2, 3, 5, 6] = Field(description="0-3, 5 (system failure) or 6 (do not know).")
    comment: str = Field("", max_length=MAX_COMMENT)

    @field_validator("item_id", "grade", mode="before")
    @classmethod
    def _a_number_not_a_truth_value(cls, value: Any) -> Any:
        # JSON true is no grade 1 nor item 1 (pydantic's lax mode took it for 1); 2.0 is the number 2, as
        # JSON Schema counts an integer
        if isinstance(value, bool) or isinstance(value, str):
            raise ValueError("a whole number, not true, false or text")
        return value


class GradeOut(BaseModel):
    code: int
    rating: str
    definition: str
    key: str


class TopicProgress(BaseModel):
    topic_id: str
    title: str
    title_html: str = Field(description="The title sanitised, formulae as <span class=\"tex\"> (the topic list typesets them).")
    items: int
    judged: int = Field(description="Items this assessor judged (anyone, without an assessor).")
    judged_any: int
    overlap: bool


class Counts(BaseModel):
    items: int
    judged: int
    judged_any: int


class StateOut(BaseModel):
    task: int
    pool: str
    pool_id: str
    assessor: str | None
    assessors: list[str]
    overlap: list[str]
    topics: list[TopicProgress]
    overall: Counts
    grades: dict[str, list[GradeOut]] = Field(description="The grades of each item kind: answer, formula, task3.")


class ItemRef(BaseModel):
    item_id: int
    kind: str
    group: str | None = Field(description="Task 2: the visual id the instance belongs to.")
    grade: int | None
    comment: str


class TopicOut(BaseModel):
    topic_id: str
    title_html: str
    question_html: str
    tags: list[str]
    overlap: bool
    items: list[ItemRef]


class ItemOut(BaseModel):
    item_id: int
    topic_id: str
    kind: str
    html: str = Field(description="The candidate, sanitised, formulae as <span class=\"tex\">.")
    matched: int = Field(description="Formulae marked as matching the topic's.")
    post_id: int | None = None


class TopicCounts(Counts):
    topic_id: str


class SavedJudgement(BaseModel):
    item_id: int
    assessor: str
    grade: int
    comment: str
    judged_at: str


class SavedOut(BaseModel):
    saved: SavedJudgement
    topic: TopicCounts
    overall: Counts


class ClearedOut(BaseModel):
    cleared: bool
    topic: TopicCounts
    overall: Counts


class _Local(threading.local):
    db: AssessDB | None = None
    store: Store | None = None


def _marked_target(html: str, formula_id: str) -> str:
    """Add class ``target`` to the formula element of ``formula_id`` (the instance being judged)."""
    pattern = re.compile(r'<(span|code) class="([^"]*)" data-fid="' + re.escape(formula_id) + '"')

    def add(m: re.Match) -> str:
        classes = [c for c in m.group(2).split() if c not in ("hl", "target")] + ["hl", "target"]
        return f'<{m.group(1)} class="{" ".join(classes)}" data-fid="{formula_id}"'

    return pattern.sub(add, html, 1)


def make_router(*, index_dir: Path, pool_db: Path) -> APIRouter:
    """The assessment page and API over ``pool_db``, with candidates read from ``index_dir``."""
    index_dir, pool_db = Path(index_dir), Path(pool_db)
    AssessDB(pool_db).close()  # refused now (not at the first request) when it is no assessment database
    local = _Local()
    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
    router = APIRouter()

    def db() -> AssessDB:
        if local.db is None:
            local.db = AssessDB(pool_db)
        return local.db

    def store() -> Store:
        if local.store is None:
            local.store = Store.open(index_dir)
        return local.store

    def fail(exc: MathsearchError) -> HTTPException:
        return HTTPException(404 if isinstance(exc, NotFoundError) else 400, str(exc))

    def topic_marks(t: TopicRow) -> set[str]:
        if t.formula_id is not None and t.latex:  # Task 2: the query formula
            return {formula_key(t.latex)}
        return {formula_key(latex) for _, latex in t.formulas if latex.strip()}

    def progress(assessor: str | None) -> tuple[list[dict], dict]:
        d = db()
        per = d.progress(assessor)
        topics = []
        for t in d.topics():
            p = per[t.topic_id]
            topics.append({"topic_id": t.topic_id, "title": _plain_title(t), "title_html": str(post_html(t.title or "")),
                           "items": p["items"], "judged": p["judged"],
                           "judged_any": p["judged_any"], "overlap": t.overlap})
        return topics, _overall(per)

    @router.get("/assess", response_class=HTMLResponse, include_in_schema=False)
    def assess_page(request: Request) -> HTMLResponse:
        meta = db().meta()
        return templates.TemplateResponse(request, "assess.html", {"task": int(meta["task"]), "pool": pool_db.name})

    @router.get("/api/assess/state", response_model=StateOut, responses=ERRORS, tags=["assess"])
    def state(assessor: str | None = Query(None, min_length=1, max_length=40, pattern=NAME_PATTERN)) -> dict[str, Any]:
        """The pool (task, grades, assessors, overlap set) and progress per topic and overall."""
        d = db()
        try:
            name = _assessor(assessor)
        except AssessmentError as exc:
            raise fail(exc) from None
        topics, overall = progress(name)
        meta = d.meta()
        return {"task": d.task, "pool": pool_db.name, "pool_id": meta.get("created", ""), "assessor": name,
                "assessors": d.assessors(), "overlap": d.overlap(), "topics": topics, "overall": overall,
                "grades": {kind: [{"code": g.code, "rating": g.rating, "definition": g.definition, "key": g.key}
                                  for g in grades_for(kind)] for kind in (ANSWER, FORMULA, TASK3)}}

    @router.get("/api/assess/topics/{topic_id}", response_model=TopicOut, responses=ERRORS, tags=["assess"])
    def topic(topic_id: str = PathParam(..., max_length=MAX_TOPIC_ID),
              assessor: str | None = Query(None, min_length=1, max_length=40, pattern=NAME_PATTERN)) -> dict:
        """The topic (title, question, tags; Task 2's query formula marked) and its items in display order,
        each with this assessor's grade."""
        d = db()
        try:
            name = _assessor(assessor)
            t = d.topic(topic_id)
        except MathsearchError as exc:
            raise fail(exc) from None
        mine = {j.item_id: j for j in d.judgements(name, topic_id)} if name else {}
        items = d.items(topic_id)
        if t.title is None and t.question is None:
            title_html = Markup(f"Topic {t.topic_id}")
            question_html = Markup('<p class="muted">The topic file was not given to <code>mathsearch pool</code>: '
                                   "only the topic id is known.</p>")
        else:
            marked = [t.formula_id] if t.formula_id else []
            title_html = post_html(t.title or "", (), marked)
            question_html = post_html(t.question or "", (), marked)
        return {"topic_id": t.topic_id, "title_html": str(title_html), "question_html": str(question_html),
                "tags": list(t.tags), "overlap": t.overlap,
                "items": [{"item_id": i.item_id, "kind": i.kind, "group": i.visual_id if i.kind == FORMULA else None,
                           "grade": mine[i.item_id].grade if i.item_id in mine else None,
                           "comment": mine[i.item_id].comment if i.item_id in mine else ""} for i in items]}

    @router.get("/api/assess/items/{item_id}", response_model=ItemOut, responses=ERRORS, tags=["assess"])
    def item(item_id: int = PathParam(..., ge=1, le=MAX_ITEM_ID)) -> dict:
        """The candidate rendered for the right-hand pane (sanitised HTML, formulae as KaTeX elements)."""
        d = db()
        try:
            it = d.item(item_id)
            t = d.topic(it.topic_id)
        except MathsearchError as exc:
            raise fail(exc) from None
        return {"item_id": it.item_id, "topic_id": it.topic_id, "kind": it.kind, **_candidate(it, t, topic_marks(t))}

    def _candidate(it: ItemRow, t: TopicRow, marks: set[str]) -> dict:
        if it.kind == TASK3:
            html = text_html(it.answer or "", marks, lines=True)
            sources = f'<p class="meta">Sources named by the system: {Markup.escape(it.sources or "none")}</p>'
            return {"html": f'<article class="candidate answer3"><div class="body">{html}</div>{sources}</article>',
                    "matched": _count_marks(str(html))}
        s = store()
        post = s.post(it.post_id) if it.post_id else None
        if post is None:
            return {"html": f'<p class="error">Post {Markup.escape(it.post_id or "?")} is not in the collection of '
                            f"{Markup.escape(index_dir.resolve().name)}: judge it as a system failure (5).</p>", "matched": 0}
        question = s.post(post.thread_id) if post.post_id != post.thread_id else None
        if it.kind == FORMULA:
            body = _marked_target(str(post_html(post.body, marks)), it.doc_id)
            f = s.formula(it.doc_id)
            title_marks = marks | ({formula_key(f.latex)} if f is not None and f.kind == "title" else set())
            thread_q = post if post.post_id == post.thread_id else question
            title = text_html(thread_q.title or "", title_marks) if thread_q is not None and thread_q.title else ""
            where = "a question" if post.post_type == 1 else "an answer"
            href = f"/thread/{post.post_id}?fid={it.doc_id}#p{post.post_id}"
            parts = [f'<p class="meta">The formula (marked <span class="target-key">like this</span>) in {where} '
                     f'post {post.post_id} · <a href="{href}" target="_blank" rel="noopener">thread</a></p>',
                     f'<h3 class="thread-title">{title}</h3>' if title else "",
                     f'<article class="candidate formula-post"><div class="body">{body}</div></article>']
            return {"html": "".join(parts), "matched": _count_marks(body), "post_id": post.post_id}
        body = str(post_html(post.body, marks))
        comments = s.comments_of(post.post_id)
        href = f"/thread/{post.post_id}#p{post.post_id}"
        parts = [f'<article class="candidate answer"><div class="meta">Answer {post.post_id}'
                 f'{f" · score {post.score}" if post.score is not None else ""} · '
                 f'<a href="{href}" target="_blank" rel="noopener">thread</a></div><div class="body">{body}</div>']
        if comments:
            parts.append('<ul class="comments">' + "".join(f"<li>{comment_html(c, marks)}</li>" for _, c in comments) + "</ul>")
        parts.append("</article>")
        if question is not None:
            qbody = post_html(question.body, marks)
            parts.append(f'<details class="context" open><summary>The question this answers: '
                         f'{text_html(question.title or "", marks)}</summary><div class="body">{qbody}</div></details>')
        return {"html": "".join(parts), "matched": _count_marks(body), "post_id": post.post_id}

    @router.post("/api/assess/judgements", response_model=SavedOut, responses=ERRORS, tags=["assess"])
    def judge(j: JudgementIn) -> dict:
        """Record an assessor's grade of an item (committed before this answers)."""
        d = db()
        try:
            saved = d.judge(j.item_id, j.assessor, j.grade, j.comment)
            topic_id = d.item(j.item_id).topic_id
        except MathsearchError as exc:
            raise fail(exc) from None
        return {"saved": {"item_id": saved.item_id, "assessor": saved.assessor, "grade": saved.grade,
                          "comment": saved.comment, "judged_at": saved.judged_at},
                **_counts(d, saved.assessor, topic_id)}

    @router.delete("/api/assess/judgements/{item_id}", response_model=ClearedOut, responses=ERRORS, tags=["assess"])
    def clear(item_id: int = PathParam(..., ge=1, le=MAX_ITEM_ID),
              assessor: str = Query(..., min_length=1, max_length=40, pattern=NAME_PATTERN)) -> dict:
        """Withdraw an assessor's grade of an item (the history keeps it)."""
        d = db()
        try:
            cleared = d.clear(item_id, assessor)
            topic_id = d.item(item_id).topic_id
            name = _assessor(assessor)
        except MathsearchError as exc:
            raise fail(exc) from None
        return {"cleared": cleared, **_counts(d, name or "", topic_id)}

    @router.get("/api/assess/agreement", responses=ERRORS, tags=["assess"])
    def kappa() -> dict:
        """Cohen's kappa of each pair of assessors on the items both graded, per topic and overall."""
        d = db()
        return {"overlap": d.overlap(), "pairs": [p.to_json() for p in agreement(d)]}

    return router


def _assessor(name: str | None) -> str | None:
    from ..assess.db import check_assessor

    return check_assessor(name) if name else None


def _overall(per: dict[str, dict[str, int]]) -> dict[str, int]:
    """The pool's totals of progress per topic (AssessDB.progress)."""
    return {k: sum(p[k] for p in per.values()) for k in ("items", "judged", "judged_any")}


def _counts(d: AssessDB, assessor: str, topic_id: str) -> dict:
    per = d.progress(assessor)
    return {"topic": {"topic_id": topic_id, **per[topic_id]},
            "overall": _overall(per)}


_TAG = re.compile(r"<[^>]+>")


def _plain_title(t: TopicRow) -> str:
    """The topic's title as plain text (for the topic list), formulae as their LaTeX."""
    if not t.title:
        return ""
    import html as htmllib

    return htmllib.unescape(_TAG.sub("", t.title)).strip()[:200]


def _count_marks(html: str) -> int:
    return len(re.findall(r'class="tex[^"]*\bhl\b', html))
