"""PPI++ for a mean (Angelopoulos, Duchi & Zrnic 2023, *PPI++: Efficient Prediction-Powered
Inference*): the gold labels' mean, corrected by a judge's predictions on everything, with the
power-tuning weight λ estimated from the data.

Written to agree with the reference implementation, ``ppi_py.ppi_mean_pointestimate`` and
``ppi_mean_ci`` (ppi-python 0.2.3), to floating-point accuracy — the tests hold it to 1e-9 —
because "corrected by PPI++" should mean exactly what the paper's code computes: the labeled
weights rescaled to mean 1; λ computed at the λ = 1 estimate, from the covariance of the label
and prediction gradients over ``(1 + n/N)`` times the variance of every prediction (labeled and
unlabeled together), clipped to [0, 1]; a normal interval with the unlabeled term and the
rectifier term added in quadrature.

Everything is computed from sums (:class:`Moments`) rather than arrays, and elementwise, so the
design-based estimator (:mod:`reviewer.estimates.correction`) can run many cells and metrics at
once and hand over the whole run's predictions as a count, a sum and a sum of squares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

Floats: TypeAlias = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Moments:
    """Sums over the labeled items (raw weights ``W``, label ``y``, prediction ``p``) and the
    unlabeled predictions ``q``; every field may be an array (one entry per cell)."""

    n: Floats
    sw: Floats
    sw2: Floats
    swy: Floats
    swp: Floats
    sw2y: Floats
    sw2p: Floats
    sw2yp: Floats
    sw2y2: Floats
    sw2p2: Floats
    big_n: Floats
    sq: Floats
    sq2: Floats

    @classmethod
    def of(cls, y: Floats, p: Floats, q: Floats, w: Floats | None = None) -> Moments:
        weights = np.ones_like(y) if w is None else np.asarray(w, dtype=np.float64)
        w2 = weights * weights

        def total(values: Floats) -> Floats:
            return np.asarray(np.sum(values), dtype=np.float64)

        return cls(
            np.asarray(float(len(y))),
            total(weights),
            total(w2),
            total(weights * y),
            total(weights * p),
            total(w2 * y),
            total(w2 * p),
            total(w2 * y * p),
            total(w2 * y * y),
            total(w2 * p * p),
            np.asarray(float(len(q))),
            total(q),
            total(q * q),
        )


@dataclass(frozen=True, slots=True)
class Normalised:
    """The labeled sums with weights rescaled to mean 1 (ppi-python's convention)."""

    n: Floats
    s1: Floats
    s2: Floats
    y: Floats
    p: Floats
    w2y: Floats
    w2p: Floats
    w2yp: Floats
    w2y2: Floats
    w2p2: Floats


def normalised(m: Moments) -> Normalised:
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(m.sw > 0, m.n / np.where(m.sw > 0, m.sw, 1.0), 0.0)
    s2 = scale * scale
    return Normalised(
        m.n,
        scale * m.sw,
        s2 * m.sw2,
        scale * m.swy,
        scale * m.swp,
        s2 * m.sw2y,
        s2 * m.sw2p,
        s2 * m.sw2yp,
        s2 * m.sw2y2,
        s2 * m.sw2p2,
    )


def _safe_div(num: Floats, den: Floats) -> Floats:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), 0.0)


def power_tuning(m: Moments) -> Floats:
    """ppi-python's λ for a mean (``_calc_lam_glm`` with clipping), elementwise.

    Where the predictions do not vary the estimate does not depend on λ; 1 is returned there
    (ppi-python would divide by zero).
    """
    s = normalised(m)
    n, big_n = s.n, m.big_n
    theta = _safe_div(m.sq, big_n) + _safe_div(s.y - s.p, n)
    # gradients g = w(y - θ), ĝ = w(p - θ) on the labeled items, q - θ on the unlabeled ones
    sg = s.y - theta * s.s1
    sgh = s.p - theta * s.s1
    sggh = s.w2yp - theta * (s.w2y + s.w2p) + theta * theta * s.s2
    cov = _safe_div(sggh - _safe_div(sg * sgh, n), n)
    sgh2 = s.w2p2 - 2 * theta * s.w2p + theta * theta * s.s2
    squ = m.sq - big_n * theta
    squ2 = m.sq2 - 2 * theta * m.sq + big_n * theta * theta
    total = n + big_n
    var = _safe_div(sgh2 + squ2 - _safe_div((sgh + squ) ** 2, total), total - 1)
    denominator = (1 + _safe_div(n, big_n)) * var
    lam = np.where(denominator > 0, _safe_div(cov, denominator), 1.0)
    return np.asarray(np.clip(lam, 0.0, 1.0), dtype=np.float64)


def point(m: Moments, lam: Floats) -> Floats:
    """λ·mean(q) + mean(w(y − λp)) with normalised weights."""
    s = normalised(m)
    return np.asarray(
        lam * _safe_div(m.sq, m.big_n) + _safe_div(s.y - lam * s.p, s.n), dtype=np.float64
    )


def standard_error(m: Moments, lam: Floats) -> Floats:
    """ppi-python's interval width: the unlabeled mean's and the rectifier's standard errors in
    quadrature (population standard deviations, as numpy's ``std``)."""
    s = normalised(m)
    mean_q = _safe_div(m.sq, m.big_n)
    var_q = np.maximum(_safe_div(m.sq2, m.big_n) - mean_q * mean_q, 0.0)
    imputed = lam * lam * _safe_div(var_q, m.big_n)
    sr = s.y - lam * s.p
    sr2 = s.w2y2 - 2 * lam * s.w2yp + lam * lam * s.w2p2
    var_r = np.maximum(_safe_div(sr2, s.n) - _safe_div(sr, s.n) ** 2, 0.0)
    return np.asarray(np.sqrt(imputed + _safe_div(var_r, s.n)), dtype=np.float64)


def z_value(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


@dataclass(frozen=True, slots=True)
class PPIMean:
    estimate: float
    lam: float
    se: float
    lower: float
    upper: float


def ppi_mean(
    y: npt.ArrayLike,
    yhat: npt.ArrayLike,
    yhat_unlabeled: npt.ArrayLike,
    w: npt.ArrayLike | None = None,
    lam: float | None = None,
    confidence: float = 0.9,
) -> PPIMean:
    """PPI++ estimate and interval of a mean, as ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled,
    alpha=1 - confidence, lam=lam, w=w)`` (its default confidence is 0.9 too)."""
    ys = np.asarray(y, dtype=np.float64)
    ps = np.asarray(yhat, dtype=np.float64)
    qs = np.asarray(yhat_unlabeled, dtype=np.float64)
    if ys.ndim != 1 or ys.shape != ps.shape or qs.ndim != 1 or not len(ys) or not len(qs):
        raise ValueError("y and yhat must be 1-D of one length; yhat_unlabeled 1-D; none empty")
    m = Moments.of(ys, ps, qs, None if w is None else np.asarray(w, dtype=np.float64))
    tuned = power_tuning(m) if lam is None else np.asarray(float(lam))
    estimate = float(point(m, tuned))
    se = float(standard_error(m, tuned))
    z = z_value(confidence)
    return PPIMean(estimate, float(tuned), se, estimate - z * se, estimate + z * se)


def t_value(confidence: float, df: float) -> float:
    """Student-t quantile for a two-sided ``confidence`` interval (no scipy at run time):
    exact for 1 and 2 degrees of freedom, else the Cornish–Fisher series in 1/df (Abramowitz
    & Stegun 26.7.5), within 1e-3 of the exact quantile from 3 degrees of freedom on."""
    p = 0.5 + confidence / 2
    if not math.isfinite(df) or df > 1e6:
        return z_value(confidence)
    if df <= 1:
        return math.tan(math.pi * (p - 0.5))
    if df <= 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = z_value(confidence)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
