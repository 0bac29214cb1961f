"""Trust or escalate measured: the exact binomial bound against scipy, fixed-sequence
testing's rules, and the guarantee's coverage over many calibration draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reviewer.trust.bounds import betainc, binomial_cdf, upper_bound
from reviewer.trust.rule import accepted, calibrate, needed_labels


@pytest.mark.parametrize(
    ("errors", "n", "delta"),
    [(0, 22, 0.1), (3, 100, 0.1), (50, 1000, 0.05), (0, 1, 0.1), (9, 10, 0.1), (120, 20000, 0.1)],
)
def test_the_upper_bound_is_clopper_pearson(errors: int, n: int, delta: float) -> None:
    exact = stats.beta.ppf(1 - delta, errors + 1, n - errors)
    bound = upper_bound(errors, n, delta)
    assert bound == pytest.approx(exact, abs=1e-9)
    assert bound >= exact - 1e-12  # never below the exact bound: conservative
    # The bound is where the binomial test at that rate just rejects.
    assert stats.binomtest(errors, n, bound, alternative="less").pvalue == pytest.approx(
        delta, rel=1e-6
    )


def test_the_binomial_tail_and_incomplete_beta_match_scipy() -> None:
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 3000))
        k = int(rng.integers(0, n))
        p = float(rng.random())
        assert binomial_cdf(k, n, p) == pytest.approx(stats.binom.cdf(k, n, p), abs=1e-10)
        a, b, x = (float(v) for v in rng.random(3) * [50, 50, 1] + [0.1, 0.1, 0])
        assert betainc(a, b, x) == pytest.approx(float(stats.beta.cdf(x, a, b)), abs=1e-10)


def test_no_labels_or_all_wrong_bound_nothing() -> None:
    assert upper_bound(0, 0, 0.1) == 1.0
    assert upper_bound(5, 5, 0.1) == 1.0


def test_needed_labels_is_the_first_n_whose_clean_bound_reaches_alpha() -> None:
    n = needed_labels(0.1, 0.1)
    assert upper_bound(0, n, 0.1) <= 0.1 < upper_bound(0, n - 1, 0.1)


def test_the_sequence_stops_at_the_first_failure() -> None:
    # Clean high scores, then a block of errors, then clean low scores again: the low
    # threshold would pass on its own, but fixed-sequence testing stops at the failure.
    scores = np.r_[np.full(100, 0.9), np.full(30, 0.5), np.full(1000, 0.1)]
    wrong = np.r_[np.zeros(100, bool), np.ones(30, bool), np.zeros(1000, bool)]
    rule = calibrate(scores, wrong, 0.1, 0.1)
    assert rule.threshold == 0.9
    assert [s.passed for s in rule.steps] == [True, False]
    assert accepted(np.array([0.95, 0.9, 0.5, 0.1]), rule).tolist() == [True, True, False, False]


def test_thresholds_with_too_few_labels_are_skipped_not_failed() -> None:
    # The first 5 labels alone could never pass; the sequence starts where it can.
    scores = np.r_[np.full(5, 0.99), np.linspace(0.9, 0.5, 200)]
    wrong = np.zeros(205, bool)
    rule = calibrate(scores, wrong, 0.1, 0.1)
    assert rule.steps[0].labels >= needed_labels(0.1, 0.1)
    assert rule.threshold == pytest.approx(0.5)


def test_too_few_labels_are_weak() -> None:
    rule = calibrate(np.ones(10), np.zeros(10, bool), 0.1, 0.1)
    assert rule.weak and rule.threshold is None and not rule.steps
    assert "at least 22" in rule.notes[0]


def test_unequal_weights_use_the_effective_size_and_say_so() -> None:
    scores = np.linspace(1, 0, 400)
    wrong = np.zeros(400, bool)
    weights = np.r_[np.full(200, 1.0), np.full(200, 9.0)]
    rule = calibrate(scores, wrong, 0.1, 0.1, weights)
    assert rule.weighted and any("effective" in n for n in rule.notes)
    last = rule.steps[-1]
    assert last.effective < last.labels
    plain = calibrate(scores, wrong, 0.1, 0.1)
    assert not plain.weighted and plain.steps[-1].effective == plain.steps[-1].labels


def test_the_pass_rule_is_the_bound_at_or_below_alpha() -> None:
    rng = np.random.default_rng(4)
    scores = rng.random(3000)
    wrong = rng.random(3000) < 0.2 * (1 - scores)
    rule = calibrate(scores, wrong, 0.08, 0.1)
    for step in rule.steps:
        assert step.passed == (step.upper <= 0.08)
    assert all(math.isnan(s.upper) for s in calibrate(scores, wrong, 0.08, 0.1, bounds=False).steps)


def test_bad_levels_are_refused() -> None:
    with pytest.raises(ValueError):
        calibrate(np.ones(3), np.zeros(3, bool), 0.0, 0.1)


def test_the_guarantee_holds_in_ninety_percent_of_draws_at_sixty_percent_accepted() -> None:
    from tui.bench.trust import simulate, trust_world

    world = trust_world()
    assert world.wrong.mean() > 0.1  # accepting everything would break the guarantee
    figures = simulate(world, draws=300)
    assert figures.held >= 0.9
    assert figures.accepted >= 0.6
    assert figures.realised >= 0.9


def test_a_harder_alpha_holds_too_and_accepts_less() -> None:
    from tui.bench.trust import simulate, trust_world

    world = trust_world()
    strict = simulate(world, draws=150, alpha=0.06)
    loose = simulate(world, draws=150, alpha=0.1)
    assert strict.held >= 0.9
    assert strict.accepted < loose.accepted


def test_a_useless_score_accepts_little_and_still_holds() -> None:
    """The guarantee does not depend on the score being good: a random score still holds,
    it only accepts less."""
    from tui.bench.trust import trust_world

    world = trust_world()
    n = len(world.wrong)
    score = np.round(np.random.default_rng(3).random(n), 2)
    held, shares = [], []
    for seed in range(200):
        pick = np.random.default_rng([seed, 5]).permutation(n)
        plan, rest = pick[:2000], pick[2000:]
        rule = calibrate(score[plan], world.wrong[plan], 0.12, 0.1, bounds=False)
        taken = rest[accepted(score[rest], rule)]
        held.append(world.wrong[taken].mean() <= 0.12 if len(taken) else True)
        shares.append(len(taken) / len(rest))
    assert np.mean(held) >= 0.9
    assert np.mean(shares) < 0.2


def test_the_bench_stage_measures_both_runs_and_prints_the_targets(tmp_path: object) -> None:
    from pathlib import Path

    from rich.console import Console

    from tui.bench.trust import print_trust, trust_figures

    figures = trust_figures(Path(str(tmp_path)), quick=True)
    planted = figures.planted
    assert planted.planted > 0.1 * planted.verdicts  # accepting everything would fail
    assert planted.threshold is not None and 0 < planted.accepted < planted.undecided
    assert planted.realised >= 0.9
    console = Console(record=True, width=160)
    print_trust(console, figures)
    text = console.export_text()
    assert "trust or escalate at α = 0.1, δ = 0.1" in text
    assert "simulation (100 plans)" in text and "planted run" in text
    assert "targets: ≥ 60% accepted" in text
