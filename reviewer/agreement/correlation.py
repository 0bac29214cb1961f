"""Correlations and error summaries between paired numeric scores (judge vs human).

Inputs are two equal-length sequences of finite numbers; position ``i`` is one item. Missing
scores must be dropped by the caller (a NaN or ``None`` raises ``ValueError``) because the
right way to drop them depends on what the pairs are.
"""

from __future__ import annotations

import math

import numpy as np

from reviewer.agreement._core import Estimate, FloatArray, Numbers, finite_array, paired_arrays


def average_ranks(values: Numbers) -> FloatArray:
    """1-based ranks with ties given the mean of the ranks they span ("fractional" ranking).

    This is the tie rule DR3-Eval and DeepResearch Bench leave open; it is the usual one and
    the one ``scipy.stats.rankdata`` uses by default.
    """
    x = finite_array(values, "values")
    n = x.shape[0]
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    # Start of each run of equal values, then the mean rank of the run for each member.
    new_run = np.empty(n, dtype=bool)
    if n:
        new_run[0] = True
        new_run[1:] = ordered[1:] != ordered[:-1]
    run_id = np.cumsum(new_run) - 1
    starts = np.flatnonzero(new_run)
    ends = np.append(starts[1:], n)
    mean_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = mean_rank[run_id]
    return ranks


def _pearson(x: FloatArray, y: FloatArray) -> float | None:
    if x.shape[0] < 2 or np.ptp(x) == 0.0 or np.ptp(y) == 0.0:
        return None
    dx = x - x.mean()
    dy = y - y.mean()
    # Scaling each side by its largest deviation leaves r unchanged and keeps the sums of
    # squares away from overflow (scores like 1e200) and underflow (scores like 1e-200).
    dx = dx / np.abs(dx).max()
    dy = dy / np.abs(dy).max()
    denom = math.sqrt(float(dx @ dx)) * math.sqrt(float(dy @ dy))
    if denom == 0.0:
        return None
    return max(-1.0, min(1.0, float(dx @ dy) / denom))


def pearson(a: Numbers, b: Numbers) -> Estimate:
    """Pearson's r. ``None`` for fewer than two pairs or when either side is constant (zero
    variance makes r 0/0); with exactly two distinct pairs r is +-1, as the formula says.

    Rounding can push a perfect correlation a hair past 1, so the result is clipped to
    [-1, 1].
    """
    x, y = paired_arrays(a, b)
    return Estimate(_pearson(x, y), x.shape[0])


def spearman(a: Numbers, b: Numbers) -> Estimate:
    """Spearman's rho: Pearson's r of average ranks. ``None`` in the cases Pearson is."""
    x, y = paired_arrays(a, b)
    return Estimate(_pearson(average_ranks(x), average_ranks(y)), x.shape[0])


def kendall_tau_b(a: Numbers, b: Numbers) -> Estimate:
    """Kendall's tau-b, the tie-corrected tau used to compare leaderboards (DR3-Eval's ranking
    stability figure). ``(C - D) / sqrt((n0 - t_a)(n0 - t_b))``; ``None`` for fewer than two
    pairs or when either side is constant.

    O(n^2) time and O(n) memory: meant for rankings of systems or reports, not 60,000 items.
    """
    x, y = paired_arrays(a, b)
    n = x.shape[0]
    if n < 2 or np.ptp(x) == 0.0 or np.ptp(y) == 0.0:
        return Estimate(None, n)
    concordance = 0
    ties_x = 0
    ties_y = 0
    for i in range(n - 1):
        sx = np.sign(x[i + 1 :] - x[i])
        sy = np.sign(y[i + 1 :] - y[i])
        concordance += int((sx * sy).sum())
        ties_x += int(np.count_nonzero(sx == 0))
        ties_y += int(np.count_nonzero(sy == 0))
    n0 = n * (n - 1) // 2
    denom = math.sqrt(float(n0 - ties_x)) * math.sqrt(float(n0 - ties_y))
    return Estimate(max(-1.0, min(1.0, concordance / denom)), n)


def mean_absolute_error(a: Numbers, b: Numbers) -> Estimate:
    """Mean of ``|a_i - b_i|``, on the scores' own scale. ``None`` when empty."""
    x, y = paired_arrays(a, b)
    if x.shape[0] == 0:
        return Estimate(None, 0)
    return Estimate(float(np.abs(x - y).mean()), x.shape[0])


def mean_signed_difference(a: Numbers, b: Numbers) -> Estimate:
    """Mean of ``a_i - b_i``: the judge's bias when ``a`` is the judge and ``b`` the human
    (positive means the judge scores higher). ``None`` when empty."""
    x, y = paired_arrays(a, b)
    if x.shape[0] == 0:
        return Estimate(None, 0)
    return Estimate(float((x - y).mean()), x.shape[0])
