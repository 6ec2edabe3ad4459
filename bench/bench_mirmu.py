"""MIRMU's systems (seed 002): query latency, and build / training time at a given size.

    python bench/bench_mirmu.py --index INDEX_DIR                      # latency on a built index (e.g. the sample)
    python bench/bench_mirmu.py --answers 100000 [--work /tmp/bench_mirmu] [--with mias,scm,formula2vec]
    python bench/bench_mirmu.py --answers 100000 --compubert-probe      # CompuBERT rates, projected

With ``--answers N``: ``bench/make_collection.py`` makes the collection (as ``bench_search.py``), then
``build_index(..., optional=WITH)`` builds the store, the text and formula indexes and the named
MIRMU artifacts in one child process (wall, CPU seconds with children, peak RSS), each artifact's
seconds and training seconds from its manifest; then every 2021 topic through each system (median
and p95 latency, wall and CPU: ``bench_search.py``'s timing child).

CompuBERT is not embedded at 100k on 2 CPU cores (MiniLM embeds ~15 answers a second: ~2 h);
``--compubert-probe`` times fine-tuning on ``--probe-pairs`` pairs (a step's median CPU seconds,
model loading excluded) and embedding ``--probe-answers`` answers of the index, and projects both to
every pair and answer of it and to the full collection (1.4M answers); a query's cost is projected
as the topic's encoding (measured) plus an exact search over as many random vectors (measured).
The seed's figures (Table 5, 32-core Xeon, one core a query; CompuBERT on a GPU) are printed beside.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import QUERY, TOPIC_FILES, _child, _size_mib  # noqa: E402

FULL_ANSWERS = 1_445_000  # ARQMath's Math Stack Exchange (V1.3): answers
SEED_SECONDS = {  # seed 002, Table 5: average seconds a topic
    (1, "mias"): 1.24, (1, "scm"): 58.64, (1, "formula2vec"): 3.23, (1, "compubert"): 3.43,
    (2, "scm-formula"): 108.86, (2, "formula2vec-formula"): 164.5,
}

BUILD = """
import json, resource, sys, time
from mathsearch.building import build_index
t, c = time.perf_counter(), time.process_time()
optional = tuple(n for n in sys.argv[3].split(",") if n)
counts = build_index(sys.argv[1], sys.argv[2], optional=optional)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": time.perf_counter() - t, "answers": counts.answers, "indexes": counts.indexes,
                  "cpu_seconds": time.process_time() - c + kids.ru_utime + kids.ru_stime,
                  "peak_mib": max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, kids.ru_maxrss) / 1024}))
"""

ARTIFACTS = """
import json, logging, resource, sys, time
from mathsearch.building import build_artifacts
logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(message)s")
for name in ("gensim.utils", "gensim.corpora.dictionary", "gensim.models.tfidfmodel", "smart_open"):
    logging.getLogger(name).setLevel(logging.WARNING)
t, c = time.perf_counter(), time.process_time()
def progress(step, done, total):
    print(f"[{time.perf_counter() - t:8.1f} s wall, {time.process_time() - c:8.1f} CPU s] {step} {done}/{total}",
          file=sys.stderr, flush=True)
counts = build_artifacts(sys.argv[1], tuple(sys.argv[2].split(",")), progress)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": time.perf_counter() - t, "counts": counts,
                  "cpu_seconds": time.process_time() - c + kids.ru_utime + kids.ru_stime,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

ANN = """
import json, statistics, sys, time
from mathsearch.indexes.mirmu.formula2vec import Formula2VecIndex, build_formula2vec_ann
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchQuery
from mathsearch.systems.formula import largest_formulae
t, c = time.perf_counter(), time.process_time()
counts = build_formula2vec_ann(sys.argv[1])
built = {"seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - c, **counts}
index = Formula2VecIndex.open(sys.argv[1])
latex = [SearchQuery.from_topic(x).formula_latex for x in read_topics(sys.argv[2])]
for x in read_topics(sys.argv[3]):
    latex.extend(largest_formulae(list(dict.fromkeys(f for f in SearchQuery.from_topic(x).bags.formulae if f.strip())), 5))
latex = [x for x in latex if x][: int(sys.argv[5]) or None]
nprobes = [int(n) for n in sys.argv[4].split(",")]
out = {"built": built, "formulae": index.vectors.shape[0], "queries": len(latex), "nprobe": {}}
ks = (10, 1000, 2000)
recall = {n: {k: [] for k in ks} for n in nprobes}
cpu = {n: [] for n in [0, *nprobes]}
for x in latex:
    vec = index.infer(x, 10)
    c = time.process_time()
    exact, _ = index.nearest(vec, 2000, 0)
    cpu[0].append(time.process_time() - c)
    for n in nprobes:
        c = time.process_time()
        approx, _ = index.nearest(vec, 2000, n)
        cpu[n].append(time.process_time() - c)
        for k in ks:
            recall[n][k].append(len(set(exact[:k].tolist()) & set(approx[:k].tolist())) / max(1, min(k, len(exact))))
out["exact_cpu_ms"] = 1000 * statistics.median(cpu[0])
for n in nprobes:
    out["nprobe"][n] = {"recall": {k: statistics.mean(v) for k, v in recall[n].items()}, "min_recall_10": min(recall[n][10]),
                        "median_cpu_ms": 1000 * statistics.median(cpu[n])}
print(json.dumps(out))
"""

PROBE = """
import json, statistics, sys, time, tempfile
from pathlib import Path
import numpy as np
from mathsearch.store import Store
from mathsearch.indexes.mirmu.compubert import training_pairs
from mathsearch.indexes.dense import DenseIndex, passage, query_passage
from mathsearch.encoders.finetune import FinetuneConfig, finetune, CompuBertEncoder
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchQuery
with Store.open(sys.argv[1]) as store:
    pairs = training_pairs(store)
    answers = [passage(None, a.text) for a in store.iter_answers()]
steps = []
def progress(step, done, total):
    steps.append((time.perf_counter(), time.process_time()))
out = Path(tempfile.mkdtemp(prefix="compubert-probe-")) / "encoder"
t, c = time.perf_counter(), time.process_time()
info = finetune(pairs, out, FinetuneConfig(max_pairs=int(sys.argv[2])), progress=progress)
train_cpu = time.process_time() - c
enc = CompuBertEncoder.load(out)
n = int(sys.argv[3])
t2, c2 = time.perf_counter(), time.process_time()
enc.encode(answers[:n])
embed = (time.perf_counter() - t2, time.process_time() - c2)
queries = [SearchQuery.from_topic(x) for x in read_topics(sys.argv[4])]
enc.encode_one("warm up")
topic_cpu = []
for q in queries:
    c3 = time.process_time()
    enc.encode_one(query_passage(q.title, q.question))
    topic_cpu.append(time.process_time() - c3)
rng = np.random.default_rng(1)
matrix = rng.standard_normal((len(answers), enc.dim), dtype=np.float32)
ids = np.arange(len(answers))
search_cpu = []
for _ in range(20):
    vec = rng.standard_normal(enc.dim).astype(np.float32)
    c3 = time.process_time()
    DenseIndex._top(matrix, ids, vec, 1000)
    search_cpu.append(time.process_time() - c3)
per_step = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(steps, steps[1:])]
print(json.dumps({"pairs": len(pairs), "answers": len(answers), "train_pairs": info["pairs"], "steps": info["steps"],
                  "batch": 16, "train_seconds": info["train_seconds"], "train_cpu": train_cpu,
                  "step_seconds": statistics.median(w for w, _ in per_step), "step_cpu": statistics.median(c for _, c in per_step),
                  "embed_seconds": embed[0], "embed_cpu": embed[1], "embedded": n,
                  "topics": len(topic_cpu), "topic_cpu_ms": 1000 * statistics.median(topic_cpu),
                  "search_cpu_ms": 1000 * statistics.median(search_cpu)}))
"""


def _streamed(code: str, *args: str) -> dict:
    """``_child``, its stderr (progress, gensim's rates) passed through as it comes."""
    done = subprocess.run([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"step failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1])


def build_missing(index: Path, names: list[str]) -> None:
    """Build into INDEX the artifacts of ``names`` it lacks (no manifest.json), reusing the rest."""
    missing = [n for n in names if not (index / "mirmu" / n / "manifest.json").is_file()]
    if not missing:
        return
    b = _streamed(ARTIFACTS, str(index), ",".join(missing))
    print(f"built {','.join(missing)} into {index}: {b['seconds']:.1f} s wall, {b['cpu_seconds']:.1f} CPU s, "
          f"peak RSS {b['peak_mib']:,.0f} MiB", flush=True)


def latency(index: Path, systems: list[tuple[int, str]]) -> None:
    print("| task | system | topics | median ms | p95 ms | median CPU ms | p95 CPU ms | seed's average | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for task, name in systems:
        r = _child(QUERY, str(index), name, str(TOPIC_FILES[task]))
        seed = SEED_SECONDS.get((task, name.split(":")[0]))
        print(f"| {task} | {name} | {r['topics']} | {r['median_ms']:.1f} | {r['p95_ms']:.1f} | {r['median_cpu_ms']:.1f} | "
              f"{r['p95_cpu_ms']:.1f} | {f'{seed:g} s' if seed else '-'} | {r['peak_mib']:,.0f} |", flush=True)


def manifests(index: Path) -> None:
    for folder in sorted((index / "mirmu").iterdir()) if (index / "mirmu").is_dir() else ():
        if not (folder / "manifest.json").is_file():
            print(f"- {folder.name}: not complete (no manifest.json)")
            continue
        m = json.loads((folder / "manifest.json").read_text())
        timed = {k: v for k, v in m["counts"].items() if k.endswith("seconds")}
        print(f"- {folder.name}: {m['seconds']:.1f} s in all (" + ", ".join(f"{k} {v:.1f} s" for k, v in timed.items())
              + f"); {_size_mib(folder):,.1f} MiB; seed {m['seed']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, help="time queries on this index (built with --with ...)")
    ap.add_argument("--answers", type=int, default=0, help="generate a collection of this many answers and build it")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_mirmu"))
    ap.add_argument("--with", dest="with_", default="mias,scm,formula2vec")
    ap.add_argument("--systems", default="1:bm25-thread,1:mias,1:scm,1:formula2vec,1:compubert,"
                                         "2:scm-formula,2:formula2vec-formula",
                    help="TASK:SYSTEM,... (systems whose artifacts the index lacks are skipped)")
    ap.add_argument("--build", action="store_true",
                    help="with --index: first build the --with artifacts the index lacks")
    ap.add_argument("--formula2vec-ann", action="store_true",
                    help="build Formula2Vec's IVF index if the index lacks it (>= ann_min formulae), and its recall "
                         "against the exact search for the 2021 topics' formulae")
    ap.add_argument("--nprobe", default="64", help="with --formula2vec-ann: lists searched, e.g. 64,128,256")
    ap.add_argument("--recall-queries", type=int, default=0,
                    help="with --formula2vec-ann: only the first N query formulae (Task 2's come first); 0: all")
    ap.add_argument("--compubert-probe", action="store_true")
    ap.add_argument("--probe-pairs", type=int, default=320, help="with --compubert-probe: pairs fine-tuned (16 a step)")
    ap.add_argument("--probe-answers", type=int, default=500, help="with --compubert-probe: answers embedded")
    args = ap.parse_args(argv)
    index = args.index
    if index is None:
        if not args.answers:
            ap.error("give --index or --answers")
        collection = args.work / f"collection-{args.answers}"
        index = args.work / f"index-{args.answers}"
        if not (collection / "Posts.V1.3.xml").is_file():
            subprocess.run([sys.executable, str(BENCH / "make_collection.py"), "--answers", str(args.answers),
                            "--out", str(collection)], check=True, stdout=subprocess.DEVNULL)
        if not (index / "formula" / "manifest.json").is_file():
            b = _child(BUILD, str(collection), str(index), args.with_)
            print(f"build of {b['answers']:,} answers with {args.with_}: {b['seconds']:.1f} s wall, "
                  f"{b['cpu_seconds']:.1f} CPU s, peak RSS {b['peak_mib']:,.0f} MiB; steps: "
                  + ", ".join(f"{k} {v:.1f} s" for k, v in b["indexes"].items() if k.endswith("_seconds")))
        build_missing(index, [n for n in args.with_.split(",") if n])
    elif args.build:
        build_missing(index, [n for n in args.with_.split(",") if n])
    print(f"index: {index}")
    manifests(index)
    from mathsearch.indexes.kinds import INDEX_KINDS
    from mathsearch.systems import make_system, needs_of

    chosen = []
    for item in filter(None, args.systems.split(",")):
        task, _, name = item.partition(":")
        needs = needs_of(make_system(name))
        if all(INDEX_KINDS[n].exists(index) for n in needs):
            chosen.append((int(task), name))
        else:
            print(f"(skipped {name}: the index lacks {', '.join(n for n in needs if not INDEX_KINDS[n].exists(index))})")
    if args.formula2vec_ann and INDEX_KINDS["formula2vec"].exists(index):
        a = _child(ANN, str(index), str(TOPIC_FILES[2]), str(TOPIC_FILES[1]), args.nprobe, str(args.recall_queries))
        b = a["built"]
        made = (f"built now: {b['formula2vec_ann_lists']} lists, {b['seconds']:.1f} s ({b['cpu_seconds']:.1f} CPU s)"
                if "formula2vec_ann_lists" in b else "already built (or too few formulae for one)")
        print(f"formula2vec IVF index over {a['formulae']:,} formulae, {made}; against the exact "
              f"search ({a['exact_cpu_ms']:.1f} CPU ms for the 2,000 nearest, median), {a['queries']} query formulae of "
              "2021 (Task 2 topics, then Task 1's largest):")
        for n, r in a["nprobe"].items():
            print(f"- nprobe {n}: " + ", ".join(f"recall@{k} {v:.3f}" for k, v in r["recall"].items())
                  + f" (worst recall@10 {r['min_recall_10']:.2f}); {r['median_cpu_ms']:.1f} CPU ms for the 2,000 nearest")
    print()
    latency(index, chosen)
    if args.compubert_probe:
        p = _child(PROBE, str(index), str(args.probe_pairs), str(args.probe_answers), str(TOPIC_FILES[1]))
        print(f"\ncompubert probe on {index} ({p['answers']:,} answers, {p['pairs']:,} question-answer pairs): "
              f"fine-tuning {p['train_pairs']} pairs in {p['steps']} steps of {p['batch']} took {p['train_seconds']:.1f} s wall, "
              f"{p['train_cpu']:.1f} CPU s (model loading and saving included); a step (median, loading excluded) "
              f"{p['step_seconds']:.1f} s wall, {p['step_cpu']:.1f} CPU s; embedding {p['embedded']} answers "
              f"{p['embed_seconds']:.1f} s wall, {p['embed_cpu']:.1f} CPU s ({p['embedded'] / p['embed_cpu']:.1f} answers a CPU s)")
        print(f"- a query, projected (not measured on built vectors): encoding the topic {p['topic_cpu_ms']:.0f} CPU ms "
              f"(median of {p['topics']} topics of 2021) + exact search over {p['answers']:,} random vectors of its "
              f"dimension {p['search_cpu_ms']:.1f} CPU ms")
        for label, pairs, answers in (("this index", p["pairs"], p["answers"]),
                                      ("full size", FULL_ANSWERS, FULL_ANSWERS)):
            steps = pairs / p["batch"]
            print(f"- {label}, projected from those rates (CPU seconds, 2 threads): one epoch over {pairs:,} pairs "
                  f"({steps:,.0f} steps) ~{steps * p['step_cpu'] / 3600:,.1f} CPU h; embedding {answers:,} answers "
                  f"~{answers * p['embed_cpu'] / p['embedded'] / 3600:,.1f} CPU h")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
