"""Encoders side by side on the sample's posts: speed and dense-only retrieval quality.

    python bench/bench_encoders.py --index INDEX_DIR [--encoders minilm,static-minilm,PATH,PATH@minilm...]
                                   [--minilm-lengths 128,64] [--minilm-sample 300] [--years 2020,2021]

For each encoder: posts per CPU second on one core (torch and tokenizers held to one thread, the
process's CPU time, so other work on the machine does not skew it; MiniLM timed on
``--minilm-sample`` posts, static encoders on every post), the projected time for the 2.4M posts of
ARQMath on 2 cores (that rate x 2), and dense-only Task 1 retrieval on the sample: the
topic (title + question) against every answer (question title + answer) by cosine, top 1,000,
nDCG@10 (unjudged = non-relevant) and nDCG' with ``--collection-only`` qrels.  MiniLM's answer
vectors are read from INDEX_DIR when it was built with ``--dense --encoder minilm`` (else
embedded, minutes).  ``DOCS@QUERIES`` encodes the posts with one encoder and the topics with
another (a static student lives in its MiniLM teacher's space).  ``--minilm-lengths N,...`` adds
MiniLM reading only the first N word pieces of each post (256 by default), topics by MiniLM as it
is: the issue's "shorter input" candidate (``minilm:N`` in ``--encoders`` is the same).  Only the
2020 and 2021 topics are allowed here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from mathsearch.encoders import check_encoder, load_encoder  # noqa: E402
from mathsearch.encoders.builtin import MiniLMEncoder  # noqa: E402
from mathsearch.errors import InputError  # noqa: E402
from mathsearch.evaluation.measures import RANKED_MEASURES  # noqa: E402
from mathsearch.evaluation.subcollection import restrict_qrels  # noqa: E402
from mathsearch.evaluation.trec import TrecScorer, cut_depth  # noqa: E402
from mathsearch.indexes.dense import DenseIndex, passage, query_passage  # noqa: E402
from mathsearch.readers.qrels import qrels_to_dict, read_qrels  # noqa: E402
from mathsearch.readers.topics import read_topics  # noqa: E402
from mathsearch.store import Store  # noqa: E402
from mathsearch.systems import SearchQuery  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
ALLOWED = ("2020", "2021")
FULL_POSTS = 2_400_000


def answer_passages(index: Path) -> tuple[list[int], list[str]]:
    with Store.open(index) as store:
        titles = {q.post_id: q.title or "" for q in store.iter_posts(1)}
        ids, texts = [], []
        for a in store.iter_answers():
            ids.append(a.post_id)
            texts.append(passage(titles.get(a.thread_id), a.text))
    return ids, texts


def year_data(index: Path, years: list[str]):
    with Store.open(index) as store:
        present = store.answer_ids()
    out = {}
    for year in years:
        topics = read_topics(DATA / "topics" / f"task1-{year}.xml")
        qrels = restrict_qrels(qrels_to_dict(read_qrels(DATA / "qrels" / f"task1-{year}.tsv")), present).qrels
        queries = [SearchQuery.from_topic(t) for t in topics if t.topic_id in qrels]
        out[year] = (queries, TrecScorer(qrels, RANKED_MEASURES))
    return out


def dense_only(encoder, ids: list[int], vectors: np.ndarray, years: dict) -> dict[str, dict[str, float]]:
    ids_arr = np.asarray(ids)
    out = {}
    for year, (queries, scorer) in years.items():
        run = {}
        for q in queries:
            vec = encoder.encode_one(query_passage(q.title, q.question))
            found = DenseIndex._top(vectors, ids_arr, vec.astype(np.float32), 1000)
            run[q.query_id] = {str(a): s for a, s in found.items()}
        per_topic = scorer.score(cut_depth(run))
        out[year] = {m: sum(v.values()) / len(v) for m, v in per_topic.items()}
    return out


def cut_to(name: str) -> int | None:
    """N of ``minilm:N``, MiniLM reading each post's first N word pieces; None for any other encoder."""
    if not name.startswith("minilm:"):
        return None
    n = name.partition(":")[2]
    if not n.isdigit() or not 1 <= int(n) <= 256:
        raise InputError(f"{name}: MiniLM reads 1 to 256 word pieces of a post (--minilm-lengths N,...).")
    return int(n)


def one_thread() -> None:
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--encoders", default="minilm,static-minilm")
    ap.add_argument("--minilm-sample", type=int, default=300)
    ap.add_argument(
        "--minilm-lengths", default="", help="also MiniLM on the first N word pieces of each post, N,..."
    )
    ap.add_argument("--years", default="2020,2021")
    args = ap.parse_args(argv)
    years = [y for y in args.years.split(",") if y]
    if any(y not in ALLOWED for y in years):
        sys.exit(f"only {', '.join(ALLOWED)} may be used here")
    specs = [e for e in args.encoders.split(",") if e]
    specs += [f"minilm:{n.strip()}@minilm" for n in args.minilm_lengths.split(",") if n.strip()]
    try:  # a wrong encoder or index is said in one line before any encoder runs (MiniLM takes minutes)
        for spec in specs:
            for name in spec.partition("@")[::2]:
                if name:
                    check_encoder("minilm" if cut_to(name) else name)
        ids, texts = answer_passages(args.index)
        data = year_data(args.index, years)
    except InputError as exc:
        print(f"bench_encoders: {exc}", file=sys.stderr)
        return 2
    one_thread()
    rows = []
    loaded: dict[str, object] = {}

    def get(name: str):
        if name not in loaded:
            cut = cut_to(name)
            loaded[name] = MiniLMEncoder(max_tokens=cut) if cut else load_encoder(name)
        return loaded[name]

    for spec in specs:
        name, _, query_name = spec.partition("@")  # DOCS@QUERIES: documents by one, topics by another
        encoder = get(name)
        querier = get(query_name) if query_name else encoder
        kind = encoder.info().get("kind")
        timed = texts[: args.minilm_sample] if kind == "minilm" else texts
        # CPU seconds of this process (one thread): a per-core rate that a busy machine does not skew
        started = time.process_time()
        encoder.encode(timed)
        rate = len(timed) / (time.process_time() - started)
        vectors = None
        if name == "minilm" and DenseIndex.exists(args.index):
            dense = DenseIndex.open(args.index)
            if dense.encoder_name == "minilm" and list(dense.answer_ids) == ids:
                vectors = np.asarray(dense.answers, dtype=np.float32)
        if vectors is None:
            vectors = encoder.encode(texts)
        scores = dense_only(querier, ids, vectors, data)
        cut = cut_to(name)
        label = f"minilm, first {cut} word pieces" if cut else encoder.info().get("name", name)
        label += f" (topics by {query_name})" if query_name else ""
        rows.append((label, rate, scores))
        print(f"  {name}: {rate:,.1f} posts/s/core", file=sys.stderr, flush=True)
    head = ["encoder", "posts per CPU s (1 thread)", "2.4M posts, 2 cores"]
    for y in years:
        head += [f"{y} nDCG@10", f"{y} nDCG'"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, rate, scores in rows:
        hours = FULL_POSTS / (2 * rate) / 3600
        when = f"{hours:.1f} h" if hours >= 1 else f"{hours * 60:.1f} min"
        row = [name, f"{rate:,.1f}", when]
        for y in years:
            row += [f"{scores[y]['nDCG@10']:.3f}", f"{scores[y][chr(110) + 'DCG' + chr(39)]:.3f}"]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
