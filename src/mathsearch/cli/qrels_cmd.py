"""``mathsearch qrels``: judgements of an assessment database out as qrels, agreement, progress."""

from __future__ import annotations

from pathlib import Path

import typer

from ._common import console, friendly_errors, print_json

qrels_app = typer.Typer(name="qrels", help="Qrels from an assessment database (mathsearch pool): export, "
                        "agreement between assessors, progress, coverage of other qrels; or from the collection "
                        "itself (--from-collection).", no_args_is_help=True)


def export(
    pool_db: Path = typer.Argument(..., help="Assessment database (mathsearch pool)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the qrels files (created if missing)."),
    assessor: str | None = typer.Option(None, "--assessor", help="Export this assessor's judgements first (default: "
                                        "each topic's first assessor)."),
    overwrite: bool = typer.Option(False, "--force", "--overwrite", help="Replace qrels files of the same names."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Write the lab's qrels files that mathsearch eval reads (Task 1, Task 2 by visual and formula ids, Task 3)."""
    from ..assess import AssessDB, export_qrels

    with AssessDB(pool_db) as db:
        result = export_qrels(db, out, prefer=assessor, overwrite=overwrite)
    if json_out:
        print_json(result.to_json())
        return
    err = console(stderr=True)
    for key, path in result.files.items():
        err.print(f"wrote {result.judgements[key]:,} lines to {path}", highlight=False, markup=False)
    who = ", ".join(f"{a} {n:,}" for a, n in sorted(result.by_assessor.items()))
    err.print(f"  judgements of {result.topics} topics ({who or 'none yet'})", highlight=False, markup=False)


class _Plain:
    """Tables as tab-separated lines on stdout (rich would turn the tabs into spaces)."""

    def print(self, text: str, **_: object) -> None:
        typer.echo(text)


def _fmt(k: float | None) -> str:
    return "-" if k is None else f"{k:.3f}"


def agreement_cmd(
    pool_db: Path = typer.Argument(..., help="Assessment database (mathsearch pool)."),
    per_topic: bool = typer.Option(False, "--per-topic", help="Also print each topic's kappas."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Cohen's kappa between each pair of assessors on the items both judged (four-way and H+M binarised)."""
    from ..assess import AssessDB, agreement

    with AssessDB(pool_db) as db:
        pairs = agreement(db)
        overlap = db.overlap()
    if json_out:
        print_json({"overlap": overlap, "pairs": [p.to_json() for p in pairs]})
        return
    out = _Plain()
    if not pairs:
        out.print("no two assessors have judged the same item yet"
                  + (f" (overlap set: {', '.join(overlap)})" if overlap else ""), highlight=False, markup=False)
        return
    out.print("assessors\titems\tkappa 4-way\tkappa H+M\tmean over topics 4-way\tmean over topics H+M", markup=False)
    for p in pairs:
        out.print(f"{p.assessors[0]} / {p.assessors[1]}\t{p.items}\t{_fmt(p.graded)}\t{_fmt(p.binary)}\t"
                  f"{_fmt(p.mean_topic_kappa('graded'))}\t{_fmt(p.mean_topic_kappa('binary'))}", highlight=False,
                  markup=False)
        if per_topic:
            for topic, v in p.per_topic.items():
                out.print(f"  {topic}\t{v['items']}\t{_fmt(v['graded'])}\t{_fmt(v['binary'])}",  # type: ignore[arg-type]
                          highlight=False, markup=False)
    out.print("('-': undefined: no item graded 0-3 by both, or every shared item in one category for both)")


def progress(
    pool_db: Path = typer.Argument(..., help="Assessment database (mathsearch pool)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Items judged per topic: by anyone and by each assessor."""
    from ..assess import AssessDB

    with AssessDB(pool_db) as db:
        overall = db.progress()
        names = db.assessors()
        per = {a: db.progress(a) for a in names}
        overlap = set(db.overlap())
    total = sum(v["items"] for v in overall.values())
    judged = sum(v["judged_any"] for v in overall.values())
    if json_out:
        print_json({"items": total, "judged": judged, "topics": overall, "overlap": sorted(overlap),
                    "assessors": {a: {"judged": sum(v["judged"] for v in p.values()),
                                      "topics": {t: v["judged"] for t, v in p.items() if v["judged"]}}
                                  for a, p in per.items()}})
        return
    out = _Plain()
    out.print("topic\titems\tjudged\t" + "\t".join(names), highlight=False, markup=False)
    for topic, v in overall.items():
        mark = " *" if topic in overlap else ""
        out.print(f"{topic}{mark}\t{v['items']}\t{v['judged_any']}\t" + "\t".join(str(per[a][topic]["judged"]) for a in names),
                  highlight=False, markup=False)
    out.print(f"overall\t{total}\t{judged}\t" + "\t".join(str(sum(v["judged"] for v in per[a].values())) for a in names),
              highlight=False, markup=False)
    if overlap:
        out.print("(* in the shared overlap set)", highlight=False, markup=False)


def coverage_cmd(
    pool_db: Path = typer.Argument(..., help="Assessment database (mathsearch pool) of Task 1 or 2."),
    qrels: Path = typer.Option(..., "--qrels", "-q", help="Judgements to compare with (e.g. the lab's)."),
    index: Path | None = typer.Option(None, "--index", "-i", help="Count only judged ids this collection holds "
                                      "(answers for Task 1, visual ids of question/answer formulae for Task 2)."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The share of QRELS' judgements (and of its H+M relevant ones) of the pool's topics that the pool holds."""
    from ..assess import AssessDB
    from ..assess.coverage import coverage

    present = None
    with AssessDB(pool_db) as db:
        if index is not None:
            from ..evaluation import from_index

            present = from_index(index).present(db.task)
        found = coverage(db, qrels, present).to_json()
    if json_out:
        print_json(found)
        return

    def share(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    typer.echo(f"{found['topics']} topics: the pool holds {found['judged_pooled']:,} of {found['judged']:,} judged ids "
               f"({share(found['judged_share'])}) and {found['relevant_pooled']:,} of {found['relevant']:,} H+M relevant "
               f"({share(found['relevant_share'])})")


def from_collection(
    ctx: typer.Context,
    index: Path | None = typer.Option(None, "--from-collection", metavar="INDEX_DIR",
                                      help="Write the judgements the collection of INDEX_DIR holds: each question "
                                      "closed as a duplicate (PostLinks type 3) as a topic, its target's answers "
                                      "relevant; the asking thread named in hidden-threads.tsv."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Folder for topics.xml, qrels.tsv and "
                                    "hidden-threads.tsv (with --from-collection; files already there are kept)."),
    own: int = typer.Option(0, "--own", min=0, help="Also this many own-answer pairs (a question, its own answers "
                            "relevant; its question hidden, so its answers are found by their own text alone), the "
                            "first by id; 0: none; more than there are: every one."),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object (with --from-collection)."),
) -> None:
    """Qrels from an assessment database (mathsearch pool), or from the collection itself (--from-collection)."""
    if ctx.invoked_subcommand is not None:
        if index is not None:
            raise typer.BadParameter("--from-collection takes no subcommand", param_hint="--from-collection")
        return
    if index is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    if out is None:
        raise typer.BadParameter("--from-collection needs --out DIR", param_hint="--out")
    from ..evaluation.collection_qrels import write_collection_qrels
    from ..store import Store

    with Store.open(index) as store:
        written = write_collection_qrels(store, out, own)
    if json_out:
        print_json(written.to_json())
        return
    kinds = ", ".join(f"{n:,} {k}" for k, n in written.by_kind.items())
    console(stderr=True).print(f"wrote {written.topics:,} topics ({kinds}) and {written.judgements:,} relevant answers "
                               f"from {written.links:,} duplicate links to {out}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    qrels_app.callback(invoke_without_command=True)(friendly_errors(from_collection))
    qrels_app.command("export")(friendly_errors(export))
    qrels_app.command("agreement")(friendly_errors(agreement_cmd))
    qrels_app.command("progress")(friendly_errors(progress))
    qrels_app.command("coverage")(friendly_errors(coverage_cmd))
    app.add_typer(qrels_app, name="qrels")
