"""Load on ``mathsearch serve``'s JSON API over loopback: the server of one search at a time beside
the one of searches side by side with its result cache, on the same index and clients, and the
CLI's latency for the same queries.

    python bench/bench_web.py --index IDX [--clients 16] [--seconds 60] [--year 2020] [--cli 20]
                              [--workers N] [--servers single,workers,cached] [--page2 20]

Each server runs as ``mathsearch serve --index IDX ...`` in its own process on a free port of
127.0.0.1 (nothing else is ever addressed), all started first, then loaded in turns:

* ``single``: ``--workers 0 --cache 0``, searches one at a time in the server process (the server
  before issue 32: one Searcher behind a lock, every page a new search);
* ``workers``: ``--workers N --cache 0``, N searches side by side in worker processes and no
  cache: what side by side alone gives, every request a search;
* ``cached``: ``--workers N``, as ``mathsearch serve`` starts by default (result cache on; the
  clients go round the topic list, so after one round a query's ranking is kept).

For Task 1 (the topics' titles, text with $LaTeX$) and then Task 2 (the topics' query formulae),
``--clients`` clients each send ``GET /api/search?q=...&task=T`` one after another, round the
topic list, for ``--seconds`` seconds a server, in ``--rounds`` turns (server after server, so
that the load of others on a shared machine falls on each alike; at most ``--max-requests``
requests a turn): each
request's latency, from the client's send to the last byte, and any status other than 200 (an
error) are recorded, and the share of requests the cache answered (from /health).  The server's
memory is sampled from /proc: the peak of its processes' resident sets summed (RSS, every 0.5 s:
a shared page counted once per process) and of their proportional sets (PSS, every 2 s: a shared
page divided among its sharers, what the processes cost together).  Then, with no other load, page 2
of the first ``--page2`` queries of each task, each asked right after its page 1: its latency.

Beside it, the CLI's latency: the same ``Searcher.search`` call that ``mathsearch search`` makes,
one query at a time in this process (index opened and warmed once, as a server keeps it), over
the first ``--cli`` queries of each task.
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
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
TOPICS = REPO.parent / "shared" / "data" / "arqmath" / "topics"

SERVERS = {  # name: (label, serve's options); {n} is --workers
    "single": ("one at a time (before)", ["--workers", "0", "--cache", "0"]),
    "workers": ("{n} workers, no cache", ["--workers", "{n}", "--cache", "0"]),
    "cached": ("{n} workers + cache (default)", ["--workers", "{n}"]),
}


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


def rss(pid: int) -> int:
    """Resident bytes of process ``pid`` (0 when gone), from /proc/PID/statm: cheap to read."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def pss(pid: int) -> int:
    """Proportional bytes of process ``pid``: /proc/PID/smaps_rollup walks its page tables (costly)."""
    from mathsearch.web.workers import memory_of

    m = memory_of(pid)
    return m["pss"] if m else 0


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class PeakMemory:
    """The peak RSS (every ``every`` seconds) and PSS (every ``pss_every``: reading it stalls the
    process a moment) of a process tree, summed over its processes, sampled on a thread."""

    def __init__(self, pid: int, every: float = 0.5, pss_every: float = 2.0):
        self.pid, self.every, self.pss_every, self.rss, self.pss = pid, every, pss_every, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        last_pss = 0.0
        while not self._stop.wait(self.every):
            tree = [self.pid, *children(self.pid)]
            self.rss = max(self.rss, sum(rss(p) for p in tree))
            if time.monotonic() - last_pss >= self.pss_every:
                last_pss = time.monotonic()
                self.pss = max(self.pss, sum(pss(p) for p in tree))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class Server:
    """``mathsearch serve`` with ``SERVERS[name]``'s options on a free loopback port, its memory sampled."""

    def __init__(self, args, name: str):
        label, flags = SERVERS[name]
        self.name, self.label = name, label.format(n=args.workers)
        port = free_port()
        self.process = subprocess.Popen([sys.executable, "-m", "mathsearch", "serve", "--index", str(args.index),
                                         "--host", "127.0.0.1", "--port", str(port),
                                         *(f.format(n=args.workers) for f in flags)], stderr=subprocess.PIPE, text=True)
        self.base = f"http://127.0.0.1:{port}"
        self.peak: PeakMemory | None = None

    def wait(self) -> None:
        for _ in range(600):
            try:
                if httpx.get(self.base + "/health", timeout=60).status_code == 200:
                    self.peak = PeakMemory(self.process.pid)
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise SystemExit(f"the server {self.label!r} did not start: "
                         + (self.process.stderr.read() if self.process.poll() is not None else ""))

    def health(self) -> dict:
        return httpx.get(self.base + "/health", timeout=60).json()

    def stop(self) -> None:
        if self.peak:
            self.peak.stop()
        self.process.terminate()
        self.process.wait(30)


def under_load(args, servers: list[Server], qs: dict[int, list[str]], tasks: list[int]) -> list[tuple]:
    """Each task's load on every server, in ``--rounds`` turns (server after server, each turn a
    share of ``--seconds``), so that the others' load on a shared machine falls on all alike;
    then page 2 of queries already searched."""
    rows = []
    for task in tasks:
        got = {s.name: {"latencies": [], "errors": {}, "wall": 0.0, "hits": 0, "asked": 0} for s in servers}
        for s in servers:
            httpx.get(s.base + "/api/search", params={"q": qs[task][0], "task": task}, timeout=120)  # warm
        for _ in range(args.rounds):
            for s in servers:
                before = s.health()["cache"]
                r = asyncio.run(load(s.base, task, qs[task], args.clients, args.seconds / args.rounds, args.max_requests))
                after = s.health()["cache"]
                g = got[s.name]
                g["latencies"] += r["latencies"]
                g["wall"] += r["wall"]
                g["hits"] += after["hits"] - before["hits"]
                g["asked"] += after["hits"] + after["misses"] - before["hits"] - before["misses"]
                for k, v in r["errors"].items():
                    g["errors"][k] = g["errors"].get(k, 0) + v
        for s in servers:
            g = got[s.name]
            lat = g["latencies"]
            rows.append((s.label, task, len(lat), sum(g["errors"].values()), len(lat) / g["wall"],
                         statistics.median(lat) * 1000, percentile(lat, 95) * 1000,
                         ", ".join(f"{k}: {v}" for k, v in g["errors"].items()),
                         g["hits"] / g["asked"] if g["asked"] else 0.0, s.peak))
    for s in servers:
        for task in tasks:
            lat, errors = [], 0
            with httpx.Client(base_url=s.base, timeout=120) as http:  # one connection, as a browser keeps it
                for q in qs[task][: args.page2]:
                    first = http.get("/api/search", params={"q": q, "task": task})
                    t0 = time.perf_counter()
                    second = http.get("/api/search", params={"q": q, "task": task, "page": 2})
                    lat.append(time.perf_counter() - t0)
                    errors += (first.status_code != 200) + (second.status_code != 200)
            rows.append((s.label + ": page 2 right after page 1, no other load", task, len(lat), errors,
                         len(lat) / sum(lat), statistics.median(lat) * 1000, percentile(lat, 95) * 1000, "", None, None))
    return rows


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
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="of the side-by-side servers")
    ap.add_argument("--servers", default="single,workers,cached", help=f"of {', '.join(SERVERS)}, in this order")
    ap.add_argument("--page2", type=int, default=20, help="queries a task whose page 2 is timed after its page 1")
    ap.add_argument("--rounds", type=int, default=6, help="turns the servers take at each task's load")
    args = ap.parse_args(argv)
    tasks = [int(t) for t in args.tasks.split(",")]
    servers = args.servers.split(",")
    unknown = [s for s in servers if s not in SERVERS]
    if unknown:
        ap.error(f"--servers: unknown {', '.join(unknown)}; known: {', '.join(SERVERS)}")
    qs = queries(args.year)
    running = [Server(args, name) for name in servers]
    try:
        for s in running:
            s.wait()
        rows = under_load(args, running, qs, tasks)
        healths = {s.name: s.health() for s in running}
    finally:
        for s in running:
            s.stop()
    for task in tasks:
        lat = cli_latency(args.index, task, qs[task][: args.cli])
        rows.append(("library, 1 at a time (the CLI's call)", task, len(lat), 0, len(lat) / sum(lat),
                     statistics.median(lat) * 1000, percentile(lat, 95) * 1000, "", None, None))
    avg = os.getloadavg()
    print(f"index {args.index}; {args.year} topics; {args.clients} clients; {args.seconds:g} s of load a task; "
          f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}); load average at the end "
          f"{avg[0]:.1f} {avg[1]:.1f} {avg[2]:.1f}")
    print("| server | task | requests | errors | req/s | median ms | p95 ms | from the cache | peak RSS MB | peak PSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for what, task, n, err, rps, med, p95, detail, hit_rate, peak in rows:
        errs = f"{err}{' (' + detail + ')' if detail else ''}"
        hits = f"{hit_rate:.0%}" if hit_rate is not None else ""
        mem = f"{peak.rss / 2**20:,.0f} | {peak.pss / 2**20:,.0f}" if peak else " | "
        print(f"| {what} | {task} | {n} | {errs} | {rps:.1f} | {med:.0f} | {p95:.0f} | {hits} | {mem} |")
    by = {(r[0], r[1]): r for r in rows}
    single = SERVERS["single"][0]
    for name in servers:
        label = SERVERS[name][0].format(n=args.workers)
        if name != "single" and "single" in servers:
            ratios = ", ".join(f"Task {t} {by[(label, t)][4] / by[(single, t)][4]:.2f}x" for t in tasks)
            print(f"throughput of '{label}' against '{single}': {ratios}")
        searches = healths[name]["searches"]
        if searches.get("memory") and searches["workers"]:
            n, mem = searches["workers"], searches["memory"]
            print(f"'{label}': a worker's own memory (private pages) {mem['worker_private'] / n / 2**20:,.0f} MB, "
                  f"its RSS {mem['worker_rss'] / n / 2**20:,.0f} MB, PSS {mem['worker_pss'] / n / 2**20:,.0f} MB "
                  f"(mean of {n} at the end); {searches['stopped']} searches stopped past their budget, "
                  f"{searches['refused']} refused for a full queue")
    return 0 if all(r[3] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
