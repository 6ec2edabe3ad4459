"""``mathsearch serve --index IDX``: the search page and the JSON API (FastAPI + uvicorn).

A thin face over :func:`mathsearch.web.app.create_app`; the web extra (fastapi, uvicorn, jinja2)
and MathJax (``bash scripts/setup_web.sh``) are checked before the server starts."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import typer

from ..errors import InputError
from ..indexes.directory import IndexDirectory
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
    IndexDirectory(index_dir).require(("store",))  # one sentence with a build command that works
    if pool is not None and not pool.is_file():
        raise InputError(f"no assessment pool database at {pool}.")
    check_port(host, port)  # before the indexes are opened and before the banner says "serving"
    app = create_app(index_dir, pool, workers=workers, queue=queue, cache_entries=cache)
    how = f"{workers} searches side by side" if workers else "one search at a time"
    assess = f", assessment of {pool.name} at http://{host}:{port}/assess" if pool is not None else ""
    console(stderr=True).print(f"mathsearch: serving {index_dir} at http://{host}:{port}/{assess} ({how}; Ctrl-C stops)",
                               highlight=False, soft_wrap=True)
    # A request head up to MAX_REQUEST_HEAD reaches the app, which answers an overlong query with its
    # own 422 (JSON on the API, the page's error on the page) instead of h11's plain-text 400.
    uvicorn.run(app, host=host, port=port, log_level="warning", h11_max_incomplete_event_size=MAX_REQUEST_HEAD)


MAX_REQUEST_HEAD = 1 << 20  # bytes of request line and headers (h11's default is 16 KiB)


def check_port(host: str, port: int) -> None:
    """Refuse, with one sentence, an address that cannot be listened on (a port in use, a host that
    is not this machine's) before anything is loaded or said; uvicorn would print its own error
    after our banner."""
    if port == 0:
        return  # the system picks a free one
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(f"--host {host}: not an address of this machine ({exc.strerror}).") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds: TIME_WAIT is no conflict
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise InputError(f"port {port} on {host} is in use (another server?): stop it or give another --port.") from None
            raise InputError(f"cannot listen on {host}:{port} ({exc.strerror}).") from None


def register(app: typer.Typer) -> None:
    app.command("serve")(friendly_errors(serve))
