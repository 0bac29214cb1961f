"""Active plans (issue 31, item 1): drawn where the judge errs, and still an unbiased
estimate with honest intervals; compared with the suspicion order, uniform and stratified
plans at a 10% budget on the bench's synthetic run."""

from __future__ import annotations

import numpy as np
import pytest

from reviewer.estimates.active import active_estimate, draw_active, inclusion, learned_rates


def test_inclusion_probabilities_sum_to_the_budget_keep_a_floor_and_cap_at_one() -> None:
    rate = np.array([0.9, 0.9, 0.01, 0.01, 0.0, 0.02] * 50)
    pi = inclusion(rate, 120, floor=0.1)
    assert pi.sum() == pytest.approx(120)
    assert pi.max() <= 1.0 and (pi == 1.0).sum() == 100  # the suspicious ones, for certain
    assert pi.min() > 0  # every subject drawable, even a predicted rate of 0


def test_rates_are_learnt_from_decisions_only() -> None:
    cell = np.array([0, 0, 0, 1, 1, 1])
    prior = np.full(6, 0.1)
    assert np.allclose(
        learned_rates(cell, prior, np.zeros(0, dtype=np.int64), np.zeros(0, bool)), 0.1
    )
    rates = learned_rates(cell, prior, np.array([0, 1]), np.array([True, True]))
    assert rates[0] == pytest.approx((2 + 0.4) / 6) and rates[3] == pytest.approx(0.1)


def test_the_active_estimate_is_unbiased_however_the_rates_are_learnt() -> None:
    """Whatever the batches learnt, each batch's probabilities were fixed before it was
    drawn: the mean of the estimates is the true total (within Monte Carlo error) and the
    variance estimate matches the spread."""
    rng = np.random.default_rng(2)
    n = 4000
    cell = rng.integers(0, 8, n).astype(np.int64)
    wrong = rng.random(n) < np.array([0.01, 0.02, 0.05, 0.3, 0.01, 0.02, 0.1, 0.6])[cell]
    d = (wrong * rng.choice([-1.0, 1.0], n) * rng.gamma(2, 0.5, n))[:, None]
    estimates, variances = [], []
    for seed in range(400):
        plan = draw_active(cell, np.full(n, 0.05), 400, np.random.default_rng(seed), wrong)
        total, variance = active_estimate(plan, d)
        estimates.append(total[0])
        variances.append(variance[0])
    errors = np.array(estimates) - d.sum()
    assert abs(errors.mean()) <= 3 * errors.std() / np.sqrt(len(errors))
    assert np.sqrt(np.mean(variances)) == pytest.approx(errors.std(), rel=0.15)


def test_active_plans_find_errors_like_the_suspicion_order_and_estimate_like_uniform() -> None:
    from tui.bench.estimates import compare, world

    figures = {f.design: f for f in compare(world(), 0.10, plans=40)}
    suspicion, uniform, active = figures["suspicion"], figures["uniform"], figures["active"]
    print(
        "\n"
        + "\n".join(
            f"{f.design}: recall {f.recall:.3f} reviews {f.reviews:.0f} coverage "
            f"{f.coverage} half-width {f.half_width}"
            for f in figures.values()
        )
    )
    assert active.recall >= suspicion.recall - 0.15
    assert active.recall >= 3 * uniform.recall
    assert active.half_width is not None and uniform.half_width is not None
    assert active.half_width <= uniform.half_width
    assert active.coverage is not None and active.coverage >= 0.9
    assert active.reviews <= 1.02 * uniform.reviews  # the same budget


def test_the_bench_prints_the_plans_side_by_side() -> None:
    from rich.console import Console

    from tui.bench.estimates import PlanFigures, print_plans

    console = Console(record=True, width=160)
    print_plans(
        console,
        [
            PlanFigures("suspicion", 0.56, 2000, None, None, None),
            PlanFigures("uniform", 0.10, 2000, 0.947, 0.0311, 0.2),
            PlanFigures("stratified", 0.17, 2000, 0.945, 0.0252, 0.1),
            PlanFigures("active", 0.43, 2004, 0.927, 0.0275, 0.1),
        ],
    )
    text = console.export_text()
    for design in ("suspicion", "uniform", "stratified", "active"):
        assert design in text
    assert "recall" in text and "coverage" in text and "half-width" in text
    assert "+13.0% behind the suspicion order" in text
    assert "0.88× uniform's" in text
