"""The installable wheel: `python -m build` makes an sdist and a wheel holding the page's assets
(MathJax, Swagger UI); installed in a fresh venv (its dependencies from the package index), it
names its version, indexes the sample and serves the page, whose formulae Chromium sees typeset from
the wheel's own MathJax (every request the page makes goes to that server; no npm, no CDN)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import COLLECTION, REPO
from web_support import chromium, free_port

import mathsearch

pytestmark = pytest.mark.slow

STATIC = REPO / "src" / "mathsearch" / "web" / "static"
ASSETS = ("mathsearch/web/static/mathjax/tex-chtml-full.js", "mathsearch/web/static/swagger-ui/swagger-ui-bundle.js",
          "mathsearch/web/static/swagger-ui/swagger-ui.css", "mathsearch/web/templates/base.html",
          "mathsearch/systems/ours.toml")
QUESTION = "Why is $\\sum_{n=1}^{\\infty} 1/n$ divergent?"


def _env() -> dict[str, str]:
    """The environment of the fresh venv: this checkout's PYTHONPATH left out."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _checkout_copy(dest: Path) -> Path:
    """The files a release is built from: what git tracks (or would), and the page's npm assets that
    scripts/setup_web.sh copied into the package (git-ignored)."""
    assert (STATIC / "mathjax" / "tex-chtml-full.js").is_file(), "run `bash scripts/setup_web.sh` first"
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    files = [REPO / f for f in listed if not f.startswith("node_modules")]
    files += [p for p in STATIC.rglob("*") if p.is_file()]
    for path in files:
        if path.is_file():
            target = dest / path.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return dest


def _wait(url: str, server: subprocess.Popen, timeout: float = 120.0) -> bytes:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read()
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_wheel_installs_indexes_and_serves_the_typeset_page(tmp_path: Path) -> None:
    source = _checkout_copy(tmp_path / "checkout")
    dist = tmp_path / "dist"
    # CFLAGS=-O0 takes the place of the interpreter's -O3 -Wall: the same modules, sources and files
    # in the wheel, built in 59 s instead of 141 s here; every other test runs the -O3 build of setup.sh.
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
                           env={**_env(), "CFLAGS": "-O0"}, capture_output=True, text=True, timeout=1200)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in dist.iterdir())
    assert f"-{mathsearch.__version__}" in wheels[0].name and f"-{mathsearch.__version__}." in sdists[0].name
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = set(wheel.namelist())
        mathjax = wheel.read("mathsearch/web/static/mathjax/tex-chtml-full.js")
        entry_points = next(wheel.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert set(ASSETS) <= names, set(ASSETS) - names
    assert any("woff" in n for n in names if "/mathjax/" in n)  # MathJax's fonts travel too
    assert "mathsearch = mathsearch.cli:main" in entry_points and "mathsearch = mathsearch.pyterrier" in entry_points
    with tarfile.open(sdists[0]) as sdist:
        in_sdist = {n.split("/", 1)[1].removeprefix("src/") for n in sdist.getnames() if "/" in n}
    assert set(ASSETS) <= in_sdist, set(ASSETS) - in_sdist
    # the compiled core: built into the wheel, and its sources (the kernel's .pyx too) in the sdist
    for kernel in ("indexes/formula/_kernel", "indexes/formula/_tokens", "indexes/formula/_postings", "text/_terms",
                   "encoders/_wordpiece"):
        assert any(n.startswith(f"mathsearch/{kernel}.") and n.endswith(".so") for n in names), kernel
    assert {"mathsearch/indexes/formula/_kernel.pyx", "mathsearch/indexes/formula/_tokens.pyx",
            "mathsearch/indexes/formula/_postings.pyx",
            "mathsearch/text/_terms.pyx", "mathsearch/encoders/_wordpiece.pyx", "mathsearch/formula/parser.pxd"} <= in_sdist

    venv = tmp_path / "wheelvenv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, command = venv / "bin" / "python", venv / "bin" / "mathsearch"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheels[0]}[web]"], env=_env(),
                               capture_output=True, text=True, timeout=1800)
    assert installed.returncode == 0, installed.stderr[-3000:]
    version = subprocess.run([str(command), "--version"], env=_env(), capture_output=True, text=True, timeout=120)
    assert version.stdout.strip() == f"mathsearch {mathsearch.__version__}", version.stdout + version.stderr
    where = subprocess.run([str(python), "-c", "import mathsearch.web; print(mathsearch.web.__file__)"], env=_env(),
                           capture_output=True, text=True, timeout=120).stdout.strip()
    assert where.startswith(str(venv)), where  # the wheel's package, not this checkout's

    index = tmp_path / "index"
    made = subprocess.run([str(command), "index", str(COLLECTION), "--index", str(index), "--json"], env=_env(),
                          capture_output=True, text=True, timeout=1800)
    assert made.returncode == 0, made.stderr[-3000:]
    assert json.loads(made.stdout)["answers"] == 3395

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([str(command), "serve", "--index", str(index), "--port", str(port), "--workers", "0"],
                              env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        health = json.loads(_wait(base + "/health", server))
        assert health["status"] == "ok"
        assert _wait(base + "/static/mathjax/tex-chtml-full.js", server) == mathjax  # the wheel's bytes
        assert b"swagger-ui-bundle.js" in _wait(base + "/docs", server)
        with chromium(viewport={"width": 1000, "height": 800}) as ctx:
            page = ctx.new_page()
            requests: list[str] = []
            failed: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.goto(f"{base}/?q={quote(QUESTION)}")
            page.wait_for_selector("html[data-math=ready]", timeout=30000)
            page.wait_for_selector(".snippet mjx-container", timeout=30000)
            assert page.locator(".snippet mjx-container").count() > 0
            assert page.locator(".tex-error").count() == 0
            assert f"{base}/static/mathjax/tex-chtml-full.js" in requests
            assert all(url.startswith(base) or url.startswith("data:") for url in requests), requests
            assert not failed, failed
            page.goto(f"{base}/docs")
            page.wait_for_selector("#swagger-ui .opblock", timeout=30000)  # Swagger UI from the wheel, drawn
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
