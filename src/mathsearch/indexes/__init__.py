"""Search indexes under INDEX_DIR, built by ``mathsearch index`` beside the collection store."""

from .documents import ANSWER_FIELDS, QUESTION_FIELDS, QueryBags
from .text_index import Clause, TextIndex, build_text_indexes

__all__ = ["ANSWER_FIELDS", "QUESTION_FIELDS", "Clause", "QueryBags", "TextIndex", "build_text_indexes"]
