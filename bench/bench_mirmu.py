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
``--compubert-probe`` times fine-tuning on 320 pairs and embedding 500 answers of the index and
projects both to every pair and answer of it, and to the full collection (1.4M answers).
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
from mathsearch.indexes.build import build_index
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
from mathsearch.indexes.mirmu import build_artifacts
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

PROBE = """
import json, sys, time, tempfile
from pathlib import Path
from mathsearch.store import Store
from mathsearch.indexes.mirmu.compubert import training_pairs
from mathsearch.indexes.dense import passage
from mathsearch.encoders.finetune import FinetuneConfig, finetune, CompuBertEncoder
with Store.open(sys.argv[1]) as store:
    pairs = training_pairs(store)
    answers = [passage(None, a.text) for a in store.iter_answers()]
out = Path(tempfile.mkdtemp(prefix="compubert-probe-")) / "encoder"
t, c = time.perf_counter(), time.process_time()
info = finetune(pairs, out, FinetuneConfig(max_pairs=320))
load_t = time.perf_counter()
enc = CompuBertEncoder.load(out)
t2, c2 = time.perf_counter(), time.process_time()
enc.encode(answers[:500])
print(json.dumps({"pairs": len(pairs), "answers": len(answers), "train_pairs": info["pairs"],
                  "train_seconds": info["train_seconds"], "train_cpu": c2 - c,
                  "embed_seconds": time.perf_counter() - t2, "embed_cpu": time.process_time() - c2, "embedded": 500}))
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
    ap.add_argument("--compubert-probe", action="store_true")
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
    from mathsearch.indexes.directory import INDEX_KINDS
    from mathsearch.systems import make_system, needs_of

    chosen = []
    for item in filter(None, args.systems.split(",")):
        task, _, name = item.partition(":")
        needs = needs_of(make_system(name))
        if all(INDEX_KINDS[n].exists(index) for n in needs):
            chosen.append((int(task), name))
        else:
            print(f"(skipped {name}: the index lacks {', '.join(n for n in needs if not INDEX_KINDS[n].exists(index))})")
    print()
    latency(index, chosen)
    if args.compubert_probe:
        p = _child(PROBE, str(index))
        per_pair = p["train_seconds"] / p["train_pairs"]
        per_answer = p["embed_seconds"] / p["embedded"]
        print(f"\ncompubert probe: fine-tuning {p['train_pairs']} pairs {p['train_seconds']:.1f} s wall "
              f"({p['train_cpu']:.1f} CPU s, model loading included); embedding {p['embedded']} answers "
              f"{p['embed_seconds']:.1f} s ({p['embed_cpu']:.1f} CPU s)")
        for label, pairs, answers in (("this index", p["pairs"], p["answers"]), ("full size", FULL_ANSWERS, FULL_ANSWERS)):
            print(f"- {label}: one epoch over {pairs:,} pairs ~{pairs * per_pair / 3600:,.1f} h, "
                  f"embedding {answers:,} answers ~{answers * per_answer / 3600:,.1f} h (this machine, 2 cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
