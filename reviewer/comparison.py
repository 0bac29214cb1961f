"""Agreement summaries for one verdict kind: judge vs human, reviewer vs reviewer.

The statistics themselves live in :mod:`reviewer.agreement`; this module decides which of them
fit a scale and bundles them for display. A scale's *measurement level* drives the choice:
nominal labels (correct / incorrect / unknown) get unweighted kappa and AC1; ordinal ones
(0 / 0.5 / 1, the 1–4 rating) also get quadratic-weighted kappa, because confusing 0 with 1 is
worse than 0 with 0.5; continuous scores (RACE's 0–10) get error and correlation instead of a
confusion table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np
import numpy.typing as npt

from reviewer.agreement import (
    AlphaResult,
    BootstrapCI,
    ChanceCorrected,
    ConfusionMatrix,
    Estimate,
    accuracy,
    accuracy_from_table,
    bootstrap_table_ci,
    cohen_kappa,
    cohen_kappa_from_table,
    confusion_matrix,
    gwet_ac1,
    gwet_ac1_multi,
    krippendorff_alpha,
    mean_absolute_error,
    mean_signed_difference,
    pearson,
    spearman,
)
from reviewer.scales import Scale

Level = Literal["nominal", "ordinal", "interval"]

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples per interval; the seed is fixed, so a report is reproducible."""
MIN_ITEMS = 10
"""Pairs below which an agreement statistic is flagged weak."""
PREVALENCE_CHANCE = 0.7
"""Chance agreement above which a κ far below AC1 is put down to prevalence."""


def scale_level(scale: Scale) -> Level:
    """Interval for continuous scales; ordinal when every choice has its own number; else
    nominal (claim verdicts map both 'incorrect' and 'unknown' to 0, so they are not ordered)."""
    if scale.continuous:
        return "interval"
    numbers = [c.numeric for c in scale.choices]
    if all(n is not None for n in numbers) and len(set(numbers)) == len(numbers):
        return "ordinal"
    return "nominal"


def scale_labels(scale: Scale) -> tuple[str, ...]:
    """The codes of a categorical scale in scale order (numeric order when ordinal)."""
    choices = list(scale.choices)
    if scale_level(scale) == "ordinal":
        choices.sort(key=lambda c: c.numeric if c.numeric is not None else 0.0)
    return tuple(c.code for c in choices)


@dataclass(frozen=True, slots=True)
class CategoricalComparison:
    """Rater ``a`` (rows) against rater ``b`` (columns) on one categorical scale.

    ``weighted_kappa`` (quadratic) is given for ordinal scales only. Intervals are percentile
    bootstraps over items with a fixed seed.
    """

    labels: tuple[str, ...]
    n: int
    accuracy: BootstrapCI
    kappa: BootstrapCI
    weighted_kappa: BootstrapCI | None
    ac1: ChanceCorrected
    confusion: ConfusionMatrix
    caveats: tuple[str, ...] = ()
    """Why the numbers may mislead: too few pairs, a rater using one class, κ deflated by
    prevalence (read AC1 beside it)."""


def compare_categorical(
    a: Sequence[str],
    b: Sequence[str],
    labels: Sequence[str],
    *,
    ordinal: bool,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> CategoricalComparison:
    def acc(table: npt.NDArray[np.int64]) -> Estimate:
        return accuracy_from_table(table)

    def kappa(table: npt.NDArray[np.int64]) -> ChanceCorrected:
        return cohen_kappa_from_table(table)

    def weighted(table: npt.NDArray[np.int64]) -> ChanceCorrected:
        return cohen_kappa_from_table(table, "quadratic")

    def ci(fn: Callable[[npt.NDArray[np.int64]], Estimate | ChanceCorrected]) -> BootstrapCI:
        return bootstrap_table_ci(fn, a, b, labels, n_resamples=n_resamples, seed=seed)

    kappa_ci = ci(kappa)
    ac1 = gwet_ac1(a, b, labels)
    confusion = confusion_matrix(a, b, labels)
    return CategoricalComparison(
        labels=tuple(labels),
        n=len(a),
        accuracy=ci(acc),
        kappa=kappa_ci,
        weighted_kappa=ci(weighted) if ordinal else None,
        ac1=ac1,
        confusion=confusion,
        caveats=kappa_caveats(confusion, cohen_kappa_from_table(confusion.array()), ac1),
    )


def kappa_caveats(
    confusion: ConfusionMatrix,
    kappa: ChanceCorrected,
    ac1: ChanceCorrected,
    names: tuple[str, str] = ("judge", "human"),
) -> tuple[str, ...]:
    """What a reader must know before trusting κ on this table.

    κ divides by ``1 − pₑ``: when one rater puts everything in one class, κ is 0 (or 0/0)
    whatever the agreement, and when one class dominates both raters' marginals (pₑ high) κ
    is small even for near-perfect agreement — the prevalence paradox. Gwet's AC1 uses a
    chance term that does not grow with prevalence, so it is named beside κ in both cases.
    """
    out: list[str] = []
    if confusion.n < MIN_ITEMS:
        out.append(f"only {confusion.n} pairs (< {MIN_ITEMS}): every statistic is weak")
    ac1_text = "n/a" if ac1.value is None else f"{ac1.value:.3f}"
    one_class = _one_class(confusion, names, ac1_text)
    if one_class is not None:
        return (*out, one_class)
    paradox = _prevalence_paradox(kappa, ac1, ac1_text)
    return (*out, paradox) if paradox is not None else tuple(out)


def _one_class(confusion: ConfusionMatrix, names: tuple[str, str], ac1_text: str) -> str | None:
    """The caveat when a rater put every item in one class (judge first)."""
    table = confusion.array()
    for rater, marginal in zip(names, (table.sum(axis=1), table.sum(axis=0)), strict=True):
        used = int((marginal > 0).sum())
        if confusion.n and used == 1:
            label = confusion.labels[int(marginal.argmax())]
            return (
                f"the {rater} used one class only ({label}): κ is 0 or undefined "
                f"by construction, whatever the agreement (read AC1 = {ac1_text})"
            )
    return None


def _prevalence_paradox(kappa: ChanceCorrected, ac1: ChanceCorrected, ac1_text: str) -> str | None:
    """The caveat when chance agreement is high and AC1 is well above κ."""
    chance, value = kappa.chance_agreement, kappa.value
    if not (
        chance is not None
        and value is not None
        and ac1.value is not None
        and chance >= PREVALENCE_CHANCE
        and ac1.value - value >= 0.2
    ):
        return None
    observed = kappa.observed_agreement or 0.0
    return (
        f"prevalence paradox: one class dominates (chance agreement pₑ = "
        f"{chance:.2f}), so κ = {value:.3f} despite {observed:.0%} agreement; "
        f"AC1 = {ac1_text}"
    )


@dataclass(frozen=True, slots=True)
class ContinuousComparison:
    """Two raters' numbers on a continuous scale: exact-match share, error and correlation."""

    n: int
    exact: Estimate
    mae: Estimate
    mean_difference: Estimate
    """Mean of ``b - a``: positive when ``b`` (the human) scores higher."""
    pearson: Estimate
    spearman: Estimate


def compare_continuous(a: Sequence[float], b: Sequence[float]) -> ContinuousComparison:
    return ContinuousComparison(
        n=len(a),
        exact=accuracy(list(a), list(b)),
        mae=mean_absolute_error(a, b),
        mean_difference=mean_signed_difference(b, a),
        pearson=pearson(a, b),
        spearman=spearman(a, b),
    )


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Two reviewers on the items both decided."""

    a: str
    b: str
    n: int
    accuracy: Estimate
    kappa: ChanceCorrected | None
    weighted_kappa: ChanceCorrected | None
    pearson: Estimate | None


@dataclass(frozen=True, slots=True)
class InterRater:
    """Every reviewer of one verdict kind, on the items at least two of them decided.

    ``alpha`` is Krippendorff's alpha at the scale's level (missing ratings allowed), ``ac1``
    Gwet's multi-rater AC1 (categorical scales only); ``pairs`` has each pair of reviewers that
    share at least one item.
    """

    level: Level
    reviewers: tuple[str, ...]
    n_items: int
    alpha: AlphaResult
    ac1: ChanceCorrected | None
    pairs: tuple[PairAgreement, ...]


def _cell(value: str | None, interval: bool) -> object:
    if value is None:
        return None
    return float(value) if interval else value


def _pair_agreement(
    first: str, second: str, both: list[tuple[str, str]], level: Level, labels: Sequence[str]
) -> PairAgreement:
    """Two reviewers on the items both decided: on an interval scale, exact matches and
    Pearson's r; otherwise accuracy and κ (weighted too on an ordinal scale)."""
    xs = [x for x, _ in both]
    ys = [y for _, y in both]
    if level == "interval":
        fx, fy = [float(x) for x in xs], [float(y) for y in ys]
        return PairAgreement(
            first, second, len(both), accuracy(fx, fy), None, None, pearson(fx, fy)
        )
    return PairAgreement(
        first,
        second,
        len(both),
        accuracy(xs, ys),
        cohen_kappa(xs, ys, labels),
        cohen_kappa(xs, ys, labels, "quadratic") if level == "ordinal" else None,
        None,
    )


def inter_rater(
    units: Sequence[Mapping[str, str]],
    scale: Scale,
) -> InterRater:
    """Agreement among reviewers; ``units`` holds, per item, reviewer -> value code.

    Items with fewer than two reviewers carry no agreement information and are dropped.
    """
    shared = [u for u in units if len(u) >= 2]
    level = scale_level(scale)
    reviewers = tuple(sorted({r for u in shared for r in u}))
    labels = scale_labels(scale) if level != "interval" else ()

    interval = level == "interval"
    matrix = [[_cell(u.get(r), interval) for r in reviewers] for u in shared]
    alpha = krippendorff_alpha(matrix, level, None if interval else labels)
    ac1 = gwet_ac1_multi(matrix, labels) if not interval else None
    pairs = _pairs(shared, reviewers, level, labels)
    return InterRater(level, reviewers, len(shared), alpha, ac1, pairs)


def _pairs(
    shared: list[Mapping[str, str]],
    reviewers: tuple[str, ...],
    level: Level,
    labels: Sequence[str],
) -> tuple[PairAgreement, ...]:
    """Each pair of reviewers that share at least one item."""
    pairs: list[PairAgreement] = []
    for first, second in combinations(reviewers, 2):
        both = [(u[first], u[second]) for u in shared if first in u and second in u]
        if both:
            pairs.append(_pair_agreement(first, second, both, level, labels))
    return tuple(pairs)
