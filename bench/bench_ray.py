"""Ray against the current build, and batch runs on Ray, on a generated collection (issue 14).

    nice python bench/bench_ray.py --answers 100000 [--work /tmp/bench_ray] [--cpus 2] [--topics 100]
    python bench/bench_ray.py --agreement SINGLE_INDEX SHARDED_INDEX [--work DIR]   # sharded vs single runs

Steps, each in its own process (so that one's Ray cluster and memory are its own), in this order:
the current build and the Ray build, the batch runs, the 2-shard build, the latencies.
1. ``bench/make_collection.py --answers N`` (skipped when the collection is already there);
2. the index built three ways, in this one run: the current build (store, then text and formula
   side by side, each with a pool of 2 forked workers), the same steps as Ray tasks on a local
   cluster of ``--cpus`` workers (one node), and 2 shards on that cluster -> wall seconds, CPU
   seconds of the build process and its reaped children (Ray's workers are not reaped by the
   build: each Ray task measures its own CPU where it runs, added to that column), seconds per
   step, size on disk, when and under what load average;
3. batch runs: ``--topics`` topics of 2021 through every Task 1 and Task 2 system the index can
   run (systems needing vectors or MIRMU's indexes are listed as skipped), one after the other in
   one process, then as Ray tasks (10 topics a task) on ``--cpus`` workers -> wall seconds each,
   and whether the Ray runs equal the serial ones;
4. per-query latency of ``ours:dense=False`` (Task 1) and ``formula`` (Task 2) on the single index,
   on one shard alone and on the 2 shards searched as one (the per-shard figures of docs/scale.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
TOPICS = REPO.parent / "shared" / "data" / "arqmath" / "topics"

BUILD = """
import json, os, resource, sys, time
os.environ["RAY_DISABLE_USAGE_STATS"] = "1"
from mathsearch.building import build_index
collection, index, mode, cpus = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t, c = time.perf_counter(), time.process_time()
if mode == "current":
    counts = build_index(collection, index)
else:
    import ray
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    started = time.perf_counter() - t
    from mathsearch.building.engine import RayEngine
    counts = build_index(collection, index, engine=RayEngine, shards=int(mode.split(":")[1]))
    ray.shutdown()
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
# Ray's workers are not this process's children: each step measures its own CPU where it runs
tasks = sum(v for k, v in counts.indexes.items() if k.endswith("_cpu_seconds") and isinstance(v, (int, float)))
print(json.dumps({"seconds": time.perf_counter() - t, "answers": counts.answers, "indexes": counts.indexes,
                  "store_seconds": counts.seconds,
                  "ray_start_seconds": started if mode != "current" else 0.0,
                  "cpu_seconds": time.process_time() - c + kids.ru_utime + kids.ru_stime,
                  "task_cpu_seconds": tasks if mode != "current" else 0.0,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

BATCH = """
import json, os, sys, time
os.environ["RAY_DISABLE_USAGE_STATS"] = "1"
from mathsearch.errors import InputError
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, make_system, needs_of, run_rankings, system_names
index, n_topics, cpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ctx = SearchContext(index)
topics = {task: read_topics(sys.argv[3 + task])[:n_topics] for task in (1, 2)}
runnable, skipped = [], []
for task in (1, 2):
    for name in system_names(task):
        spec = "ours:dense=False" if name == "ours" else name
        try:
            ctx.require(("store", *needs_of(make_system(spec))))
            runnable.append((task, spec))
        except InputError as exc:
            skipped.append(f"{name}: {exc}")
t, c = time.perf_counter(), time.process_time()
serial = {}
per_system = {}
for task, spec in runnable:
    s = time.perf_counter()
    serial[spec] = run_rankings(make_system(spec), ctx, topics[task])
    per_system[spec] = time.perf_counter() - s
serial_seconds, serial_cpu = time.perf_counter() - t, time.process_time() - c
import ray
from mathsearch.building.engine import RayEngine
from mathsearch.distributed.batch import run_batch
s = time.perf_counter()
ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
start = time.perf_counter() - s
engine = RayEngine("local")
t = time.perf_counter()
on_ray, stats = {}, {}
for task in (1, 2):
    on_ray.update(run_batch(engine, index, [spec for k, spec in runnable if k == task], topics[task], stats=stats))
ray_seconds = time.perf_counter() - t
ray.shutdown()
same = all(dict(serial[s][q].items()) == dict(on_ray[s][q].items()) for s in serial for q in serial[s])
print(json.dumps({"systems": [s for _, s in runnable], "skipped": skipped, "topics": {k: len(v) for k, v in topics.items()},
                  "serial_seconds": serial_seconds, "ray_seconds": ray_seconds, "ray_start_seconds": start,
                  "serial_cpu_seconds": serial_cpu, "ray_task_cpu_seconds": stats.get("task_cpu_seconds", 0.0),
                  "per_system": per_system, "identical": same}))
"""

LATENCY = """
import json, statistics, sys, time
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery, make_system
ctx = SearchContext(sys.argv[1])
out = {}
for task, spec, path in ((1, "ours:dense=False", sys.argv[2]), (2, "formula", sys.argv[3])):
    system = make_system(spec)
    queries = [SearchQuery.from_topic(t) for t in read_topics(path)]
    system.search(ctx, queries[0], 1000)
    times = []
    for q in queries:
        t = time.perf_counter()
        system.search(ctx, q, 1000)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    out[spec] = {"median_ms": statistics.median(times), "p95_ms": times[int(0.95 * (len(times) - 1))]}
print(json.dumps(out))
"""


AGREEMENT_SYSTEMS = {1: ["bm25-answer", "bm25-thread", "tfidf-words", "tfidf-latex", "tangent-s", "tfidf-tangent-s",
                         "linked-posts", "ours:dense=False"], 2: ["formula", "tangent-s-formula"]}


def agreement(single: Path, sharded: Path, work: Path, only: list[str] | None = None) -> None:
    """Every Task 1 and 2 system over the 2020 and 2021 topics on both indexes, written as run files
    and scored as ``mathsearch eval --task T --qrels Q --index SINGLE --collection-only A B`` does;
    top-10 overlap and identical top 10s over the topics scored."""
    from mathsearch.evaluation import evaluate_runs, from_index
    from mathsearch.readers.topics import read_topics
    from mathsearch.runs import write_formula_run, write_trec_run
    from mathsearch.systems import SearchContext, make_system, run_system

    qrels_dir = TOPICS.parent / "qrels"
    facts = from_index(single)
    contexts = {"single": SearchContext(single), "sharded": SearchContext(sharded)}
    work.mkdir(parents=True, exist_ok=True)
    print(f"single: {single}; sharded: {sharded}")
    print("\n| task | year | system | nDCG' single | nDCG' sharded | difference | mean top-10 overlap | identical top 10 |")
    print("|---|---|---|---|---|---|---|---|")
    known = {s for systems in AGREEMENT_SYSTEMS.values() for s in systems}
    extra = [s for s in only or () if s not in known]  # any other Task 1 spec: ours, ours:config=FILE
    for task, systems in AGREEMENT_SYSTEMS.items():
        systems = systems + extra if task == 1 else systems
        for year in (2020, 2021):
            topics = read_topics(TOPICS / f"task{task}-{year}.xml", TOPICS / "formulas" / f"formulas-{year}-latex.tsv")
            for spec in systems:
                if only and spec not in only:
                    continue
                paths, tops = [], {}
                for label, ctx in contexts.items():
                    hits = run_system(make_system(spec), ctx, topics)
                    path = work / f"task{task}-{year}-{spec.replace(':', '_')}-{label}.tsv"
                    (write_trec_run if task == 1 else write_formula_run)(path, hits, lookup=contexts["single"].store)
                    paths.append(path)
                    per_topic: dict[str, list] = {}
                    key = (lambda h: h.doc_id) if task == 1 else (lambda h: h.formula_id)
                    for h in sorted(hits, key=lambda h, key=key: (-h.score, -int(key(h)))):  # trec_eval's order
                        per_topic.setdefault(h.query_id, []).append(h)
                    tops[label] = per_topic
                report = evaluate_runs(task, qrels_dir / f"task{task}-{year}.tsv", paths, facts=facts, collection_only=True)
                a, b = (r.means["nDCG'"] for r in report.runs)
                scored = report.runs[0].per_topic["nDCG'"].keys()
                overlaps, same = [], 0
                for t in scored:
                    x = [key(h) for h in tops["single"].get(t, [])[:10]]
                    y = [key(h) for h in tops["sharded"].get(t, [])[:10]]
                    overlaps.append(len(set(x) & set(y)) / max(len(x), len(y), 1))
                    same += x == y
                print(f"| {task} | {year} | {spec} | {a:.4f} | {b:.4f} | {b - a:+.4f} | "
                      f"{sum(overlaps) / len(overlaps):.3f} | {same}/{len(overlaps)} |", flush=True)


def _child(code: str, *args: str) -> dict:
    env = {**os.environ, "RAY_DISABLE_USAGE_STATS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        sys.exit(f"step failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _now() -> str:
    """The time (UTC) and the load average: these figures come from a shared machine."""
    import time

    return f"{time.strftime('%H:%M', time.gmtime())} (load {os.getloadavg()[0]:.1f})"


def _size_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--answers", type=int, default=100_000)
    p.add_argument("--work", type=Path, default=Path("/tmp/bench_ray"))
    p.add_argument("--collection", type=Path, default=None, help="an existing collection to index (only read; "
                   "default WORK/collection-N, generated when missing)")
    p.add_argument("--cpus", type=int, default=2, help="Ray workers (CPUs of the one local node)")
    p.add_argument("--topics", type=int, default=100, help="2021 topics per task in the batch runs")
    p.add_argument("--modes", default="current,ray:1,ray:2", help="builds to make: current, ray:1 (Ray), ray:2 "
                   "(Ray, 2 shards)")
    p.add_argument("--reuse", action="store_true", help="an index an earlier run built is reported from its manifest")
    p.add_argument("--no-batch", action="store_true", help="builds only")
    p.add_argument("--systems", default="", help="with --agreement: only these systems (comma-separated; a Task 1 "
                   "spec beyond the list, e.g. ours or ours:config=FILE, is run too)")
    p.add_argument("--agreement", nargs=2, type=Path, metavar=("SINGLE", "SHARDED"),
                   help="only compare the runs of a single and a sharded index of one collection")
    args = p.parse_args()
    if args.agreement:
        agreement(*args.agreement, args.work / "agreement", args.systems.split(",") if args.systems else None)
        return
    work = args.work
    collection = args.collection or work / f"collection-{args.answers}"
    if args.collection is None and not (collection / "Posts.V1.3.xml").exists():
        subprocess.run([sys.executable, str(BENCH / "make_collection.py"), "--answers", str(args.answers), "--out",
                        str(collection)], check=True)
    print(f"machine: {os.cpu_count()} cores; collection: {collection} ({args.answers:,} answers); Ray {args.cpus} "
          f"workers, 1 node; started {_now()}")
    modes = [("current build (fork pools)", "current", work / "single"),
             (f"Ray, {args.cpus} workers", "ray:1", work / "ray1"),
             (f"Ray, {args.cpus} workers, 2 shards", "ray:2", work / "ray2")]
    modes = [m for m in modes if m[1] in args.modes.split(",")]

    def header() -> None:
        print("\n| build | wall s (Ray's start apart) | CPU s (build process + reaped children + Ray tasks) | store s "
              "| text s | formula s | size MiB | when (UTC), load average |")
        print("|---|---|---|---|---|---|---|---|", flush=True)

    def build(label: str, mode: str, index: Path) -> None:
        manifest = index / "mathsearch-index.json"
        if args.reuse and manifest.exists():  # built by an earlier run: its manifest's times, no CPU figure
            counts = json.loads(manifest.read_text())["counts"]
            b = {"seconds": counts["total_seconds"], "cpu_seconds": None, "store_seconds": counts["seconds"],
                 "ray_start_seconds": 0.0, "indexes": counts}
            label += " (an earlier run's build, from its manifest)"
            when = "earlier"
        else:
            when = _now()
            b = _child(BUILD, str(collection), str(index), mode, str(args.cpus))
            when += f" to {_now()}"
        b["size_mib"] = _size_mib(index)
        ix = b["indexes"]
        text = ix.get("text_seconds", ix.get("text_seconds_max_shard", 0.0))
        formula = ix.get("formula_seconds", ix.get("formula_seconds_max_shard", 0.0))
        each = " (slowest shard)" if "shards" in ix else ""
        ray_start = f", Ray start {b['ray_start_seconds']:.1f} s" if b["ray_start_seconds"] else ""
        if b["cpu_seconds"] is None:
            cpu = "n/a"
        elif b.get("task_cpu_seconds"):
            cpu = f"{b['cpu_seconds'] + b['task_cpu_seconds']:.1f} ({b['cpu_seconds']:.1f} + {b['task_cpu_seconds']:.1f})"
        else:
            cpu = f"{b['cpu_seconds']:.1f}"
        print(f"| {label}{ray_start} | {b['seconds'] - b['ray_start_seconds']:.1f} | {cpu} | {b['store_seconds']:.1f} | "
              f"{text:.1f}{each} | {formula:.1f}{each} | {b['size_mib']:.0f} | {when} |", flush=True)

    def batch_runs() -> None:
        t1, t2 = TOPICS / "task1-2021.xml", TOPICS / "task2-2021.xml"
        print(f"\nbatch runs from {_now()}", flush=True)
        batch = _child(BATCH, str(work / "single"), str(args.topics), str(args.cpus), str(t1), str(t2))
        print(f"\nbatch runs: {batch['topics']['1']} Task 1 and {batch['topics']['2']} Task 2 topics x {len(batch['systems'])} "
              f"systems ({', '.join(batch['systems'])})")
        for s in batch["skipped"]:
            print(f"  skipped {s[:160]}")
        print("\n| batch | wall s | CPU s |")
        print("|---|---|---|")
        print(f"| one after the other, one process | {batch['serial_seconds']:.1f} | {batch['serial_cpu_seconds']:.1f} |")
        print(f"| Ray tasks, {args.cpus} workers (start {batch['ray_start_seconds']:.1f} s not counted) | "
              f"{batch['ray_seconds']:.1f} | {batch['ray_task_cpu_seconds']:.1f} (in the tasks) |")
        print(f"Ray runs identical to the serial runs: {batch['identical']}")
        print("per system (serial): " + ", ".join(f"{k} {v:.1f} s" for k, v in batch["per_system"].items()))

    # The Ray build and the current one first, then the batch runs, then the 2-shard build and the
    # latencies: on a shared machine the comparison the issue asks for comes first.
    header()
    for m in [m for m in modes if m[1] != "ray:2"]:
        build(*m)
    t1, t2 = TOPICS / "task1-2021.xml", TOPICS / "task2-2021.xml"
    if not args.no_batch:
        batch_runs()
    if any(m[1] == "ray:2" for m in modes):
        header()
        for m in [m for m in modes if m[1] == "ray:2"]:
            build(*m)
    if args.no_batch:
        return
    print(f"\nlatency from {_now()}", flush=True)
    print("\n| index | ours:dense=False median / p95 ms | formula median / p95 ms |")
    print("|---|---|---|")
    for label, index in (("single", work / "single"), ("one shard of 2, alone", work / "ray2" / "shard-000"),
                         ("2 shards searched as one", work / "ray2")):
        if not index.exists():
            continue
        lat = _child(LATENCY, str(index), str(t1), str(t2))
        a, b = lat["ours:dense=False"], lat["formula"]
        print(f"| {label} | {a['median_ms']:.0f} / {a['p95_ms']:.0f} | {b['median_ms']:.0f} / {b['p95_ms']:.0f} |")


if __name__ == "__main__":
    main()
