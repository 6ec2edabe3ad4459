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
    """The sample collection indexed once per test session (store and search indexes)."""
    from mathsearch.building import build_index

    index_dir = tmp_path_factory.mktemp("sample") / "index"
    build_index(COLLECTION, index_dir)
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
# Files whose every test is slow for another reason (measured: tens of seconds each on two cores).
SLOW_FILES = frozenset({"test_types.py", "test_wheel.py", "test_docs_pyterrier.py", "test_mirmu_golden.py", "test_mirmu_systems.py"})


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
    if tiers & set(SLOW_TIERS) or path in SLOW_FILES:
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
