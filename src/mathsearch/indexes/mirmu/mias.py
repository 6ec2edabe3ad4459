"""MIaS (seed 002, section 3): answers as text words and math M-terms, side by side in tantivy.

Layout: ``INDEX_DIR/mirmu/mias/`` (a tantivy index: ``id``, ``text``, ``math``) and its
``manifest.json``.  An answer is its body text and its comments (seed 3.1); its formulae (body and
comments) become M-terms (:func:`.common.mterm_tokens`: subexpressions with variable and constant
unification, no structural unification, as 3.1 says).  Scoring is tantivy's BM25 with per-term
boosts; Lucene's classic TF-IDF that MIaS used is not available in tantivy (see the system's TOML).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from ...parallel import batched
from ...ranking import ranked
from ...store import Store
from ...text.analysis import words
from ...text.dollar_math import find_math
from .common import artifact_dir, build_config, mterm_tokens, read_manifest, write_manifest

NAME = "mias"
VERSION = 1
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class MiasBuild:
    """``[build]`` of ``mias.toml``."""

    unify: bool = True  # variable and constant unification of M-terms (3.1; structural unification off)
    max_term_tokens: int = 128  # subexpressions longer than this many prefix tokens are not M-terms
    comments: bool = True  # an answer's comments are part of it (3.1)
    seed: int = 0  # nothing here is random; recorded for uniformity


def _schema():
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("id", stored=True, indexed=True, fast=True)
    sb.add_text_field("text", stored=False, tokenizer_name="whitespace", index_option="freq")
    sb.add_text_field("math", stored=False, tokenizer_name="whitespace", index_option="freq")
    return sb.build()


def text_and_math(texts: Iterable[str], cfg: MiasBuild) -> tuple[list[str], list[str]]:
    """Words and M-term tokens of plain texts with ``$LaTeX$``."""
    text: list[str] = []
    math: list[str] = []
    for t in texts:
        pos = 0
        for start, end, latex in find_math(t, is_html=False) if ("$" in t or "\\" in t) else ():
            text.extend(words(t[pos:start]))
            math.extend(mterm_tokens(latex, cfg.unify, cfg.max_term_tokens))
            pos = end
        text.extend(words(t[pos:]))
    return text, math


def build_mias(store: Store, index_dir: Path, progress: Progress | None = None, config: str = "") -> dict:
    import tantivy

    started = time.perf_counter()
    raw = build_config(NAME, config)
    from ...config import typed

    cfg = typed(MiasBuild, raw, f"{NAME}.toml [build]")
    root = artifact_dir(index_dir, NAME)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    index = tantivy.Index(_schema(), path=str(root))
    writer = index.writer(heap_size=128_000_000, num_threads=1)
    total = int(store.counts().get("answers", 0) or 0)
    n = n_math = 0
    for chunk in batched(store.iter_answers(), 500):
        comments = store.comments_of_posts([a.post_id for a in chunk]) if cfg.comments else {}
        for a in chunk:
            text, math = text_and_math([a.text, *(c for _, c in comments.get(a.post_id, ()))], cfg)
            doc = tantivy.Document()
            doc.add_unsigned("id", a.post_id)
            if text:
                doc.add_text("text", " ".join(text))
            if math:
                doc.add_text("math", " ".join(math))
            writer.add_document(doc)
            n += 1
            n_math += len(math)
        if progress:
            progress("mias", n, max(n, total))
    writer.commit()
    writer.wait_merging_threads()
    counts = {"mias_answers": n, "mias_math_terms": n_math}
    write_manifest(root, NAME, VERSION, asdict(cfg), counts, started)
    return counts


class MiasIndex:
    """Search side: a boolean query of boosted term queries over ``text`` and ``math``."""

    def __init__(self, root: Path):
        import tantivy

        self.meta = read_manifest(root, NAME, VERSION)
        self.index = tantivy.Index.open(str(root))
        self.searcher = self.index.searcher()
        self.schema = self.index.schema

    @classmethod
    def open(cls, index_dir: str | Path) -> MiasIndex:
        return cls(artifact_dir(index_dir, NAME))

    @property
    def build(self) -> MiasBuild:
        return MiasBuild(**{k: v for k, v in self.meta["config"].items() if k in MiasBuild.__dataclass_fields__})

    def search(self, terms: list[tuple[str, str, float]], limit: int) -> list[int]:
        """Answer ids, best first, for ``(field, token, boost)`` terms (repeats add up)."""
        import tantivy

        boosts: dict[tuple[str, str], float] = {}
        for field, token, boost in terms:
            boosts[(field, token)] = boosts.get((field, token), 0.0) + boost
        subs = []
        for (field, token), boost in boosts.items():
            if boost <= 0:
                continue
            q = tantivy.Query.term_query(self.schema, field, token, index_option="freq")
            subs.append((tantivy.Occur.Should, tantivy.Query.boost_query(q, boost)))
        if not subs or limit <= 0:
            return []
        hits = self.searcher.search(tantivy.Query.boolean_query(subs), limit=limit, count=False).hits
        if not hits:
            return []
        ids = self.searcher.fast_field_values("id", [addr for _, addr in hits])
        # tantivy orders by score; ties by id descending (the one order, as trec_eval would)
        return ranked({int(i): s for (s, _), i in zip(hits, ids, strict=True)})
