"""Choose the weights of ``ours`` on all the judged topics: repeated cross-validation over 2020 + 2021.

    python bench/tune_ours.py --index INDEX_DIR [--config FILE] [--rounds 2] [--out DIR]
    python bench/tune_ours.py --index INDEX_DIR --simplify [--config FILE]
    python bench/tune_ours.py --index INDEX_DIR --candidates A.toml,B.toml,... (simplest first) [--max-df 0.5,0.2]
        [--then X.toml,Y.toml]
    python bench/tune_ours.py --index INDEX_DIR --qrels-dir DIR   (judgements from the collection)

Every choice goes through :mod:`mathsearch.evaluation.selection`: the 2020 and 2021 topics pooled,
each setting scored once per topic (nDCG' and nDCG@10, ``--collection-only``; cached in
``--cache``), then 10 x 5-fold cross-validation stratified by year: a setting replaces the simpler
one when the cross-validated choice gains more than 0.002 nDCG@10 out of fold.  Each table shows the
pooled and per-year figures, the gain against the simpler setting with a bootstrap 95% interval,
how often each setting was chosen in the folds, and the leave-one-year-out rows (chosen on 2020,
measured on 2021, and back).

Default: coordinate-wise rounds from the packaged config for the index (or ``--config``): the
neighbours of the current config (each weight alone at 0, half and double; a weight of 0 at 0.25,
0.5, 1 and 2) are scored, and the choice among the current config and its neighbours is
cross-validated; a round that does not hold ends the search.  ``--simplify``: each signal dropped
alone against the config (the simpler setting: without it).  ``--candidates``: fixed configs
(``packaged``: the packaged one); with ``--max-df``, each also with the answer BM25's commonest
terms left out, at each share given; with ``--then``, a second step: the candidate chosen, alone or
with one of those files laid over it (nested: in every fold both steps are chosen on the training
folds, so the cross-validated figure is that of the whole choice).  ``--qrels-dir``: the topics and
qrels written by ``mathsearch qrels --from-collection`` instead of the judged years (one pool, no years: the folds are plain), to
see whether choices made there hold on the judged topics (``--check-on-judged``: every decision's
settings scored on the judged 2020 + 2021 topics too, the agreement of their gains, and the choice
tested there).
Only 2020 and 2021 judgements are read here; 2022's never are.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import sys
from pathlib import Path

import mathsearch.systems  # noqa: F401  (registers every signal, the formula one too)
from mathsearch.config import laid_over, own_values
from mathsearch.errors import InputError
from mathsearch.evaluation import selection
from mathsearch.evaluation.measures import RANKED_MEASURES
from mathsearch.evaluation.subcollection import restrict_qrels
from mathsearch.evaluation.trec import TrecScorer, cut_depth
from mathsearch.indexes.dense import DenseIndex
from mathsearch.readers.hidden import HIDDEN_FILE
from mathsearch.readers.qrels import qrels_to_dict, read_qrels
from mathsearch.readers.topics import read_topics
from mathsearch.systems import SearchContext, SearchQuery
from mathsearch.systems.ours import OursConfig, combine, load_config, packaged_config_for
from mathsearch.systems.signals import DENSE_KINDS, clauses_from

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossyear import record, to_toml  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "arqmath"
CACHE = Path(__file__).resolve().parent / "out" / "tune-ours-cache"


def judged_sets(data: Path = DATA) -> dict[str, tuple[Path, Path]]:
    return {y: (data / "topics" / f"task1-{y}.xml", data / "qrels" / f"task1-{y}.tsv") for y in selection.YEARS}


class Bench:
    """Per-topic scores of ``ours`` configs on pooled topics (``{label: (topics file, qrels file)}``:
    the label is the topic's year, or ``collection`` for judgements from the collection)."""

    def __init__(self, index: Path, sets: dict[str, tuple[Path, Path]], cache: Path | None = CACHE):
        self.ctx = SearchContext(index)
        present = self.ctx.store.answer_ids()
        self.sets = {}
        manifest = (Path(index) / "mathsearch-index.json").read_bytes()
        key = hashlib.sha256(manifest)
        for label, (topics_file, qrels_file) in sets.items():
            qrels = restrict_qrels(qrels_to_dict(read_qrels(qrels_file)), present).qrels
            # judgements from the collection name what each topic hides; read_topics reads it with them
            queries = [SearchQuery.from_topic(t) for t in read_topics(topics_file) if t.topic_id in qrels]
            hide_file = Path(topics_file).parent / HIDDEN_FILE
            if hide_file.is_file():
                key.update(hide_file.read_bytes())
            self.sets[label] = (queries, TrecScorer(qrels, RANKED_MEASURES))
            key.update(label.encode() + Path(topics_file).read_bytes() + Path(qrels_file).read_bytes())
        self.key = key.hexdigest()[:16]
        self.cache_dir = cache
        self.memo: dict[str, dict] = {}
        # Each signal's scores per topic, by the signal's settings other than its weight: a trial
        # that changes a weight only re-fuses; one that changes a field recomputes that one signal.
        self.signal_cache: dict[tuple[str, str], dict[str, dict[int, float]]] = {}

    def topics(self) -> int:
        return sum(len(q) for q, _ in self.sets.values())

    def fused(self, config: dict, query: SearchQuery) -> dict[int, float]:
        """:func:`combine` itself, its signals' scores taken from the cache."""
        parsed = OursConfig.parse(config, "(tuning)")
        similar_key = repr(parsed.similar) + repr(parsed.teacher)  # the similar questions they start from

        def cached(name: str, sig, similar, earlier) -> dict[int, float]:
            variant = repr(dataclasses.replace(sig, weight=0.0)) + similar_key
            if getattr(sig, "rerank", 0):  # a re-scorer depends on the signals before it
                variant += repr([repr(dataclasses.replace(s, weight=0.0)) for n, _, s in parsed.signals if n in earlier])
            kept = self.signal_cache.setdefault((query.query_id, name), {})
            if variant in kept:
                kept[variant] = kept.pop(variant)
            else:
                if len(kept) >= 4:
                    kept.pop(next(iter(kept)))
                kept[variant] = sig.scores(self.ctx, query, similar, earlier)
            return kept[variant]

        return combine(self.ctx, query, parsed, cached)

    def scores(self, config: dict) -> dict[str, dict[tuple[str, str], float]]:
        """``{measure: {(set, topic): value}}`` of ``config``, from the cache when scored before."""
        text = json.dumps(config, sort_keys=True)
        digest = hashlib.sha256((self.key + text).encode()).hexdigest()[:24]
        if digest in self.memo:
            return self.memo[digest]
        path = self.cache_dir / f"{digest}.json" if self.cache_dir else None
        if path is not None and path.is_file():
            raw = json.loads(path.read_text())
            out = {m: {tuple(k.split("|", 1)): v for k, v in vals.items()} for m, vals in raw.items()}
        else:
            out: dict[str, dict[tuple[str, str], float]] = {}
            for label, (queries, scorer) in self.sets.items():
                run = {q.query_id: {str(a): s for a, s in self.fused(config, q).items()} for q in queries}
                for m, vals in scorer.score(cut_depth(run)).items():
                    out.setdefault(m, {}).update({(label, t): v for t, v in vals.items()})
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps({m: {"|".join(k): v for k, v in vals.items()} for m, vals in out.items()}))
        out = {m: out[m] for m in selection.MEASURES}
        self.memo[digest] = out
        return out


def check_dense(index: Path, config: dict, where: str, remedy: str = "pass --no-dense") -> None:
    """Exit 2 (an InputError) when ``config`` weights a dense signal and ``index`` has no vectors."""
    dense = [n for n, s in config.get("signals", {}).items() if s.get("kind") in DENSE_KINDS and s.get("weight")]
    dense += ["[feedback]"] if config.get("feedback", {}).get("weight") else []
    if dense and not DenseIndex.exists(index):
        raise InputError(f"{index}: no dense vectors (dense/manifest.json), which {where}'s signals "
                         f"{', '.join(dense)} need; build the index with --dense, or {remedy}")


def weight_paths(config: dict) -> list[tuple[str, ...]]:
    paths = []
    for name, sec in config.get("signals", {}).items():
        paths.append(("signals", name, "weight"))
        if sec.get("weight"):  # a signal that is off has no fields worth trying
            paths.extend(("signals", name, "fields", f) for f in sec.get("fields", {}))
    if "feedback" in config:  # the dense feedback after fusion, where the config has it
        paths.append(("feedback", "weight"))
    return paths


def get(config: dict, path: tuple[str, ...]) -> float:
    for key in path:
        config = config[key]
    return float(config)  # type: ignore[arg-type]


def put(config: dict, path: tuple[str, ...], value: object) -> dict:
    out = copy.deepcopy(config)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def neighbours(config: dict) -> dict[str, dict]:
    """Each weight alone moved one step, labelled ``path=value``; the simpler moves first (a weight
    to 0, then smaller, then larger)."""
    out = {}
    for path in weight_paths(config):
        current = get(config, path)
        values = [0.25, 0.5, 1.0, 2.0] if current == 0 else [0.0, current / 2, current * 2]
        for v in values:
            out[f"{'.'.join(path[1:] if path[0] == 'signals' else path)}={v:g}"] = put(config, path, v)
    return dict(sorted(out.items(), key=lambda kv: 0 if kv[0].endswith("=0") else 1))


def show(decision: selection.Decision, limit: int) -> list[str]:
    """The rows worth reading: the simplest, the best ``limit`` on all topics, and every chosen."""
    keep = {decision.order[0], decision.chosen, decision.on_all}
    ranked = sorted(decision.order, key=lambda s: -decision.in_sample[s][selection.PRIMARY])
    keep.update(ranked[:limit])
    keep.update(s for s, n in decision.cv.chosen.items() if n)
    return selection.report(decision, shown=[s for s in decision.order if s in keep])


DECISIONS: list[tuple[selection.Decision, dict[str, dict]]] = []  # every decision printed, in order
JUDGED: list[Bench] = []  # --check-on-judged: the judged 2020 + 2021 topics, where every decision is checked


def decide(bench: Bench, configs: dict[str, dict], title: str, limit: int = 12,
           steps: selection.Steps | None = None) -> selection.Decision:
    scores = {label: bench.scores(cfg) for label, cfg in configs.items()}
    decision = selection.decide(scores, list(configs), steps=steps)
    print("\n".join(show(decision, limit)) + "\n", flush=True)
    if JUDGED:
        print("\n".join(check_on_judged(JUDGED[0], configs, decision)) + "\n", flush=True)
    DECISIONS.append((decision, configs))
    return decision


def check_on_judged(judged: Bench, configs: dict[str, dict], decision: selection.Decision) -> list[str]:
    """Whether a decision made on other judgements (the collection's) holds on the judged 2020 + 2021
    topics: every setting's gain over the first there and here, how the two orders agree (Spearman
    over the settings), and the choice against the first on the judged topics, with its interval."""
    from scipy.stats import spearmanr

    first, p, s2 = decision.order[0], selection.PRIMARY, selection.SECONDARY
    scores = {label: judged.scores(cfg) for label, cfg in configs.items()}
    mean = {label: {m: selection.mean_on(v) for m, v in sc.items()} for label, sc in scores.items()}
    lines = [f"#### the same settings on the judged topics ({judged.topics()}: 2020 + 2021)", "",
             f"| setting | {p} gain here | {p} gain on the judged topics | {s2} gain on the judged topics |",
             "|---|---|---|---|"]
    here, there = [], []
    for label in decision.order[1:]:
        here.append(decision.in_sample[label][p] - decision.in_sample[first][p])
        there.append(mean[label][p] - mean[first][p])
        lines.append(f"| {label} | {here[-1]:+.3f} | {there[-1]:+.3f} | {mean[label][s2] - mean[first][s2]:+.3f} |")
    if len(here) >= 3:
        rho = spearmanr(here, there)
        lines += ["", f"agreement of the gains over {len(here)} settings: Spearman {rho.statistic:+.2f} (p {rho.pvalue:.2f})"]
    chosen = decision.chosen if decision.replaces else decision.on_all
    if chosen != first:
        held = selection.decide({first: scores[first], chosen: scores[chosen]}, [first, chosen])
        lines.append(f"chosen here, {chosen}, on the judged topics against {first}: {p} "
                     f"{held.against_simplest[chosen][p].cell()}, {s2} {held.against_simplest[chosen][s2].cell()}"
                     f" -> {'holds' if held.against_simplest[chosen][p].mean > selection.TIE else 'does not hold'}")
    return lines


def ascend(bench: Bench, start: dict, rounds: int) -> dict:
    current = start
    for r in range(rounds):
        near = neighbours(current)
        print(f"round {r + 1}: {len(near)} neighbours on {bench.topics()} topics ...", file=sys.stderr, flush=True)
        configs = {"current": current, **near}
        decision = decide(bench, configs, f"### round {r + 1}: the current config and its neighbours")
        if not decision.replaces:
            break
        current = configs[decision.chosen]
    return current


def simplify(bench: Bench, start: dict) -> dict:
    """Each part of ``start`` that is on, dropped alone (its weight, or the teacher's re-scoring, to
    0); the parts whose dropping the choice keeps are dropped together."""
    parts = [(("signals", name, "weight"), name) for name, sec in start.get("signals", {}).items() if sec.get("weight")]
    if start.get("feedback", {}).get("weight"):  # the dense feedback after fusion, where the config has it
        parts.append((("feedback", "weight"), "feedback"))
    if start.get("teacher", {}).get("rescore"):  # the teacher's re-scoring of the similar questions
        parts.append((("teacher", "rescore"), "the teacher"))
    simplified = copy.deepcopy(start)
    for path, label in parts:
        off = 0 if path[0] == "teacher" else 0.0
        value = get(start, path)
        decision = decide(bench, {f"without {label}": put(start, path, off), f"with {label} ({value:g})": start},
                          f"### {label} dropped alone")
        if not decision.replaces:
            simplified = put(simplified, path, off)
    return simplified


def shares(text: str) -> list[float]:
    """``--max-df``'s shares, each in (0, 1]."""
    out = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        try:
            share = float(part)
        except ValueError:
            share = -1.0
        if not 0 < share <= 1:
            raise InputError(f"--max-df {part!r}: a share of the answers is a number in (0, 1]")
        out.append(share)
    return out


def capped(configs: dict[str, dict], shares_: list[float]) -> dict[str, dict]:
    """Each config at each share (``LABEL+max_df=SHARE``, larger shares, the closer to none, first):
    its answer signal's ``max_df`` set to the share for every field the signal weighs."""
    out = {}
    for share in sorted(set(shares_), reverse=True):
        for label, cfg in configs.items():
            answer = cfg.get("signals", {}).get("answer")
            if not answer:
                raise InputError(f"--max-df: {label} has no [signals.answer] to leave terms out of")
            fields = sorted({c.field for c in clauses_from(answer.get("fields", {})) if c.weight > 0})
            out[f"{label}+max_df={share:g}"] = put(cfg, ("signals", "answer", "max_df"), {f: share for f in fields})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--config", default="", help="the start (default: the packaged config for the index)")
    ap.add_argument("--candidates", default="", help="comma-separated config files, simplest first ('packaged')")
    ap.add_argument("--max-df", default="", metavar="SHARES",
                    help="with --candidates: each candidate also with its answer BM25's terms held by more than each "
                    "of these shares of the answers left out (every field it weighs), after the plain ones")
    ap.add_argument("--then", default="", metavar="FILES",
                    help="with --candidates: a second step, each of these files' own values (its base aside) laid "
                    "over whichever candidate the first step chose, or none; both steps are cross-validated together")
    ap.add_argument("--simplify", action="store_true", help="drop each signal alone")
    ap.add_argument("--no-dense", action="store_true", help="drop the start's dense signals")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--qrels-dir", type=Path, default=None,
                    help="choose on the topics.xml + qrels.tsv of `mathsearch qrels --from-collection`")
    ap.add_argument("--check-on-judged", action="store_true",
                    help="with --qrels-dir: score every decision's settings on the judged 2020 + 2021 topics too "
                    "and say whether the choice holds there")
    ap.add_argument("--cache", type=Path, default=CACHE, help="per-config per-topic scores kept here")
    ap.add_argument("--out", type=Path, default=None, help="write the chosen config here (chosen.toml), with "
                    "what the results tables show of the decision (selection.json, tuned-on-YEAR.toml)")
    args = ap.parse_args(argv)
    if (args.max_df or args.then) and not args.candidates:
        raise InputError("--max-df and --then vary the --candidates configs; give --candidates")
    if args.then and args.check_on_judged:
        raise InputError("--check-on-judged checks a choice in one step; leave out --then")
    if args.out is not None:
        check_out(args.out)
    packaged = packaged_config_for(args.index)
    sets = judged_sets()
    if args.check_on_judged and args.qrels_dir is None:
        raise InputError("--check-on-judged checks choices made on --qrels-dir DIR's judgements; give --qrels-dir")
    if args.qrels_dir is not None:
        sets = {"collection": (args.qrels_dir / "topics.xml", args.qrels_dir / "qrels.tsv")}
        if args.check_on_judged:
            JUDGED.append(Bench(args.index, judged_sets(), args.cache))
    if args.candidates:
        files = [f for f in args.candidates.split(",") if f]
        configs = {(f if f == "packaged" else Path(f).stem): load_config("" if f == "packaged" else f, packaged)
                   for f in files}
        configs.update(capped(configs, shares(args.max_df)))
        steps = then_steps(configs, [f for f in args.then.split(",") if f]) if args.then else None
        for f, cfg in configs.items():
            OursConfig.parse(cfg, f)  # a misspelt key is refused here, named by its file, before any search
            check_dense(args.index, cfg, f, "leave that candidate out")  # --no-dense drops a --config's signals only
        title = "### fixed configs, simplest first" + (", then each --then file over the one chosen" if steps else "")
        decision = decide(Bench(args.index, sets, args.cache), configs, title, steps=steps)
        if args.out:
            write_out(args.out, configs[decision.chosen], args)
        return 0
    start = load_config(args.config, packaged)
    if args.no_dense:
        start["signals"] = {k: v for k, v in start["signals"].items() if v.get("kind") not in DENSE_KINDS}
        start.pop("feedback", None)
        start.pop("teacher", None)
    check_dense(args.index, start, args.config or packaged)
    bench = Bench(args.index, sets, args.cache)
    chosen = simplify(bench, start) if args.simplify else ascend(bench, start, args.rounds)
    if chosen != start:
        decide(bench, {"start": start, "chosen": chosen}, "### the start against what was chosen")
    print(json.dumps(chosen.get("signals", {}), indent=1))
    if args.out:
        write_out(args.out, chosen, args)
    return 0


def then_steps(configs: dict[str, dict], files: list[str]) -> selection.Steps:
    """The two steps of ``--then``: ``configs`` (simplest first), then the one chosen alone or with
    one file laid over it (added to ``configs`` as ``CONFIG+FILE``)."""
    overlays = {}
    for f in files:  # each file read once, laid over every candidate
        overlays[Path(f).stem] = own_values(f)
        if not overlays[Path(f).stem]:
            raise InputError(f"--then {f}: the file sets nothing to lay over the candidates")
    firsts = list(configs)
    second: dict[str, list[str]] = {}
    for first in firsts:
        second[first] = [first]
        for stem, over in overlays.items():
            configs[f"{first}+{stem}"] = laid_over(configs[first], over)
            second[first].append(f"{first}+{stem}")
    return [{"": firsts}, second]


def check_out(out: Path) -> None:
    """Refuse ``--out`` before any search, not after: a file there, or a record of an earlier
    decision in it (nothing is overwritten)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} is a file, not a folder")
    names = ["chosen.toml", "selection.json", *(f"tuned-on-{y}.toml" for y in selection.YEARS)]
    there = [n for n in names if (out / n).exists()]
    if there:
        raise InputError(f"{out} already holds {', '.join(there)}; choose another --out (nothing is overwritten)")


def write_out(out: Path, chosen: dict, args: argparse.Namespace) -> None:
    """chosen.toml, and the figures of the last decision that replaced a config (else the last one)."""
    target = out / "chosen.toml"
    if target.exists():
        raise InputError(f"{target} exists; choose another --out (nothing is overwritten)")
    decision, configs = next((d for d in reversed(DECISIONS) if d[0].replaces), DECISIONS[-1])
    record(decision, configs, out, "python bench/tune_ours.py " + " ".join(sys.argv[1:]))
    target.write_text(to_toml(chosen) + "\n")


if __name__ == "__main__":
    from mathsearch.errors import run_script

    run_script(main)
