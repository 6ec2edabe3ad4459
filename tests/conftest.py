"""Shared fixtures: the real ARQMath sample in ../shared/data/arqmath and an index built from it."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "arqmath"
COLLECTION = DATA / "collection"
TOPICS = DATA / "topics"
QRELS = DATA / "qrels"
RUNS = DATA / "runs"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    assert DATA.is_dir(), f"the real sample must be at {DATA}"
    return DATA


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample collection indexed once per test session (store and search indexes).

    Under pytest-xdist the first worker that needs it builds it once, under a lock, beside the
    workers' temporary folders, and every worker tests a copy of its own (two builds at once took
    ~31 s each on two cores; one takes ~23 s, a copy of its 58 MB well under a second)."""
    import os
    import shutil

    from mathsearch.building import build_index

    index_dir = tmp_path_factory.mktemp("sample") / "index"
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        build_index(COLLECTION, index_dir)
        return index_dir
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent / "shared-sample-index"
    with FileLock(f"{shared}.lock"):
        if not shared.is_dir():  # build_index moves a finished index into place: no half-built one
            build_index(COLLECTION, shared)
    shutil.copytree(shared, index_dir)
    return index_dir


# -- tiers -------------------------------------------------------------------------------------------
# Every test gets the tiers of what it uses, read from its own source and its fixtures' (so a new
# test is tiered without a decorator): ``pytest -m "not slow"`` is the fast tier for development,
# scripts/test.sh runs everything.  The markers are declared in pyproject.toml (--strict-markers).
TIER_SIGNS = {
    "browser": ("chromium(",),
    "ray": ("RayEngine", "--ray", "run_batch(", "ray_cluster"),
    "dense": ('"dense"', "--dense", "MiniLM", "minilm", "compubert", "TrainConfig", "train_tiny_encoder",
              "ContextualSimilarity", "load_encoder", "build_dense_index", "sentence_transformers", "torch"),
    "docs": ("mkdocs",),
}
SLOW_TIERS = ("browser", "ray", "dense", "docs")
# Files whose every test is slow for another reason (measured: tens of seconds each on two cores, or
# a module fixture of several seconds that all their tests share).
SLOW_FILES = frozenset({"test_types.py", "test_wheel.py", "test_docs_pyterrier.py", "test_mirmu_golden.py",
                        "test_mirmu_systems.py", "test_compiled.py", "test_formula_sample.py",
                        "test_make_collection.py", "test_text_index_build.py"})
# Single tests of 1.5 s or more on the idle machine, measured with
#   python -m pytest -m "not slow" -n 0 --durations=80
# (the sample index's own build, ~23 s, falls on whichever sample test runs first and is not one).
SLOW_TESTS = frozenset({
    "test_docs.py::test_quick_start_output_is_what_the_commands_print",
    "test_docs.py::test_docs_page_examples_run",
    "test_typeset_share.py::test_mathjax_typesets_at_least_995_per_mille",
    "test_snippets.py::test_every_answer_of_the_sample",
    "test_snippets.py::test_a_snippet_never_splits_a_formula",
    "test_irds.py::test_collections_count_as_the_readers",
    "test_irds.py::test_task1_2020_yields_what_the_readers_yield",
    "test_extra_isolation.py::test_cli_at_work_loads_neither_package",
    "test_extra_isolation.py::test_only_the_extra_modules_name_its_packages",
    "test_assess_page.py::test_two_browsers_judging_at_once_lose_no_judgement",
    "test_assess_server.py::test_a_server_killed_outright_loses_at_most_the_judgement_in_flight",
    "test_assess_server.py::test_the_assessment_api_answers_every_generated_request_as_its_schema_says",
    "test_formula_robustness.py::test_huge_inputs_complete_with_a_tree",
    "test_eval_index.py::test_task2_with_index_and_check",
    "test_eval_index.py::test_collection_only_with_index_cli",
    "test_fuzz.py::test_schemathesis_over_every_route_finds_no_server_error",
    "test_store.py::test_sample_indexes_with_exact_counts",
    "test_web_serving.py::test_a_slow_client_holds_no_worker",
    "test_web_serving.py::test_a_query_past_its_budget_is_stopped_not_left_running",
    "test_web_serving.py::test_a_full_queue_is_answered_503_with_retry_after",
    "test_web_api.py::test_serve_command_serves_and_refuses_clearly",
    "test_web_api.py::test_schemathesis_finds_no_server_error",
    "test_web_api.py::test_snippets_of_real_posts_never_cut_a_formula",
    "test_readers_collection.py::test_every_formula_span_matches_the_formula_tsv",
    "test_selection.py::test_on_the_real_sample_the_thread_context_is_chosen_over_the_answer_alone",
    "test_search_formula.py::test_formula_system_on_the_real_sample_beats_the_random_floor",
    "test_user_faults.py::test_a_200_kb_query_is_the_apps_own_422_on_the_api_and_the_page",
    "test_pool.py::test_coverage_of_the_labs_judgements_by_a_pool_of_our_runs",
    # with the one below, every test of test_pool.py that needs its runs of three systems (15 s)
    "test_pool.py::test_task1_pool_of_our_runs_matches_the_distinct_answers_counted_by_hand",
    "test_pool.py::test_display_order_is_seeded_random_and_hides_the_run_order",
    "test_parallel.py::test_a_child_error_comes_back_one_way",
    "test_eval_task2.py::test_real_qrels_and_formula_index_both_keyings",
    "test_never_overwrite.py::test_run_refuses_a_file_not_ours_before_the_search",
    "test_task3_eval.py::test_eval_sources_cli_on_the_sample",
    "test_formula_budget.py::test_rescoring_answers_equals_the_whole_index_search",
    "test_eval_reports.py::test_collection_only_on_sample_posts",
    "test_eval_reports.py::test_categories_and_two_runs_in_json",
    "test_index_safety.py::test_sigterm_removes_the_half_built_folder_and_keeps_the_old_index",
    "test_index_safety.py::test_a_killed_build_is_cleaned_by_the_next_one_and_a_live_one_is_not",
    "test_qrels_export.py::test_task2_export_gives_visual_id_and_formula_id_qrels_that_eval_reads",
})


def _sources(item: pytest.Item) -> str:
    import inspect

    funcs = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        defs = info.name2fixturedefs.get(name) if info is not None else None
        if defs:
            funcs.append(defs[-1].func)
    out = []
    for func in funcs:
        try:
            out.append(inspect.getsource(func))  # type: ignore[arg-type]
        except (OSError, TypeError):
            pass
    return "\n".join(out)


def tiers_of(item: pytest.Item) -> set[str]:
    """The tiers of a collected test: what it uses, ``sample`` for the sample index, ``slow`` for
    anything that starts a browser, a Ray cluster, a neural encoder or the docs build; ``unit`` else."""
    source = _sources(item)
    path = item.path.name
    tiers = {tier for tier, signs in TIER_SIGNS.items() if any(s in source for s in signs)}
    if path.startswith("test_ray_"):
        tiers.add("ray")
    if "sample_index" in getattr(item, "fixturenames", ()):
        tiers.add("sample")
    if tiers & set(SLOW_TIERS) or path in SLOW_FILES or f"{path}::{item.originalname}" in SLOW_TESTS:
        tiers.add("slow")
    if not tiers & {"browser", "ray", "dense", "docs", "sample"}:
        tiers.add("unit")
    return tiers


# The longest files first (measured, longest first: `pytest --durations`), each file's tests kept
# together and in their order: with ``-n 2`` (scripts/test.sh) a long file started last would run
# alone on one core at the end.
LONGEST_FIRST = ("test_wheel.py", "test_web_threads.py", "test_docs_pyterrier.py", "test_web_snippets.py",
                 "test_ray_shards.py", "test_compiled.py", "test_docs.py", "test_dense_resume.py",
                 "test_typeset_share.py", "test_mirmu_systems.py", "test_ray_resume.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for tier in sorted(tiers_of(item)):
            item.add_marker(getattr(pytest.mark, tier))
    # then the other files with a slow test (a browser, Ray, a neural encoder), then the rest: short
    # files last fill the gaps when one process ends before the other
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    slow_files = {item.path.name for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank) + (item.path.name not in slow_files)))


@pytest.fixture(scope="module")
def site(sample_index):
    """The sample's page served on loopback for a browser test module (tests/web_support.py)."""
    from web_support import serve

    from mathsearch.web.app import create_app

    with serve(create_app(sample_index)) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    """One Chromium context, 1000 x 800, for a browser test module."""
    from web_support import chromium

    with chromium(viewport={"width": 1000, "height": 800}) as ctx:
        yield ctx


@pytest.fixture(scope="module")
def searcher(sample_index):
    """A :class:`~mathsearch.searcher.Searcher` over the sample index, for a test module."""
    from mathsearch.searcher import Searcher

    return Searcher(sample_index)


@pytest.fixture(scope="module")
def client(sample_index):
    """The page and API of the sample index in FastAPI's test client, for a test module."""
    from fastapi.testclient import TestClient

    from mathsearch.web.app import create_app

    with TestClient(create_app(sample_index)) as c:
        yield c
