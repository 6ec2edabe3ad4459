"""``mathsearch train-encoder --index INDEX_DIR --name NAME``: train a static encoder on a collection."""

from __future__ import annotations

from pathlib import Path

import typer

from ..building.train import TrainConfig
from ..errors import InputError
from ._common import friendly_errors, print_json

_RECIPE = TrainConfig()  # the measured recipe: every default below is its value


def train_encoder(
    index_dir: Path = typer.Option(..., "--index", "-i", help="An index (its store holds the collection's posts)."),
    name: str = typer.Option(..., "--name", help="The encoder's name (saved under $MATHSEARCH_ENCODERS or ~/.cache/mathsearch/encoders)."),
    out: Path | None = typer.Option(None, "--out", help="Save into this folder instead of the encoders' home."),
    teacher_index: Path | None = typer.Option(None, "--teacher-index", help="Read MiniLM teacher vectors from this index (built with --dense --encoder minilm)."),
    seed: int = typer.Option(_RECIPE.seed, "--seed"),
    epochs: int = typer.Option(_RECIPE.epochs, "--epochs"),
    teacher_budget: int = typer.Option(_RECIPE.teacher_budget, "--teacher-budget", help="Posts the teacher embeds when no --teacher-index (12-22/s on 2 cores)."),
    teacher_tokens: int = typer.Option(_RECIPE.teacher_tokens, "--teacher-tokens", help="Word pieces of each post the teacher reads when it embeds (1-256; a --teacher-index must have been made at the same)."),
    latex_vocab: int = typer.Option(_RECIPE.latex_vocab, "--latex-vocab", help="LaTeX commands added as whole tokens."),
    contrastive: float = typer.Option(_RECIPE.contrastive, "--contrastive", help="Weight of the question -> answer contrastive term."),
    anchor: str = typer.Option(_RECIPE.anchor, "--anchor", help="Question side of that term: student, teacher (MiniLM's vector, as topics are encoded; only questions it embedded) or mixed (MiniLM's where it has one)."),
    links: float = typer.Option(_RECIPE.links, "--links", help="Weight of a question <-> question term over the collection's duplicate and related links (0: off)."),
    hard_negatives: int = typer.Option(_RECIPE.hard_negatives, "--hard-negatives", help="Per question of the question -> answer term, this many of its BM25 answers (from --index's text index, outside its thread) as negatives (0: off)."),
    negative_depth: int = typer.Option(_RECIPE.negative_depth, "--negative-depth", help="... drawn from its best this many by BM25."),
    bigrams: int = typer.Option(_RECIPE.bigrams, "--bigrams", help="Hashed buckets for pairs of neighbouring word pieces, each a row of its own (0: off; README: 131072)."),
) -> None:
    """Train a static encoder on INDEX_DIR's posts with MiniLM as teacher; print its encoder.json."""
    from ..building.train import TrainConfig, checked, train
    from ..encoders import encoder_home
    from ..indexes.dense import DenseIndex
    from ..store import Store

    target = out or encoder_home() / name
    # Checked before training (minutes to hours): an encoder folder is written file by file, so a
    # folder of other files, or a file, is no place for one.
    if target.exists() and not target.is_dir():
        raise InputError(f"--out {target} is a file, not a folder for an encoder.")
    if target.is_dir() and any(target.iterdir()) and not (target / "encoder.json").is_file():
        raise InputError(f"{target} holds files that are not an encoder's: choose a new or empty folder (nothing was changed).")
    if teacher_index is not None and not DenseIndex.exists(teacher_index):
        raise InputError(f"--teacher-index {teacher_index} holds no dense vectors: build it with "
                         "`mathsearch index --dense --encoder minilm` (nothing was changed).")
    config = TrainConfig(seed=seed, epochs=epochs, teacher_budget=teacher_budget, teacher_tokens=teacher_tokens,
                         latex_vocab=latex_vocab,
                         contrastive=contrastive, anchor=anchor, links=links, hard_negatives=hard_negatives,
                         negative_depth=negative_depth, bigrams=bigrams)
    checked(config, index_dir)  # before the store is read: an option that cannot train says so first
    with Store.open(index_dir) as store:
        info = train(store, target, name, config, teacher_index=teacher_index, source=str(index_dir.resolve()),
                     text_index=index_dir)
    print_json({**info, "path": str(target)})


def register(app: typer.Typer) -> None:
    app.command("train-encoder")(friendly_errors(train_encoder))
