"""Property tests for reviewer.agreement: invariances, bounds, and brute-force or scipy oracles."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reviewer.agreement import (
    accuracy,
    average_ranks,
    bootstrap_ci,
    cohen_kappa,
    gwet_ac1,
    gwet_ac1_multi,
    icc_1_1,
    kendall_tau_b,
    krippendorff_alpha,
    pairwise_agreement,
    par_vs_each_rater,
    par_vs_mean_human,
    pearson,
    spearman,
)
from tests.oracles import stats

WEIGHTS = ("none", "linear", "quadratic")


@st.composite
def paired_labels(draw: st.DrawFn, min_size: int = 0) -> tuple[list[int], list[int], int]:
    k = draw(st.integers(2, 5))
    n = draw(st.integers(min_size, 40))
    label = st.integers(0, k - 1)
    a = draw(st.lists(label, min_size=n, max_size=n))
    b = draw(st.lists(label, min_size=n, max_size=n))
    return a, b, k


@st.composite
def reliability_data(draw: st.DrawFn) -> list[list[int | None]]:
    coders = draw(st.integers(2, 4))
    units = draw(st.integers(0, 10))
    value = st.one_of(st.none(), st.integers(1, 5))
    return draw(
        st.lists(st.lists(value, min_size=coders, max_size=coders), min_size=units, max_size=units)
    )


number_lists = st.lists(st.integers(-50, 50), min_size=0, max_size=30)


# ----------------------------------------------------------------------------- kappa & AC1


@given(paired_labels(min_size=1), st.sampled_from(WEIGHTS))
def test_kappa_of_identical_ratings_is_one_with_two_classes(
    data: tuple[list[int], list[int], int], weights: str
) -> None:
    a, _, k = data
    result = cohen_kappa(a, a, list(range(k)), weights)  # type: ignore[arg-type]
    if len(set(a)) > 1:
        assert result.value == 1.0
    else:
        assert result.value is None  # one class only: chance agreement is 1


@given(paired_labels(), st.sampled_from(WEIGHTS))
def test_kappa_symmetric_and_at_most_one(
    data: tuple[list[int], list[int], int], weights: str
) -> None:
    a, b, k = data
    cats = list(range(k))
    ab = cohen_kappa(a, b, cats, weights).value  # type: ignore[arg-type]
    ba = cohen_kappa(b, a, cats, weights).value  # type: ignore[arg-type]
    assert (ab is None) == (ba is None)
    if ab is not None and ba is not None:
        assert ab == pytest.approx(ba)
        assert ab <= 1.0 + 1e-12
        if weights == "none":
            assert ab >= -1.0 - 1e-12


@given(paired_labels())
def test_weights_irrelevant_with_two_categories(data: tuple[list[int], list[int], int]) -> None:
    a, b, _ = data
    a = [x % 2 for x in a]
    b = [x % 2 for x in b]
    values = [cohen_kappa(a, b, [0, 1], w).value for w in WEIGHTS]  # type: ignore[arg-type]
    if values[0] is None:
        assert values == [None, None, None]
    else:
        assert values[1] == pytest.approx(values[0])
        assert values[2] == pytest.approx(values[0])


@given(paired_labels(min_size=1))
def test_quadratic_kappa_equals_moment_formula(data: tuple[list[int], list[int], int]) -> None:
    a_list, b_list, k = data
    a = np.array(a_list, dtype=float)
    b = np.array(b_list, dtype=float)
    denom = a.var() + b.var() + (a.mean() - b.mean()) ** 2
    result = cohen_kappa(a_list, b_list, list(range(k)), "quadratic").value
    if denom == 0:
        assert result is None
    else:
        cov = float(np.mean((a - a.mean()) * (b - b.mean())))
        assert result == pytest.approx(2 * cov / denom, abs=1e-9)


@given(paired_labels())
def test_numpy_and_list_inputs_agree(data: tuple[list[int], list[int], int]) -> None:
    a, b, k = data
    cats = list(range(k))
    assert accuracy(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)) == accuracy(a, b)
    from_np = cohen_kappa(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64), cats)
    assert from_np == cohen_kappa(a, b, cats)
    as_text = cohen_kappa(np.array(a).astype(str), np.array(b).astype(str), [str(c) for c in cats])
    assert as_text == cohen_kappa(a, b, cats)


@given(paired_labels(min_size=1))
def test_gwet_ac1_bounds_and_multi_equivalence(data: tuple[list[int], list[int], int]) -> None:
    a, b, k = data
    cats = list(range(k))
    two = gwet_ac1(a, b, cats)
    assert two.value is not None
    assert -1.0 - 1e-12 <= two.value <= 1.0 + 1e-12
    multi = gwet_ac1_multi([[x, y] for x, y in zip(a, b, strict=True)], cats)
    assert multi.value == pytest.approx(two.value)
    # All-missing units carry nothing and must not change the coefficient.
    padded = gwet_ac1_multi([[x, y] for x, y in zip(a, b, strict=True)] + [[None, None]] * 3, cats)
    assert padded.value == pytest.approx(two.value)


# ----------------------------------------------------------------------------- Krippendorff


def brute_force_alpha(units: list[list[int | None]], level: str) -> float | None:
    """Alpha straight from Krippendorff's definition, pair by pair (no coincidence matrix)."""
    pairable = [[v for v in u if v is not None] for u in units]
    pairable = [u for u in pairable if len(u) >= 2]
    values = [v for u in pairable for v in u]
    n = len(values)
    if n == 0:
        return None
    freq = Counter(values)

    def delta(c: int, k: int) -> float:
        if level == "nominal":
            return 0.0 if c == k else 1.0
        if level == "interval":
            return float((c - k) ** 2)
        lo, hi = min(c, k), max(c, k)
        between = sum(count for g, count in freq.items() if lo <= g <= hi)
        return (between - (freq[c] + freq[k]) / 2) ** 2

    observed = (
        sum(
            sum(delta(x, y) for x, y in itertools.permutations(u, 2)) / (len(u) - 1)
            for u in pairable
        )
        / n
    )
    expected = sum(delta(x, y) for x, y in itertools.permutations(values, 2)) / (n * (n - 1))
    if expected == 0:
        return None
    return 1.0 - observed / expected


@given(reliability_data(), st.sampled_from(["nominal", "ordinal", "interval"]))
def test_alpha_matches_brute_force_definition(units: list[list[int | None]], level: str) -> None:
    expected = brute_force_alpha(units, level)
    result = krippendorff_alpha(units, level)  # type: ignore[arg-type]
    if expected is None:
        assert result.value is None
    else:
        assert result.value == pytest.approx(expected, abs=1e-9)


@given(reliability_data(), st.permutations(range(1, 6)))
def test_nominal_alpha_invariant_under_relabelling(
    units: list[list[int | None]], perm: list[int]
) -> None:
    mapping = {v: f"label-{p}" for v, p in zip(range(1, 6), perm, strict=True)}
    relabelled = [[None if v is None else mapping[v] for v in u] for u in units]
    original = krippendorff_alpha(units, "nominal").value
    renamed = krippendorff_alpha(relabelled, "nominal").value
    if original is None:
        assert renamed is None
    else:
        assert renamed == pytest.approx(original, abs=1e-12)


@given(reliability_data(), st.randoms(use_true_random=False))
def test_alpha_ignores_unpairable_units_and_order(units: list[list[int | None]], rnd: Any) -> None:
    base = krippendorff_alpha(units, "interval").value
    shuffled_units = list(units)
    rnd.shuffle(shuffled_units)
    coder_order = list(range(len(units[0]))) if units else []
    rnd.shuffle(coder_order)
    permuted = [[u[c] for c in coder_order] for u in shuffled_units]
    width = len(units[0]) if units else 2
    padded: list[list[int | None]] = [*permuted, [None] * width, [3] + [None] * (width - 1)]
    other = krippendorff_alpha(padded, "interval").value
    if base is None:
        assert other is None
    else:
        assert other == pytest.approx(base, abs=1e-12)


@given(st.lists(st.lists(st.none(), min_size=2, max_size=4), max_size=6))
def test_alpha_all_missing_is_undefined(units: list[list[None]]) -> None:
    result = krippendorff_alpha(units)
    assert result.value is None
    assert result.n == 0


# ----------------------------------------------------------------------------- correlations


@given(number_lists, number_lists)
def test_pearson_symmetric_bounded_and_matches_scipy(xs: list[int], ys: list[int]) -> None:
    n = min(len(xs), len(ys))
    a, b = xs[:n], ys[:n]
    ab = pearson(a, b)
    ba = pearson(b, a)
    assert ab == ba or (ab.value is not None and ba.value == pytest.approx(ab.value))
    if n < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        assert ab.value is None
        return
    assert ab.value is not None
    assert -1.0 <= ab.value <= 1.0
    assert ab.value == pytest.approx(stats.pearsonr(a, b).statistic, abs=1e-9)


@given(number_lists, number_lists)
def test_rank_correlations_match_scipy(xs: list[int], ys: list[int]) -> None:
    n = min(len(xs), len(ys))
    a, b = xs[:n], ys[:n]
    if n:
        assert average_ranks(a) == pytest.approx(stats.rankdata(a))
    rho = spearman(a, b).value
    tau = kendall_tau_b(a, b).value
    if n < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        assert rho is None and tau is None
        return
    assert rho == pytest.approx(stats.spearmanr(a, b).statistic, abs=1e-9)
    assert tau == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-9)


@given(
    st.lists(st.floats(-1e6, 1e6), min_size=3, max_size=30),
    st.floats(0.01, 100),
    st.floats(-1e3, 1e3),
)
def test_pearson_invariant_to_positive_affine_maps(
    xs: list[float], scale: float, shift: float
) -> None:
    ys = [x * x for x in xs]
    base = pearson(xs, ys).value
    moved = pearson([scale * x + shift for x in xs], ys).value
    assume(base is not None and moved is not None)
    assume(float(np.std(xs)) > 1e-3 * (1 + max(abs(x) for x in xs)))
    assert moved == pytest.approx(base, abs=1e-6)


# ----------------------------------------------------------------------------- PAR & ICC


@given(number_lists, number_lists, st.sampled_from(["match", "disagree"]))
def test_pairwise_agreement_symmetry_and_tie_policies(
    xs: list[int], ys: list[int], ties: str
) -> None:
    n = min(len(xs), len(ys))
    a, b = xs[:n], ys[:n]
    ab = pairwise_agreement(a, b, ties=ties)  # type: ignore[arg-type]
    ba = pairwise_agreement(b, a, ties=ties)  # type: ignore[arg-type]
    assert ab.n == ba.n == n * (n - 1) // 2
    assert ab.n_agreements == ba.n_agreements
    assert (ab.n_human_ties, ab.n_method_ties) == (ba.n_method_ties, ba.n_human_ties)
    strict = pairwise_agreement(a, b, ties="disagree")
    lenient = pairwise_agreement(a, b, ties="match")
    assert strict.n_agreements <= lenient.n_agreements
    if n >= 2:
        assert pairwise_agreement(a, a, ties="match").value == 1.0


@given(
    st.integers(1, 6).flatmap(
        lambda items: st.lists(
            st.tuples(
                st.lists(st.integers(0, 5), min_size=items, max_size=items),
                st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=items, max_size=items),
            ),
            max_size=5,
        )
    )
)
def test_par_with_one_rater_is_the_same_in_both_variants(
    tasks: list[tuple[list[int], list[int | None]]],
) -> None:
    method: list[list[float | None]] = [[float(v) for v in m] for m, _ in tasks]
    human: list[list[list[float | None]]] = [
        [[None if v is None else float(v)] for v in h] for _, h in tasks
    ]
    assert par_vs_mean_human(method, human) == par_vs_each_rater(method, human)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 6), st.integers(2, 4), st.integers(0, 2**32 - 1))
def test_icc_matches_anova_oracle_and_bounds(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    ratings = rng.integers(0, 6, size=(n, k)).astype(float)
    result = icc_1_1(ratings)
    if np.ptp(ratings) == 0:
        assert result.value is None
        return
    assert result.value is not None
    assert -1.0 / (k - 1) - 1e-12 <= result.value <= 1.0 + 1e-12
    within = float(((ratings - ratings.mean(axis=1, keepdims=True)) ** 2).sum())
    if within > 0:
        f = stats.f_oneway(*ratings).statistic
        assert result.value == pytest.approx((f - 1) / (f + k - 1), abs=1e-9)
    else:
        assert result.value == pytest.approx(1.0)  # raters agree exactly within every item


# ----------------------------------------------------------------------------- bootstrap


@settings(max_examples=30, deadline=None)
@given(st.integers(20, 200), st.floats(0.05, 0.95), st.integers(0, 2**32 - 1))
def test_bootstrap_ci_contains_point_estimate(n: int, p_agree: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < p_agree, a, rng.integers(0, 3, n))
    result = bootstrap_ci(
        lambda d: accuracy(d[:, 0], d[:, 1]), np.column_stack([a, b]), 300, 0.95, seed
    )
    assume(result.estimate is not None)
    assert result.lower is not None and result.upper is not None
    assert result.n_used == 300
    assert result.lower <= result.estimate <= result.upper  # type: ignore[operator]
    wider = bootstrap_ci(
        lambda d: accuracy(d[:, 0], d[:, 1]), np.column_stack([a, b]), 300, 0.99, seed
    )
    assert wider.lower is not None and wider.upper is not None
    assert wider.lower <= result.lower and result.upper <= wider.upper
    assert math.isfinite(result.lower) and math.isfinite(result.upper)
