"""The statistics of one row of a judge card: a judge's labels against the humans' on a set
of subjects that share a scale.

Which coefficient fits the scale: quadratic-weighted κ on an ordinal scale of three or more
categories (confusing 0 with 1 is worse than 0 with 0.5), Cohen's κ on a binary or nominal
one — and Gwet's AC1 instead wherever κ is known to mislead (one rater used one class, or one
class dominates both raters' marginals: the prevalence paradox named by
:func:`reviewer.comparison.kappa_caveats`). A continuous scale gets no coefficient: exact
matches and the direction of the differences only.

Intervals: Wilson's score interval for every proportion (accuracy, the lenient and strict
shares), which stays inside [0, 1] and is not degenerate at 0 or 100%; a percentile bootstrap
over labels for κ and AC1 (the resamples of :func:`reviewer.agreement.bootstrap_table_ci`,
fixed seed, every statistic computed from the same resampled tables at once). Below
``min_labels`` labels no coefficient interval is formed at all: a percentile bootstrap over
five labels is narrower than the truth, and the row says "too few labels" instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from reviewer.agreement import (
    ConfusionMatrix,
    cohen_kappa_from_table,
    confusion_matrix,
    gwet_ac1_from_table,
    wilson_interval,
)
from reviewer.comparison import Level, kappa_caveats

DEFAULT_CONFIDENCE = 0.95
DEFAULT_MIN_LABELS = 20
"""Labels below which a row is marked "too few labels" and gets no coefficient interval."""
DEFAULT_RESAMPLES = 1000

Coefficient = Literal["kappa", "weighted kappa", "AC1"]
Direction = Literal["lenient", "strict", "no clear direction", "none seen", "n/a"]


@dataclass(frozen=True, slots=True)
class Interval:
    """A statistic, its interval (``None`` where none can be formed) and how it was formed."""

    estimate: float | None
    lower: float | None
    upper: float | None
    method: str
    n: int
    """What the statistic rests on: labels, or for a conditional share its denominator."""
    count: int | None = None
    """For a proportion, its numerator."""


@dataclass(frozen=True, slots=True)
class Bias:
    """Which way the judge errs against the humans, on the scale's order.

    ``lenient``: the judge's value above the human's, among labels where the human's is not
    the top of the scale (for yes/no: judge-yes among human-no). ``strict``: the reverse
    (judge-no among human-yes). The direction is named only when the two Wilson intervals do
    not overlap."""

    lenient: Interval
    strict: Interval
    direction: Direction


@dataclass(frozen=True, slots=True)
class Agreement:
    """A judge against the humans on one set of labels sharing one scale."""

    n: int
    level: Level | None
    """The scale's level; None for a mix of scales (a benchmark's row)."""
    accuracy: Interval
    coefficient: Coefficient | None
    value: Interval | None
    """The coefficient that fits, with its interval (None: no coefficient fits)."""
    kappa: Interval | None
    ac1: Interval | None
    confusion: ConfusionMatrix | None
    bias: Bias
    too_few: bool
    caveats: tuple[str, ...]


def wilson(successes: int, n: int, confidence: float) -> Interval:
    bounds = wilson_interval(successes, n, confidence) if n else None
    return Interval(
        successes / n if n else None,
        bounds[0] if bounds else None,
        bounds[1] if bounds else None,
        "Wilson",
        n,
        successes,
    )


def bias_counts(
    judge: Sequence[float | None],
    human: Sequence[float | None],
    bounds: tuple[float, float] | None,
) -> tuple[int, int, int, int]:
    """(judge above human, human below the top, judge below human, human above the bottom)
    on the numbers the scale gives each label; pairs where either has none are left out.
    ``bounds`` is the scale's (bottom, top); None: the values seen."""
    j = np.array([np.nan if v is None else v for v in judge], dtype=np.float64)
    h = np.array([np.nan if v is None else v for v in human], dtype=np.float64)
    both = ~(np.isnan(j) | np.isnan(h))
    j, h = j[both], h[both]
    if not j.size:
        return 0, 0, 0, 0
    bottom, top = bounds or (float(min(j.min(), h.min())), float(max(j.max(), h.max())))
    return (
        int(np.count_nonzero(j > h)),
        int(np.count_nonzero(h < top)),
        int(np.count_nonzero(j < h)),
        int(np.count_nonzero(h > bottom)),
    )


def bias(counts: tuple[int, int, int, int], confidence: float) -> Bias:
    """The lenient and strict shares of :func:`bias_counts`, with the direction they show."""
    above, below_top, below, above_bottom = counts
    if not below_top and not above_bottom:
        empty = Interval(None, None, None, "Wilson", 0, 0)
        return Bias(empty, empty, "n/a")
    lenient = wilson(above, below_top, confidence)
    strict = wilson(below, above_bottom, confidence)
    return Bias(lenient, strict, _direction(lenient, strict))


def _direction(lenient: Interval, strict: Interval) -> Direction:
    if not lenient.count and not strict.count:
        return "none seen" if lenient.n or strict.n else "n/a"
    if _above(lenient, strict):
        return "lenient"
    if _above(strict, lenient):
        return "strict"
    return "no clear direction"


def _above(a: Interval, b: Interval) -> bool:
    """``a``'s interval wholly above ``b``'s (a share with no denominator is never above)."""
    if a.lower is None:
        return False
    return b.upper is None or a.lower > b.upper


def agreement(
    judge: Sequence[str],
    human: Sequence[str],
    labels: Sequence[str],
    level: Level,
    numbers: Callable[[str], float | None],
    bounds: tuple[float, float] | None = None,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    min_labels: int = DEFAULT_MIN_LABELS,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Agreement:
    """The row's statistics; ``labels`` is the scale's order (plus any other value seen),
    ``numbers`` maps a label to its place on the scale for the direction of bias, whose
    ``bounds`` are the scale's lowest and highest numbers."""
    n = len(judge)
    same = sum(1 for j, h in zip(judge, human, strict=True) if _equal(j, h, level))
    accuracy = wilson(same, n, confidence)
    counts = bias_counts([numbers(v) for v in judge], [numbers(v) for v in human], bounds)
    direction = bias(counts, confidence)
    too_few = n < min_labels
    if level == "interval" or n == 0:
        return Agreement(n, level, accuracy, None, None, None, None, None, direction, too_few, ())
    confusion = confusion_matrix(list(judge), list(human), list(labels))
    table = confusion.array()
    kappa = cohen_kappa_from_table(table)
    ac1 = gwet_ac1_from_table(table)
    caveats = kappa_caveats(confusion, kappa, ac1)
    coefficient = _coefficient(level, len(labels), caveats)
    points: dict[Coefficient, float | None] = {
        "kappa": kappa.value,
        "weighted kappa": cohen_kappa_from_table(table, "quadratic").value,
        "AC1": ac1.value,
    }
    intervals = _intervals(judge, human, labels, points, too_few, confidence, n_resamples, seed)
    return Agreement(
        n,
        level,
        accuracy,
        coefficient,
        intervals[coefficient],
        intervals["kappa"],
        intervals["AC1"],
        confusion,
        direction,
        too_few,
        caveats,
    )


def _intervals(
    judge: Sequence[str],
    human: Sequence[str],
    labels: Sequence[str],
    points: Mapping[Coefficient, float | None],
    too_few: bool,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> dict[Coefficient, Interval]:
    """The coefficients' intervals; none below the minimum of labels (the points alone)."""
    if too_few:
        return {
            name: Interval(point, None, None, "none (too few labels)", len(judge))
            for name, point in points.items()
        }
    position = {label: i for i, label in enumerate(labels)}
    codes = np.array(
        [position[j] * len(labels) + position[h] for j, h in zip(judge, human, strict=True)],
        dtype=np.intp,
    )
    return bootstrap_intervals(codes, len(labels), points, confidence, n_resamples, seed)


def bootstrap_intervals(
    codes: npt.NDArray[np.intp],
    k: int,
    points: Mapping[Coefficient, float | None],
    confidence: float,
    n_resamples: int,
    seed: int,
) -> dict[Coefficient, Interval]:
    """Percentile bootstrap intervals of κ, weighted κ and AC1 from the same resamples.

    ``codes`` are the pairs' cells of the ``k × k`` table (judge · k + human). The resamples
    are those :func:`reviewer.agreement.bootstrap_table_ci` draws for the same seed, and each
    statistic is computed for all of them at once from their tables, so the intervals equal
    that function's, statistic by statistic, at a fraction of its cost. Resamples on which a
    statistic is undefined are left out of its interval and counted."""
    tables = _resampled_tables(codes, k, n_resamples, seed)
    values: dict[Coefficient, npt.NDArray[np.float64]] = {
        "kappa": _kappas(tables, "none"),
        "weighted kappa": _kappas(tables, "quadratic"),
        "AC1": _ac1s(tables),
    }
    tail = (1.0 - confidence) / 2.0
    out: dict[Coefficient, Interval] = {}
    for name, found in values.items():
        defined = found[np.isfinite(found)]
        method = f"percentile bootstrap ({defined.size}/{n_resamples} resamples)"
        if not defined.size:
            out[name] = Interval(points[name], None, None, method, codes.size)
            continue
        lower, upper = np.quantile(defined, [tail, 1.0 - tail])
        out[name] = Interval(points[name], float(lower), float(upper), method, codes.size)
    return out


_CHUNK = 4_000_000
"""Resampled pairs held at once while their tables are counted."""


def _resampled_tables(
    codes: npt.NDArray[np.intp], k: int, n_resamples: int, seed: int
) -> npt.NDArray[np.float64]:
    """(resamples, k, k) count tables, drawn as ``bootstrap_table_ci`` draws them (one index
    vector of ``n`` per resample from one generator), counted a chunk of resamples at a time."""
    n = codes.size
    rng = np.random.default_rng(seed)
    cells = k * k
    tables = np.empty((n_resamples, cells), dtype=np.float64)
    step = max(1, _CHUNK // max(n, 1))
    for start in range(0, n_resamples, step):
        count = min(step, n_resamples - start)
        idx = rng.integers(0, n, size=(count, n))
        flat = (np.arange(count)[:, None] * cells + codes[idx]).ravel()
        tables[start : start + count] = np.bincount(flat, minlength=count * cells).reshape(
            count, cells
        )
    return tables.reshape(n_resamples, k, k)


def _kappas(tables: npt.NDArray[np.float64], weights: str) -> npt.NDArray[np.float64]:
    """Cohen's κ of each table, as :func:`reviewer.agreement.cohen_kappa_from_table` (NaN
    where it is undefined)."""
    k = tables.shape[1]
    position = np.arange(k, dtype=np.float64)
    distance = np.abs(position[:, None] - position[None, :])
    v = (distance > 0).astype(np.float64) if weights == "none" else distance**2
    n = tables.sum(axis=(1, 2))
    observed = (tables * v).sum(axis=(1, 2))
    expected = np.einsum("ri,rj,ij->r", tables.sum(axis=2), tables.sum(axis=1), v)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected == 0.0, np.nan, 1.0 - n * observed / expected)


def _ac1s(tables: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Gwet's AC1 of each table, as :func:`reviewer.agreement.gwet_ac1_from_table`."""
    q = tables.shape[1]
    if q < 2:
        return np.full(tables.shape[0], np.nan)
    n = tables.sum(axis=(1, 2))
    observed = np.trace(tables, axis1=1, axis2=2) / n
    pi = (tables.sum(axis=2) + tables.sum(axis=1)) / (2.0 * n[:, None])
    chance = (pi * (1.0 - pi)).sum(axis=1) / (q - 1)
    return np.asarray((observed - chance) / (1.0 - chance), dtype=np.float64)


def _coefficient(level: Level, categories: int, caveats: tuple[str, ...]) -> Coefficient:
    """AC1 where κ is known to mislead on this table; else weighted κ on an ordered scale
    of three or more categories, κ otherwise."""
    if any(
        c.startswith(("the judge used one class", "the human used one class", "prevalence"))
        for c in caveats
    ):
        return "AC1"
    if level == "ordinal" and categories > 2:
        return "weighted kappa"
    return "kappa"


def _equal(a: str, b: str, level: Level) -> bool:
    if level == "interval":
        try:
            return float(a) == float(b)
        except ValueError:
            return a == b
    return a == b


def pooled(
    parts: Sequence[Agreement],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    min_labels: int = DEFAULT_MIN_LABELS,
) -> Agreement:
    """A row over several scales (a benchmark): accuracy and the direction of bias, summed
    over its parts — no single chance correction fits labels from different scales, so the
    coefficient is left to the parts' rows."""
    n = sum(p.n for p in parts)
    agreed = sum(p.accuracy.count or 0 for p in parts)
    counts = (
        sum(p.bias.lenient.count or 0 for p in parts),
        sum(p.bias.lenient.n for p in parts),
        sum(p.bias.strict.count or 0 for p in parts),
        sum(p.bias.strict.n for p in parts),
    )
    return Agreement(
        n,
        None,
        wilson(agreed, n, confidence),
        None,
        None,
        None,
        None,
        None,
        bias(counts, confidence),
        n < min_labels,
        (),
    )
