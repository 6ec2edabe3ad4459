"""Load on ``mathsearch serve``'s JSON API over loopback, beside the CLI's latency for the same queries.

    python bench/bench_web.py --index IDX [--clients 16] [--seconds 60] [--year 2020] [--cli 20]

The server runs as ``mathsearch serve --index IDX`` in its own process on a free port of
127.0.0.1 (nothing else is ever addressed).  For Task 1 (the topics' titles, text with $LaTeX$)
and then Task 2 (the topics' query formulae), ``--clients`` clients each send
``GET /api/search?q=...&task=T`` one after another, round the topic list, for ``--seconds``
seconds (at most ``--max-requests`` requests a task): each request's latency, from the client's
send to the last byte, and any status other than 200 (an error) are recorded.

Beside it, the CLI's latency: the same ``Searcher.search`` call that ``mathsearch search`` makes,
one query at a time in this process (index opened and warmed once, as a server keeps it), over
the first ``--cli`` queries of each task.  The server answers one search at a time (one set of open
indexes), so with 16 clients a request's latency is mostly its wait for its turn: latency ~
clients x service time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
TOPICS = REPO.parent / "shared" / "data" / "arqmath" / "topics"


def queries(year: int) -> dict[int, list[str]]:
    """Task 1: each topic's title as text with $LaTeX$; Task 2: each topic's formula as $LaTeX$."""
    from mathsearch.indexes.documents import topic_text
    from mathsearch.readers.topics import read_topics

    t1 = [" ".join(topic_text(t)[0].split())[:900] for t in read_topics(TOPICS / f"task1-{year}.xml")]
    t2 = [f"${q.latex}$" for t in read_topics(TOPICS / f"task2-{year}.xml") if (q := t.query_formula) and q.latex]
    return {1: [q for q in t1 if q.strip()], 2: [q for q in t2 if len(q) <= 900]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def load(base: str, task: int, qs: list[str], clients: int, seconds: float, max_requests: int) -> dict:
    latencies: list[float] = []
    errors: dict[str, int] = {}
    sent = 0
    deadline = time.monotonic() + seconds

    async def client(n: int, http: httpx.AsyncClient) -> None:
        nonlocal sent
        i = n
        while time.monotonic() < deadline and sent < max_requests:
            sent += 1
            q = qs[i % len(qs)]
            i += clients
            t0 = time.perf_counter()
            try:
                r = await http.get("/api/search", params={"q": q, "task": task})
                await r.aread()
                status = str(r.status_code)
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            latencies.append(time.perf_counter() - t0)
            if status != "200":
                errors[status] = errors.get(status, 0) + 1

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        started = time.monotonic()
        await asyncio.gather(*(client(n, http) for n in range(clients)))
        wall = time.monotonic() - started
    return {"requests": len(latencies), "errors": errors, "wall": wall, "latencies": latencies}


def cli_latency(index: Path, task: int, qs: list[str]) -> list[float]:
    from mathsearch.searcher import Searcher

    s = Searcher(index)
    s.search(qs[0], task)  # open and warm the indexes, as a server has them
    out = []
    for q in qs:
        t0 = time.perf_counter()
        s.search(q, task)
        out.append(time.perf_counter() - t0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=60.0, help="of load per task")
    ap.add_argument("--max-requests", type=int, default=20_000, help="a task's requests at most")
    ap.add_argument("--year", type=int, default=2020)
    ap.add_argument("--cli", type=int, default=20, help="queries a task timed through the library (the CLI's call)")
    ap.add_argument("--tasks", default="1,2")
    args = ap.parse_args(argv)
    tasks = [int(t) for t in args.tasks.split(",")]
    qs = queries(args.year)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mathsearch", "serve", "--index", str(args.index),
                               "--host", "127.0.0.1", "--port", str(port)], stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    rows = []
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/health", timeout=60).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise SystemExit("the server did not start: " + (server.stderr.read() if server.poll() is not None else ""))
        for task in tasks:
            httpx.get(base + "/api/search", params={"q": qs[task][0], "task": task}, timeout=120)  # warm
            r = asyncio.run(load(base, task, qs[task], args.clients, args.seconds, args.max_requests))
            lat = r["latencies"]
            rows.append((f"serve, {args.clients} clients", task, r["requests"], sum(r["errors"].values()),
                         r["requests"] / r["wall"], statistics.median(lat) * 1000, percentile(lat, 95) * 1000,
                         ", ".join(f"{k}: {v}" for k, v in r["errors"].items())))
    finally:
        server.terminate()
        server.wait(30)
    for task in tasks:
        lat = cli_latency(args.index, task, qs[task][: args.cli])
        rows.append(("library, 1 at a time (the CLI's call)", task, len(lat), 0, len(lat) / sum(lat),
                     statistics.median(lat) * 1000, percentile(lat, 95) * 1000, ""))
    print(f"index {args.index}; {args.year} topics; {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}); "
          f"{args.seconds:g} s of load a task")
    print("| what | task | requests | errors | req/s | median ms | p95 ms |")
    print("|---|---|---|---|---|---|---|")
    for what, task, n, err, rps, med, p95, detail in rows:
        print(f"| {what} | {task} | {n} | {err}{' (' + detail + ')' if detail else ''} | {rps:.1f} | {med:.0f} | {p95:.0f} |")
    return 0 if all(r[3] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
