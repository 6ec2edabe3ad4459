"""``compubert``: answers by cosine to the topic under MiniLM fine-tuned on the collection's
question -> answer pairs (seed 002, section 6; ``compubert.toml``; the encoder is
:mod:`mathsearch.encoders.finetune`)."""

from __future__ import annotations

from dataclasses import dataclass

from ...indexes.dense import query_passage
from ..base import Ranking, SearchContext, SearchQuery, register
from .config import search_config


@dataclass(frozen=True)
class CompuBertSearch:
    title: bool = True


@register
@dataclass(frozen=True)
class CompuBert:
    """MIRMU's CompuBERT: a bi-encoder fine-tuned on the collection, exact cosine search."""

    NAME = "compubert"
    TASK = 1
    NEEDS = ("compubert",)
    DATA_USED = "both"
    DESCRIPTION = "CompuBERT (MIRMU): MiniLM fine-tuned on collection question-answer pairs, cosine"
    config: str = ""

    def search(self, ctx: SearchContext, query: SearchQuery, limit: int = 1000) -> Ranking:
        cfg = search_config(CompuBertSearch, "compubert", self.config)
        text = query_passage(query.title if cfg.title else "", query.question)
        if not text.strip():
            return Ranking()
        return Ranking(ctx.open("compubert").search(text, limit))
