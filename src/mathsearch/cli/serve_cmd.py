"""``mathsearch serve --index IDX``: the search page and the JSON API (FastAPI + uvicorn).

A thin face over :func:`mathsearch.web.app.create_app`; the web extra (fastapi, uvicorn, jinja2)
and MathJax (``bash scripts/setup_web.sh``) are checked before the server starts."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from ..errors import InputError
from ._common import console, friendly_errors


def serve(
    index_dir: Path = typer.Option(Path("index"), "--index", "-i", help="INDEX_DIR built by `mathsearch index`."),
    pool: Path | None = typer.Option(None, "--pool", help="An assessment pool database: serve the assessment pages too."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="Port to listen on."),
    workers: int = typer.Option(os.cpu_count() or 1, "--workers", min=0, max=256, show_default="the core count",
                                help="Searches side by side, each in a worker process with its own open indexes "
                                     "(0: one at a time in the server process)."),
    queue: int = typer.Option(64, "--queue", min=0, max=10_000,
                              help="Searches that may wait for a worker; more at once are answered 503 with Retry-After."),
    cache: int = typer.Option(256, "--cache", min=0, max=1_000_000,
                              help="Queries whose ranking is kept for their next pages, Task 3 answer and reloads (0: none)."),
) -> None:
    """Serve the search page at http://HOST:PORT/ and the JSON API (schema at /openapi.json)."""
    try:
        import uvicorn

        from ..web.app import create_app
    except ImportError as exc:
        raise InputError(f"mathsearch serve needs the web extra ({exc.name} is missing): "
                         "pip install -e '.[web]', then bash scripts/setup_web.sh.") from None
    if not index_dir.is_dir():
        raise InputError(f"no index at {index_dir}: build one with `mathsearch index COLLECTION --index {index_dir}`.")
    if pool is not None and not pool.is_file():
        raise InputError(f"no assessment pool database at {pool}.")
    app = create_app(index_dir, pool, workers=workers, queue=queue, cache_entries=cache)
    how = f"{workers} searches side by side" if workers else "one search at a time"
    console(stderr=True).print(f"mathsearch: serving {index_dir} at http://{host}:{port}/ ({how}; Ctrl-C stops)",
                               highlight=False)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("serve")(friendly_errors(serve))
