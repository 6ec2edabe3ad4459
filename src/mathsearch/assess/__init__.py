"""Pools and relevance assessment: judgement pools from run files (:mod:`.pool`), the assessment
database (:mod:`.db`), qrels export (:mod:`.export`) and agreement between assessors (:mod:`.agreement`).

The page that assessors use is :mod:`mathsearch.web.assess`; the commands are ``mathsearch pool``
and ``mathsearch qrels``.
"""

from __future__ import annotations

from .agreement import PairAgreement, agreement, binarise, cohen_kappa
from .coverage import Coverage, coverage
from .db import AssessDB, AssessmentError, check_pool_out, create_pool_db, is_assessment_db
from .export import FILES, chosen_judgements, export_qrels
from .grades import GRADES, Grade, grades_for
from .pool import LAB_DEPTHS, LAB_INSTANCES, Pool, PoolItem, PoolRun, build_pool, classify_runs

__all__ = [
    "FILES", "GRADES", "LAB_DEPTHS", "LAB_INSTANCES", "AssessDB", "AssessmentError", "Coverage", "Grade", "PairAgreement", "Pool",
    "PoolItem", "PoolRun", "agreement", "binarise", "build_pool", "check_pool_out", "chosen_judgements",
    "classify_runs", "cohen_kappa", "coverage", "create_pool_db", "export_qrels", "grades_for", "is_assessment_db",
]
