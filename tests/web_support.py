"""Helpers of the web tests (and the assessment tool's): serve an app on loopback, drive Chromium.

    with serve(app) as base_url: ...          # uvicorn in a thread on a free port of 127.0.0.1
    with chromium() as ctx: page = ctx.new_page()   # Debian's /usr/bin/chromium through Playwright
    topics = topics_file(data_dir, folder, ("A.201", "A.203"))   # a few real topics, for a small pool

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (installed by
``bash scripts/setup_web.sh``) headless, without sandbox, GPU or any background network, with an
empty temporary profile.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(app, timeout: float = 30.0) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a daemon thread on a free loopback port; yields the base URL
    (``http://127.0.0.1:PORT``) once the server accepts connections, and stops it afterwards."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start on port {port}")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)


@contextlib.contextmanager
def chromium(**context: object) -> Iterator[object]:
    """A Playwright BrowserContext on Debian's Chromium, headless, in an empty temporary profile
    (``--user-data-dir``: Playwright takes it as launch_persistent_context's folder).  ``context``:
    options of the context (viewport, ...).  ``ctx.new_page()`` opens a tab."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.is_file(), f"{CHROMIUM} is missing: run `bash scripts/setup_web.sh` (as root)"
    with tempfile.TemporaryDirectory(prefix="ms-chromium-") as profile, sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(profile, executable_path=str(CHROMIUM), headless=True,
                                                    args=list(CHROMIUM_FLAGS), **context)
        try:
            yield ctx
        finally:
            ctx.close()


def topics_file(data_dir: Path, folder: Path, numbers: tuple[str, ...], year: int = 2021) -> Path:
    """``folder/topics.xml``: the real Task 1 topics of ``year`` whose number is in ``numbers`` (the
    assessment tests pool a run of these few)."""
    from lxml import etree

    tree = etree.parse(str(data_dir / f"topics/task1-{year}.xml"))
    for t in list(tree.getroot()):
        if t.get("number") not in numbers:
            tree.getroot().remove(t)
    topics = folder / "topics.xml"
    tree.write(str(topics))
    assert len(tree.getroot()) == len(numbers), f"not every topic of {numbers} is in {year}'s"
    return topics
