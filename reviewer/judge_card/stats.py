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
over labels for κ and AC1 (:func:`reviewer.agreement.bootstrap_table_ci`, fixed seed). Below
``min_labels`` labels no coefficient interval is formed at all: a percentile bootstrap over
five labels is narrower than the truth, and the row says "too few labels" instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from reviewer.agreement import (
    BootstrapCI,
    ChanceCorrected,
    ConfusionMatrix,
    bootstrap_table_ci,
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

    def interval(statistic: Callable[[npt.NDArray[np.int64]], ChanceCorrected]) -> Interval:
        point = statistic(table).value
        if too_few:
            return Interval(point, None, None, "none (too few labels)", n)
        found = bootstrap_table_ci(
            statistic, list(judge), list(human), labels, n_resamples, confidence, seed
        )
        return _from_bootstrap(found, n)

    statistics: dict[Coefficient, Callable[[npt.NDArray[np.int64]], ChanceCorrected]] = {
        "kappa": cohen_kappa_from_table,
        "weighted kappa": lambda t: cohen_kappa_from_table(t, "quadratic"),
        "AC1": gwet_ac1_from_table,
    }
    kappa_interval = interval(statistics["kappa"])
    ac1_interval = interval(statistics["AC1"])
    chosen = {"kappa": kappa_interval, "AC1": ac1_interval}.get(coefficient)
    value = chosen if chosen is not None else interval(statistics[coefficient])
    return Agreement(
        n,
        level,
        accuracy,
        coefficient,
        value,
        kappa_interval,
        ac1_interval,
        confusion,
        direction,
        too_few,
        caveats,
    )


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


def _from_bootstrap(found: BootstrapCI, n: int) -> Interval:
    return Interval(
        found.estimate,
        found.lower,
        found.upper,
        f"percentile bootstrap ({found.n_used}/{found.n_resamples} resamples)",
        n,
    )


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
