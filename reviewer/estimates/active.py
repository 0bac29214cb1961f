"""Active plans: review where the judge errs, and still estimate without bias (Zrnic &
Candès 2024, *Active statistical inference*).

The suspicion order finds judge errors many times faster than random review, but what it
finds is no sample. An active plan draws its subjects at random with probabilities that
follow the same signals — the suspicion flags and the judge-error rates learnt from the
decisions made so far — so every decision both corrects its subject and counts for the
estimate:

* The plan is drawn in **batches**. Before each, every subject of the frame gets a predicted
  error rate: the Laplace-smoothed share of decided subjects of its (kind, value, flag) cell
  that humans overruled, starting from a prior that trusts the flags. The draw probabilities
  are ``(1 − floor)·r_i/Σr + floor/N`` (:func:`reviewer.estimates.designs.weighted_probabilities`):
  the floor keeps every subject drawable, so the estimate stays unbiased however wrong the
  predictions are.
* Each batch is **Poisson sampling** of the subjects not reviewed yet, with inclusion
  probabilities fixed before it is drawn (*predictable*); a subject whose probability would
  exceed 1 is taken for certain — the most suspicious ones are simply reviewed, and being
  known exactly they add no variance.
* Batch b estimates the frame's total as what earlier batches decided plus the
  Horvitz–Thompson estimate of the rest: unbiased given the past. The plan averages the
  batches with fixed weights (:func:`active_estimate`) — the martingale construction of
  active inference, which keeps the estimate valid however the probabilities were learnt.

Drawing in proportion to the error rate (rather than its square root, which minimises the
variance) is the trade: recall close to the suspicion order's, at a width no worse than a
uniform plan's of the same size — ``gavel bench`` measures both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from reviewer.estimates.correction import Correction
from reviewer.estimates.designs import weighted_probabilities

Ints: TypeAlias = npt.NDArray[np.int64]
Floats: TypeAlias = npt.NDArray[np.float64]
Bools: TypeAlias = npt.NDArray[np.bool_]

DEFAULT_SHARES = (0.2, 0.8)
"""A first batch on the prior, the rest once its decisions have taught the error rates."""
ACTIVE_FLOOR = 0.1
PRIOR_FLAG_FACTOR = 10.0
"""How much likelier the plan's prior makes an error on a subject carrying a suspicion flag
(the decisions then teach the real factor)."""
PRIOR_WEIGHT = 4.0
"""Pseudo-decisions behind each cell's prior rate: how many decisions it takes to move it."""


def learned_rates(cell: Ints, prior: Floats, decided: Ints, wrong: Bools) -> Floats:
    """Each subject's predicted error rate: its cell's overruled share among the ``decided``
    subjects (``wrong[k]``: the k-th was overruled), shrunk towards the cell's ``prior`` with
    :data:`PRIOR_WEIGHT` pseudo-decisions."""
    cells = int(cell.max(initial=-1)) + 1
    seen = np.bincount(cell[decided], minlength=cells).astype(np.float64)
    overruled = np.bincount(cell[decided], weights=wrong.astype(np.float64), minlength=cells)
    prior_rate = np.bincount(cell, weights=prior, minlength=cells) / np.maximum(
        np.bincount(cell, minlength=cells), 1
    )
    rate = (overruled + PRIOR_WEIGHT * prior_rate) / (seen + PRIOR_WEIGHT)
    return np.asarray(rate[cell], dtype=np.float64)


def inclusion(rate: Floats, size: int, floor: float = ACTIVE_FLOOR) -> Floats:
    """Poisson inclusion probabilities summing to ``size``: proportional to
    ``(1 − floor)·r_i/Σr + floor/N``, those that would exceed 1 set to 1 (taken for certain:
    known exactly, no variance) and the rest rescaled."""
    score = weighted_probabilities(np.maximum(rate, 0.0), floor)
    size = min(size, len(rate))
    certain = np.zeros(len(rate), dtype=bool)
    pi = np.zeros(len(rate))
    for _ in range(len(rate) + 1):
        free = ~certain
        scale = (size - certain.sum()) / max(float(score[free].sum()), 1e-300)
        pi = np.where(certain, 1.0, scale * score)
        over = free & (pi > 1.0)
        if not over.any():
            break
        certain |= over
    return np.asarray(np.minimum(pi, 1.0), dtype=np.float64)


@dataclass(frozen=True, slots=True)
class ActivePlan:
    """An active plan as reviewed: which batch drew each subject (−1: never drawn) and its
    inclusion probability in that batch."""

    batch: Ints
    pi: Floats
    shares: tuple[float, ...]


def draw_active(
    cell: Ints,
    prior: Floats,
    budget: int,
    rng: np.random.Generator,
    overruled: Bools,
    shares: tuple[float, ...] = DEFAULT_SHARES,
    floor: float = ACTIVE_FLOOR,
) -> ActivePlan:
    """Draw about ``budget`` subjects in batches of ``shares`` of it, each batch Poisson
    sampling among the subjects not yet reviewed, with probabilities learnt from the
    decisions of the earlier batches (``overruled[i]``: the human overrules the judge on
    subject i — read only for subjects already drawn, as a reviewer reveals it)."""
    n = len(cell)
    batch = np.full(n, -1, dtype=np.int64)
    pi = np.zeros(n)
    for b, share in enumerate(shares):
        decided = np.flatnonzero(batch >= 0)
        rate = learned_rates(cell, prior, decided, overruled[decided])
        remaining = np.flatnonzero(batch < 0)
        p = inclusion(rate[remaining], round(share * budget))
        take = rng.random(len(remaining)) < p
        batch[remaining[take]] = b
        pi[remaining[take]] = p[take]
    return ActivePlan(batch, pi, shares)


def active_estimate(plan: ActivePlan, d: Floats) -> tuple[Floats, Floats]:
    """(targets,) the estimated total of ``d`` over the frame and its variance, from the
    reviewed subjects' ``d`` (rows of unreviewed subjects are never read)."""
    reviewed = plan.batch >= 0
    return active_totals(plan.batch[reviewed], plan.pi[reviewed], d[reviewed], plan.shares)


def active_totals(
    batch: Ints, pi: Floats, d: Floats, shares: tuple[float, ...]
) -> tuple[Floats, Floats]:
    """(targets,) the estimated frame total of ``d`` and its variance from the reviewed rows
    (their batch, inclusion probability and influences).

    Batch b's estimate is what the earlier batches decided (known exactly) plus the
    Horvitz–Thompson estimate of the rest from batch b: unbiased given the past, since its
    probabilities were fixed before it was drawn. The plan's estimate averages the batches
    with their planned shares as weights (fixed in advance, so the average is unbiased too;
    batches not drawn yet are left out and the others' shares rescaled), and its variance adds
    the batches' Horvitz–Thompson variances ``Σ (1 − π)/π² d²`` with the squared weights
    (martingale differences are uncorrelated)."""
    targets = d.shape[1]
    estimate = np.zeros(targets)
    variance = np.zeros(targets)
    present = [b for b in range(len(shares)) if np.any(batch == b)]
    scale = sum(shares[b] for b in present)
    for b in present:
        weight = shares[b] / scale
        mine = batch == b
        p = pi[mine][:, None]
        rows = d[mine]
        estimate += weight * (d[batch < b].sum(axis=0) + (rows / p).sum(axis=0))
        variance += weight * weight * ((1.0 - p) / (p * p) * rows * rows).sum(axis=0)
    return estimate, variance


def smoothed_variance(
    batch: Ints, pi: Floats, d: Floats, relevant: Bools, rate: Floats, shares: tuple[float, ...]
) -> Floats:
    """(targets,) the variance of :func:`active_totals`' estimate with each drawn row's
    squared influence replaced by what it is expected to be: its cell's learnt error rate
    ``rate`` (shrunk towards the prior, :func:`learned_rates`) times the mean squared
    influence of an error on the target (over the errors caught)::

        Σ_b w_b² Σ_{S_b} (1 − π)/π² · r_i · m̄²

    The Horvitz–Thompson variance ``Σ (1 − π)/π² · d²`` rests on the errors the plan
    happened to catch: one drawn at a small probability adds ``d²/π²``, so a plan that
    catches none of a cell's rare errors is both too high (it misses their correction) and
    too narrow (it misses their variance), and the interval misses on that side. The rates
    pool every decision of a cell with the prior's pseudo-decisions, so a cell's share of
    the variance does not fall to zero with no error caught there. (Estimate and variance
    stay correlated through the cells whose errors are caught: this lifts the coverage a
    little, it does not remove the correlation; docs/estimates.md §7.)"""
    targets = d.shape[1]
    moving = relevant & (d != 0)
    count = moving.sum(axis=0)
    m2 = np.where(count > 0, (d * d * moving).sum(axis=0) / np.maximum(count, 1), 0.0)
    variance = np.zeros(targets)
    present = [b for b in range(len(shares)) if np.any(batch == b)]
    scale = sum(shares[b] for b in present)
    for b in present:
        weight = shares[b] / scale
        mine = batch == b
        p = pi[mine][:, None]
        expected = rate[mine][:, None] * m2[None, :] * relevant[mine]
        variance += weight * weight * ((1.0 - p) / (p * p) * expected).sum(axis=0)
    return variance


@dataclass(frozen=True, slots=True)
class ActiveSkips:
    """An active plan's skipped draws (drawn, passed over, undecided): their batch, their
    inclusion probability as drawn, and the least and most each could move each target
    (skips × targets, 0 included: the judge being right)."""

    batch: Ints
    pi: Floats
    low: Floats
    high: Floats


def decided_share(batch: Ints, drawn: Ints) -> Floats:
    """Each row's batch's share decided (``drawn``: the draws of each batch): a batch decided
    in part is a random part of it, its probabilities scaled by that share."""
    decided = np.bincount(batch, minlength=len(drawn))
    return np.asarray(decided[batch] / drawn[batch], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class SkipBounds:
    """How far an active plan's skipped draws could move the estimated total down and up,
    and the largest variance the estimate could have had with them decided."""

    down: Floats
    up: Floats
    variance: Floats


def skip_bounds(
    batch: Ints, pi: Floats, d: Floats, drawn: Ints, skips: ActiveSkips, shares: tuple[float, ...]
) -> SkipBounds:
    """Whatever the skipped draws' human verdicts (worst case, Manski bounds: no model of why
    they were skipped), how far they could move the estimated total, and its variance.

    ``pi`` are the reviewed rows' probabilities as drawn. The point estimate takes each batch's
    decided draws as a random part of it; the bounds count the skipped draws as drawn and
    decided at their extremes, every batch's probabilities scaled by the share decided *or
    skipped*. The estimate rises with every skipped value (each enters with a positive
    weight, ``1/π`` in its batch, 1 in later ones), so all at their least give the lower
    bound and all at their most the upper. The variance grows with each value's square, so
    the skips at the extreme farther from 0 give the largest it could be: skipped errors
    would have carried the spread the decided draws lack, and an interval of the decided
    draws' own spread around the bounds is too narrow."""
    targets = d.shape[1]
    base, variance = active_totals(batch, pi * decided_share(batch, drawn), d, shares)
    if not len(skips.batch):
        return SkipBounds(np.zeros(targets), np.zeros(targets), variance)
    both = np.concatenate([batch, skips.batch])
    scaled = np.concatenate([pi, skips.pi]) * decided_share(both, drawn)
    low, _ = active_totals(both, scaled, np.vstack([d, skips.low]), shares)
    high, _ = active_totals(both, scaled, np.vstack([d, skips.high]), shares)
    far = np.where(np.abs(skips.low) > np.abs(skips.high), skips.low, skips.high)
    _, widest = active_totals(both, scaled, np.vstack([d, far]), shares)
    return SkipBounds(
        np.minimum(low - base, 0.0), np.maximum(high - base, 0.0), np.maximum(variance, widest)
    )


def active_correction(
    batch: Ints,
    pi: Floats,
    d: Floats,
    relevant: Bools,
    population: Floats,
    outside: Floats,
    shares: tuple[float, ...],
    skipped: SkipBounds | None = None,
    rate: Floats | None = None,
) -> Correction:
    """The correction of every target by an active plan's reviewed rows (``relevant``: rows ×
    targets, the row's verdict can move the target; ``population``: the subjects that can
    move each target; ``outside``: what decisions outside the plan settled; ``skipped``: how
    far the skipped draws could move it, :func:`skip_bounds`; ``rate``: each row's learnt
    error rate, for :func:`smoothed_variance`), in the form the
    store's other designs give it: the estimated total of the unreviewed subjects' influences
    is the frame's estimated total less everything decided."""
    total, variance = active_totals(batch, pi, d, shares)
    if rate is not None:
        smoothed = smoothed_variance(batch, pi, d, relevant, rate, shares)
        variance = smoothed if skipped is None else np.maximum(smoothed, skipped.variance)
    elif skipped is not None:
        variance = skipped.variance
    correction = total - d.sum(axis=0) - outside
    moving = relevant & (d != 0)
    count = moving.sum(axis=0)
    magnitude = np.where(count > 0, (np.abs(d) * moving).sum(axis=0) / np.maximum(count, 1), 0.0)
    targets = d.shape[1]
    zeros = np.zeros(targets)
    reviews = relevant.sum(axis=0).astype(np.int64)
    return Correction(
        tuned=correction,
        ppi=correction,
        human=correction,
        var_tuned=variance,
        var_ppi=variance,
        var_human=variance,
        lam=np.ones(targets),
        reviews=reviews,
        disagreements=count.astype(np.int64),
        single_cells=np.zeros(targets, dtype=np.int64),
        empty_population=zeros,
        unreviewed=np.maximum(population - reviews, 0.0),
        row_share=(1.0 / pi - 1.0)[:, None] * d,
        population=np.asarray(population, dtype=np.float64),
        magnitude=magnitude,
        skip_low=zeros.copy() if skipped is None else skipped.down,
        skip_high=zeros.copy() if skipped is None else skipped.up,
    )
