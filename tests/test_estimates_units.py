"""The pieces under the estimates: the linearised task bootstrap against the exact one, what
adjacent-rank comparisons say when they cannot say much, reviews-needed forecasts, and the
anytime-valid confidence sequence's time-uniform coverage."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from reviewer.estimates.influence import collapse, jackknife_influence
from reviewer.estimates.ranks import adjacent_pairs, replicates, task_weights
from reviewer.estimates.sizes import cs_half_width, reviews_needed
from reviewer.framework import Aggregate, ReportScores


class RatioFramework:
    """An aggregate like DailyReport's micro Fac (a ratio of pooled parts) and a mean of
    report values."""

    name = "ratio"

    def aggregate(
        self, reports: Sequence[ReportScores], options: Mapping[str, str]
    ) -> dict[str, Aggregate]:
        num = sum(r.get("_num") or 0.0 for r in reports)
        den = sum(r.get("_den") or 0.0 for r in reports)
        values = [v for r in reports if (v := r.get("level")) is not None]
        return {
            "ratio": Aggregate(num / den if den else None, len(reports)),
            "level": Aggregate(sum(values) / len(values) if values else None, len(values)),
        }


def _tasks(rng: np.random.Generator, shift: float, n: int = 60) -> list[list[ReportScores]]:
    out = []
    for _ in range(n):
        den = float(rng.integers(5, 20))
        out.append(
            [
                {
                    "_num": den * min(1.0, max(0.0, rng.beta(6, 3) + shift)),
                    "_den": den,
                    "level": float(rng.integers(1, 5)),
                }
            ]
        )
    return out


def test_the_linear_task_bootstrap_follows_the_exact_one() -> None:
    rng = np.random.default_rng(3)
    fw = RatioFramework()
    systems = [_tasks(rng, 0.0), _tasks(rng, 0.03)]
    metrics = ["ratio", "level"]
    models = [collapse(fw, {}, tasks, metrics) for tasks in systems]  # type: ignore[arg-type]
    assert all(m.ok for m in models)
    for model, tasks in zip(models, systems, strict=True):
        jack = jackknife_influence(fw, {}, tasks, metrics)  # type: ignore[arg-type]
        assert np.allclose(model.task_influence(), jack, atol=2e-3, rtol=0.05)
    weights = task_weights(60, 1000, seed=1)
    values = np.array([m.values["ratio"] for m in models], dtype=float)
    influence = np.stack([m.task_influence()[:, 0] for m in models], axis=1)
    linear = replicates(values, influence, weights)
    exact = np.empty_like(linear)
    for b, row in enumerate(weights):
        for s, tasks in enumerate(systems):
            resampled = [r for t, k in enumerate(row) for _ in range(int(k)) for r in tasks[t]]
            exact[b, s] = fw.aggregate(resampled, {})["ratio"].value or 0.0
    lin_diff, exact_diff = linear[:, 1] - linear[:, 0], exact[:, 1] - exact[:, 0]
    assert np.quantile(lin_diff, [0.025, 0.975]) == pytest.approx(
        np.quantile(exact_diff, [0.025, 0.975]), abs=0.004
    )
    assert np.corrcoef(lin_diff, exact_diff)[0, 1] > 0.99


def test_adjacent_ranks_say_when_they_cannot_say_much() -> None:
    weights = task_weights(8, 500, seed=0)
    influence = np.random.default_rng(1).normal(0, 0.01, size=(8, 3))
    values = np.array([0.80, 0.79, 0.60])
    pairs = adjacent_pairs(list(values), replicates(values, influence, weights), tasks=8)
    assert [(p.upper, p.lower) for p in pairs] == [(0, 1), (1, 2)]
    assert all(p.status == "weak" and "8 tasks" in p.note for p in pairs)
    assert pairs[0].could_swap and not pairs[1].could_swap
    assert pairs[0].reversed_share is not None and 0.05 < pairs[0].reversed_share < 0.95
    flat = replicates(values, np.zeros((8, 3)), weights)
    degenerate = adjacent_pairs(list(values), flat, tasks=8)
    assert all(p.status == "undefined" and p.lower_bound is None for p in degenerate)
    assert adjacent_pairs([0.5, None, 0.4], flat, tasks=8)[0].lower == 2


def test_reviews_needed_follow_the_variance() -> None:
    assert reviews_needed(0.0, 100, 10_000, 0.02) is None  # nothing seen yet
    assert reviews_needed(1e-6, 100, 10_000, 0.02) == 0
    more = reviews_needed(4e-4, 100, 100_000, 0.02)  # se 0.02 → ±0.0392
    assert more is not None and 270 <= more <= 290  # ≈ 100·(0.0392/0.02)² − 100
    capped = reviews_needed(4e-4, 100, 400, 0.02, without_replacement=True)
    assert capped is not None and capped < more  # the frame is finite


def test_the_confidence_sequence_covers_at_every_look() -> None:
    """Bernoulli(0.3) reviews one at a time, the estimate checked after each from 20 to 400:
    the fixed-n interval misses at some look far more often than 5%; the sequence does not."""
    rng = np.random.default_rng(11)
    paths, horizon, p = 400, 400, 0.3
    draws = rng.random((paths, horizon)) < p
    n = np.arange(1, horizon + 1)
    means = np.cumsum(draws, axis=1) / n
    variance = np.maximum(means * (1 - means), 1e-12) / n
    looks = slice(19, horizon)
    fixed = 1.959964 * np.sqrt(variance)
    sequence = np.array(
        [
            [
                cs_half_width(float(v), int(k), horizon) or np.inf
                for v, k in zip(row, n, strict=True)
            ]
            for row in variance
        ]
    )
    missed_fixed = np.any(np.abs(means - p)[:, looks] > fixed[:, looks], axis=1).mean()
    missed_sequence = np.any(np.abs(means - p)[:, looks] > sequence[:, looks], axis=1).mean()
    assert missed_fixed > 0.15
    assert missed_sequence <= 0.07
    assert 1.3 < sequence[0, -1] / fixed[0, -1] < 2.5


def test_rank_intervals_use_t_on_tasks_minus_one_and_could_swap_is_holm_corrected() -> None:
    from dataclasses import replace

    from reviewer.estimates.ranks import RankPair, holm
    from tests.oracles import stats

    tasks = 20
    weights = task_weights(tasks, 2000, seed=3)
    influence = np.random.default_rng(4).normal(0, 0.01, size=(tasks, 2))
    values = np.array([0.7, 0.66])
    reps = replicates(values, influence, weights)
    (pair,) = adjacent_pairs(list(values), reps, tasks=tasks)
    boot = reps[:, 0] - reps[:, 1]
    se = np.std(boot) * np.sqrt(tasks / (tasks - 1))
    half = stats.t.ppf(0.975, tasks - 1) * se
    assert pair.lower_bound == pytest.approx(0.04 - half, abs=1e-3)
    assert pair.upper_bound == pytest.approx(0.04 + half, abs=1e-3)
    # wider than the percentile interval the landed code used (by ~t/z and √(T/(T−1)))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    assert (pair.upper_bound - pair.lower_bound) > 1.05 * (hi - lo)
    # Holm over three pairs: t = 3.0 clears α/3 on 19 df (2.63), 2.3 clears α/2 (2.43)? no —
    # so it and every later pair could swap, though 2.3 alone would clear α (2.09).
    base = RankPair(0, 1, 0.1, 0.0, 0.2, 0.1, None, "ok", "", None)
    pairs = [replace(base, t=t) for t in (2.3, 3.0, 2.2)]
    decided = holm(pairs, tasks)
    assert [p.could_swap for p in decided] == [True, False, True]
    assert stats.t.ppf(1 - 0.05 / 6, 19) < 3.0 and stats.t.ppf(1 - 0.05 / 4, 19) > 2.3
    assert stats.t.ppf(0.975, 19) < 2.2  # each alone would not swap: the correction matters


def test_intervals_stay_in_range_without_clipping_the_estimate() -> None:
    from reviewer.estimates.intervals import bounded

    assert bounded(0.99, 0.03, (0.0, 1.0)) == (pytest.approx(0.96), 1.0)
    assert bounded(1.004, 0.002, (0.0, 1.0)) == (1.0, 1.0)  # all beyond: the nearest edge
    assert bounded(0.5, 0.1, None, -0.05, 0.02) == (pytest.approx(0.35), pytest.approx(0.62))
    # skips widen, never narrow
    assert bounded(0.5, 0.1, None, 0.05, -0.02) == (pytest.approx(0.4), pytest.approx(0.6))


def test_pseudo_observations_put_a_floor_under_the_variance() -> None:
    from reviewer.estimates.intervals import PSEUDO_WEIGHT, borrowed_magnitudes, pseudo_variance

    # no disagreement seen: the variance is the pseudo-observations' alone
    n, big_n, m = 100, 1000, 0.01
    floor = (
        big_n**2 * (1 - n / big_n) * (2 * PSEUDO_WEIGHT * m * m / (n + 2 * PSEUDO_WEIGHT - 1)) / n
    )
    assert pseudo_variance(0.0, n, big_n, m, True) == pytest.approx(floor)
    assert pseudo_variance(1.0, 1000, 1000, m, True) == 0.0  # everything reviewed: exact
    # many disagreements: next to no change
    assert pseudo_variance(1.0, 5000, 10**6, 1e-6, True) == pytest.approx(1.0, rel=1e-3)
    # a target without disagreement borrows m·N from its metric's other targets
    mag = borrowed_magnitudes(
        np.array([0.02, 0.0, 0.005]), np.array([4, 0, 8]), np.array([100.0, 50.0, 400.0]), ["a"] * 3
    )
    assert mag[1] == pytest.approx((4 * 0.02 * 100 + 8 * 0.005 * 400) / 12 / 50)
    assert mag[0] == 0.02 and mag[2] == 0.005


def test_ratios_and_levels_are_declared_non_additive_and_shares_bounded() -> None:
    from reviewer.registry import get_framework

    metrics = {m.name: m for m in get_framework("race").metrics}
    assert not metrics["overall"].additive and metrics["overall"].bounds == (0.0, 1.0)
    cascade = {m.name: m for m in get_framework("cascade").metrics}
    for name in ("Refer_Claim_Consistency", "Reference_Support", "Reference_Ratio"):
        assert cascade[name].bounds == (0.0, 1.0)
