"""Formula index build and Task 2 query latency on a (generated) collection.

    python bench/bench_formula_search.py --index INDEX_DIR [--collection DIR] [--repeat 1]

INDEX_DIR must hold a collection store (``mathsearch index DIR --index INDEX_DIR --store-only``,
or give ``--collection`` to build it first).  Each phase runs in its own process so its peak
memory is its own:

* build: ``build_formula_index`` into INDEX_DIR (wall and CPU seconds, peak RSS of the process
  and of its analysis workers, index bytes, counts);
* query: the 2021 Task 2 topics through ``formula`` (also without its thread text boost, which needs
  the text index) and the Tangent-S baseline ``tangent-s-formula``
  (the peer, measured in the same run), median and p95 milliseconds per topic, wall and CPU
  (the machine is shared: CPU time is the steadier figure), and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
SYSTEMS = ("formula", "formula:config=NOTEXT", "tangent-s-formula")


def _rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _no_text_config() -> Path:
    """The packaged formula.toml with the thread text boost off (formula structure alone)."""
    import tempfile

    from mathsearch.systems.formula import DEFAULT_CONFIG

    text = (Path(__file__).resolve().parents[1] / "src" / "mathsearch" / "systems" / DEFAULT_CONFIG).read_text()
    path = Path(tempfile.gettempdir()) / "formula-no-text.toml"
    path.write_text(text.replace("[text]\nweight = ", "[text]\nweight = 0.0 # ", 1))
    return path


def phase_build(index: Path) -> dict:
    from mathsearch.indexes.formula import build_formula_index
    from mathsearch.store import Store

    wall, cpu = time.perf_counter(), time.process_time()
    with Store.open(index) as store:
        counts = build_formula_index(store, index)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        **counts, "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu + children.ru_utime + children.ru_stime,
        "peak_mb": _rss_mb(resource.RUSAGE_SELF), "workers_peak_mb": _rss_mb(resource.RUSAGE_CHILDREN),
    }


def phase_query(index: Path, topics_path: Path, repeat: int) -> dict:
    from mathsearch.errors import InputError
    from mathsearch.readers.topics import read_topics
    from mathsearch.systems import SearchContext, SearchQuery, make_system

    topics = read_topics(topics_path)
    ctx = SearchContext(index)
    out = {}
    started = time.perf_counter()
    ctx.formula  # open the memory-mapped arrays once  # noqa: B018
    out["open_s"] = time.perf_counter() - started
    for name in SYSTEMS:
        system = make_system(name.replace("NOTEXT", str(_no_text_config())))
        try:
            system.search(ctx, SearchQuery.from_topic(topics[0]))  # warm the page cache and imports
        except InputError as exc:  # e.g. the text boost without a text index: say so, go on
            out[name] = {"skipped": str(exc)}
            continue
        walls, cpus, hits = [], [], []
        for _ in range(repeat):
            for topic in topics:
                q = SearchQuery.from_topic(topic)
                w, c = time.perf_counter(), time.process_time()
                found = system.search(ctx, q)
                walls.append((time.perf_counter() - w) * 1000)
                cpus.append((time.process_time() - c) * 1000)
                hits.append(len(found))
        out[name] = {
            "median_ms": statistics.median(walls), "p95_ms": sorted(walls)[int(0.95 * (len(walls) - 1))],
            "median_cpu_ms": statistics.median(cpus), "p95_cpu_ms": sorted(cpus)[int(0.95 * (len(cpus) - 1))],
            "mean_hits": statistics.mean(hits), "queries": len(walls),
        }
    out["peak_mb"] = _rss_mb(resource.RUSAGE_SELF)
    return out


def _run(args: list[str]) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"phase {args[0]} failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phase", nargs="?", default="all", choices=("all", "build", "query"))
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--collection", type=Path, default=None, help="Build the store from this collection first.")
    ap.add_argument("--topics", type=Path, default=DATA / "topics" / "task2-2021.xml")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-build", action="store_true", help="Query an existing formula index.")
    args = ap.parse_args(argv)
    if args.phase == "build":
        print(json.dumps(phase_build(args.index)))
        return 0
    if args.phase == "query":
        print(json.dumps(phase_query(args.index, args.topics, args.repeat)))
        return 0
    if args.collection is not None:
        from mathsearch.building import build_index

        build_index(args.collection, args.index, store_only=True)
    common = ["--index", str(args.index)]
    print(f"formula index of {args.index}", flush=True)
    if not args.no_build:
        build = _run(["build", *common])
        print("| instances | visual formulae | tokens | postings | build wall s | build CPU s | index MiB "
              "| peak MiB (main / workers) |")
        print("|---|---|---|---|---|---|---|---|")
        print(f"| {build['formula_instances']:,} | {build['formula_visual']:,} | {build['formula_tokens']:,} "
              f"| {build['formula_postings']:,} | {build['wall_s']:.1f} | {build['cpu_s']:.1f} "
              f"| {build['formula_bytes'] / 2**20:.0f} | {build['peak_mb']:.0f} / {build['workers_peak_mb']:.0f} |",
              flush=True)
    query = _run(["query", *common, "--topics", str(args.topics), "--repeat", str(args.repeat)])
    print(f"\nTask 2 queries ({args.topics.name}, x{args.repeat}); index opened in {query['open_s'] * 1000:.0f} ms; "
          f"query process peak {query['peak_mb']:.0f} MiB")
    print("| system | median ms | p95 ms | median CPU ms | p95 CPU ms | ratio to tangent-s-formula (median CPU) | hits |")
    print("|---|---|---|---|---|---|---|")
    base = query["tangent-s-formula"]["median_cpu_ms"]
    for name in SYSTEMS:
        r = query[name]
        if "skipped" in r:
            print(f"| {name} | skipped: {r['skipped']} | | | | | |")
            continue
        print(f"| {name} | {r['median_ms']:.0f} | {r['p95_ms']:.0f} | {r['median_cpu_ms']:.0f} | {r['p95_cpu_ms']:.0f} "
              f"| {r['median_cpu_ms'] / max(base, 1e-9):.2f} | {r['mean_hits']:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
