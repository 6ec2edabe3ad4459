"""Search benchmark on a generated collection: index build time and size, peak memory, query latency.

    python bench/bench_search.py --answers 100000 [--work /tmp/bench_search] [--systems ours:dense=False,bm25-answer]
    python bench/bench_search.py --index INDEX_DIR --systems ours,ours:dense=False   # an index built already
    python bench/bench_search.py --answers 100000 --encoder ENC --query-encoder minilm --systems ours,ours:dense=False
    python bench/bench_search.py --answers 1400000 --dense --systems ours,ours:dense=False   # the plan index --dense picks

Steps, each in its own process so that its peak memory (max RSS) is its own:
1. ``bench/make_collection.py --answers N`` (skipped when the collection is already there);
2. ``build_index`` (store, then the text and formula indexes side by side) -> wall and CPU seconds
   (the process and its children), seconds per step, size on disk per part, peak RSS of the
   main process and of the largest child (the formula step and its analysis workers);
3. every 2021 Task 1 topic through each Task 1 system and every 2021 Task 2 topic through each
   Task 2 system -> median and p95 latency per topic, wall and CPU, peak RSS, with the first
   system's median as a ratio against the others (measured in the same run); with
   ``--one-thread-peer`` each Task 2 system again with its formula search on one thread, the peer
   of the two halves a large index's search runs in (``FormulaIndex.SPLIT_FROM``).
The goals (issue 5): full build <= 60 min, Task 1 median <= 150 ms, Task 2 median <= 300 ms,
peak memory <= 12 GiB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
TOPICS = REPO.parent / "shared" / "data" / "arqmath" / "topics"
TOPIC_FILES = {1: TOPICS / "task1-2021.xml", 2: TOPICS / "task2-2021.xml"}

BUILD = """
import json, os, resource, sys, threading, time
from mathsearch.building import build_index

def used_mib():  # the machine's memory in use: every process of the build together (its children's too)
    info = dict(line.split(":", 1) for line in open("/proc/meminfo"))
    return (int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])) / 1024

def pss_anon_mib(pid):  # a process's share of the anonymous pages (pages a fork shares count once, split)
    for line in open(f"/proc/{pid}/smaps_rollup"):
        if line.startswith("Pss_Anon:"):
            return int(line.split()[1]) / 1024
    return 0.0

def holders():  # at the peak: this process, and each child with the workers it forked, in start order
    parent = {}
    for d in os.listdir("/proc"):
        try:
            parent[int(d)] = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
        except (ValueError, OSError):
            continue
    me, out = os.getpid(), {}
    def tracker(pid):
        return b"\\0from multiprocessing.resource_tracker" in open(f"/proc/{pid}/cmdline", "rb").read()

    # the steps' children, in the order they started (text, formula), and multiprocessing's tracker
    children = [pid for pid in sorted(parent) if parent[pid] == me and not tracker(pid)]
    for pid in sorted(parent):
        top = pid
        while top in parent and parent[top] not in (me, 0, 1):
            top = parent[top]
        if pid == me or parent.get(top) == me:
            try:
                key = "main" if pid == me else f"child {children.index(top) + 1}" if top in children else "tracker"
                out[key] = out.get(key, 0.0) + pss_anon_mib(pid)
            except OSError:
                continue
    return {k: round(v) for k, v in out.items()}

start_used, peak_used, done, t = used_mib(), [0.0], threading.Event(), time.perf_counter()
peak_at = [0.0, {}]
def sample():
    while not done.wait(1.0):
        used = used_mib()
        if used > peak_used[0]:
            peak_used[0] = used
            try:
                peak_at[:] = [time.perf_counter() - t, holders()]
            except Exception:  # noqa: BLE001 - who held it is a note; the peak itself must keep being sampled
                pass
threading.Thread(target=sample, daemon=True).start()
c = time.process_time()
encoder, query_encoder, plan, budget = sys.argv[3] or None, sys.argv[4] or None, sys.argv[5] or None, float(sys.argv[6])
optional = ("dense",) if encoder or plan else ()
counts = build_index(sys.argv[1], sys.argv[2], optional=optional, encoder=encoder if encoder or plan else "minilm",
                     query_encoder=query_encoder, **({"dense_plan": plan, "dense_budget": budget} if plan else {}))
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": time.perf_counter() - t, "answers": counts.answers,
                  "indexes": {"store_seconds": counts.seconds, **counts.indexes},
                  "cpu_seconds": time.process_time() - c + kids.ru_utime + kids.ru_stime,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "child_peak_mib": kids.ru_maxrss / 1024,
                  "machine_peak_mib": max(peak_used[0] - start_used, 0.0),
                  "machine_peak_at_s": round(peak_at[0]), "machine_peak_pss_anon_mib": peak_at[1], "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}))
done.set()
"""

QUERY = """
import json, resource, statistics, sys, time
from mathsearch.readers.topics import read_topics
from mathsearch.indexes.formula import FormulaIndex
from mathsearch.systems import SearchContext, SearchQuery, make_system
if sys.argv[4] == "one-thread":  # the peer: a large index's formula search on one thread, not in two halves
    FormulaIndex.SPLIT_FROM = 1 << 62
ctx = SearchContext(sys.argv[1])
system = make_system(sys.argv[2])
queries = [SearchQuery.from_topic(t) for t in read_topics(sys.argv[3])]
system.search(ctx, queries[0], 1000)  # open the indexes before timing
times, cpus = [], []
for q in queries:
    t, c = time.perf_counter(), time.process_time()
    system.search(ctx, q, 1000)
    times.append((time.perf_counter() - t) * 1000)
    cpus.append((time.process_time() - c) * 1000)
times.sort()
cpus.sort()
print(json.dumps({"median_ms": statistics.median(times), "p95_ms": times[int(0.95 * (len(times) - 1))],
                  "median_cpu_ms": statistics.median(cpus), "p95_cpu_ms": cpus[int(0.95 * (len(cpus) - 1))],
                  "topics": len(times), "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _child(code: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"step failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _build(collection: Path, index: Path, encoder: str, query_encoder: str, plan: str, budget: float) -> dict:
    """Build ``index`` in a child process; its figures, also kept beside the index (``INDEX.build.json``)
    so that a later run prints them again (e.g. the build without vectors beside one with)."""
    build = _child(BUILD, str(collection), str(index), encoder, query_encoder, plan, str(budget))
    _record_path(index).write_text(json.dumps(build))
    return build


def _record_path(index: Path) -> Path:
    return index.with_name(index.name + ".build.json")


def _record(index: Path) -> dict | None:
    try:
        return json.loads(_record_path(index).read_text())
    except (OSError, ValueError):
        return None


def _size_mib(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def _resumed(indexes: dict) -> str:
    """What a build read back from an interrupted one (its record's counts), in words; "" if nothing."""
    # the teacher's head start (made by this build while its store was written) is not an earlier build's
    own = {"teacher_resumed_posts": indexes.get("teacher_resumed_posts", 0) - indexes.get("teacher_head_start_posts", 0),
           "dense_resumed_posts": indexes.get("dense_resumed_posts", 0)}
    parts = [f"{own[k]:,} {what}" for k, what in (("teacher_resumed_posts", "teacher vectors"),
                                                  ("dense_resumed_posts", "post vectors")) if own[k] > 0]
    if indexes.get("student_reused"):
        parts.append("the trained student")
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", type=int, default=100_000)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_search"))
    ap.add_argument("--systems", default="ours:dense=False,bm25-answer,bm25-thread", help="Task 1 systems")
    ap.add_argument("--task2-systems", default="formula,tangent-s-formula", help="Task 2 systems")
    ap.add_argument("--index", type=Path, help="time queries on this built index instead (no generation, no build)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the index even when present")
    ap.add_argument("--encoder", default="", help="build dense vectors with this encoder (a name or folder)")
    ap.add_argument("--query-encoder", default="", help="encode topics with this encoder (e.g. minilm)")
    ap.add_argument("--dense", nargs="?", const="auto", default="", metavar="PLAN",
                    help="build dense vectors by the plan `mathsearch index --dense [PLAN]` chooses (auto, minilm, student)")
    ap.add_argument("--dense-budget", type=float, default=60.0, help="minutes the dense part may take (--dense)")
    ap.add_argument("--one-thread-peer", action="store_true",
                    help="also time each Task 2 system with its formula search on one thread (no halves)")
    ap.add_argument("--no-plain", action="store_true",
                    help="with --dense or --encoder: do not also build (or report) the index without vectors")
    args = ap.parse_args(argv)
    collection = args.work / f"collection-{args.answers}"
    tag = f"-{Path(args.encoder).name}" if args.encoder else f"-dense-{args.dense}" if args.dense else ""
    index = args.index or args.work / f"index-{args.answers}{tag}"
    if args.index is None and not (collection / "Posts.V1.3.xml").is_file():
        subprocess.run([sys.executable, str(BENCH / "make_collection.py"), "--answers", str(args.answers),
                        "--out", str(collection)], check=True, stdout=subprocess.DEVNULL)
    build = None
    if args.index is None and (args.rebuild or not (index / "formula" / "manifest.json").is_file()):
        build = _build(collection, index, args.encoder, args.query_encoder, args.dense, args.dense_budget)
    elif args.index is None:
        build = _record(index)
    sizes = {part.name: _size_mib(part) for part in sorted(index.iterdir())}
    print(f"index: {index}" if args.index else f"collection: {args.answers:,} answers ({collection})")
    if build:
        rows = [("vectors: " + (args.dense and f"--dense {args.dense}" or args.encoder or "none"), build)]
        if (args.encoder or args.dense) and not args.no_plain:  # the build without vectors beside it, measured too
            plain = args.work / f"index-{args.answers}"
            if args.rebuild or not (plain / "formula" / "manifest.json").is_file():
                built = _build(collection, plain, "", "", "", args.dense_budget)
            else:
                built = _record(plain)  # None for an index built otherwise: its figures are unknown
            if built:
                rows.append(("vectors: none", built))
        print()
        print("| build | wall min | CPU min | steps, wall s | peak RSS MiB (main / largest child) | machine peak MiB | finished |")
        print("|---|---|---|---|---|---|---|")
        for label, b in rows:
            steps = ", ".join(f"{k[:-8]} {v:,.0f}" for k, v in b["indexes"].items()
                              if k.endswith("_seconds") and not k.endswith("cpu_seconds")
                              and isinstance(v, int | float))
            print(f"| {label} | {b['seconds'] / 60:.1f} | {b['cpu_seconds'] / 60:.1f} | {steps} | "
                  f"{b['peak_mib']:,.0f} / {b['child_peak_mib']:,.0f} | {b.get('machine_peak_mib', 0):,.0f} | "
                  f"{b.get('finished', '?')} |")
        for label, b in rows:
            if b.get("machine_peak_pss_anon_mib"):  # who held the memory at the machine's peak
                print(f"\n{label}: machine peak {b['machine_peak_at_s']:,} s into the build; anonymous memory (PSS MiB), "
                      "children in the order they started, each with its workers: "
                      + ", ".join(f"{k} {v:,}" for k, v in b["machine_peak_pss_anon_mib"].items()))
        plan = build["indexes"].get("dense_plan")
        if plan:
            print(f"\ndense plan: {plan['plan']} ({plan['reason']}); teacher posts {plan['teacher_posts']:,}, "
                  f"MiniLM {plan['minilm_posts_per_second']} posts/s measured, rates {plan['rates']}")
        if build["indexes"].get("teacher_head_start_posts"):
            print(f"\nthe teacher's head start: {build['indexes']['teacher_head_start_posts']:,} posts embedded while the "
                  f"store was written ({build['indexes'].get('teacher_head_start_seconds', 0):,.0f} s)")
        resumed = _resumed(build["indexes"])
        if resumed:  # an earlier, interrupted build's work read back: this row's times leave it out
            print(f"\nRESUMED from the work folder's resume data, not made in this run: {resumed}")
    print("index size: " + ", ".join(f"{k} {v:,.1f} MiB" for k, v in sizes.items()))
    print()
    print("| task | system | topics | median ms | p95 ms | median CPU ms | p95 CPU ms | median vs first | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for task, systems in ((1, args.systems), (2, args.task2_systems)):
        first = None
        runs = [(name, mode) for name in systems.split(",") if name
                for mode in (("halves", "one-thread") if task == 2 and args.one_thread_peer else ("halves",))]
        for name, mode in runs:
            r = _child(QUERY, str(index), name, str(TOPIC_FILES[task]), mode)
            first = first or r["median_ms"]
            label = f"{name} (one thread)" if mode == "one-thread" else name
            print(f"| {task} | {label} | {r['topics']} | {r['median_ms']:.1f} | {r['p95_ms']:.1f} | "
                  f"{r['median_cpu_ms']:.1f} | {r['p95_cpu_ms']:.1f} | {r['median_ms'] / first:.2f} | {r['peak_mib']:,.0f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
