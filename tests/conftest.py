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
