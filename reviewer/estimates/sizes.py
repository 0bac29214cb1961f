"""How many more reviews, and an interval that stays valid however often you look.

**Reviews needed.** A design variance falls as ``1/n`` (times the finite-population correction
``1 − n/N`` when sampling without replacement), so the variance seen after ``n`` reviews says
how many reviews reach a target half-width if the plan goes on as it started. With no
disagreement seen yet the variance is zero and says nothing: then there is no forecast.

**Anytime-valid intervals.** A 95% interval is 95% for one look at a fixed ``n``. Looking after
every decision and stopping when it looks good breaks that. The asymptotic confidence sequence
of Waudby-Smith, Arnold, Wu & Ramdas (2024, *Time-uniform central limit theory and asymptotic
confidence sequences*, Thm 2.2) holds for all ``n`` at once: the same estimate and standard
deviation, a boundary
``σ̂·sqrt(2(nρ² + 1)/(n²ρ²)·log(sqrt(nρ² + 1)/α))`` with ρ chosen to be tightest at the plan's
budget. It is wider (about 1.5–2× at the budget) and, like the fixed-n interval, asymptotic;
sampling without replacement only makes it conservative.
"""

from __future__ import annotations

import math

from reviewer.estimates.ppi import z_value


def reviews_needed(
    variance: float,
    reviews: int,
    frame: int,
    half_width: float,
    confidence: float = 0.95,
    without_replacement: bool = True,
) -> int | None:
    """Further reviews until the interval's half-width is at most ``half_width`` (0 if it
    already is); None when the variance cannot be extrapolated (no spread seen yet, fewer than
    two reviews) or the target is not positive."""
    if variance <= 0 or reviews < 2 or half_width <= 0 or not math.isfinite(variance):
        return None
    target = (half_width / z_value(confidence)) ** 2
    if variance <= target:
        return 0
    if without_replacement and frame > reviews:
        scale = variance / (1 / reviews - 1 / frame)
        needed = 1 / (target / scale + 1 / frame)
    else:
        needed = variance * reviews / target
    return max(0, math.ceil(needed - reviews - 1e-9))


def cs_rho(budget: int, confidence: float = 0.95) -> float:
    """ρ making the confidence sequence tightest at ``budget`` reviews."""
    alpha = 1 - confidence
    return math.sqrt((-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / max(1, budget))


def cs_half_width(
    variance: float, reviews: int, budget: int, confidence: float = 0.95
) -> float | None:
    """Half-width of the asymptotic confidence sequence after ``reviews`` reviews, for an
    estimator whose fixed-n variance is ``variance`` (so σ̂² = variance·n)."""
    if reviews < 2 or variance < 0 or not math.isfinite(variance):
        return None
    alpha = 1 - confidence
    rho2 = cs_rho(budget, confidence) ** 2
    n = reviews
    sigma = math.sqrt(variance * n)
    return sigma * math.sqrt(
        2 * (n * rho2 + 1) / (n * n * rho2) * math.log(math.sqrt(n * rho2 + 1) / alpha)
    )
