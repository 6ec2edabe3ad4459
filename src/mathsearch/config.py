"""Typed, immutable configurations read from TOML: the systems' (``systems/*.toml``) and the
[build] tables MIRMU's index steps read from them.

A config section becomes a frozen dataclass: every key must be a field (a misspelt ``weigth`` is
an error naming the section, the key and the keys it may hold), values take the field's type,
and tables become read-only mappings, so a config shared by every query of a run or a server
cannot be changed by one of them.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from .errors import InputError

T = TypeVar("T")


def read_toml(path: str, packaged: str) -> dict[str, Any]:
    """The TOML file at ``path``, or when empty the config ``packaged`` shipped in
    ``mathsearch/systems/`` (a new dict each call: tuning scripts change their copy).

    A file may start from another: ``base = "FILE"`` (a file beside it, else a packaged config's
    name, e.g. ``"ours.toml"``) gives every value the file does not set itself; tables merge key by
    key, so a variant of a config is written as the few values it changes."""
    return _read_with_base(path, packaged, ())


_MAX_BASES = 8  # a chain of bases longer than this is a loop, or a mistake


def _read_one(path: str, packaged: str) -> dict[str, Any]:
    try:
        if path:
            text = Path(path).read_text(encoding="utf-8")
        else:
            text = resources.files(__package__).joinpath("systems", packaged).read_text(encoding="utf-8")
        return tomllib.loads(text)
    except FileNotFoundError:
        raise InputError(f"system config {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"system config {path} is a folder, not a TOML file") from None
    except UnicodeDecodeError:
        raise InputError(f"system config {path} is not a text file (TOML)") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"system config {path or packaged}: {exc}") from None


def _read_with_base(path: str, packaged: str, chain: tuple[str, ...]) -> dict[str, Any]:
    where = path or packaged
    data = _read_one(path, packaged)
    base = data.pop("base", None)
    if base is None:
        return data
    if not isinstance(base, str) or not base:
        raise InputError(f"system config {where}: base should name a config file, not {base!r}")
    if len(chain) >= _MAX_BASES or where in chain:
        raise InputError(f"system config {where}: its bases go round or too deep ({' -> '.join((*chain, where))})")
    beside = Path(path).parent / base if path else None
    if beside is not None and beside.is_file():
        parent = _read_with_base(str(beside), packaged, (*chain, where))
    elif resources.files(__package__).joinpath("systems", base).is_file():
        parent = _read_with_base("", base, (*chain, where))
    else:
        raise InputError(f"system config {where}: its base {base!r} is neither a file beside it nor a packaged config")
    return _merged(parent, data)


def _merged(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over``'s values, tables merged key by key (new keys after the base's)."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def own_values(path: str) -> dict[str, Any]:
    """The values the TOML file at ``path`` sets itself, its ``base`` aside: a variant to lay over
    whichever config a choice reached (:func:`laid_over`)."""
    own = _read_one(path, "")
    own.pop("base", None)
    return own


def laid_over(config: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with ``over``'s values laid over it, tables merged key by key."""
    return _merged(dict(config), over)


def frozen(value: Any) -> Any:
    """``value`` with every table a read-only mapping and every array a tuple."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(frozen(v) for v in value)
    return value


def _convert(value: Any, kind: Any, where: str) -> Any:
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is bool and isinstance(value, bool):
        return value
    if kind is str and isinstance(value, str):
        return value
    origin = typing.get_origin(kind)
    if origin is Mapping or kind is Mapping:
        if not isinstance(value, Mapping):
            raise InputError(f"system config {where}: should be a table, not {value!r}")
        args = typing.get_args(kind)
        inner = args[1] if len(args) == 2 else Any
        return MappingProxyType({str(k): _convert(v, inner, f"{where}.{k}") for k, v in value.items()})
    if kind is Any:
        return frozen(value)
    if origin is tuple and isinstance(value, list):
        args = typing.get_args(kind)
        return tuple(_convert(v, args[0] if args else Any, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(kind, type) and dataclasses.is_dataclass(kind) and isinstance(value, Mapping):
        return typed(kind, value, where)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        for option in typing.get_args(kind):
            if option is type(None) and value is None:
                return None
            try:
                return _convert(value, option, where)
            except InputError:
                continue
    raise InputError(f"system config {where}: {value!r} should be {getattr(kind, '__name__', kind)}")


def typed(cls: type[T], section: Mapping[str, Any], where: str, ignore: tuple[str, ...] = ()) -> T:
    """``cls`` (a frozen dataclass) from a TOML table, refusing keys it does not have."""
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(set(section) - set(fields) - set(ignore))
    if unknown:
        raise InputError(f"system config {where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}")
    hints = typing.get_type_hints(cls)
    values = {k: _convert(v, hints[k], f"{where}.{k}") for k, v in section.items() if k in fields}
    try:
        return cls(**values)
    except InputError as exc:  # a record's own check of its values: say where they were written
        raise InputError(f"system config {where}: {exc}") from None
