"""Evaluation exactly as the ARQMath lab does it (nDCG', MAP', P'@10, Task 2 on visual ids, Task 3).

Entry points: :func:`evaluate_runs` (files, as ``mathsearch eval``; settings in :class:`EvalOptions`),
:func:`evaluate_ranked` (already read runs and qrels, scored the same way), and the building blocks
re-exported below.
"""

from .categories import category_means, read_categories
from .collection import CollectionFacts, from_formula_tsv, from_index, from_posts_xml, read_answer_texts
from .evaluate import EvalOptions, evaluate_ranked, evaluate_runs
from .formulas import detect_qrels_key, visual_qrels, visual_run
from .measures import MAP_PRIME, NDCG_10, NDCG_PRIME, P10_PRIME, RANKED_MEASURES, TASK3_MEASURES, TrecMeasure
from .report import to_json, to_text
from .results import EvalReport, RunResult
from .stats import MeanCI, mean_ci, paired_t_test, randomisation_test
from .subcollection import Restriction, restrict_qrels
from .task3 import token_f1
from .trec import TrecScorer, cut_depth, judged_fractions, judged_only, rank_run, score_topics, trec_order

__all__ = [
    "MAP_PRIME",
    "NDCG_10",
    "NDCG_PRIME",
    "P10_PRIME",
    "RANKED_MEASURES",
    "TASK3_MEASURES",
    "CollectionFacts",
    "EvalOptions",
    "EvalReport",
    "MeanCI",
    "Restriction",
    "RunResult",
    "TrecMeasure",
    "TrecScorer",
    "category_means",
    "cut_depth",
    "detect_qrels_key",
    "evaluate_ranked",
    "evaluate_runs",
    "from_formula_tsv",
    "from_index",
    "from_posts_xml",
    "judged_fractions",
    "judged_only",
    "mean_ci",
    "paired_t_test",
    "randomisation_test",
    "rank_run",
    "read_answer_texts",
    "read_categories",
    "restrict_qrels",
    "score_topics",
    "to_json",
    "to_text",
    "token_f1",
    "trec_order",
    "visual_qrels",
    "visual_run",
]
