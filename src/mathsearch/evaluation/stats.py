"""Statistics over per-topic scores: confidence intervals and paired significance tests."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class MeanCI:
    mean: float
    low: float
    high: float
    n: int


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> MeanCI:
    """Mean with a Student-t confidence interval (two-sided), as the MIRMU paper reports nDCG'."""
    from scipy import stats

    n = len(values)
    if n == 0:
        return MeanCI(0.0, 0.0, 0.0, 0)
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    if n < 2:
        return MeanCI(mean, mean, mean, n)
    sem = float(arr.std(ddof=1)) / math.sqrt(n)
    half = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * sem
    return MeanCI(mean, mean - half, mean + half, n)


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test on per-topic scores (1.0 when a and b are identical)."""
    from scipy import stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y):
        raise ValueError("paired scores must cover the same topics")
    d = x - y
    if len(d) < 2 or not np.any(d):
        return 1.0
    if float(d.std(ddof=1)) == 0.0:
        return 0.0  # a constant non-zero difference
    return float(stats.ttest_rel(x, y).pvalue)


def randomisation_test(a: Sequence[float], b: Sequence[float], trials: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of the paired randomisation (sign-flip) test on the mean difference.

    Counts the observed permutation, so the p-value is never 0 (Smucker et al. style).
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y):
        raise ValueError("paired scores must cover the same topics")
    d = x - y
    if len(d) == 0 or not np.any(d):
        return 1.0
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    signs = rng.choice((-1.0, 1.0), size=(trials, len(d)))
    means = np.abs((signs * d).mean(axis=1))
    extreme = int(np.count_nonzero(means >= observed - 1e-12))
    return (extreme + 1) / (trials + 1)
