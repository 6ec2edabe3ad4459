"""``mathsearch index COLLECTION_DIR --index INDEX_DIR``: build the store (and search indexes)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text
from typer.core import TyperCommand

from ..building import build_index
from ..building.dense_plan import PLANS as DENSE_PLANS
from ..building.resume import kept_vectors, resume_root
from ..indexes.kinds import check_mirmu
from ..store.build import BYTE_STAGES
from ._common import console as make_console
from ._common import friendly_errors, print_json

DEFAULT_COLLECTION = Path("../shared/data/arqmath/collection")


def dense_values(args: list[str]) -> list[str]:
    """``--dense`` alone is the auto plan; ``--dense minilm`` / ``--dense student`` (or ``--dense=...``)
    force one: the value moves to the hidden ``--dense-plan`` (click has no option whose value may be
    left out)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--dense="):
            out += ["--dense", "--dense-plan", arg.split("=", 1)[1]]
        elif arg == "--dense" and i + 1 < len(args) and args[i + 1] in DENSE_PLANS:
            out += ["--dense", "--dense-plan", args[i + 1]]
            i += 1
        else:
            out.append(arg)
        i += 1
    return out


def word_after_dense(args: list[str]) -> str | None:
    """The word that follows ``--dense`` when it is no option (a plan misspelt, or the collection)."""
    for i, arg in enumerate(args[:-1]):
        if arg == "--dense" and not args[i + 1].startswith("-"):
            return args[i + 1]
    return None


class _ByStage(ProgressColumn):
    """The store's stages in bytes (a file read) by rich's own column, the others (posts, formulae)
    as ``count(task)``."""

    def __init__(self, size: ProgressColumn, count, style: str) -> None:  # noqa: ANN001 - Task -> str
        super().__init__()
        self.size, self.count, self.style = size, count, style

    def render(self, task) -> Text:  # noqa: ANN001 - rich's Task
        if task.description.strip() in BYTE_STAGES:
            return self.size.render(task)
        return Text(self.count(task), style=self.style)


def _progress_columns() -> tuple[ProgressColumn, ...]:
    done = _ByStage(DownloadColumn(), lambda t: f"{int(t.completed):,}/{int(t.total or 0):,}", "progress.download")
    rate = _ByStage(TransferSpeedColumn(), lambda t: "?" if t.speed is None else f"{t.speed:,.1f}/s",
                    "progress.data.speed")
    return TextColumn("{task.description:>10}"), BarColumn(), done, rate, TimeRemainingColumn()


class IndexCommand(TyperCommand):
    def parse_args(self, ctx, args):  # noqa: ANN001, ANN201 - click's signature
        try:
            return super().parse_args(ctx, dense_values(list(args)))
        except Exception as exc:  # typer's own click's UsageError, which it does not export
            word = word_after_dense(list(args))
            message = str(getattr(exc, "message", ""))
            if word is None or "extra argument" not in message or word not in message:
                raise
        # `--dense bogus COLLECTION`: click alone would say "unexpected extra argument (bogus)"
        ctx.fail(f"--dense {word!r}: give one of {', '.join(DENSE_PLANS)}, or --dense alone (the auto plan).")


def index(
    collection: Path = typer.Argument(DEFAULT_COLLECTION, help="ARQMath collection folder or raw Stack Exchange dump."),
    index_dir: Path = typer.Option(Path("index"), "--index", "-i", help="Where to build (replaced only when complete)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object of counts."),
    store_only: bool = typer.Option(False, "--store-only", help="Build the collection store only, no search indexes."),
    dense: bool | None = typer.Option(None, "--dense/--no-dense", show_default=False,
                                      help="Also embed posts for dense retrieval: the plan chosen "
                               "for --dense-budget (MiniLM on every post where that fits, else the static student "
                               "taught by MiniLM); --dense minilm / --dense student force one, --encoder NAME another. "
                               "An index that holds vectors is rebuilt without them only with --no-dense."),
    dense_plan: str = typer.Option("auto", "--dense-plan", hidden=True),
    dense_budget: float = typer.Option(60.0, "--dense-budget", metavar="MINUTES", help="Time the dense part may "
                                       "take: MiniLM on every post when that fits (estimated from its rate measured "
                                       "on the first posts), else the student, whose 20,000-post teacher starts while "
                                       "the store is written and runs beside the text and formula steps."),
    device: str = typer.Option("auto", "--device", help="Where MiniLM runs: auto (a CUDA GPU when torch sees "
                               "one), cpu or cuda (the CPU, with a message, when there is none)."),
    encoder: str | None = typer.Option(None, "--encoder", help="Encoder of the dense vectors (implies --dense): "
                                       "minilm (default), static-minilm, or a trained encoder's name or folder."),
    query_encoder: str | None = typer.Option(None, "--query-encoder", help="Encoder of the topics when not --encoder "
                                             "(minilm for a static encoder trained with MiniLM as teacher)."),
    shards: int = typer.Option(1, "--shards", min=1, help="Build N shards by thread (each a complete index under "
                               "INDEX_DIR), searched as one."),
    ray: str | None = typer.Option(None, "--ray", metavar="ADDRESS", help="Run the build steps as Ray tasks: local "
                                   "(a cluster started here) or a running cluster's address (auto, ray://HOST:10001)."),
    with_: str = typer.Option("", "--with", help="Also build (and train) what MIRMU's systems need, comma-separated: "
                              "mias, scm, formula2vec, compubert."),
) -> None:
    """Read a collection into INDEX_DIR; print what was read and what was skipped."""
    console = make_console(stderr=True)  # one line a message when piped
    with Progress(
        *_progress_columns(),
        console=console, disable=json_out or not console.is_terminal, transient=True,
    ) as bar:
        tasks: dict[str, int] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=min(done, total))

        mirmu = tuple(dict.fromkeys(n.strip() for n in with_.split(",") if n.strip()))
        check_mirmu(mirmu)  # an unknown name or a missing extra: one sentence, before any work
        try:
            counts = build_index(collection, index_dir, progress, store_only=store_only,
                                 optional=(("dense",) if dense or encoder is not None or query_encoder is not None else ())
                                 + mirmu,
                                 encoder=encoder,
                                 query_encoder=query_encoder, shards=shards, engine=_engine(ray), dense_plan=dense_plan,
                                 dense_budget=dense_budget, device=device, drop_dense=dense is False)
        except BaseException:  # Ctrl-C, SIGTERM, an error: say what the next run of this command resumes from
            kept = kept_vectors(index_dir)
            if kept:
                console.print(f"kept {kept:,} posts' vectors in {resume_root(index_dir)}: the same command resumes "
                              "from them", highlight=False, soft_wrap=True)
            raise
    for folder, size in counts.cleaned:
        console.print(f"removed {folder} ({size / 2**20:,.1f} MiB), left by a build that did not finish",
                      highlight=False, soft_wrap=True)
    if json_out:
        out = counts.as_json()
        print_json({**{k: out[k] for k in ("questions", "answers", "comments", "links", "formulas", "skipped", "notes")},
                    **counts.indexes, "store_seconds": round(counts.seconds, 2), "seconds": counts.total_seconds})
    else:
        console.print(
            f"indexed {collection} into {index_dir}: {counts.questions:,} questions, {counts.answers:,} answers, "
            f"{counts.comments:,} comments, {counts.links:,} links, {counts.formulas:,} formulae "
            f"in {counts.total_seconds:.1f} s (store {counts.seconds:.1f} s)",
            soft_wrap=True, highlight=False,
        )
        for reason, n in sorted(counts.skipped.items()):
            console.print(f"  skipped {n:,}: {reason}", soft_wrap=True)
        for problem in counts.problems[:20]:
            console.print(f"  [yellow]{problem}[/yellow]", highlight=False, soft_wrap=True)
        for note in counts.notes:
            console.print(f"  note: {note}", highlight=False, soft_wrap=True, markup=False)
    if counts.skipped:
        raise typer.Exit(1)  # built, but some rows were bad: say so in the exit code


def _engine(ray: str | None):
    """What runs the build's steps: None (here, the default), or with ``--ray`` a function that
    starts or reaches the Ray cluster once the build's checks have passed."""
    if ray is None:
        return None
    from ..building.engine import make_engine

    return partial(make_engine, ray)


def register(app: typer.Typer) -> None:
    app.command("index", cls=IndexCommand)(friendly_errors(index))
