"""Agreement between reviewers on the overlap: the subjects handed to two or more of them to
decide independently (:mod:`reviewer.assignment`), with bootstrap intervals over subjects.

Per verdict kind: Krippendorff's alpha at the scale's level (missing decisions allowed) and
Gwet's multi-rater AC1 (categorical scales), each with a percentile interval; per pair of
reviewers, Cohen's kappa with its interval. Per reviewer: how often their decision matched
their co-reviewers', and on the subjects an adjudicator settled, how often it matched the
adjudicated value. A subject the reviewers decided differently that nobody adjudicated yet is
*open*: the estimates keep its judge value (it is not a human label) until someone does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from reviewer.agreement import (
    BootstrapCI,
    bootstrap_ci,
    cohen_kappa,
    gwet_ac1_multi,
    krippendorff_alpha,
)
from reviewer.comparison import Level, scale_labels, scale_level
from reviewer.scales import Scale


@dataclass(frozen=True, slots=True)
class PairOnOverlap:
    a: str
    b: str
    n: int
    agreement: float | None
    kappa: BootstrapCI | None
    """Cohen's kappa with its interval (None on an interval scale)."""


@dataclass(frozen=True, slots=True)
class KindOnOverlap:
    kind: str
    level: Level
    reviewers: tuple[str, ...]
    n_items: int
    """Subjects at least two of their reviewers decided."""
    alpha: BootstrapCI
    ac1: BootstrapCI | None
    pairs: tuple[PairOnOverlap, ...]


@dataclass(frozen=True, slots=True)
class ReviewerOnOverlap:
    reviewer: str
    decided: int
    """Overlap subjects this reviewer decided that a co-reviewer decided too."""
    agreed: int
    """Of those, how many match every co-reviewer's decision."""
    adjudicated: int
    """Overlap subjects an adjudicator settled that this reviewer decided."""
    matched_adjudication: int


def kind_on_overlap(
    kind: str,
    units: Sequence[Mapping[str, str]],
    scale: Scale,
    n_resamples: int = 1000,
    seed: int = 0,
) -> KindOnOverlap:
    """``units``: per overlap subject, reviewer -> value code (their standing decision)."""
    shared = [dict(u) for u in units if len(u) >= 2]
    level = scale_level(scale)
    interval = level == "interval"
    labels = () if interval else tuple(scale_labels(scale))
    reviewers = tuple(sorted({r for u in shared for r in u}))

    alpha, ac1 = _coefficients(shared, reviewers, level, labels, n_resamples, seed)
    pairs = tuple(
        _pair(a, b, shared, labels, interval, n_resamples, seed)
        for a, b in combinations(reviewers, 2)
        if any(a in u and b in u for u in shared)
    )
    return KindOnOverlap(kind, level, reviewers, len(shared), alpha, ac1, pairs)


def _coefficients(
    shared: list[dict[str, str]],
    reviewers: tuple[str, ...],
    level: Level,
    labels: Sequence[str],
    n_resamples: int,
    seed: int,
) -> tuple[BootstrapCI, BootstrapCI | None]:
    """Alpha at the scale's level, and AC1 where the scale is categorical."""
    interval = level == "interval"

    def rows(sample: list[dict[str, str]]) -> list[list[object]]:
        return [[_cell(u.get(r), interval) for r in reviewers] for u in sample]

    alpha = bootstrap_ci(
        lambda sample: krippendorff_alpha(rows(sample), level, None if interval else labels),
        shared,
        n_resamples=n_resamples,
        seed=seed,
    )
    if interval:
        return alpha, None
    ac1 = bootstrap_ci(
        lambda sample: gwet_ac1_multi(rows(sample), labels),
        shared,
        n_resamples=n_resamples,
        seed=seed,
    )
    return alpha, ac1


def _cell(value: str | None, interval: bool) -> object:
    if value is None:
        return None
    return float(value) if interval else value


def _pair(
    a: str,
    b: str,
    shared: list[dict[str, str]],
    labels: Sequence[str],
    interval: bool,
    n_resamples: int,
    seed: int,
) -> PairOnOverlap:
    both = [(u[a], u[b]) for u in shared if a in u and b in u]
    same = sum(_same(x, y, interval) for x, y in both)
    kappa = (
        None
        if interval
        else bootstrap_ci(
            lambda sample: cohen_kappa([x for x, _ in sample], [y for _, y in sample], labels),
            both,
            n_resamples=n_resamples,
            seed=seed,
        )
    )
    return PairOnOverlap(a, b, len(both), same / len(both) if both else None, kappa)


def _same(x: str, y: str, interval: bool) -> bool:
    return float(x) == float(y) if interval else x == y


def reviewers_on_overlap(
    units: Sequence[Mapping[str, str]], adjudicated: Sequence[str | None]
) -> tuple[ReviewerOnOverlap, ...]:
    """Per reviewer, agreement with co-reviewers and with adjudications; ``adjudicated[i]``
    is the adjudicated value of ``units[i]`` (None where no adjudicator settled it)."""
    counts: dict[str, list[int]] = {}
    for unit, settled in zip(units, adjudicated, strict=True):
        for reviewer, value in unit.items():
            row = counts.setdefault(reviewer, [0, 0, 0, 0])
            others = [v for r, v in unit.items() if r != reviewer]
            if others:
                row[0] += 1
                row[1] += all(v == value for v in others)
            if settled is not None:
                row[2] += 1
                row[3] += value == settled
    return tuple(ReviewerOnOverlap(name, *row) for name, row in sorted(counts.items()))
