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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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
