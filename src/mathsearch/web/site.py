"""What every response of ``mathsearch serve`` shares beyond its route: error answers that tell no
secret and echo no megabyte, the HTML "not found" page, the favicon, and the API page.

    install(app, templates, index_dir)    # called once by create_app

* :func:`public_message`: an error message with the index's absolute path replaced by the index's
  folder name (a stranger learns nothing of the server's file system);
* :func:`clip`: an echoed value (a query, a formula) cut to :data:`MAX_ECHO` characters;
* a 422 (FastAPI's validation answer) whose ``input`` fields are clipped;
* a 404 for a page (any path outside ``/api/``, ``/health`` and ``/openapi.json``) is an HTML page
  with the search box; the API's 404 stays JSON;
* ``/docs``: Swagger UI from npm (``swagger-ui-dist``, copied to ``static/swagger-ui`` by
  ``scripts/setup_web.sh``) started by ``static/apidocs.js``, so the page's Content-Security-Policy
  (no inline script, nothing from elsewhere) holds; without it, ``/docs`` says how to install it
  and links the schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from .render import SETUP_COMMAND, STATIC_DIR

MAX_ECHO = 300  # characters of a query, formula or path echoed in an error
SWAGGER_DIR = STATIC_DIR / "swagger-ui"
SWAGGER_FILES = ("swagger-ui-bundle.js", "swagger-ui.css")
API_PREFIXES = ("/api/", "/health", "/openapi.json")


def clip(value: Any, limit: int = MAX_ECHO) -> Any:
    """``value`` with every string in it cut to ``limit`` characters, saying how long it was."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"... ({len(value):,} characters)"
    if isinstance(value, dict):
        return {k: clip(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clip(v, limit) for v in value]
    return value


# A value refused by its pattern, said as the library says it (pydantic's message is the regex itself).
PATTERN_SAID = {("query", "q"): "the query {value!r} has no word, number or formula to search for.",
                ("query", "latex"): "the formula {value!r} is empty: give LaTeX to parse."}


def said(error: dict) -> dict:
    """A validation error with a sentence for a pattern's refusal (:data:`PATTERN_SAID`)."""
    template = PATTERN_SAID.get(tuple(error.get("loc", ()))) if error.get("type") == "string_pattern_mismatch" else None
    if template is None:
        return error
    return {k: v for k, v in error.items() if k != "ctx"} | {"msg": template.format(value=str(error.get("input", ""))[:40])}


def public_message(text: str, index_dir: Path) -> str:
    """``text`` with the index's path (as given and absolute) replaced by its folder name."""
    index_dir = Path(index_dir)
    for path in sorted({str(index_dir.resolve()), str(index_dir.absolute()), str(index_dir)}, key=len, reverse=True):
        if path not in (".", ""):
            text = text.replace(path, index_dir.resolve().name)
    return clip(text)


def invalid_utf8_parameter(query_string: bytes) -> str | None:
    """The name of the first query parameter (name or value) whose percent-decoded bytes are not
    UTF-8 (``q=%ff%fe``), or None.  Starlette would decode them as U+FFFD and carry on."""
    for part in query_string.split(b"&"):
        name, _, value = part.partition(b"=")
        for piece in (name, value):
            try:
                unquote_to_bytes(piece.replace(b"+", b" ")).decode("utf-8")
            except UnicodeDecodeError:
                return clip(unquote_to_bytes(name).decode("utf-8", errors="replace"), 40)
    return None


def swagger_missing() -> list[str]:
    return [name for name in SWAGGER_FILES if not (SWAGGER_DIR / name).is_file()]


def is_api(path: str) -> bool:
    return path.startswith(API_PREFIXES)


def install(app: FastAPI, templates: Jinja2Templates, index_dir: Path) -> None:
    """The error handlers, the 404 page, ``/favicon.ico`` and ``/docs`` on ``app``."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": clip(jsonable_encoder([said(e) for e in exc.errors()]))}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        detail = public_message(str(exc.detail), index_dir)
        if exc.status_code == 404 and not is_api(request.url.path):
            if detail == "Not Found":
                detail = f"There is no page at {clip(request.url.path, 100)}."
            return not_found_page(request, detail)
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    def not_found_page(request: Request, message: str) -> HTMLResponse:
        return templates.TemplateResponse(request, "404.html", {"message": message}, status_code=404)

    app.state.not_found_page = not_found_page

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> RedirectResponse:
        """Browsers ask for /favicon.ico where a page names none (a JSON answer opened in a tab)."""
        return RedirectResponse("/static/favicon.svg", status_code=301)

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        """The API page: Swagger UI over /openapi.json, served from this server."""
        return templates.TemplateResponse(request, "docs.html", {"missing": swagger_missing(),
                                                                 "setup": SETUP_COMMAND})
