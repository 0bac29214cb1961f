"""Exact binomial (Clopper–Pearson) bounds, in the standard library only.

The one-sided upper bound ``u`` on an error rate from ``k`` errors in ``n`` labels at
confidence ``1 − δ`` solves ``P(Binomial(n, u) ≤ k) = δ``; the binomial tail is a regularised
incomplete beta function, ``P(X ≤ k) = I_{1−u}(n − k, k + 1)``, evaluated here by its
continued fraction and inverted by bisection (monotone in ``u``). scipy computes the same and
is the oracle of the tests, not a dependency.
"""

from __future__ import annotations

import math

_EPS = 1e-15
_TINY = 1e-300


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        step = d * c
        h *= step
        if abs(step - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function ``I_x(a, b)`` for ``a, b > 0``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The fraction converges fast on its own side of the mean; the symmetry covers the other.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def binomial_cdf(k: float, n: float, p: float) -> float:
    """``P(X ≤ k)`` for ``X ~ Binomial(n, p)`` (``k`` and ``n`` may be effective, non-integer
    counts of a weighted sample)."""
    if k >= n:
        return 1.0
    if k < 0:
        return 0.0
    return betainc(n - k, k + 1.0, 1.0 - p)


def upper_bound(errors: float, n: float, delta: float) -> float:
    """The one-sided Clopper–Pearson upper bound on the error rate, confidence ``1 − δ``:
    the largest rate under which seeing at most ``errors`` in ``n`` still has probability
    ``δ``. 1.0 when there are no labels or every label is an error."""
    if n <= 0 or errors >= n:
        return 1.0
    low, high = errors / n, 1.0
    for _ in range(100):
        mid = (low + high) / 2.0
        if binomial_cdf(errors, n, mid) > delta:
            low = mid
        else:
            high = mid
        if high - low < 1e-12:
            break
    return high
