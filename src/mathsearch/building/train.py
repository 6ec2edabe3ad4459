"""Train a static encoder on a collection with MiniLM as teacher (tokenlearn-style distillation),
optionally with a contrastive question -> answer term (the CompuBERT idea: a question and its own
answers are the automatic judgements; other answers in the batch are negatives).

1. Start from MiniLM distilled into a static table (model2vec ``distill``, 384 dimensions so the
   student lives in the teacher's space), its word-piece vocabulary extended by the collection's
   most frequent LaTeX commands (``\\frac`` is one token, not ``\\``, ``fra``, ``##c``), each
   initialised with the mean of its word pieces.
2. Teacher targets: MiniLM vectors of at most ``teacher_budget`` of the collection's posts (title
   + text, as the dense index embeds them), chosen with the seed: read from an index already built
   with ``--encoder minilm`` when given, else embedded now (22 posts/s on 2 cores).
3. Fit the table by (sparse) Adam on ``1 - cos(student, teacher)`` (+ ``contrastive`` x InfoNCE of each
   question against its answers), a held-out tenth of the posts for early stopping.  Off by default
   (neither helped on the sample, README): ``links`` x InfoNCE of each question against the questions
   the collection links to it (duplicate and related), and ``hard_negatives`` of each question's BM25
   answers outside its thread added to the negatives of its question -> answer term.

Reproducible: the seed, the config and a digest of the post ids used are written to the
encoder's ``encoder.json``.  Nothing here reads topics or judgements.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..encoders.base import Progress, quiet_hf
from ..encoders.static import StaticEncoder
from ..errors import InputError

LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
VERSION = 1
TEACHER_MAX_TOKENS = 256  # MiniLM's own limit: its word pieces past it are never read
# The teacher's arithmetic: bfloat16 where the CPU multiplies it natively (1.7x the posts per CPU
# second, vectors at cosine >= 0.9999 to float32), else float32.  A cost, not a recipe: students
# trained on either were a tie on the pooled topics (docs/log/compiled.md, seventeenth step).
TEACHER_PRECISION = "auto"
# the question side of the contrastive term: the student's own bag, MiniLM's vector (as topics are
# encoded at query time; only questions the teacher embedded), or MiniLM's where it has one, else the student's
ANCHORS = ("student", "teacher", "mixed")


@dataclass
class TrainConfig:
    # The defaults are the measured recipe (README's static row: contrastive 0.3, 15 epochs, anchor
    # mixed, seed 13, a teacher of 20,000 posts at full size)
    seed: int = 13
    epochs: int = 15
    batch: int = 128
    lr: float = 0.003
    latex_vocab: int = 1000  # most frequent LaTeX commands added as whole tokens (0: none)
    min_latex_count: int = 3
    teacher_budget: int = 20_000  # posts the teacher embeds when no MiniLM index is given
    # word pieces of each post the teacher reads when it embeds (topics are always encoded whole):
    # fewer is faster (2.14x at 128, 1.38x at 192) but its students ranked worse on the pooled topics
    # (128: -0.015 nDCG@10 out of fold; 192: a tie, behind in sample; docs/log/dense-encoders.md)
    teacher_tokens: int = TEACHER_MAX_TOKENS
    contrastive: float = 0.3  # weight of the question -> answer InfoNCE term
    # the question side of that term (ANCHORS): "student" (both sides encoded by the student), "teacher"
    # (the question's MiniLM vector, as a topic is encoded at query time; pairs limited to questions
    # the teacher embedded) or "mixed" (MiniLM's vector where the teacher embedded the question, else the student's)
    anchor: str = "mixed"
    pair_budget: int = 200_000  # question -> answer pairs it may use (and never more than teacher posts)
    links: float = 0.0  # weight of a question <-> question term over the collection's duplicate and related links
    hard_negatives: int = 0  # per question of the question -> answer term, this many of its BM25 answers as negatives
    negative_depth: int = 20  # ... drawn from its best this many by BM25 (outside its thread and linked threads)
    temperature: float = 0.05
    val_fraction: float = 0.1
    patience: int = 3
    max_tokens: int = 256
    bigrams: int = 0  # hashed buckets for neighbouring word-piece pairs (0: single word pieces only; README)
    threads: int = 2
    base: str = "static-minilm"  # the starting table: static-minilm (distilled MiniLM) or random
    extra: dict[str, Any] = field(default_factory=dict)


def question_anchors(anchor: str, qs: np.ndarray, row_of: dict[int, int], target, own: Callable):
    """The question side of a contrastive batch (a torch tensor, one row per question of ``qs``):
    ``target``'s row (MiniLM's vector) for ``anchor="teacher"``, the student's bag ``own(qs)`` for
    "student", and for "mixed" MiniLM's vector where ``row_of`` has the question, else the student's."""
    import torch

    if anchor == "teacher":  # every pair's question has a teacher vector (pairs filtered before)
        return target[[row_of[int(q)] for q in qs]]
    mine = own(qs)
    taught = [i for i, q in enumerate(qs) if int(q) in row_of]
    if anchor == "student" or not taught:
        return mine
    return mine.index_put((torch.tensor(taught),), target[[row_of[int(qs[i])] for i in taught]])


def capped_pairs(pairs: np.ndarray, taught: Collection[int], cap: int, rng: np.random.Generator) -> np.ndarray:
    """Rows of ``pairs`` (question, answer positions) to train on, in order: all of them up to ``cap``,
    else a seeded ``cap`` of them, the pairs whose question is in ``taught`` (has a teacher vector) first.
    ``train`` caps at the teacher's posts: at full size every answer gives a pair (1.4M) against 20-30k
    teacher posts, and 200,000 pairs pulled the student off its teacher (the held-out distance rose
    from the first epoch, README); on the sample, where every choice was measured, pairs and teacher
    posts are about as many (the cap trims ~2% of the pairs of one cross-fitted fold, none otherwise)."""
    if len(pairs) <= cap:
        return np.arange(len(pairs))
    anchored = np.flatnonzero(np.isin(pairs[:, 0], np.fromiter(taught, dtype=np.int64, count=len(taught))))
    if len(anchored) >= cap:
        return np.sort(rng.choice(anchored, cap, replace=False))
    others = np.setdiff1d(np.arange(len(pairs)), anchored)
    return np.sort(np.concatenate([anchored, rng.choice(others, cap - len(anchored), replace=False)]))


def link_pairs(store, ids: list[int], parent: dict[int, int], held: Collection[int]) -> np.ndarray:
    """``(question, question)`` positions into ``ids`` of the collection's duplicate and related links,
    each link in both directions (either question may be the one asked), none touching a ``held``
    position: the CompuBERT idea's second automatic judgement, questions that ask the same thing."""
    index_of = {p: k for k, p in enumerate(ids)}
    questions = [p for p in ids if p not in parent]
    found = {(min(a, b), max(a, b)) for a, linked in store.linked_many(questions).items() for b in linked
             if a != b and a in index_of and b in index_of}
    rows = [(index_of[x], index_of[y]) for a, b in sorted(found) for x, y in ((a, b), (b, a))
            if index_of[a] not in held and index_of[b] not in held]
    return np.asarray(rows, dtype=np.int64).reshape(-1, 2)


def bm25_negatives(text, store, questions: list[int], depth: int, thread_of: dict[int, int],
                   max_terms: int = 64) -> dict[int, list[int]]:
    """Hard negatives: each question's best ``depth`` answers by BM25 over answer text (words and
    formulae; the question's title, body and tags, its ``max_terms`` best terms) in ``text`` (a
    :class:`~mathsearch.indexes.text_index.TextIndex`), leaving out the answers of its own thread and of
    threads linked to it (those may well answer it).  ``thread_of``: answer id -> question id."""
    from ..indexes.documents import QueryBags
    from ..indexes.text_index import Clause

    clauses = [Clause("words", "body"), Clause("math", "body_math")]  # bm25-answer's fields
    posts = store.posts(questions)
    linked = store.linked_many(questions)
    out: dict[int, list[int]] = {}
    for q in questions:
        post = posts.get(q)
        if post is None:
            continue
        found = text.search_answers(QueryBags.of_text(post.title or "", post.text, post.tags), clauses,
                                    depth * 2 + 10, max_terms)
        skip = {q, *linked.get(q, ())}
        # Ties by id ascending (not ranking's order): the training pairs, and so the saved encoders, stay as they were.
        out[q] = [a for a in sorted(found, key=lambda a: (-found[a], a)) if thread_of.get(a) not in skip][:depth]
    return out


def without_itself(logits, rows: np.ndarray, columns: np.ndarray):
    """``logits`` (a torch tensor, rows x columns of post positions) with every cell whose column is its
    row's own post at -inf: a link's other direction in the same batch would put the asked question
    among its own negatives.  The diagonal (each row's label) never names its own post; answer columns
    never name a question, so the question -> answer term is unchanged by it."""
    import torch

    return logits.masked_fill(torch.from_numpy(columns[None, :] == rows[:, None]), float("-inf"))


def drawn_negatives(qs: np.ndarray, negatives: dict[int, list[int]], k: int, rng: np.random.Generator) -> np.ndarray:
    """Post positions of up to ``k`` hard negatives drawn (seeded) for each question of a batch."""
    drawn: list[int] = []
    for q in qs.tolist() if k > 0 else ():
        found = negatives.get(int(q), [])
        if found:
            drawn.extend(rng.choice(found, min(k, len(found)), replace=False).tolist())
    return np.asarray(drawn, dtype=np.int64)


def posts_of(store) -> tuple[list[int], list[str], dict[int, int]]:
    """``(post ids, passages, answer id -> question id)`` as the dense index embeds them."""
    from ..indexes.dense import post_passages

    q_ids, q_texts, a_ids, a_texts, parent = post_passages(store)
    return q_ids + a_ids, q_texts + a_texts, parent


def latex_vocabulary(texts: list[str], size: int, min_count: int) -> list[str]:
    if size <= 0:
        return []
    counts = Counter(m for t in texts for m in LATEX_COMMAND.findall(t))
    return [w for w, c in counts.most_common(size) if c >= min_count]


def extend_vocabulary(tokenizer, table: np.ndarray, words: list[str]) -> np.ndarray:
    """Add ``words`` as whole tokens to ``tokenizer``; their rows start as the mean of their pieces."""
    from tokenizers import AddedToken

    pieces = [tokenizer.encode(w, add_special_tokens=False).ids for w in words]
    before = tokenizer.get_vocab_size()
    tokenizer.add_tokens([AddedToken(w, single_word=False, normalized=False) for w in words])
    rows = np.zeros((tokenizer.get_vocab_size(), table.shape[1]), dtype=np.float32)
    rows[: table.shape[0]] = table
    for w, ids in zip(words, pieces, strict=True):
        tid = tokenizer.token_to_id(w)
        if tid is not None and tid >= before and ids:
            rows[tid] = table[ids].mean(axis=0)
    return rows


def teacher_tokens_of(encoder_info: dict) -> int:
    """Word pieces a post that MiniLM's vectors described by ``encoder_info`` (a dense manifest's) read."""
    return int((encoder_info.get("config") or {}).get("max_tokens") or TEACHER_MAX_TOKENS)


def teacher_encoder(tokens: int = TEACHER_MAX_TOKENS, device: str = "cpu", precision: str = TEACHER_PRECISION):
    """MiniLM as the teacher: reading each post's first ``tokens`` word pieces (all it can at 256),
    in ``precision`` (:data:`~mathsearch.encoders.builtin.PRECISIONS`)."""
    from ..encoders.builtin import MiniLMEncoder

    return MiniLMEncoder(device=device, max_tokens=None if tokens == TEACHER_MAX_TOKENS else tokens, precision=precision)


def teacher_vectors(ids: list[int], texts: list[str], teacher_index: Path | None, budget: int,
                    rng: np.random.Generator, progress: Progress | None,
                    allowed: set[int] | None = None, tokens: int = TEACHER_MAX_TOKENS) -> tuple[np.ndarray, np.ndarray]:
    """``(positions into ids, MiniLM vectors)``: from a MiniLM dense index, else embedded now
    (``tokens`` word pieces a post); only posts in ``allowed`` when given (cross-fitting: a student
    that never saw a post's teacher vector)."""
    if allowed is not None:
        keep = [k for k, p in enumerate(ids) if p in allowed]
        pos, vecs = teacher_vectors([ids[k] for k in keep], [texts[k] for k in keep], teacher_index, budget, rng,
                                    progress, tokens=tokens)
        return np.asarray([keep[k] for k in pos], dtype=np.int64), vecs
    if teacher_index is not None:
        from ..indexes.dense import DenseIndex

        dense = DenseIndex.open(teacher_index)
        if dense.encoder_name != "minilm":
            raise InputError(f"{teacher_index} holds vectors of encoder {dense.encoder_name!r}: the teacher must be minilm.")
        read = teacher_tokens_of(dense.encoder_info)
        if read != tokens:
            raise InputError(f"{teacher_index}: its MiniLM vectors read {read} word pieces a post, the recipe's teacher "
                             f"{tokens} (--teacher-tokens): give a teacher index made at {tokens}, or none (nothing was changed).")
        by_id = {int(p): ("q", i) for i, p in enumerate(dense.question_ids)}
        by_id.update({int(p): ("a", i) for i, p in enumerate(dense.answer_ids)})
        pos = [k for k, p in enumerate(ids) if p in by_id]
        if len(pos) > budget:  # the same budget as when the teacher embeds: a seeded choice of posts
            pos = sorted(rng.choice(pos, budget, replace=False).tolist())
        vecs = np.stack([
            (dense.questions if by_id[ids[k]][0] == "q" else dense.answers)[by_id[ids[k]][1]] for k in pos
        ]).astype(np.float32)
        return np.asarray(pos, dtype=np.int64), vecs
    pos = np.sort(rng.permutation(len(ids))[: min(budget, len(ids))])
    vecs = teacher_encoder(tokens).encode([texts[k] for k in pos], progress, "teacher")
    return pos, vecs


def checked(config: TrainConfig, text_index: str | Path | None = None):
    """Refuse a config that cannot train, before any work (the teacher alone takes ~25 min at full
    size); the text index whose BM25 gives the hard negatives, opened (None without them)."""
    if config.anchor not in ANCHORS:
        raise InputError(f"unknown contrastive anchor {config.anchor!r}: {', '.join(ANCHORS)}.")
    if config.epochs < 1 or config.teacher_budget < 1:
        raise InputError("--epochs and --teacher-budget must be at least 1.")
    if not 1 <= config.teacher_tokens <= TEACHER_MAX_TOKENS:
        raise InputError(f"--teacher-tokens must be 1 to {TEACHER_MAX_TOKENS} (MiniLM's word pieces), "
                         f"not {config.teacher_tokens} (nothing was changed).")
    if config.bigrams < 0:
        raise InputError(f"--bigrams must be at least 0 (a count of hashed buckets), not {config.bigrams} (nothing was changed).")
    if config.links < 0 or config.hard_negatives < 0 or config.negative_depth < 1:
        raise InputError("--links and --hard-negatives must be at least 0, --negative-depth at least 1 (nothing was changed).")
    if config.hard_negatives <= 0:
        return None
    if config.contrastive <= 0:
        raise InputError("--hard-negatives join the question -> answer term: give it a weight with --contrastive "
                         "(nothing was changed).")
    if text_index is None:
        raise InputError("hard negatives come from BM25: give the index whose text index to search (--index).")
    from ..indexes.text_index import TextIndex

    return TextIndex.open(text_index)


def train(store, out: str | Path, name: str, config: TrainConfig | None = None, *,
          teacher_index: str | Path | None = None, source: str = "", progress: Progress | None = None,
          teacher_posts: set[int] | None = None, text_index: str | Path | None = None) -> dict[str, Any]:
    """Train a static encoder on ``store``'s posts and save it to ``out``; returns its ``encoder.json``.
    ``text_index``: the index folder whose BM25 gives ``config.hard_negatives`` (needed only for them)."""
    config = config or TrainConfig()
    text = checked(config, text_index)
    quiet_hf()
    try:
        import torch
    except ImportError as exc:
        raise InputError(f"training an encoder needs torch (the 'dense' extras): {exc}.") from None
    from ..encoders.builtin import distilled_static, minilm_path

    started = time.perf_counter()
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    torch.set_num_threads(max(1, config.threads))
    ids, texts, parent = posts_of(store)
    if len(ids) < 10:
        raise InputError(f"the collection holds {len(ids)} posts: too few to train an encoder on.")
    pos, target = teacher_vectors(ids, texts, Path(teacher_index) if teacher_index else None,
                                  config.teacher_budget, rng, progress, teacher_posts, config.teacher_tokens)
    from tokenizers import Tokenizer

    if config.base == "static-minilm":
        base = distilled_static()  # MiniLM distilled (model2vec), kept under encoder_home() after the first time
        tokenizer, table, base_id = Tokenizer.from_str(base.tokenizer.to_str()), base.table.copy(), base.info().get("fingerprint")
    elif config.base == "random":  # MiniLM's word pieces, random vectors: for tests and ablations
        tokenizer = Tokenizer.from_file(str(Path(minilm_path()) / "tokenizer.json"))
        table = rng.normal(0.0, 0.1, (tokenizer.get_vocab_size(), target.shape[1])).astype(np.float32)
        base_id = "random"
    else:
        raise InputError(f"unknown base {config.base!r} for a static encoder: static-minilm or random.")
    tokenizer.no_padding()
    tokenizer.no_truncation()
    words = latex_vocabulary([texts[k] for k in pos], config.latex_vocab, config.min_latex_count)
    table = extend_vocabulary(tokenizer, table, words)
    if table.shape[1] != target.shape[1]:
        raise InputError(f"student has {table.shape[1]} dimensions, teacher {target.shape[1]}: they must agree.")
    # the pair buckets start at zero: the student starts as the single-piece table and learns what pairs add
    table = np.vstack([table, np.zeros((config.bigrams, table.shape[1]), dtype=np.float32)])
    draft = StaticEncoder(tokenizer, table, {"name": name, "config": {"max_tokens": config.max_tokens,
                                                                      "bigrams": config.bigrams}})
    order = rng.permutation(len(pos))
    n_val = max(1, int(len(pos) * config.val_fraction))
    val, fit = order[:n_val], order[n_val:]
    # question -> answer pairs (post positions) for the contrastive term: every thread of the
    # collection, the teacher's or not (capped_pairs: at most pair_budget and the teacher's posts),
    # none touching a held-out post
    index_of = {p: k for k, p in enumerate(ids)}
    held = {int(pos[j]) for j in val}
    pairs = np.asarray([(index_of[q], index_of[a]) for a, q in parent.items()
                        if q in index_of and index_of[q] not in held and index_of[a] not in held], dtype=np.int64)
    row_of = {int(k): r for r, k in enumerate(pos)}  # post position -> row of ``target``

    def trained_pairs(rows: np.ndarray) -> np.ndarray:
        """The pairs a term trains on: with the teacher anchor only questions it embedded, then capped."""
        if config.anchor == "teacher" and len(rows):
            rows = rows[np.isin(rows[:, 0], pos)]
        return rows[capped_pairs(rows, row_of, min(config.pair_budget, len(pos)), rng)]

    pairs = trained_pairs(pairs) if config.contrastive > 0 else pairs[:0]
    # duplicate and related questions, the second automatic judgement
    linked = trained_pairs(link_pairs(store, ids, parent, held)) if config.links > 0 else pairs[:0]
    negatives: dict[int, list[int]] = {}
    if text is not None and len(pairs):
        mined = bm25_negatives(text, store, sorted({ids[q] for q in pairs[:, 0].tolist()}), config.negative_depth, parent)
        negatives = {index_of[q]: [index_of[a] for a in found if a in index_of and index_of[a] not in held]
                     for q, found in mined.items()}
    needed = sorted(set(pos.tolist()) | set(pairs.ravel().tolist()) | set(linked.ravel().tolist())
                    | {n for found in negatives.values() for n in found})
    tokens = dict(zip(needed, draft.token_ids([texts[k] for k in needed]), strict=True))

    # sparse gradients: a step touches only the rows of the batch's tokens
    emb = torch.nn.EmbeddingBag(table.shape[0], table.shape[1], mode="sum", sparse=True)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(table))
    opt = torch.optim.SparseAdam(list(emb.parameters()), lr=config.lr)
    target_t = torch.from_numpy(target)

    def bag(rows: np.ndarray) -> torch.Tensor:
        seqs = [tokens[j] or [0] for j in rows]
        flat = torch.tensor([t for s in seqs for t in s], dtype=torch.long)
        offsets = torch.tensor(np.concatenate(([0], np.cumsum([len(s) for s in seqs])[:-1])), dtype=torch.long)
        return torch.nn.functional.normalize(emb(flat, offsets), dim=1)

    def distance(rows: np.ndarray) -> torch.Tensor:  # rows index pos (posts with a teacher vector)
        return 1.0 - (bag(pos[rows]) * target_t[rows]).sum(dim=1).mean()

    def contrastive_pass(rows: np.ndarray, weight: float, hard: int = 0) -> None:
        """One epoch of InfoNCE over ``rows`` (question, wanted post): each question against its own
        post, the others of its batch and ``hard`` BM25 negatives of its own (never against itself)."""
        batches = rows[rng.permutation(len(rows))]
        for i in range(0, len(batches), config.batch):
            asked, wanted = batches[i : i + config.batch, 0], batches[i : i + config.batch, 1]
            columns = np.concatenate([wanted, drawn_negatives(asked, negatives, hard, rng)])
            logits = question_anchors(config.anchor, asked, row_of, target_t, bag) @ bag(columns).T / config.temperature
            loss = weight * torch.nn.functional.cross_entropy(without_itself(logits, asked, columns),
                                                              torch.arange(len(asked)))
            opt.zero_grad()
            loss.backward()
            opt.step()

    with torch.no_grad():
        first = float(distance(val))
    best, best_state, stale, history = first, emb.weight.detach().clone(), 0, []
    for epoch in range(config.epochs):
        emb.train()
        shuffled = fit[rng.permutation(len(fit))]
        for i in range(0, len(shuffled), config.batch):
            rows = shuffled[i : i + config.batch]
            loss = distance(rows)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if config.contrastive > 0 and len(pairs):
            contrastive_pass(pairs, config.contrastive, config.hard_negatives)
        if config.links > 0 and len(linked):
            contrastive_pass(linked, config.links)
        with torch.no_grad():
            now = float(distance(val))
        history.append(round(now, 5))
        if progress:
            progress("train", epoch + 1, config.epochs)
        if now < best - 1e-5:
            best, best_state, stale = now, emb.weight.detach().clone(), 0
        else:
            stale += 1
            if stale >= config.patience:
                break
    digest = hashlib.sha256(np.asarray([ids[k] for k in pos], dtype=np.int64).tobytes()).hexdigest()[:16]
    info = {
        "name": name, "kind": "static", "version": VERSION,
        "config": {**asdict(config), "teacher": "minilm", "max_tokens": config.max_tokens,
                   "base_fingerprint": base_id},
        "trained_on": {
            "source": source, "posts": len(ids), "teacher_posts": len(pos), "post_ids_sha256_16": digest,
            "qa_pairs": len(pairs), "link_pairs": len(linked), "negative_questions": len(negatives),
            "latex_tokens": len(words), "teacher_from_index": bool(teacher_index),
            "teacher_posts_restricted": teacher_posts is not None,
        },
        "training": {"val_distance_start": round(first, 5), "val_distance_best": round(best, 5),
                     "epochs_run": len(history), "val_history": history,
                     "seconds": round(time.perf_counter() - started, 1)},
    }
    # float16 as saved: the vectors made now are the vectors a reload makes
    encoder = StaticEncoder(tokenizer, best_state.numpy().astype(np.float16).astype(np.float32), info)
    sample = texts[: min(len(texts), 2000)]
    t0 = time.perf_counter()
    encoder.encode(sample)
    rate = len(sample) / max(time.perf_counter() - t0, 1e-9)
    encoder._info["speed"] = f"{rate:,.0f} posts/s on one core (title + post, measured after training)"
    encoder.save(out)
    return json.loads((Path(out) / "encoder.json").read_text())
