"""What one `mathsearch search` costs from the command line on an index with MiniLM vectors, and
what loading the model costs of it; and how soon `mathsearch serve` answers its first search.

    python bench/bench_cli_search.py --index IDX [--runs 5] [--src OTHER/src] [--serve]

IDX: an index built with ``mathsearch index COLLECTION --index IDX --dense minilm``.  Each figure is
the median of ``--runs`` separate processes (a fresh interpreter each, as a person typing the
command gets): the whole search with the default system (``ours``, which encodes the query with
MiniLM), the same without the dense signals (``ours:dense=False``: no model at all), and the parts
of the model's cost measured alone: ``import torch``, the encoder's imports and load after it, one
query encoded.  ``--src`` runs the same commands with another checkout's ``src`` first on the path
(the code before a change), so both columns come from one run on one machine.  ``--serve`` starts
``mathsearch serve --workers 1`` and times, once it says it is serving, its first search page and
first API search.  The columns are measured in turn, run by run, each sample printed as it comes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parents[1] / "src"
QUERY = "Why does the harmonic series $\\sum_{n=1}^{\\infty}\\frac{1}{n}$ diverge?"

# The model's parts, each timed inside one fresh interpreter (printed as JSON).
PARTS = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
try:  # the query encoder a search loads (before issue 41: load_encoder, sentence-transformers' MiniLM)
    from mathsearch.encoders import shared_encoder as get
except ImportError:
    from mathsearch.encoders import load_encoder as get
enc = get("minilm")
t2 = time.perf_counter()
enc.encode_one("warm up")
t3 = time.perf_counter()
print(json.dumps({"torch import": t1 - t0, "encoder imports + load": t2 - t1, "first encoding": t3 - t2}))
"""


def env_for(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def timed(cmd: list[str], src: Path) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, env=env_for(src), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def parts(src: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", PARTS], env=env_for(src), check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_search(index: Path, src: Path) -> dict[str, float]:
    """Seconds from start to "serving", then of the first search page and the first API search."""
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "mathsearch", "serve", "--index", str(index), "--port", str(port),
                             "--workers", "1"], env=env_for(src), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "serving" in line:
                break
        else:
            raise RuntimeError(f"serve ended (exit {proc.wait()}) without saying it serves")
        up = time.perf_counter() - t0
        base = f"http://127.0.0.1:{port}"
        while True:  # the banner comes just before uvicorn binds the port
            try:
                health = httpx.get(base + "/health", timeout=60).json()
                break
            except httpx.TransportError:
                time.sleep(0.05)
        t = time.perf_counter()
        page = httpx.get(base + "/", params={"q": QUERY}, timeout=120)
        page_s = time.perf_counter() - t
        t = time.perf_counter()
        api = httpx.get(base + "/api/search", params={"q": "prove sqrt 2 irrational"}, timeout=120)
        api_s = time.perf_counter() - t
        # a search past its budget (before issue 41: the first, loading MiniLM) is a page without hits
        return {"start to serving": up, "first search page": page_s, "first page had hits": float("snippet" in page.text),
                "first API search": api_s, "first API search had hits": float(api.status_code == 200),
                "ready": float(health.get("ready", True))}
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--src", type=Path, default=None, help="another checkout's src, measured beside this one")
    ap.add_argument("--serve", action="store_true", help="also time serve's first search")
    ap.add_argument("--part-runs", type=int, default=None, help="runs of the parts, ours:dense=False and serve (default: --runs)")
    args = ap.parse_args()
    if not (args.index / "dense" / "manifest.json").is_file():
        sys.exit(f"{args.index} holds no vectors: build it with `mathsearch index COLLECTION --index {args.index} --dense minilm`")
    columns = {"this checkout": HERE, **({f"{args.src}": args.src.resolve()} if args.src else {})}
    search = [sys.executable, "-m", "mathsearch", "search", "--index", str(args.index), QUERY, "--top", "10"]
    few = args.part_runs or args.runs
    tasks = [("search, ours (MiniLM)", args.runs, lambda src: {"search, ours (MiniLM)": timed(search, src)}),
             ("parts", few, parts),
             ("search, ours:dense=False", few,
              lambda src: {"search, ours:dense=False": timed([*search, "--system", "ours:dense=False"], src)})]
    if args.serve:
        tasks.append(("serve", few, lambda src: first_search(args.index, src)))
    samples: dict[str, dict[str, list[float]]] = {}
    print(f"{os.cpu_count()} cores; the columns are measured in turn, run by run (each line one sample)", flush=True)
    for _, runs, fn in tasks:
        for run in range(runs):
            for label, src in columns.items():  # interleaved: the machine's load falls on both alike
                got = fn(src)
                for k, v in got.items():
                    samples.setdefault(k, {}).setdefault(label, []).append(v)
                print(f"  run {run + 1} {label[-30:]:>30}: " + ", ".join(f"{k} {v:.2f}" for k, v in got.items())
                      + f" (load {os.getloadavg()[0]:.1f})", flush=True)
    width = max(len(k) for k in samples) + 2
    heads = list(columns)
    print(f"median of separate processes (ours: {args.runs}, the rest: {few}), seconds")
    print("".ljust(width) + "".join(h[-28:].rjust(30) for h in heads))
    for k, v in samples.items():
        print(k.ljust(width) + "".join(f"{statistics.median(v[h]):30.2f}" if h in v else "nan".rjust(30) for h in heads))
    if len(heads) == 2:
        a, b = (statistics.median(samples["search, ours (MiniLM)"][h]) for h in heads)
        print(f"search, ours (MiniLM): {a:.2f} s against {b:.2f} s ({a / b:.2f}x)")
    print(re.sub(r"\s+", " ", f"query: {QUERY}"))


if __name__ == "__main__":
    main()
