"""The ``[search]`` table of a MIRMU system's TOML as a typed, frozen config (read once per file)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, TypeVar

from ...config import read_toml, typed

T = TypeVar("T")


def load(name: str, path: str = "") -> dict[str, Any]:
    """The whole TOML: ``systems/mirmu/NAME.toml`` (packaged) or the file at ``path``."""
    return read_toml(path, f"mirmu/{name}.toml")


@lru_cache(maxsize=64)
def search_config(cls: type[T], name: str, path: str = "") -> T:
    return typed(cls, load(name, path).get("search", {}), f"{path or name + '.toml'} [search]")
