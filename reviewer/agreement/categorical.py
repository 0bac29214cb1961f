"""Agreement between two raters on categorical labels: accuracy, confusion, kappa, Gwet's AC1.

All functions take the two raters' labels as parallel sequences (position ``i`` is one item)
plus, where chance agreement matters, the ordered list of categories of the scale. Passing the
full scale instead of "whatever occurs in the data" keeps results comparable across subsets
and lets the weights of weighted kappa reflect the scale's real distances.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from statistics import NormalDist
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from reviewer.agreement._core import (
    ChanceCorrected,
    ConfusionMatrix,
    Estimate,
    FloatArray,
    Labels,
    encode,
    is_missing,
)

KappaWeights: TypeAlias = Literal["none", "linear", "quadratic"]


def _check_lengths(a: Labels, b: Labels) -> int:
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
    return len(a)


def accuracy(a: Labels, b: Labels) -> Estimate:
    """Share of items on which the two raters gave equal labels (raw percent agreement).

    Equality is Python's (``1 == 1.0 == True``), applied element-wise to numpy arrays. Empty
    input gives ``value=None``.
    """
    n = _check_lengths(a, b)
    if n == 0:
        return Estimate(None, 0)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        equal = int(np.count_nonzero(np.asarray(a == b)))
    else:
        equal = sum(1 for x, y in zip(a, b, strict=True) if x == y)
    return Estimate(equal / n, n)


def accuracy_from_table(table: npt.ArrayLike) -> Estimate:
    """Raw agreement from a square count table: the diagonal's share. ``None`` when empty."""
    counts = _as_table(table)
    n = float(counts.sum())
    if n == 0:
        return Estimate(None, 0)
    return Estimate(float(np.trace(counts)) / n, round(n))


def _table(a: Labels, b: Labels, categories: Sequence[Hashable]) -> npt.NDArray[np.int64]:
    _check_lengths(a, b)
    k = len(categories)
    codes = encode(a, categories, "a") * k + encode(b, categories, "b")
    return np.bincount(codes, minlength=k * k).astype(np.int64).reshape(k, k)


def confusion_matrix(a: Labels, b: Labels, labels: Sequence[Hashable]) -> ConfusionMatrix:
    """Counts of label pairs; rows are ``a``'s labels, columns ``b``'s, both in ``labels`` order.

    This is the 4x4 UserPref-vs-human table of DailyReport when ``labels`` is ``[1, 2, 3, 4]``.
    A label outside ``labels`` raises ``ValueError`` rather than being silently dropped.
    """
    table = _table(a, b, labels)
    return ConfusionMatrix(
        labels=tuple(labels),
        counts=tuple(tuple(int(c) for c in row) for row in table),
    )


def _disagreement_weights(k: int, weights: KappaWeights) -> FloatArray:
    position = np.arange(k, dtype=np.float64)
    distance = np.abs(position[:, None] - position[None, :])
    if weights == "none":
        return (distance > 0).astype(np.float64)
    if weights == "linear":
        return distance
    if weights == "quadratic":
        return distance**2
    raise ValueError(f"unknown kappa weights {weights!r}")


def _as_table(table: npt.ArrayLike) -> FloatArray:
    arr = np.asarray(table, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"expected a square table, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("table counts must be finite and non-negative")
    return arr


def cohen_kappa_from_table(table: npt.ArrayLike, weights: KappaWeights = "none") -> ChanceCorrected:
    """Cohen's kappa from a square count table whose rows and columns follow the scale order.

    Weighted variants use disagreement weights ``|i - j|`` (linear) or ``(i - j)^2``
    (quadratic) on category *positions*, i.e. they assume equally spaced categories; an unused
    category in the middle of the scale still counts as one step. Unused categories at the ends
    change nothing, because the kappa ratio is invariant to rescaling the weights.

    Computed as ``1 - n * sum(v * O) / sum(v * row_i * col_j)``. The value is ``None`` when the
    table is empty or when chance agreement is 1, which happens exactly when both raters used
    one and the same category for every item: observed and chance agreement are then both
    perfect and the ratio is 0/0. (Data where both raters use several categories identically
    gives 1.0; data where the raters each use a different single category gives 0.0.)
    """
    counts = _as_table(table)
    k = counts.shape[0]
    n = float(counts.sum())
    if n == 0:
        return ChanceCorrected(None, 0, None, None)
    v = _disagreement_weights(k, weights)
    rows = counts.sum(axis=1)
    cols = counts.sum(axis=0)
    observed = float((v * counts).sum())
    expected = float((v * np.outer(rows, cols)).sum())
    v_max = float(v.max()) if k > 1 else 0.0
    if v_max == 0.0:
        observed_agreement, chance_agreement = 1.0, 1.0
    else:
        observed_agreement = 1.0 - observed / (n * v_max)
        chance_agreement = 1.0 - expected / (n * n * v_max)
    value = None if expected == 0.0 else 1.0 - n * observed / expected
    return ChanceCorrected(value, round(n), observed_agreement, chance_agreement)


def cohen_kappa(
    a: Labels,
    b: Labels,
    categories: Sequence[Hashable],
    weights: KappaWeights = "none",
) -> ChanceCorrected:
    """Cohen's kappa of two raters over the ordered ``categories`` (see the table variant).

    ``categories`` may contain labels that never occur; every label that occurs must be listed.
    """
    return cohen_kappa_from_table(_table(a, b, categories), weights)


def gwet_ac1_from_table(table: npt.ArrayLike) -> ChanceCorrected:
    """Gwet's AC1 (Gwet 2008) for two raters from a square count table.

    Chance agreement is ``sum_k pi_k (1 - pi_k) / (q - 1)`` with ``pi_k`` the mean of the two
    raters' marginal shares of category ``k`` and ``q`` the number of categories *of the scale*
    (the table size, as in Gwet's handbook and irrCAC when the categories are given), not only
    those observed. Chance agreement is at most ``1/q``, so AC1 is defined for any non-empty
    table with ``q >= 2``; in particular both raters using one category throughout gives 1.0,
    where kappa is undefined. ``q < 2`` or an empty table gives ``None``.
    """
    counts = _as_table(table)
    q = counts.shape[0]
    n = float(counts.sum())
    if n == 0:
        return ChanceCorrected(None, 0, None, None)
    observed = float(np.trace(counts)) / n
    if q < 2:
        return ChanceCorrected(None, round(n), observed, None)
    pi = (counts.sum(axis=1) + counts.sum(axis=0)) / (2.0 * n)
    chance = float((pi * (1.0 - pi)).sum()) / (q - 1)
    return ChanceCorrected((observed - chance) / (1.0 - chance), round(n), observed, chance)


def gwet_ac1(a: Labels, b: Labels, categories: Sequence[Hashable]) -> ChanceCorrected:
    """Gwet's AC1 of two raters on nominal labels; ``q = len(categories)``."""
    return gwet_ac1_from_table(_table(a, b, categories))


def gwet_ac1_multi(
    ratings: Sequence[Sequence[Any]] | npt.NDArray[Any],
    categories: Sequence[Hashable],
) -> ChanceCorrected:
    """Gwet's AC1 for any number of raters with missing ratings (``None`` or NaN), nominal.

    ``ratings`` is units x raters. Follows Gwet's handbook (and irrCAC's ``gwet.ac1.raw``):
    observed agreement averages ``sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))`` over units with at
    least two ratings; the category shares ``pi_k`` average ``r_ik / r_i`` over all units with at
    least one rating. Units with no rating at all are ignored. ``n`` is the number of units
    with at least two ratings. ``None`` if there is no such unit or ``q < 2``. With two raters
    and no missing ratings this equals :func:`gwet_ac1`.
    """
    q = len(categories)
    rows: list[npt.NDArray[np.int64]] = []
    for unit in ratings:
        present = [v for v in unit if not is_missing(v)]
        if present:
            codes = encode(present, categories, "ratings")
            rows.append(np.bincount(codes, minlength=q).astype(np.int64))
    if not rows:
        return ChanceCorrected(None, 0, None, None)
    counts = np.vstack(rows).astype(np.float64)
    r = counts.sum(axis=1)
    pairable = r >= 2
    n_pairable = int(np.count_nonzero(pairable))
    if n_pairable == 0:
        return ChanceCorrected(None, 0, None, None)
    cp = counts[pairable]
    rp = r[pairable]
    observed = float(((cp * (cp - 1.0)).sum(axis=1) / (rp * (rp - 1.0))).mean())
    if q < 2:
        return ChanceCorrected(None, n_pairable, observed, None)
    pi = (counts / r[:, None]).mean(axis=0)
    chance = float((pi * (1.0 - pi)).sum()) / (q - 1)
    return ChanceCorrected((observed - chance) / (1.0 - chance), n_pairable, observed, chance)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval for a proportion such as percent agreement (no continuity
    correction), as DR-Bench's audit sample calls for. ``None`` when ``n == 0``.

    Unlike the normal-approximation interval it stays inside [0, 1] and is not degenerate at
    0% or 100% agreement, which is common on small audit samples.
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n == 0:
        return None
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)
