"""Intervals for a corrected estimate that are neither too narrow with few disagreements nor
wasteful with many.

A correction is a total over the few reviews where human and judge differ, so its spread is
measured from about that many points. With none, or one, the measured spread says nothing
(zero, or a single point), yet the estimate still has one; with a handful, a t quantile on
*k − 1* degrees of freedom fixes the narrowness but over-covers badly once intervals are
pooled over targets (each wide interval is reviews spent on width).

**Pseudo-observations.** Before the interval is formed, two pseudo-observations at ``±m``
(``m`` the typical size of one disagreement's influence on the target) are added to the
sample with weight :data:`PSEUDO_WEIGHT` each. This is the classic "add a few pseudo-successes"
repair of a Wald interval (Agresti & Coull), transposed to a total of signed influences: it
keeps a floor under the variance that does not vanish when no error was seen, and costs next
to nothing once the disagreements are many. The quantile is Student's t on *k + 2* degrees of
freedom (the disagreements and the two pseudo-observations): a variance measured from a
handful of non-zero points is itself noisy (a sum of rare errors has a heavy-tailed spread),
and a normal quantile under-covers there even at thirty disagreements, while t on *k − 1*
over-covers wastefully at the smallest counts. The simulation tests check the coverage per
target (tests/test_estimates_audit.py).

**Typical size.** ``m`` is the mean absolute influence of the disagreements moving the
target. A target none of whose reviews disagreed borrows it from the other targets of the
same metric: a single verdict's influence on a metric scales inversely with the subjects that
metric averages over, so ``m·N`` (``N`` the subjects that can move the target) is carried
across and divided by this target's ``N``.

**Range.** The truth lies in the metric's range, so the part of an interval outside it can
never cover the truth: the interval is intersected with the range. This keeps coverage exactly
and never widens the interval (a logit transform does keep the interval inside too, but
stretches it on the side away from the bound). The point estimate is *not* clipped: clipping
it would bias it towards the inside of the range.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from reviewer.estimates.correction import Correction
from reviewer.estimates.ppi import t_value

Floats: TypeAlias = npt.NDArray[np.float64]
Ints: TypeAlias = npt.NDArray[np.int64]

PSEUDO_WEIGHT = 0.75
"""Weight of each of the two pseudo-observations at ±m."""


def pseudo_variance(
    variance: float, reviews: int, population: float, magnitude: float, fpc: bool
) -> float:
    """The estimate's variance with two pseudo-observations ``±magnitude`` added to its sample.

    The design variance of an expanded total is ``N²·(1 − n/N)·s²/n``; ``s²`` is recovered
    from ``variance``, pooled with the pseudo-observations (their mean is 0, so they add
    ``2·w·m²`` to the sum of squares and ``2·w`` to the weight) and turned back."""
    n, big_n = reviews, population
    if n < 1 or big_n <= 0:
        return max(variance, 0.0)
    f = max(0.0, 1.0 - n / big_n) if fpc else 1.0
    if f <= 0.0:
        return 0.0
    s2 = max(variance, 0.0) * n / (big_n * big_n * f)
    w = PSEUDO_WEIGHT
    pooled = ((n - 1) * s2 + 2 * w * magnitude * magnitude) / (n + 2 * w - 1)
    return big_n * big_n * f * pooled / n


def borrowed_magnitudes(
    magnitude: Floats, disagreements: Ints, population: Floats, metric: Sequence[object]
) -> Floats:
    """Each target's typical influence of one disagreement: its own where it has
    disagreements; else ``Σ k·m·N / Σ k`` over the same metric's other targets, divided by
    its own ``N``; 0 where no target of the metric has one."""
    out = np.asarray(magnitude, dtype=np.float64).copy()
    keys = list(metric)
    for key in set(keys):
        columns = np.array([j for j, k in enumerate(keys) if k == key], dtype=np.int64)
        k = disagreements[columns].astype(np.float64)
        if k.sum() <= 0:
            continue
        scaled = float((k * magnitude[columns] * population[columns]).sum() / k.sum())
        for j in columns.tolist():
            if disagreements[j] == 0 and population[j] > 0:
                out[j] = scaled / population[j]
    return out


def bounded(
    estimate: float,
    half: float | tuple[float, float],
    bounds: tuple[float, float] | None,
    skip_low: float = 0.0,
    skip_high: float = 0.0,
) -> tuple[float, float]:
    """``estimate ± half`` (or ``− below, + above`` for a skew-corrected interval), widened by
    what skipped draws could do (``skip_low ≤ 0 ≤ skip_high``), intersected with the metric's
    range."""
    below, above = half if isinstance(half, tuple) else (half, half)
    lower = estimate + min(skip_low, 0.0) - below
    upper = estimate + max(skip_high, 0.0) + above
    if bounds is None:
        return lower, upper
    low, high = bounds
    lower, upper = max(low, lower), min(high, upper)
    if lower > upper:  # the whole interval beyond the range: its nearest edge
        edge = high if estimate > high else low
        return edge, edge
    return lower, upper


def half_width(
    variance: float, disagreements: int, confidence: float = 0.95, df: float | None = None
) -> float:
    """t on ``disagreements + 2`` degrees of freedom times the standard error — or on fewer,
    ``df``, where the design says the variance rests on fewer (a report plan's decided
    reports)."""
    freedom: float = disagreements + 2
    if df is not None and df > 0:
        freedom = min(freedom, df)
    return t_value(confidence, freedom) * math.sqrt(max(variance, 0.0))


def skewed_half_widths(quantile: float, se: float, skew: float) -> tuple[float, float]:
    """(below, above) the estimate of an interval corrected for the estimator's skewness
    ``skew`` (its third cumulant over its variance to the power 3/2), by Hall's (1992)
    monotone transformation of the studentised statistic ``Z = (θ̂ − θ)/se``:
    ``G(Z) = Z + Γ·Z²/3 + Γ²·Z³/27 + Γ/6`` is nearly symmetric, so ``θ`` lies in
    ``θ̂ − se·G⁻¹(±q)``, with ``G⁻¹(v) = (3/Γ)·(∛(1 + Γ·(v − Γ/6)) − 1)``. A total of rare
    errors drawn at small probabilities is skewed: a plan that catches few of them is both
    too high and too narrow, and the symmetric interval misses on one side only; the
    corrected one reaches further on that side. ``Γ = 0`` gives ``± q·se``."""
    if se <= 0 or not math.isfinite(skew) or abs(skew) < 1e-12:
        return quantile * se, quantile * se

    def inverse(v: float) -> float:
        return float(3.0 / skew * (np.cbrt(1.0 + skew * (v - skew / 6.0)) - 1.0))

    return se * inverse(quantile), -se * inverse(-quantile)


def corrected_intervals(
    correction: Correction,
    anchor: Floats,
    bounds: Sequence[tuple[float, float] | None],
    metric: Sequence[object],
    fpc: bool,
    confidence: float = 0.95,
) -> tuple[Floats, Floats, Floats, Floats, Floats]:
    """Per target: the corrected estimate (``anchor`` plus the tuned correction), its
    interval (pseudo-observations, t on k + 2 df, widened by the skipped draws, within the
    range), and the variance behind it. Where no magnitude is known for a target's metric
    (no review of it disagreed anywhere) there is nothing to form an interval from: NaN."""
    magnitude = borrowed_magnitudes(
        correction.magnitude, correction.disagreements, correction.population, metric
    )
    estimate = anchor + correction.tuned
    targets = len(anchor)
    lower = np.full(targets, np.nan)
    upper = np.full(targets, np.nan)
    variance = np.zeros(targets)
    for j in range(targets):
        if correction.unreviewed[j] == 0 and correction.reviews[j] > 0:
            lower[j] = upper[j] = estimate[j]  # exact: every verdict that moves it reviewed
            continue
        if magnitude[j] <= 0 or correction.reviews[j] == 0:
            continue
        variance[j] = pseudo_variance(
            float(correction.var_tuned[j]),
            int(correction.reviews[j]),
            float(correction.population[j]),
            float(magnitude[j]),
            fpc,
        )
        df = None if correction.df is None else float(correction.df[j])
        symmetric = half_width(variance[j], int(correction.disagreements[j]), confidence, df)
        half: float | tuple[float, float] = symmetric
        if correction.third is not None and variance[j] > 0:
            se = math.sqrt(variance[j])
            skew = float(correction.third[j]) / variance[j] ** 1.5
            half = skewed_half_widths(symmetric / se, se, skew)
        lower[j], upper[j] = bounded(
            float(estimate[j]),
            half,
            bounds[j],
            float(correction.skip_low[j]),
            float(correction.skip_high[j]),
        )
    return estimate, lower, upper, variance, magnitude
