"""`gavel bench`: review plans side by side on a synthetic run with planted judge errors —
how many errors each finds (recall) and how good an estimate it gives (coverage, width) at
the same budget.

The run: subjects of three kinds, a pass/fail verdict each, a suspicion flag on some; the
judge's error rate depends on all three (flags are where errors cluster, "pass" verdicts err
more than "fail"). Each target is a weighted share per system and overall, whose truth is
known. Plans compared at one budget:

* **suspicion** — the top of the suspicion order (flag, then the prior error rate): the most
  errors, no estimate;
* **uniform** — simple random sampling;
* **stratified** — by kind × flag, Neyman-allocated on the prior rates;
* **active** — :mod:`reviewer.estimates.active`: batches drawn in proportion to learnt error
  rates with a floor, Horvitz–Thompson per batch, the variance from the learnt rates
  (:func:`reviewer.estimates.active.smoothed_variance`).

Every estimate goes through the store's estimator (:func:`assemble`, :func:`correct`,
:func:`corrected_intervals`). Printed, not asserted (tests/test_estimates_active.py asserts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.table import Table

from reviewer.estimates.active import (
    PRIOR_FLAG_FACTOR,
    active_estimate,
    draw_active,
    learned_rates,
    smoothed_variance,
)
from reviewer.estimates.correction import Frame, Reviews, assemble, correct
from reviewer.estimates.designs import draw_stratified
from reviewer.estimates.intervals import bounded, corrected_intervals, half_width, pseudo_variance

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

SYSTEMS = 5
KIND_RATE = (0.01, 0.03, 0.06)
"""The judge's base error rate per kind."""
PASS_FACTOR, FAIL_FACTOR = 1.6, 0.4
FLAG_SHARE = 0.08
FLAG_FACTOR = 25.0
"""The plan believes a flag multiplies the error rate by
:data:`reviewer.estimates.active.PRIOR_FLAG_FACTOR` before any decision (the truth here is
FLAG_FACTOR)."""
DESIGNS = ("suspicion", "uniform", "stratified", "active")


@dataclass(frozen=True, slots=True)
class World:
    system: Ints
    kind: Ints
    x: Floats
    y: Floats
    flag: npt.NDArray[np.bool_]
    cell: Ints
    """(kind, value, flag) cell: what the plan can see of a subject."""
    prior: Floats
    """The plan's prior error rate for the subject (from its cell)."""
    d: Floats
    truth: Floats
    judge: Floats
    weight: Floats
    total: Floats
    member: npt.NDArray[np.bool_]


def world(subjects: int = 20_000, seed: int = 7) -> World:
    rng = np.random.default_rng(seed)
    system = rng.integers(0, SYSTEMS, subjects).astype(np.int64)
    kind = rng.integers(0, len(KIND_RATE), subjects).astype(np.int64)
    x = (rng.random(subjects) < 0.75).astype(np.float64)
    flag = rng.random(subjects) < FLAG_SHARE
    value_factor = np.where(x == 1, PASS_FACTOR, FAIL_FACTOR)
    base = np.array(KIND_RATE)[kind] * value_factor
    rate = np.minimum(0.9, base * np.where(flag, FLAG_FACTOR, 1.0))
    wrong = rng.random(subjects) < rate
    y = np.where(wrong, 1.0 - x, x)
    cell = (kind * 2 + x.astype(np.int64)) * 2 + flag.astype(np.int64)
    prior = np.minimum(0.9, np.array(KIND_RATE).mean() * np.where(flag, PRIOR_FLAG_FACTOR, 1.0))
    prior = np.full(subjects, 1.0) * prior
    weight = rng.gamma(2.0, 0.5, subjects)
    member = np.zeros((subjects, SYSTEMS + 1), dtype=bool)
    member[np.arange(subjects), system] = True
    member[:, SYSTEMS] = True
    total = (member * weight[:, None]).sum(axis=0)
    d = member * (weight * (y - x))[:, None] / total
    judge = (member * (weight * x)[:, None]).sum(axis=0) / total
    return World(
        system,
        kind,
        x,
        y,
        flag,
        cell.astype(np.int64),
        prior,
        d,
        judge + d.sum(axis=0),
        judge,
        weight,
        total,
        member,
    )


@dataclass(frozen=True, slots=True)
class PlanFigures:
    """One design over many plans: recall of the planted errors, reviews spent, coverage of
    the targets' intervals and their mean half-width (None for the suspicion order)."""

    design: str
    recall: float
    reviews: float
    coverage: float | None
    half_width: float | None
    bias: float | None
    """Largest |mean error| over the targets, in standard deviations of the estimate."""


def _estimate(
    w: World, index: Ints, stratum: Ints, weight: Floats, fpc: bool
) -> tuple[Floats, Floats, Floats]:
    """The store's estimate from the draws ``index`` (in order)."""
    kinds = len(KIND_RATE)
    group = w.system * kinds + w.kind
    first = np.zeros(len(index), dtype=bool)
    first[np.unique(index, return_index=True)[1]] = True
    frame = Frame(stratum, w.system, group, w.x, np.ones(len(w.x)))
    reviews = Reviews(
        stratum=stratum[index],
        system=w.system[index],
        group=group[index],
        x=w.x[index],
        weight=weight,
        dx=(w.y - w.x)[index],
        d=w.d[index],
        fold=(np.arange(len(index)) % 2).astype(np.int64),
        first=first,
    )
    group_system = np.arange(SYSTEMS * kinds, dtype=np.int64) // kinds
    target_system = np.array([*range(SYSTEMS), -1], dtype=np.int64)
    relevant = np.ones((SYSTEMS * kinds, SYSTEMS + 1), dtype=bool)
    sample, population = assemble(frame, reviews, group_system, target_system, relevant, fpc)
    result = correct(sample, population)
    unique = np.unique(index)
    anchor = w.judge + w.d[unique].sum(axis=0)
    estimate, lower, upper, _, _ = corrected_intervals(
        result, anchor, [(0.0, 1.0)] * (SYSTEMS + 1), ["share"] * (SYSTEMS + 1), fpc
    )
    return estimate, lower, upper


def _draws(w: World, design: str, budget: int, seed: int) -> tuple[Ints, Ints]:
    """(index in review order, stratum of every subject) of a uniform or stratified plan."""
    n = len(w.x)
    if design == "uniform":
        order = np.random.default_rng(seed).permutation(n)[:budget].astype(np.int64)
        return order, np.zeros(n, dtype=np.int64)
    strata = (w.kind * 2 + w.flag).astype(np.int64)
    sizes = np.bincount(strata)
    prior = np.bincount(strata, weights=w.prior) / sizes
    drawn = draw_stratified(strata, budget, seed, "neyman", np.sqrt(prior * (1 - prior)))
    return drawn.index, strata


def _active(w: World, budget: int, seed: int) -> tuple[Ints, Floats, Floats, Floats]:
    """An active plan: (reviewed subjects, estimate, lower, upper)."""
    wrong = w.x != w.y
    plan = draw_active(w.cell, w.prior, budget, np.random.default_rng(seed), wrong)
    total, _ = active_estimate(plan, w.d)
    reviewed = np.flatnonzero(plan.batch >= 0)
    rate = learned_rates(w.cell, w.prior, reviewed, wrong[reviewed])[reviewed]
    variance = smoothed_variance(
        plan.batch[reviewed],
        plan.pi[reviewed],
        w.d[reviewed],
        w.member[reviewed],
        rate,
        plan.shares,
    )
    estimate = w.judge + total
    rows = w.d[reviewed]
    moving = rows != 0
    k = moving.sum(axis=0)
    size = w.member.sum(axis=0)
    lower, upper = np.empty(len(estimate)), np.empty(len(estimate))
    for j in range(len(estimate)):
        m = float(np.abs(rows[:, j][moving[:, j]]).mean()) if k[j] else 0.0
        v = pseudo_variance(float(variance[j]), int(w.member[reviewed, j].sum()), size[j], m, False)
        lower[j], upper[j] = bounded(float(estimate[j]), half_width(v, int(k[j])), (0.0, 1.0))
    return reviewed, estimate, lower, upper


def suspicion_order(w: World) -> Ints:
    """Flags first, then the prior error rate, ties by a fixed shuffle."""
    tie = np.random.default_rng(0).random(len(w.x))
    return np.lexsort((tie, -w.prior, ~w.flag)).astype(np.int64)


def compare(w: World, share: float = 0.10, plans: int = 100) -> list[PlanFigures]:
    """Each design at ``share`` of the frame, over ``plans`` seeds."""
    budget = round(share * len(w.x))
    wrong = w.x != w.y
    top = suspicion_order(w)[:budget]
    out = [
        PlanFigures("suspicion", float(wrong[top].sum() / wrong.sum()), budget, None, None, None)
    ]
    for design in DESIGNS[1:]:
        recall, reviews, inside, halves, errors = [], [], [], [], []
        for seed in range(plans):
            if design == "active":
                unique, estimate, lower, upper = _active(w, budget, seed)
            else:
                index, stratum = _draws(w, design, budget, seed)
                unique = np.unique(index)
                estimate, lower, upper = _estimate(w, index, stratum, np.ones(len(index)), True)
            recall.append(wrong[unique].sum() / wrong.sum())
            reviews.append(len(unique))
            inside.append((lower <= w.truth) & (w.truth <= upper))
            halves.append((upper - lower) / 2)
            errors.append(estimate - w.truth)
        err = np.array(errors)
        bias = np.abs(err.mean(axis=0)) / np.maximum(err.std(axis=0), 1e-12)
        out.append(
            PlanFigures(
                design,
                float(np.mean(recall)),
                float(np.mean(reviews)),
                float(np.mean(inside)),
                float(np.nanmean(halves)),
                float(bias.max()),
            )
        )
    return out


BUDGET_SHARE = 0.10


def plan_figures(quick: bool = False) -> list[PlanFigures]:
    """The designs compared at a 10% budget on the synthetic run (fewer plans with
    ``quick``)."""
    return compare(world(), BUDGET_SHARE, plans=30 if quick else 200)


def print_plans(console: Console, figures: list[PlanFigures]) -> None:
    """The designs side by side, with the issue's targets for the active plan: recall within
    15 points of the suspicion order, coverage ≥ 93%, half-width at most a uniform plan's."""
    table = Table(
        title="review plans at a 10% budget (synthetic run, planted errors by kind, value "
        "and flag): recall of the errors, and the estimate's 95% intervals",
        title_justify="left",
        header_style="bold",
    )
    for name in ("plan", "reviews", "recall", "coverage", "mean ± half-width", "max |bias|"):
        table.add_column(name, justify="left" if name == "plan" else "right")
    for f in figures:
        table.add_row(
            f.design,
            f"{f.reviews:,.0f}",
            f"{f.recall:.1%}",
            "—" if f.coverage is None else f"{f.coverage:.1%}",
            "—" if f.half_width is None else f"{f.half_width:.4f}",
            "—" if f.bias is None else f"{f.bias:.2f} sd",
        )
    console.print(table)
    by = {f.design: f for f in figures}
    active, uniform, suspicion = by["active"], by["uniform"], by["suspicion"]
    if active.half_width and uniform.half_width:
        fewer = 1 - (active.half_width / uniform.half_width) ** 2
        console.print(
            f"[dim]active: recall {suspicion.recall - active.recall:+.1%} behind the "
            f"suspicion order (target ≤ 15 points), coverage {active.coverage:.1%} (target "
            f"≥ 93%), half-width {active.half_width / uniform.half_width:.2f}× uniform's "
            f"(≈ {fewer:.0%} fewer reviews for the same width; target 25%)[/dim]"
        )
