"""Comparing judge runs: verdict agreement between two runs, and score spread over several.

DailyReport reports two such analyses: which judge model to use (Table 5, accuracy per
dimension and cost) and robustness (Table 4, mean ± standard deviation of each system's scores
over three repeated runs). Here a run plays the part of a rater; the statistics are those of
:mod:`reviewer.agreement`.

The paper does not say whether its standard deviation is the sample (n − 1) or population (n)
one; ``STD_CHOICES`` names both and the sample one is the default ([CHOICE]): with three runs it
is the less flattering, and the usual reading of "standard deviation across runs".
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

from reviewer.agreement import (
    ChanceCorrected,
    ConfusionMatrix,
    Estimate,
    accuracy,
    cohen_kappa,
    confusion_matrix,
)
from reviewer.comparison import scale_labels, scale_level
from reviewer.registry import get_kind

STD_CHOICES = {"sample": 1, "population": 0}
"""Delta degrees of freedom of each reading of "standard deviation across runs"."""
DEFAULT_STD = "sample"


class ItemVerdict(NamedTuple):
    """One run's verdict on one item; ``item`` must name the same subject in every run."""

    kind: str
    item: tuple[object, ...]
    value: str | None


@dataclass(frozen=True, slots=True)
class KindAgreement:
    """Run ``a`` (rows of the confusion matrix) against run ``b`` (columns) on one kind."""

    kind: str
    n: int
    accuracy: Estimate
    kappa: ChanceCorrected | None
    weighted_kappa: ChanceCorrected | None
    """Quadratic-weighted, for ordinal scales (0 / 0.5 / 1) only."""
    confusion: ConfusionMatrix | None
    only_a: int
    only_b: int
    failed_a: int
    failed_b: int
    """Items a run judged with an error (no value): left out of the statistics."""


def agreement_by_kind(a: Iterable[ItemVerdict], b: Iterable[ItemVerdict]) -> list[KindAgreement]:
    """Per verdict kind, agreement on the items both runs gave a value."""
    left = _index(a)
    right = _index(b)
    return [
        _kind_agreement(kind, *left.get(kind, ({}, 0)), *right.get(kind, ({}, 0)))
        for kind in sorted(set(left) | set(right))
    ]


def _kind_agreement(
    kind: str,
    values_a: dict[tuple[object, ...], str],
    failed_a: int,
    values_b: dict[tuple[object, ...], str],
    failed_b: int,
) -> KindAgreement:
    shared = [k for k in values_a if k in values_b]
    xs = [values_a[k] for k in shared]
    ys = [values_b[k] for k in shared]
    kappa, weighted, confusion = _chance_corrected(kind, xs, ys)
    return KindAgreement(
        kind,
        len(shared),
        accuracy(xs, ys),
        kappa,
        weighted,
        confusion,
        only_a=sum(1 for k in values_a if k not in values_b),
        only_b=sum(1 for k in values_b if k not in values_a),
        failed_a=failed_a,
        failed_b=failed_b,
    )


def _chance_corrected(
    kind: str, xs: list[str], ys: list[str]
) -> tuple[ChanceCorrected | None, ChanceCorrected | None, ConfusionMatrix | None]:
    """κ, weighted κ (ordinal scales) and the confusion matrix of a categorical kind, over
    the scale's labels and any other value either run gave; nothing for a continuous one."""
    spec = get_kind(kind)
    if spec is None or spec.scale.continuous:
        return None, None, None
    labels = list(scale_labels(spec.scale))
    labels += sorted({v for v in xs + ys if v not in labels})
    kappa = cohen_kappa(xs, ys, labels)
    weighted = None
    if scale_level(spec.scale) == "ordinal":
        weighted = cohen_kappa(xs, ys, labels, "quadratic")
    return kappa, weighted, confusion_matrix(xs, ys, labels)


def _index(verdicts: Iterable[ItemVerdict]) -> dict[str, tuple[dict[tuple[object, ...], str], int]]:
    values: dict[str, dict[tuple[object, ...], str]] = defaultdict(dict)
    failed: dict[str, int] = defaultdict(int)
    for verdict in verdicts:
        if verdict.value is None:
            failed[verdict.kind] += 1
        else:
            values[verdict.kind][verdict.item] = verdict.value
    return {kind: (values.get(kind, {}), failed.get(kind, 0)) for kind in set(values) | set(failed)}


@dataclass(frozen=True, slots=True)
class Spread:
    mean: float | None
    sd: float | None
    n: int
    """Runs with a defined value."""


def mean_sd(values: Sequence[float | None], std: str = DEFAULT_STD) -> Spread:
    """Mean and standard deviation of the defined values; the sd needs more values than its
    delta degrees of freedom (two for the sample sd), else it is None."""
    ddof = STD_CHOICES[std]
    defined = [v for v in values if v is not None]
    n = len(defined)
    if n == 0:
        return Spread(None, None, 0)
    mean = math.fsum(defined) / n
    if n - ddof <= 0:
        return Spread(mean, None, n)
    variance = math.fsum((v - mean) ** 2 for v in defined) / (n - ddof)
    return Spread(mean, math.sqrt(variance), n)


@dataclass(frozen=True, slots=True)
class Band:
    """A figure over repeated runs: its mean, standard deviation and range (the noise band)."""

    mean: float | None
    sd: float | None
    low: float | None
    high: float | None
    n: int


def band(values: Sequence[float | None], std: str = DEFAULT_STD) -> Band:
    """:func:`mean_sd` with the range of the defined values."""
    spread = mean_sd(values, std)
    defined = [v for v in values if v is not None]
    if not defined:
        return Band(None, None, None, None, 0)
    return Band(spread.mean, spread.sd, min(defined), max(defined), spread.n)


@dataclass(frozen=True, slots=True)
class Flips:
    """How often the runs disagree on the subjects of one group (a kind, or a dimension).

    ``flip_rate`` is the mean over subjects of the share of pairs of runs that gave the subject
    different values (each subject judged with a value by at least two runs); ``changed`` the
    share of those subjects on which not every run agreed.
    """

    group: str
    subjects: int
    flip_rate: float | None
    changed: float | None
    max_runs: int
    """The most runs that judged one subject of the group."""


def subject_flips(group: str, values: Iterable[Sequence[str]]) -> Flips:
    """``values`` holds, per subject, the value each run that judged it gave (failed verdicts
    left out). A pair of runs flips a subject when their values differ."""
    rates: list[float] = []
    changed = 0
    most = 0
    for given in values:
        n = len(given)
        most = max(most, n)
        if n < 2:
            continue
        counts: dict[str, int] = defaultdict(int)
        for value in given:
            counts[value] += 1
        pairs = n * (n - 1) / 2
        same = math.fsum(c * (c - 1) / 2 for c in counts.values())
        rates.append(1.0 - same / pairs)
        changed += len(counts) > 1
    if not rates:
        return Flips(group, 0, None, None, most)
    return Flips(group, len(rates), math.fsum(rates) / len(rates), changed / len(rates), most)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b of two paired sequences (ties in either corrected for, as
    ``scipy.stats.kendalltau`` does by default); None when either is constant or there are
    fewer than two pairs. Quadratic in the number of systems, which is small."""
    n = len(x)
    if n != len(y):
        raise ValueError("kendall_tau_b needs paired sequences")
    concordant = discordant = tied_x = tied_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tied_x += 1
            elif dy == 0:
                tied_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    if denominator == 0:
        return None
    return (concordant - discordant) / denominator


@dataclass(frozen=True, slots=True)
class RankStability:
    """How stable the systems' order by one metric is over the runs.

    ``tau_mean`` / ``tau_min``: Kendall's τ-b between every pair of runs (over the systems
    both scored). ``swaps``: for each pair of systems adjacent in the order of their mean over
    runs (higher first), the share of runs that scored both and put the lower one strictly
    above the higher one (None unless two or more runs scored both).
    """

    metric: str
    systems: int
    pairs: int
    tau_mean: float | None
    tau_min: float | None
    swaps: tuple[tuple[str, str, float | None], ...]


def rank_stability(metric: str, scores: Mapping[str, Mapping[str, float | None]]) -> RankStability:
    """``scores``: run -> system -> the metric's value (None: not scored by that run)."""
    systems = sorted({s for per in scores.values() for s in per})
    taus = _pair_taus(scores, systems)
    order = _mean_order(scores, systems)
    swaps = tuple((hi, lo, _swap_share(scores, hi, lo)) for hi, lo in pairwise(order))
    return RankStability(
        metric,
        len(order),
        len(taus),
        math.fsum(taus) / len(taus) if taus else None,
        min(taus) if taus else None,
        swaps,
    )


def _mean_order(scores: Mapping[str, Mapping[str, float | None]], systems: list[str]) -> list[str]:
    """The systems some run scored, by their mean over the runs, highest first."""
    means = {s: band([per.get(s) for per in scores.values()]).mean for s in systems}
    return sorted((s for s in systems if means[s] is not None), key=lambda s: -(means[s] or 0.0))


def _pair_taus(scores: Mapping[str, Mapping[str, float | None]], systems: list[str]) -> list[float]:
    """τ-b between every pair of runs, over the systems both scored (pairs with fewer than two
    such systems, or a constant side, give none)."""
    runs = list(scores)
    taus: list[float] = []
    for i, first in enumerate(runs):
        for second in runs[i + 1 :]:
            both = [
                (a, b)
                for s in systems
                if (a := scores[first].get(s)) is not None
                and (b := scores[second].get(s)) is not None
            ]
            if len(both) < 2:
                continue
            tau = kendall_tau_b([a for a, _ in both], [b for _, b in both])
            if tau is not None:
                taus.append(tau)
    return taus


def _swap_share(scores: Mapping[str, Mapping[str, float | None]], hi: str, lo: str) -> float | None:
    """Share of the runs scoring both systems that put ``lo`` strictly above ``hi``; None
    unless two or more runs scored both (one run cannot swap anything)."""
    both = [
        (a, b)
        for per in scores.values()
        if (a := per.get(hi)) is not None and (b := per.get(lo)) is not None
    ]
    if len(both) < 2:
        return None
    return sum(1 for a, b in both if b > a) / len(both)
