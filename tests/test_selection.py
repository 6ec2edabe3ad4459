"""mathsearch.evaluation.selection: settings chosen by repeated cross-validation over the pooled
judged topics (2020 + 2021), ties to the simpler, intervals and leave-one-year-out figures beside."""

from __future__ import annotations

import pytest

from mathsearch.evaluation import selection as sel

TOPICS = [("2020", f"A.{i}") for i in range(1, 48)] + [("2021", f"A.{i}") for i in range(301, 358)]


def setting(value, noise: float = 0.0, topics=TOPICS) -> dict[str, dict[tuple[str, str], float]]:
    """Both measures equal to ``value(topic)`` (a number or a function of the topic), plus an
    alternating ``noise``."""
    f = value if callable(value) else (lambda t: value)
    per = {t: f(t) + (noise if i % 2 else -noise) for i, t in enumerate(topics)}
    return {"nDCG@10": per, "nDCG'": {t: v + 0.1 for t, v in per.items()}}


def test_folds_are_stratified_by_year_and_reproducible():
    parts = sel.folds(TOPICS, 5, seed=7)
    assert sorted(t for p in parts for t in p) == sorted(TOPICS)  # a partition
    for year, n in (("2020", 47), ("2021", 57)):
        sizes = [sum(1 for t in p if t[0] == year) for p in parts]
        assert max(sizes) - min(sizes) <= 1 and sum(sizes) == n
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
    assert sel.folds(TOPICS, 5, seed=7) == parts
    assert sel.folds(TOPICS, 5, seed=8) != parts


def test_a_setting_better_everywhere_replaces_the_simpler_with_its_interval_and_year_figures():
    s = {"simple": setting(0.50, 0.05), "rich": setting(lambda t: 0.53 if t[0] == "2020" else 0.52, 0.06)}
    d = sel.decide(s, ["simple", "rich"], repeats=10)
    assert d.chosen == "rich" and d.replaces and d.cv.chosen == {"simple": 0, "rich": 50}
    g = d.cv_gain["nDCG@10"]
    assert g.mean == pytest.approx(0.02 * 57 / 104 + 0.03 * 47 / 104, abs=1e-3)
    assert g.low < g.mean < g.high and g.low > 0
    assert dict(g.per_year) == pytest.approx({"2020": 0.03, "2021": 0.02}, abs=1e-3)
    assert [(y.chosen_on, y.tested_on, y.chosen) for y in d.years] == [("2020", "2021", "rich"), ("2021", "2020", "rich")]
    assert d.years[0].gain() == pytest.approx(0.02, abs=1e-3)
    text = "\n".join(sel.report(d))
    assert "rich replaces simple" in text and "the choice, cross-validated" in text and "chosen on 2020" in text


def test_ties_within_the_band_keep_the_simpler_setting():
    s = {"simple": setting(0.50, 0.05), "same-ish": setting(0.5015, 0.05)}
    d = sel.decide(s, ["simple", "same-ish"])
    assert d.chosen == "simple" and d.on_all == "simple" and d.cv.chosen["same-ish"] == 0
    assert "keep simple" in d.reason()
    # just beyond the band: replaced
    assert sel.decide({"simple": s["simple"], "better": setting(0.5025, 0.05)}, ["simple", "better"]).chosen == "better"


def test_a_setting_that_wins_on_a_few_topics_only_does_not_hold_out_of_fold():
    # "lucky" is far better on 3 topics of 2020 and worse on every other one: on all the topics it
    # is ahead, but the folds that hold those topics out choose it and lose
    lucky_topics = set(TOPICS[:3])
    s = {"simple": setting(0.5), "lucky": setting(lambda t: 1.0 if t in lucky_topics else 0.488)}
    d = sel.decide(s, ["simple", "lucky"], repeats=10)
    assert d.in_sample["lucky"]["nDCG@10"] > d.in_sample["simple"]["nDCG@10"] + sel.TIE
    assert d.on_all == "lucky"
    assert 0 < d.cv.chosen["lucky"] < 50 and d.cv.chosen["simple"] > 0  # won some folds only
    assert d.cv.means["nDCG@10"] - d.in_sample["simple"]["nDCG@10"] <= sel.TIE
    assert d.chosen == "simple" and "does not hold out of fold" in d.reason()
    assert d.years[1].chosen == "simple"  # chosen on 2021 alone: the simpler (the lucky topics are 2020's)


def test_the_choice_is_reproducible_and_the_seed_matters_only_through_the_folds():
    s = {"a": setting(lambda t: 0.5 + 0.01 * (hash(t[1]) % 7)), "b": setting(lambda t: 0.5 + 0.01 * (int(t[1][2:]) % 5))}
    one, two = sel.cross_validate(s, ["a", "b"], seed=3), sel.cross_validate(s, ["a", "b"], seed=3)
    assert one == two and len(one.per_repeat["nDCG@10"]) == sel.REPEATS
    assert sel.cross_validate(s, ["a", "b"], seed=4).seed == 4


def test_a_fixed_setting_scores_its_own_mean_out_of_fold():
    s = {"only": setting(lambda t: int(t[1][2:]) / 1000)}
    cv = sel.cross_validate(s, ["only"], repeats=10)
    assert cv.means["nDCG@10"] == pytest.approx(sel.mean_on(s["only"]["nDCG@10"]))
    assert cv.out_of_fold["nDCG'"] == pytest.approx(s["only"]["nDCG'"])


def test_bootstrap_interval_is_seeded_and_covers_a_constant_difference_exactly():
    diffs = {t: 0.01 for t in TOPICS}
    assert sel.bootstrap_interval(diffs) == pytest.approx((0.01, 0.01))
    wobbly = {t: (0.1 if i % 3 else -0.2) for i, t in enumerate(TOPICS)}
    low, high = sel.bootstrap_interval(wobbly, seed=1)
    assert low < sel.mean_on(wobbly) < high and sel.bootstrap_interval(wobbly, seed=1) == (low, high)


def test_pool_refuses_the_held_out_year_and_different_topics():
    with pytest.raises(SystemExit, match="2022"):
        sel.pool({"2022": {"nDCG@10": {"B.1": 0.5}}})
    pooled = sel.pool({"2020": {"nDCG@10": {"A.1": 0.5}}, "2021": {"nDCG@10": {"A.1": 0.7}}})
    assert pooled == {"nDCG@10": {("2020", "A.1"): 0.5, ("2021", "A.1"): 0.7}}  # same id, two topics
    with pytest.raises(ValueError, match="different topics"):
        sel.decide({"a": setting(0.5), "b": setting(0.5, topics=TOPICS[:-1])}, ["a", "b"])


def test_on_the_real_sample_the_thread_context_is_chosen_over_the_answer_alone(sample_index, data_dir):
    """bm25-thread against bm25-answer on the pooled judged topics: chosen, with every figure."""
    from mathsearch.evaluation.measures import RANKED_MEASURES
    from mathsearch.evaluation.subcollection import restrict_qrels
    from mathsearch.evaluation.trec import TrecScorer, cut_depth
    from mathsearch.readers.qrels import qrels_to_dict, read_qrels
    from mathsearch.readers.topics import read_topics
    from mathsearch.systems import SearchContext, make_system, run_rankings

    ctx = SearchContext(sample_index)
    present = ctx.store.answer_ids()
    scores: dict = {}
    for name in ("bm25-answer", "bm25-thread"):
        per_year = {}
        for year in sel.YEARS:
            qrels = restrict_qrels(qrels_to_dict(read_qrels(data_dir / "qrels" / f"task1-{year}.tsv")), present).qrels
            topics = [t for t in read_topics(data_dir / "topics" / f"task1-{year}.xml") if t.topic_id in qrels]
            run = run_rankings(make_system(name), ctx, topics)
            per_year[year] = TrecScorer(qrels, RANKED_MEASURES).score(cut_depth(run))
        scores[name] = sel.pool(per_year)
    d = sel.decide(scores, ["bm25-answer", "bm25-thread"])
    assert len(d.cv.out_of_fold["nDCG@10"]) == 104  # 47 + 57 judged topics with an answer in the sample
    assert d.chosen == "bm25-thread" and d.cv_gain["nDCG@10"].low > 0  # +0.07 nDCG@10 pooled
    assert [y.chosen for y in d.years] == ["bm25-thread", "bm25-thread"]
    assert d.in_sample["bm25-thread"]["nDCG@10"] == pytest.approx((47 * 0.504 + 57 * 0.503) / 104, abs=0.002)


def test_a_tuning_script_given_an_index_without_vectors_for_a_dense_config_exits_2_naming_it(sample_index, capsys):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "bench" / "tune_ours.py"
    done = subprocess.run([sys.executable, str(script), "--index", str(sample_index), "--config",
                           str(Path(sel.__file__).resolve().parents[1] / "systems" / "ours.toml")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "no dense vectors" in done.stderr and "dense_questions" in done.stderr and done.stdout == ""


def test_the_student_recipe_script_refuses_an_index_without_the_teacher_and_a_bad_recipe_writing_nothing(
        sample_index, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "bench" / "tune_student.py"
    work = tmp_path / "work"
    done = subprocess.run([sys.executable, str(script), "--index", str(sample_index), "--work", str(work)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "no dense vectors" in done.stderr and "--dense minilm" in done.stderr and done.stdout == ""
    bad = tmp_path / "bad.toml"
    bad.write_text("contrastive = 0.5\nlearning_rate = 0.1\n")
    done = subprocess.run([sys.executable, str(script), "--index", str(sample_index), "--work", str(work),
                           "--candidates", f"packaged,{bad}"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert str(bad) in done.stderr and "learning_rate" in done.stderr and "Traceback" not in done.stderr
    assert not work.exists()
    mine = tmp_path / "mine.txt"
    mine.write_text("keep")
    for extra, said in ((["--candidates", f"packaged,{tmp_path}"], "not a readable TOML recipe"),
                        (["--work", str(mine)], "is a file")):
        argv = [sys.executable, str(script), "--index", str(sample_index), "--work", str(work), *extra]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert mine.read_text() == "keep" and not work.exists()


def test_the_student_recipes_work_folders_and_seed_means():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import tune_student as ts

    packaged = ts.config_of({}, 13)
    assert ts.digest(packaged, 2) == ts.digest(ts.config_of({}, 13), 2)  # a rerun finds its folder
    others = {ts.digest(ts.config_of({}, 14), 2), ts.digest(ts.config_of({"links": 0.3}, 13), 2),
              ts.digest(packaged, 4)}
    assert len(others) == 3 and ts.digest(packaged, 2) not in others  # seed, recipe and folds each a folder
    label, fields = ts.recipe(str(ts.STUDENT / "s1-links.toml"))
    assert (label, fields) == ("s1-links", {"links": 0.3})
    runs = [{"nDCG@10": {("2020", "A.1"): 0.5, ("2021", "A.301"): 0.2}},
            {"nDCG@10": {("2020", "A.1"): 0.7, ("2021", "A.301"): 0.4}}]
    assert ts.mean_over_seeds(runs) == {"nDCG@10": {("2020", "A.1"): pytest.approx(0.6),
                                                    ("2021", "A.301"): pytest.approx(0.3)}}


def test_a_shorter_teachers_vectors_are_the_minilm_indexs_posts_embedded_again_once(tmp_path):
    """tune_student's candidate with ``teacher_tokens`` N < 256: every post of the MiniLM index
    embedded again at N into ``WORK/teacher-N`` once, which a student of that recipe reads; at 256
    the index itself teaches, and its work folder is the one of before the field."""
    import sys
    from pathlib import Path

    import numpy as np
    from test_search_golden import make_dump

    from mathsearch.building import build_index
    from mathsearch.building.train import TrainConfig, train
    from mathsearch.encoders.builtin import MiniLMEncoder
    from mathsearch.indexes.dense import post_passages
    from mathsearch.store import Store

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import tune_student as ts

    index, work = tmp_path / "index", tmp_path / "work"
    build_index(make_dump(tmp_path / "dump"), index, optional=("dense",), encoder="minilm")
    with Store.open(index) as store:
        passages = post_passages(store)
    assert ts.teacher_for(index, work, 256) == index and not work.exists()
    folder = ts.teacher_for(index, work, 16)
    assert folder == work / "teacher-16"
    q_ids, q_texts, a_ids, a_texts, _ = passages
    text_of = dict(zip(q_ids + a_ids, q_texts + a_texts, strict=True))
    sixteen = MiniLMEncoder(max_tokens=16)
    for part, key in (("questions", "question_ids"), ("answers", "answer_ids")):
        ids = np.load(folder / "dense" / f"{key}.npy")
        assert sorted(ids.tolist()) == sorted(np.load(index / "dense" / f"{key}.npy").tolist())  # every post
        got, own = np.load(folder / "dense" / f"{part}.npy"), np.load(index / "dense" / f"{part}.npy")
        assert got.dtype == own.dtype and got.shape == own.shape  # the index's own precision, every post
        assert np.allclose(got.astype(np.float32), sixteen.encode([text_of[int(p)] for p in ids]), atol=2e-3), part
    made = (folder / "dense" / "answers.npy").stat().st_mtime_ns
    assert ts.teacher_for(index, work, 16) == folder
    assert (folder / "dense" / "answers.npy").stat().st_mtime_ns == made  # made once
    with Store.open(index) as store:
        info = train(store, tmp_path / "student", "s", TrainConfig(epochs=1, base="random", teacher_tokens=16),
                     teacher_index=folder)
    assert info["config"]["teacher_tokens"] == 16 and info["trained_on"]["teacher_posts"] > 0
    assert ts.digest(ts.config_of({"teacher_tokens": 256}, 13), 2) == ts.digest(ts.config_of({}, 13), 2)
    assert ts.digest(ts.config_of({"teacher_tokens": 16}, 13), 2) != ts.digest(ts.config_of({}, 13), 2)


def test_a_choice_made_on_other_judgements_is_checked_on_the_judged_topics(capsys):
    """tune_ours --check-on-judged: the settings of a decision made on the collection's judgements,
    scored on the judged topics; their gains compared and the choice tested there."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import tune_ours

    collection = [("collection", f"O.{i}") for i in range(200)]

    class Judged:  # the judged topics' scores of each config, as tune_ours.Bench gives them
        def __init__(self, by_config):
            self.by_config = by_config

        def topics(self):
            return len(TOPICS)

        def scores(self, cfg):
            return self.by_config[cfg["name"]]

    configs = {n: {"name": n} for n in ("a", "b", "c", "d")}
    here = sel.decide({"a": setting(0.2, topics=collection), "b": setting(0.25, topics=collection),
                       "c": setting(0.3, 0.01, topics=collection), "d": setting(0.35, topics=collection)}, list(configs))
    assert here.chosen == "d"
    against = Judged({"a": setting(0.6), "b": setting(0.59), "c": setting(0.58, 0.01), "d": setting(0.55)})
    lines = "\n".join(tune_ours.check_on_judged(against, configs, here))
    assert "| d | +0.150 | -0.050 | -0.050 |" in lines
    assert "Spearman -1.00" in lines and "chosen here, d, on the judged topics against a: nDCG@10 -0.050" in lines
    assert lines.endswith("does not hold")
    agreeing = Judged({"a": setting(0.6), "b": setting(0.61), "c": setting(0.62, 0.01), "d": setting(0.65)})
    lines = "\n".join(tune_ours.check_on_judged(agreeing, configs, here))
    assert "Spearman +1.00" in lines and lines.endswith("-> holds")
    # without judgements of its own to choose on, the check is refused: exit 2, one line
    with pytest.raises(SystemExit) as done:
        from mathsearch.errors import run_script

        run_script(lambda: tune_ours.main(["--index", "IDX", "--check-on-judged"]))
    assert done.value.code == 2 and "give --qrels-dir" in capsys.readouterr().err


def test_tune_ours_max_df_adds_each_candidate_with_its_answer_terms_capped(capsys):
    """tune_ours --max-df: every candidate again at each share (larger first), the share on each field
    its answer signal weighs; a bad share or a config without an answer signal is refused."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import tune_ours

    from mathsearch.errors import InputError, run_script
    from mathsearch.systems.ours import OursConfig

    configs = {"m0": {"signals": {"answer": {"weight": 1.0, "fields": {"words->body": 4.0, "math->q_math": 0.5,
                                                                         "words->comments": 0.0}}}},
               "links": {"signals": {"answer": {"weight": 1.0, "fields": {"title_words->title": 1.0}},
                                     "linked": {"weight": 0.5}}}}
    out = tune_ours.capped(configs, tune_ours.shares("0.2, 0.5"))
    assert list(out) == ["m0+max_df=0.5", "links+max_df=0.5", "m0+max_df=0.2", "links+max_df=0.2"]
    assert out["m0+max_df=0.2"]["signals"]["answer"]["max_df"] == {"body": 0.2, "q_math": 0.2}  # not comments: weight 0
    assert out["links+max_df=0.5"]["signals"]["linked"] == {"weight": 0.5}
    assert "max_df" not in configs["m0"]["signals"]["answer"]  # the plain ones are left as they were
    parsed = OursConfig.parse(out["m0+max_df=0.2"], "x")  # what --candidates then runs
    assert dict(parsed.signals[0][2].max_df) == {"body": 0.2, "q_math": 0.2}
    for bad in ("0", "1.5", "half"):
        with pytest.raises(InputError, match="a share of the answers"):
            tune_ours.shares(bad)
    with pytest.raises(InputError, match="no \\[signals.answer\\]"):
        tune_ours.capped({"d": {"signals": {"dense": {"weight": 1.0}}}}, [0.5])
    with pytest.raises(SystemExit) as done:
        run_script(lambda: tune_ours.main(["--index", "IDX", "--max-df", "0.5"]))
    assert done.value.code == 2 and "give --candidates" in capsys.readouterr().err


def test_a_choice_in_steps_is_cross_validated_whole():
    """``steps``: each step chooses among what the previous pick leads to; cross-validated, every step
    is made on the training folds (nested).  One option a step is the one-step choice itself."""
    lucky = set(TOPICS[:3])
    s = {"a": setting(0.5), "lucky": setting(lambda t: 1.0 if t in lucky else 0.488),
         "a+x": setting(0.52), "lucky+x": setting(lambda t: 1.0 if t in lucky else 0.508)}
    steps = [{"": ["a", "lucky"]}, {"a": ["a", "a+x"], "lucky": ["lucky", "lucky+x"]}]
    order = ["a", "lucky", "a+x", "lucky+x"]
    assert sel.choose_in_steps(s, steps) == "lucky+x"  # on all topics the lucky one leads, then +x
    d = sel.decide(s, order, repeats=10, steps=steps)
    assert d.on_all == "lucky+x" and set(d.cv.chosen) == set(order) and sum(d.cv.chosen.values()) == 50
    assert d.cv.chosen["a+x"] > 0 and d.cv.chosen["a"] == d.cv.chosen["lucky"] == 0
    # the second step given the first step's pick on all topics looks better than the whole choice
    given = sel.cross_validate(s, ["lucky", "lucky+x"], repeats=10)
    assert d.cv.means["nDCG@10"] < given.means["nDCG@10"]
    assert [y.chosen for y in d.years] == ["lucky+x", "a+x"]  # 2020 holds the lucky topics
    one = sel.cross_validate(s, ["a", "lucky"], repeats=10)
    same = sel.cross_validate(s, ["a", "lucky"], repeats=10, steps=[{"": ["a", "lucky"]}, {"a": ["a"], "lucky": ["lucky"]}])
    assert one.means == same.means and one.chosen == same.chosen
    with pytest.raises(ValueError, match="does not list: b"):
        sel.decide(s, ["a", "lucky"], steps=[{"": ["a", "b"]}])
    with pytest.raises(ValueError, match="what follows 'a'"):
        sel.choose_in_steps(s, [{"": ["a"]}, {"lucky": ["lucky"]}])


def test_tune_ours_then_lays_each_file_over_every_candidate_as_a_second_step(tmp_path, capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import tune_ours

    from mathsearch.errors import InputError, run_script

    over = tmp_path / "fb.toml"
    over.write_text('base = "ours.toml"\n[feedback]\nweight = 0.5\n[signals.answer]\nlimit = 100\n')
    configs = {"m0": {"signals": {"answer": {"weight": 1.0, "limit": 1000}}},
               "links": {"signals": {"answer": {"weight": 1.0, "limit": 1000}, "linked": {"weight": 0.5}}}}
    steps = tune_ours.then_steps(configs, [str(over)])
    assert steps == [{"": ["m0", "links"]}, {"m0": ["m0", "m0+fb"], "links": ["links", "links+fb"]}]
    # the file's own values only (not ours.toml's, its base), over each candidate
    assert configs["links+fb"] == {"signals": {"answer": {"weight": 1.0, "limit": 100}, "linked": {"weight": 0.5}},
                                   "feedback": {"weight": 0.5}}
    assert configs["m0"]["signals"]["answer"]["limit"] == 1000 and "feedback" not in configs["m0"]
    with pytest.raises(InputError, match="does not exist"):
        tune_ours.then_steps(dict(configs), [str(tmp_path / "missing.toml")])
    (tmp_path / "empty.toml").write_text('base = "ours.toml"\n')
    with pytest.raises(InputError, match="empty.toml: the file sets nothing"):
        tune_ours.then_steps(dict(configs), [str(tmp_path / "empty.toml")])
    with pytest.raises(InputError, match="is a folder"):
        tune_ours.then_steps(dict(configs), [str(tmp_path)])
    with pytest.raises(SystemExit) as done:
        run_script(lambda: tune_ours.main(["--index", "IDX", "--then", str(over)]))
    assert done.value.code == 2 and "give --candidates" in capsys.readouterr().err
    # a misspelt table is refused before any search, named by the setting it made
    bad = tmp_path / "fbk.toml"
    bad.write_text("[feedbak]\nweight = 0.5\n")
    with pytest.raises(SystemExit) as done:
        run_script(lambda: tune_ours.main(["--index", str(tmp_path / "no-index"), "--candidates", "packaged",
                                           "--then", str(bad)]))
    err = capsys.readouterr().err
    assert done.value.code == 2 and "packaged+fbk" in err and "unknown key(s) feedbak" in err
    # --out: a file, or a folder holding an earlier record, is refused before any search; nothing is touched
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "selection.json").write_text("mine")
    for out, message in ((bad, "is a file, not a folder"), (tmp_path / "rec", "already holds selection.json")):
        with pytest.raises(SystemExit) as done:
            run_script(lambda out=out: tune_ours.main(["--index", str(tmp_path / "no-index"), "--candidates",
                                                        "packaged", "--out", str(out)]))
        assert done.value.code == 2 and message in capsys.readouterr().err
    assert (tmp_path / "rec" / "selection.json").read_text() == "mine" and bad.read_text().startswith("[feedbak]")
