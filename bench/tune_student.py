"""Choose the static student's recipe on all the judged topics: cross-fitted students, pooled 2020 + 2021.

    python bench/tune_student.py --index MINILM_INDEX --work DIR [--seeds 13,14] [--folds 2]
    python bench/tune_student.py --index MINILM_INDEX --work DIR --candidates packaged,A.toml,...

Each candidate recipe (``packaged``: :class:`~mathsearch.building.train.TrainConfig`'s defaults, the
one ``mathsearch index --dense student`` and ``train-encoder`` use; a TOML file: those defaults with
the fields it names) is measured the honest way of ``bench/crossfit_encoder.py``: the sample's threads
split into ``--folds`` folds, each fold's posts encoded by a student that never saw their teacher
vectors (at full size the teacher embeds 20,000 of 2.4M posts, so the student encodes posts it was
not fitted on).  The packaged ``ours`` config for a static encoder (``ours_static.toml``) then ranks
the 2020 and 2021 topics on that index, and each topic's nDCG' and nDCG@10 are averaged over the
``--seeds`` (a student's training is seeded: one seed's luck is not a recipe's merit).

The choice goes through :mod:`mathsearch.evaluation.selection`, as every tuning script's: the topics
pooled, 10 x 5-fold cross-validation stratified by year, a recipe replaces the simpler one (the
candidates are listed simplest first) only when the cross-validated choice gains more than 0.002
nDCG@10 out of fold; bootstrap intervals and the leave-one-year-out rows beside it.  By default two
decisions are printed: the packaged recipe against distillation alone (``s0-distill``: is its
contrastive term kept), and the packaged recipe against one addition each (links, hard negatives,
word-piece pairs: ``bench/candidates/student/``).  Every student,
index and per-topic score is kept under ``--work`` (one folder per recipe and seed, named by the
recipe's digest, and ``teacher-N`` for a recipe whose teacher reads N < 256 word pieces a post: the
index's posts embedded again at N; nothing else under it is touched), so a stopped run resumes and a
second run only prints.  MINILM_INDEX: the sample
built with ``--dense minilm`` (the teacher's vectors are read from it).  2022's judgements are never read.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import tomllib
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from mathsearch.building.dense_plan import embed_teacher  # noqa: E402
from mathsearch.building.train import TEACHER_MAX_TOKENS, TrainConfig, checked  # noqa: E402
from mathsearch.errors import InputError  # noqa: E402
from mathsearch.evaluation import selection  # noqa: E402
from mathsearch.indexes.dense import post_passages  # noqa: E402
from mathsearch.store import Store  # noqa: E402
from mathsearch.systems.ours import load_config, packaged_config_for  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossfit_encoder import crossfit  # noqa: E402
from tune_ours import Bench, judged_sets  # noqa: E402

STUDENT = Path(__file__).resolve().parent / "candidates" / "student"
# The default: two decisions, each against the packaged recipe as tune_ours.py's are against the
# packaged config: is its contrastive term kept against distillation alone (the simpler), and does
# any one addition to it hold out of fold.  (One decision over all five, with distillation as the
# simplest, packages whatever is best on all topics once the cross-validated choice beats
# distillation, even where it does not beat the packaged recipe.)
DEFAULT_DECISIONS = (
    ("the contrastive term dropped alone", (str(STUDENT / "s0-distill.toml"), "packaged")),
    ("one addition to the packaged recipe", ("packaged", str(STUDENT / "s1-links.toml"),
                                             str(STUDENT / "s2-hard-negatives.toml"), str(STUDENT / "s3-bigrams.toml"))),
)
FIELDS = {f.name for f in dataclasses.fields(TrainConfig)} - {"seed", "threads", "extra"}


def recipe(source: str) -> tuple[str, dict]:
    """``(label, fields)`` of a candidate: ``packaged`` (no fields) or a TOML file of TrainConfig fields."""
    if source == "packaged":
        return "packaged", {}
    path = Path(source)
    try:
        fields = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"{path}: no such candidate recipe") from None
    except (OSError, UnicodeDecodeError) as exc:  # a folder, an unreadable or binary file
        raise InputError(f"{path}: not a readable TOML recipe ({exc.__class__.__name__})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not TOML ({exc})") from None
    unknown = sorted(set(fields) - FIELDS)
    if unknown:
        raise InputError(f"{path}: {', '.join(unknown)} not a recipe field (fields: {', '.join(sorted(FIELDS))})")
    return path.stem, fields


def check_teacher(index: Path) -> None:
    """Exit 2 (an InputError) unless ``index`` holds MiniLM's vectors, which the students learn from."""
    if not index.is_dir():
        raise InputError(f"{index}: no such index folder")
    manifest = index / "dense" / "manifest.json"
    if not manifest.is_file():
        raise InputError(f"{index}: no dense vectors (dense/manifest.json): the teacher's MiniLM vectors are "
                         "read from it; build the sample with `mathsearch index COLLECTION --index DIR --dense minilm`")
    kind = json.loads(manifest.read_text()).get("encoder", {}).get("kind")
    if kind != "minilm":
        raise InputError(f"{index}: its vectors are {kind}'s, not MiniLM's (the teacher); build it with --dense minilm")


def config_of(fields: dict, seed: int) -> TrainConfig:
    return dataclasses.replace(TrainConfig(), seed=seed, **fields)


def digest(config: TrainConfig, folds: int) -> str:
    """The recipe and fold count a work folder holds (its defaults spelt out: a changed default is a
    new folder; ``teacher_tokens`` left out at 256, as every recipe read before it was a field)."""
    fields = dataclasses.asdict(config) | {"threads": None}
    if fields["teacher_tokens"] == TEACHER_MAX_TOKENS:
        del fields["teacher_tokens"]
    text = json.dumps({"config": fields, "folds": folds}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def teacher_for(index: Path, root: Path, tokens: int) -> Path:
    """The folder whose MiniLM vectors teach a recipe whose teacher reads ``tokens`` word pieces a
    post: ``index`` itself at 256 (MiniLM's own), else ``root/teacher-N``: every post of ``index``
    embedded at N by the dense plan's own teacher (:func:`embed_teacher`, chunk by chunk, so a
    stopped run resumes; its manifest written last; 6-9 min on this machine), in float32 as the
    index's own vectors, so that recipes differ by what they name alone."""
    if tokens == TEACHER_MAX_TOKENS:
        return index
    folder = root / f"teacher-{tokens}"
    if (folder / "dense" / "manifest.json").is_file():
        return folder
    print(f"the teacher at {tokens} word pieces: every post of {index} into {folder}", file=sys.stderr, flush=True)
    with Store.open(index) as store:  # a budget of every post: no seeded choice
        embed_teacher(store, folder, folder / "chunks", store.post_count(), TrainConfig().seed, "cpu", tokens=tokens,
                      precision="float32")
    return folder


def scores_of(index: Path, work: Path, config: TrainConfig, folds: int, passages) -> dict[str, dict]:
    """Per-topic ``{measure: {(year, topic): value}}`` of the packaged static ``ours`` on the
    cross-fitted index (kept in ``work/scores``, :class:`tune_ours.Bench`'s cache)."""
    teacher = teacher_for(index, work.parent, config.teacher_tokens)
    built = crossfit(index, work, config, folds, passages, teacher=teacher)
    return Bench(built, judged_sets(), cache=work / "scores").scores(load_config("", packaged_config_for(built)))


def mean_over_seeds(runs: list[dict[str, dict]]) -> dict[str, dict]:
    measures = runs[0].keys()
    return {m: {t: sum(r[m][t] for r in runs) / len(runs) for t in runs[0][m]} for m in measures}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True, help="the sample with MiniLM vectors (the teacher)")
    ap.add_argument("--work", type=Path, required=True, help="students, indexes and scores are kept here")
    ap.add_argument("--candidates", default="", help="comma-separated recipes, simplest first: one decision "
                    "among them (default: the contrastive term dropped, then one addition each)")
    ap.add_argument("--seeds", default="13,14", help="each recipe trained with each seed; scores averaged")
    ap.add_argument("--folds", type=int, default=2)
    args = ap.parse_args(argv)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise InputError(f"--seeds {args.seeds!r}: give whole numbers separated by commas") from None
    if not seeds or args.folds < 2:
        raise InputError("give at least one seed and --folds 2 or more")
    decisions = ((("fixed recipes, simplest first", tuple(s for s in args.candidates.split(",") if s.strip())),)
                 if args.candidates else DEFAULT_DECISIONS)
    label_of = {s: recipe(s) for _, sources in decisions for s in sources}  # each file read once
    recipes = dict(label_of.values())
    labels = [label for label, _ in label_of.values()]
    if len(set(labels)) < len(labels):
        raise InputError("two candidate recipes share a file name (the label is the file's stem): rename one")
    if args.work.exists() and not args.work.is_dir():
        raise InputError(f"--work {args.work} is a file: give a folder (new, or one this script wrote)")
    check_teacher(args.index)
    for fields in recipes.values():
        checked(config_of(fields, seeds[0]), args.index)  # a missing teacher or a bad option, before any work
    with Store.open(args.index) as store:
        passages = post_passages(store)
    scores: dict[str, dict] = {}
    for label, fields in recipes.items():
        runs = []
        for seed in seeds:
            config = config_of(fields, seed)
            work = args.work / f"{label}-{digest(config, args.folds)}"
            work.mkdir(parents=True, exist_ok=True)
            (work / "recipe.json").write_text(json.dumps({"label": label, "fields": fields, "seed": seed,
                                                          "folds": args.folds}, indent=1) + "\n")
            print(f"{label}, seed {seed}: {work}", file=sys.stderr, flush=True)
            runs.append(scores_of(args.index, work, config, args.folds, passages))
            one = {m: selection.mean_on(v) for m, v in runs[-1].items() if m in selection.MEASURES}
            print(f"  pooled {', '.join(f'{m} {v:.3f}' for m, v in one.items())}", file=sys.stderr, flush=True)
        scores[label] = mean_over_seeds(runs)
    for what, sources in decisions:
        order = [label_of[s][0] for s in sources]
        title = (f"### the student's recipe, {what}: {args.folds}-fold cross-fitted students, "
                 f"scores averaged over seeds {', '.join(map(str, seeds))}")
        print("\n".join(selection.report(selection.decide(scores, order), title)) + "\n")
    return 0


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
