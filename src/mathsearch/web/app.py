"""The FastAPI application of ``mathsearch serve``: pages and JSON API over one INDEX_DIR.

    create_app(index_dir, pool_db=None, *, workers=0, queue=64, cache_entries=256) -> FastAPI

Pages: ``/?q=...&task=1|2|3&page=N`` (search), ``/thread/{post_id}``, ``/formula?latex=...`` (or
``?id=``).  API (schema at ``/openapi.json``): ``/api/search``, ``/api/thread/{post_id}``,
``/api/formula?latex=``, ``/api/formula/{formula_id}``, ``/health``.  With ``pool_db`` the assessment pages
of :mod:`mathsearch.web.assess` are mounted too.

Every input is bounded (query length, page, page size, post id, formula length) and refused with
a 4xx that says which bound; a query is given :data:`TIME_BUDGET` seconds.  Searches run in
``workers`` processes side by side (``mathsearch serve`` starts one per core), or with
``workers=0`` one at a time in the server; a query's ranking is kept for its next pages
(:mod:`.serving`: the cache, the budget, the bounded queue).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field

from ..answers import NO_ANSWER
from ..browse import MAX_LATEX, formula_view, thread_of
from ..errors import InputError, MathsearchError, NotFoundError
from ..searcher import (  # the API's records are the library's
    SEARCHABLE,
    AnswerSource,
    FormulaGroup,
    SearchHit,
    parse_query,
)
from . import site
from .render import (
    MATHJAX_DIR,
    SETUP_COMMAND,
    STATIC_DIR,
    TEMPLATES_DIR,
    comment_html,
    formula_html,
    marks_of,
    math_missing,
    post_html,
    text_html,
)
from .results import MAX_PAGE, answer_view, href, results_view
from .serving import DEFAULT_ENTRIES, DEFAULT_QUEUE, TIME_BUDGET, SearchService
from .site import MAX_ECHO, public_message

MAX_QUERY = 1000  # characters of a query
MAX_SIZE = 50  # hits a page
DEFAULT_SIZE = 10
MAX_POST_ID = 2**53 - 1  # SQLite holds 64 bits, but a JSON number (a double) holds integers exactly only up to 2**53
ID_BOUND = "0 to 2^53-1 (9007199254740991, the largest integer a JSON number holds exactly)"
TASKS = ((1, "Answers (Task 1)"), (2, "Formulae (Task 2)"), (3, "One answer (Task 3)"))
PLACEHOLDER = {1: "How do I show $\\sum 1/n$ diverges?", 2: "$x^2+y^2=z^2$", 3: "Why is $e^{i\\pi}=-1$?"}

# The formula page's rows, in this order (mathsearch formula's keys; empty ones are left out).
REPRESENTATIONS = ("slt", "opt", "prefix", "visual_key", "opt_key", "node_count", "slt_tuples", "opt_tuples",
                   "leaf_paths", "math_terms", "words", "pmathml", "cmathml", "recovered", "errors", "unknown_macros")

SECURITY_HEADERS = {
    # No inline script and nothing from elsewhere: a script that slipped past nh3 would still not run.
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "img-src 'self' data: http: https:; font-src 'self' data:; object-src 'none'; "
                               "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


# -- API models (the OpenAPI schema) ---------------------------------------------------------------
class Answer(BaseModel):
    text: str
    system: str
    mode: str
    sources: list[AnswerSource]


class SearchedAs(BaseModel):
    typed: str = Field(description="What the query held, typed without LaTeX (e.g. sqrt 2).")
    latex: str = Field(description="The LaTeX it was searched as (e.g. \\sqrt{2}).")


class SearchOut(BaseModel):
    query: str
    task: int
    system: str
    page: int
    size: int
    hits: list[SearchHit]
    searched_as: list[SearchedAs] = Field([], description="Maths typed without LaTeX and the LaTeX it was searched as.")
    notices: list[str] = Field([], description="Lines to read before the hits: a [tag] no thread has, a filter "
                                               "this collection cannot apply, no close match, words no post holds.")
    suggestion: str | None = Field(None, description="The query with each word no post holds respelt as the "
                                                     "collection's nearest word (\"did you mean\"); null when none is near.")
    groups: list[FormulaGroup] | None = Field(None, description="Task 2: the page's hits grouped by visual id.")
    answer: Answer | None = Field(None, description="Task 3: one answer with its sources.")
    next_page: int | None


class Comment(BaseModel):
    comment_id: int
    text: str


class PostOut(BaseModel):
    post_id: int
    post_type: int
    score: int | None
    tags: list[str]
    body_html: str = Field(description="The post's HTML sanitised by nh3, formulae as <span class=\"tex\">.")
    text: str
    comments: list[Comment]


class LinkOut(BaseModel):
    thread_id: int
    title: str | None


class ThreadOut(BaseModel):
    thread_id: int
    title: str | None
    question: PostOut | None
    answers: list[PostOut]
    duplicates: list[LinkOut]
    related: list[LinkOut]


class Instance(BaseModel):
    formula_id: int
    post_id: int
    thread_id: int
    kind: str
    latex: str
    thread_title: str | None


class FormulaOut(BaseModel):
    latex: str
    visual_id: str | None
    representations: dict[str, Any]
    instances: list[Instance]


class Health(BaseModel):
    status: str
    index: str
    counts: dict[str, Any]
    ready: bool = Field(description="Every search lane has its indexes open and its models loaded (the server "
                                    "says it is serving only then; false while a stopped worker is replaced).")
    models: list[str] = Field(description="The query encoders loaded for the default systems (none without vectors).")
    searches: dict[str, Any] = Field(description="Workers (0: one at a time in the server), busy, queue bounds, "
                                                 "searches stopped past their budget, workers' memory in bytes.")
    cache: dict[str, Any] = Field(description="The result cache: entries kept, capacity, hits, misses, hit rate.")


class Problem(BaseModel):
    detail: str


ERRORS: dict[int | str, dict[str, Any]] = {400: {"model": Problem}, 404: {"model": Problem}, 503: {"model": Problem}}


# -- the application -----------------------------------------------------------------------------
def _thread_json(t) -> dict:
    def post(p) -> dict:
        return {"post_id": p.post.post_id, "post_type": p.post.post_type, "score": p.post.score,
                "tags": list(p.post.tags), "body_html": str(post_html(p.post.body)), "text": p.post.text,
                "comments": [{"comment_id": c, "text": text} for c, text in p.comments]}

    return {"thread_id": t.thread_id, "title": t.title, "question": post(t.question) if t.question else None,
            "answers": [post(a) for a in t.answers],
            "duplicates": [asdict(x) for x in t.duplicates], "related": [asdict(x) for x in t.related]}


def _formula_json(v) -> dict:
    return {"latex": v.latex, "visual_id": v.visual_id, "representations": v.representations,
            "instances": [{"formula_id": f.formula_id, "post_id": f.post_id, "thread_id": f.thread_id, "kind": f.kind,
                           "latex": f.latex, "thread_title": v.titles.get(f.thread_id)} for f in v.instances]}


def searched_marks(q: str, task: str) -> set[str]:
    """The keys of the formulae a query was searched as (its plain-words maths too, as the results
    page marks them); a query no search would take marks what it holds between dollars."""
    try:
        return marks_of(parse_query(q, int(task) if task in ("1", "2", "3") else 1).searched)
    except InputError:
        return marks_of(q)


def create_app(index_dir: Path, pool_db: Path | None = None, *, budget: float = TIME_BUDGET, workers: int = 0,
               queue: int = DEFAULT_QUEUE, cache_entries: int = DEFAULT_ENTRIES) -> FastAPI:
    """The application over ``index_dir`` (opened on the first search); with ``pool_db`` the
    assessment pages too.  ``workers`` search processes (started and their indexes opened before
    this returns; 0: searches one at a time in the server), at most ``queue`` searches waiting
    beyond them, ``cache_entries`` rankings kept.  Refuses to start without MathJax, naming the
    set-up command."""
    index_dir = Path(index_dir)
    missing = math_missing()
    if missing:
        raise InputError(f"MathJax is not installed for the page ({', '.join(missing)} missing under "
                         f"{MATHJAX_DIR}): run `{SETUP_COMMAND}`.")
    service = SearchService(index_dir, workers=workers, queue=queue, cache_entries=cache_entries, budget=budget)
    # FastAPI's /docs and /redoc pages load from a CDN: /docs leads to the schema, /openapi.json, instead.
    app = FastAPI(title="mathsearch", version="1", docs_url=None, redoc_url=None, description=(
        "Math-aware search over an ARQMath / Math Stack Exchange collection: answers (Task 1), formulae "
        "(Task 2), one answer with its sources (Task 3). Queries are text with $LaTeX$ formulae."))
    app.state.service = service  # its workers end with the server's process (service.close() ends them sooner)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    templates = Jinja2Templates(directory=str(TEMPLATES_DIR))

    def page(request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, name, ctx, status_code=status)

    @app.middleware("http")
    async def utf8_parameters(request: Request, call_next):
        # Starlette decodes %ff as U+FFFD and the search would run on what nobody typed: refuse
        # instead, naming the parameter (inside security_headers, which is added after it).
        name = site.invalid_utf8_parameter(request.scope.get("query_string", b""))
        if name is None:
            return await call_next(request)
        message = f"the parameter {name} is not valid UTF-8 text (its percent-encoded bytes form no characters)."
        if site.is_api(request.url.path):
            return JSONResponse({"detail": [{"type": "unicode_decode", "loc": ["query", name], "msg": message}]},
                                status_code=422)
        return page(request, "search.html", 422, q="", task=1, tasks=TASKS, max_query=MAX_QUERY, page=1,
                    placeholder=PLACEHOLDER[1], details=False, error=message[0].upper() + message[1:])

    @app.middleware("http")
    async def security_headers(request: Request, call_next):
        response = await call_next(request)
        for k, v in SECURITY_HEADERS.items():
            response.headers.setdefault(k, v)
        return response

    @app.exception_handler(MathsearchError)
    async def clear_error(request: Request, exc: MathsearchError):
        return JSONResponse({"detail": public_message(str(exc), index_dir)},
                            status_code=404 if isinstance(exc, NotFoundError) else 400)

    site.install(app, templates, index_dir)  # 404 page, clipped 422s, favicon, the API page at /docs

    # -- JSON API ------------------------------------------------------------------------------
    @app.get("/health", response_model=Health, tags=["api"])
    async def health() -> dict:
        """The server is up; what its index holds (by its folder's name); its searches and result cache now."""
        return {"status": "ok", "index": index_dir.resolve().name, "counts": service.counts(), **service.health()}

    @app.get("/api/search", response_model=SearchOut, responses=ERRORS, tags=["api"])
    async def api_search(
        q: str = Query(..., min_length=1, max_length=MAX_QUERY, pattern=SEARCHABLE,
                       description="Text with $LaTeX$ formulae: a letter, digit or symbol besides spaces, "
                                   "dollars and punctuation, or a $formula$."),
        task: int = Query(1, ge=1, le=3, description="1: answers, 2: formula instances, 3: one answer."),
        page: int = Query(1, ge=1, le=MAX_PAGE),
        size: int = Query(DEFAULT_SIZE, ge=1, le=MAX_SIZE, description="Hits a page."),
    ) -> dict:
        """One page of hits (Task 1, 2) or one answer with its sources (Task 3); ``searched_as`` lists the
        maths typed without LaTeX (``sqrt 2``, ``integral of x sin x dx``) and the LaTeX searched."""
        return await service.search(q, task, page, size)  # with what it was searched as and its notices

    @app.get("/api/thread/{post_id}", response_model=ThreadOut, responses=ERRORS, tags=["api"])
    async def api_thread(post_id: int = PathParam(..., ge=0, le=MAX_POST_ID, description=f"A post id, {ID_BOUND}.")) -> dict:
        """The thread holding a post (question or answer): every post, sanitised, and its comments."""
        return _thread_json(await service.call(thread_of, service.searcher, post_id))

    @app.get("/api/formula", response_model=FormulaOut, responses=ERRORS, tags=["api"])
    async def api_formula(latex: str = Query(..., min_length=1, max_length=MAX_LATEX, pattern=r"\S",
                                             description="LaTeX without $ delimiters.")) -> dict:
        """Every representation of a formula and its visually identical instances in the collection."""
        return _formula_json(await service.call(formula_view, service.searcher, latex, None))

    @app.get("/api/formula/{formula_id}", response_model=FormulaOut, responses=ERRORS, tags=["api"])
    async def api_formula_instance(formula_id: int = PathParam(..., ge=0, le=MAX_POST_ID,
                                                               description=f"A formula id, {ID_BOUND}.")) -> dict:
        """A formula instance of the collection: its representations and the instances that look the same."""
        return _formula_json(await service.call(formula_view, service.searcher, None, formula_id))

    # -- pages ---------------------------------------------------------------------------------
    def bounded(value: str, name: str, low: int, high: int, default: int) -> int:
        if value == "":
            return default
        if not value.isdigit() or not low <= int(value) <= high:
            upto = "2^53-1 (9007199254740991)" if high == MAX_POST_ID else high
            raise InputError(f"{name} must be a whole number from {low} to {upto}, not {value[:20]!r}.")
        return int(value)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def search_page(request: Request, q: str = "", task: str = "1", page_no: str = Query("", alias="page"),
                          details: str = ""):
        ctx: dict[str, Any] = {"q": q if len(q) <= MAX_QUERY else q[:MAX_ECHO], "task": 1, "tasks": TASKS,
                               "max_query": MAX_QUERY, "page": 1, "placeholder": PLACEHOLDER[1], "details": details == "1"}
        try:
            ctx["task"] = t = bounded(task, "task", 1, 3, 1)
            ctx["placeholder"] = PLACEHOLDER[t]
            ctx["page"] = n = bounded(page_no, "page", 1, MAX_PAGE, 1)
            if len(q) > MAX_QUERY:
                raise InputError(f"the query has {len(q):,} characters; at most {MAX_QUERY:,} are searched.")
            if not q.strip():
                return page(request, "search.html", **ctx)

            if t == 3:
                found = await service.search(q, t, n, DEFAULT_SIZE)
                view = answer_view(found, q)
            else:  # one entry a thread (Task 1) or a formula (Task 2), counted
                found = await service.grouped(q, t, n)
                view = results_view(found, q, t, n, ctx["details"])
            # the query as the search read it (once, where it ran): maths typed without LaTeX, notices
            ctx["searched_as"] = [formula_html(s["latex"]) for s in found["searched_as"]] if t != 2 else []
            # (a Task 3 answer with nothing to draw from says so in its own box: not twice)
            ctx["notices"] = [x for x in found["notices"] if not (t == 3 and x == NO_ANSWER)]
            if found.get("suggestion"):  # "did you mean": the respelt query, one click away
                ctx["suggestion"] = found["suggestion"]
                ctx["suggestion_href"] = href("/", q=found["suggestion"], task=t)
        except (MathsearchError, HTTPException) as exc:
            ctx["error"] = public_message(str(getattr(exc, "detail", exc)), index_dir)
            shown = page(request, "search.html", 400 if isinstance(exc, MathsearchError) else exc.status_code, **ctx)
            shown.headers.update(getattr(exc, "headers", None) or {})  # a 503's Retry-After
            return shown
        return page(request, "search.html", **ctx, result=found, **view)

    @app.get("/thread/{post_id}", response_class=HTMLResponse, include_in_schema=False)
    async def thread_page(request: Request, post_id: str, q: str = "", fid: str = "", task: str = "",
                          results_page: str = Query("", alias="page"), details: str = ""):
        try:
            pid = bounded(post_id, "the post id", 0, MAX_POST_ID, 0)
            t = await service.call(thread_of, service.searcher, pid)
        except MathsearchError as exc:
            return app.state.not_found_page(request, public_message(str(exc), index_dir))
        q = q if len(q) <= MAX_QUERY else ""  # a query no search would take is not carried back
        marks = searched_marks(q, task)
        marked: set[int] = set()
        if fid.isdigit():  # a Task 2 hit: mark its formula and every instance that looks the same
            vid = next((f.visual_id for p in _posts(t) for f in p.formulas if str(f.formula_id) == fid), None)
            marked = {f.formula_id for p in _posts(t) for f in p.formulas
                      if str(f.formula_id) == fid or (vid is not None and f.visual_id == vid)}

        def post(p) -> dict:
            return {"post_id": p.post.post_id, "score": p.post.score, "tags": p.post.tags,
                    "body_html": post_html(p.post.body, marks, marked),
                    "comments": [{"comment_id": c, "html": comment_html(text, marks)} for c, text in p.comments]}

        title = t.title or f"Thread {t.thread_id}"
        return page(request, "thread.html", title_text=title, title_html=text_html(title, marks),
                    question=post(t.question) if t.question else None, answers=[post(a) for a in t.answers],
                    duplicates=[_link(x) for x in t.duplicates], related=[_link(x) for x in t.related],
                    back_href=href("/", q=q, task=task,
                                   page=results_page if results_page.isdigit() and results_page != "1" else None,
                                   details=1 if details == "1" else None) if q else None)

    @app.get("/formula", response_class=HTMLResponse, include_in_schema=False)
    async def formula_page(request: Request, latex: str = "", id: str = ""):
        ctx: dict[str, Any] = {"latex": latex if len(latex) <= MAX_LATEX else latex[:MAX_ECHO], "max_latex": MAX_LATEX}
        if not latex.strip() and not id:
            return page(request, "formula.html", **ctx)
        try:
            fid = bounded(id, "the formula id", 0, MAX_POST_ID, 0) if id else None
            v = await service.call(formula_view, service.searcher, latex if fid is None else None, fid)
        except (MathsearchError, HTTPException) as exc:  # a missing formula is a 404, as everywhere
            ctx["error"] = public_message(str(getattr(exc, "detail", exc)), index_dir)
            status = 404 if isinstance(exc, NotFoundError) else 400 if isinstance(exc, MathsearchError) else exc.status_code
            return page(request, "formula.html", status, **ctx)
        r = v.representations
        reps = [(k, _shown(r[k])) for k in REPRESENTATIONS if k in r and r[k] not in ([], "", None)]
        instances = [{"formula_id": f.formula_id, "kind": f.kind, "formula_html": formula_html(f.latex),
                      "href": href(f"/thread/{f.post_id}", fid=f.formula_id) + f"#p{f.post_id}",
                      "title_html": text_html(v.titles.get(f.thread_id) or f"thread {f.thread_id}")}
                     for f in v.instances]
        ctx.update(latex=v.latex, view=v, formula_html=formula_html(v.latex, display=True), reps=reps,
                   instances=instances, search_q=f"${v.latex}$")
        return page(request, "formula.html", **ctx)

    if pool_db is not None:
        from .assess import make_router  # the assessment pages (issue 13)

        app.include_router(make_router(index_dir=index_dir, pool_db=Path(pool_db)))
    return app


def _posts(t) -> list:
    return ([t.question] if t.question else []) + list(t.answers)


def _link(x) -> dict:
    return {"thread_id": x.thread_id, "title_html": text_html(x.title or f"thread {x.thread_id}")}


def _shown(value: Any, limit: int = 4000) -> str:
    """A representation as text for the page, at most ``limit`` characters."""
    if isinstance(value, list):
        text = "\n".join("  ".join(map(str, v)) if isinstance(v, list | tuple) else str(v) for v in value)
    else:
        text = str(value)
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit:,} more characters)"
