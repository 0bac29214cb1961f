"""Worked examples, independent oracles and edge cases for reviewer.agreement.

Expected values come from published examples, from scipy (test-only dependency), or from hand
computations written out next to the test. None is a copy of this package's own output.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest

from reviewer.agreement import (
    accuracy,
    accuracy_from_table,
    average_ranks,
    bootstrap_ci,
    bootstrap_table_ci,
    cohen_kappa,
    cohen_kappa_from_table,
    confusion_matrix,
    drb_overall_score,
    filtered_average_correlations,
    gwet_ac1,
    gwet_ac1_from_table,
    gwet_ac1_multi,
    icc_1_1,
    kendall_tau_b,
    krippendorff_alpha,
    mean_absolute_error,
    mean_signed_difference,
    overall_pearson_correlation,
    pairwise_agreement,
    par_inter_rater,
    par_vs_each_rater,
    par_vs_mean_human,
    pearson,
    spearman,
    wilson_interval,
)
from tests.oracles import stats

N = None

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12
# units, "." = missing. Published: nominal .743, ordinal .815, interval .849, ratio .797.
K2011_CODERS = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    "C": [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
}
K2011_UNITS = [list(unit) for unit in zip(*K2011_CODERS.values(), strict=True)]

# Wikipedia "Krippendorff's alpha", computational example: 3 coders x 15 units.
# Published: nominal 0.691, interval 0.811.
WIKI_CODERS = [
    [N, N, N, N, N, 3, 4, 1, 2, 1, 1, 3, 3, N, 3],
    [1, N, 2, 1, 3, 3, 4, 3, N, N, N, N, N, N, N],
    [N, N, 2, 1, 3, 4, 4, N, 2, 1, 1, 3, 3, N, 4],
]
WIKI_UNITS = [list(unit) for unit in zip(*WIKI_CODERS, strict=True)]


# ----------------------------------------------------------------------------- accuracy & table


def test_accuracy_counts_equal_pairs() -> None:
    result = accuracy(["a", "b", "c", "a"], ["a", "c", "c", "b"])
    assert result.value == pytest.approx(0.5)
    assert result.n == 4


def test_accuracy_numpy_path_matches_list_path() -> None:
    a = [1, 2, 3, 4, 4]
    b = [1, 2, 4, 4, 3]
    assert accuracy(np.array(a), np.array(b)) == accuracy(a, b)
    assert accuracy(a, b).value == pytest.approx(3 / 5)


def test_accuracy_empty_is_undefined() -> None:
    result = accuracy([], [])
    assert result.value is None
    assert result.n == 0


def test_accuracy_length_mismatch_raises() -> None:
    with pytest.raises(ValueError, match="length mismatch"):
        accuracy([1, 2], [1])


def test_confusion_matrix_rows_first_rater_and_absent_labels_kept() -> None:
    cm = confusion_matrix([1, 1, 2, 4], [1, 2, 2, 1], labels=[1, 2, 3, 4])
    assert cm.labels == (1, 2, 3, 4)
    assert cm.counts == (
        (1, 1, 0, 0),
        (0, 1, 0, 0),
        (0, 0, 0, 0),
        (1, 0, 0, 0),
    )
    assert cm.n == 4
    assert cm.array().shape == (4, 4)
    assert accuracy_from_table(cm.array()).value == pytest.approx(2 / 4)


def test_confusion_matrix_unknown_label_raises() -> None:
    with pytest.raises(ValueError, match="not in categories"):
        confusion_matrix(["yes", "no"], ["yes", "maybe"], labels=["yes", "no"])
    with pytest.raises(ValueError, match="not in categories"):
        confusion_matrix(np.array([1, 5]), np.array([1, 2]), labels=[1, 2])
    with pytest.raises(ValueError, match="not in categories"):
        confusion_matrix(np.array(["a", "z"]), np.array(["a", "a"]), labels=["a", "b"])


def test_confusion_matrix_duplicate_label_raises() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        confusion_matrix([1], [1], labels=[1, 1.0])


def test_confusion_matrix_numpy_string_and_float_paths() -> None:
    a = np.array(["0.5", "1", "0", "0.5"])
    b = np.array(["0.5", "0.5", "0", "1"])
    cm = confusion_matrix(a, b, labels=["0", "0.5", "1"])
    assert cm.counts == ((1, 0, 0), (0, 1, 1), (0, 1, 0))
    cm_float = confusion_matrix(
        np.array([0.0, 0.5, 1.0, 0.5]), np.array([0.0, 0.5, 0.5, 1.0]), labels=[0.0, 0.5, 1.0]
    )
    assert cm_float.counts == ((1, 0, 0), (0, 1, 1), (0, 1, 0))


# ----------------------------------------------------------------------------- Cohen's kappa


def test_cohen_kappa_wikipedia_example() -> None:
    # Wikipedia "Cohen's kappa": 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no.
    # p_o = 35/50 = 0.7; A says yes 25/50, B says yes 30/50;
    # p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    result = cohen_kappa(a, b, ["yes", "no"])
    assert result.value == pytest.approx(0.4)
    assert result.observed_agreement == pytest.approx(0.7)
    assert result.chance_agreement == pytest.approx(0.5)
    assert result.n == 50


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        # Wikipedia's "same percentages, different numbers" pair, p_o = 0.60 in both:
        # A yes 60/100, B yes 70/100: p_e = .6*.7 + .4*.3 = .54, kappa = .06/.46 = 0.1304.
        ([[45, 15], [25, 15]], 0.06 / 0.46),
        # A yes 60/100, B yes 30/100: p_e = .6*.3 + .4*.7 = .46, kappa = .14/.54 = 0.2593.
        ([[25, 35], [5, 35]], 0.14 / 0.54),
    ],
)
def test_cohen_kappa_from_table_wikipedia_pairs(table: list[list[int]], expected: float) -> None:
    assert cohen_kappa_from_table(table).value == pytest.approx(expected)


# Hand-computed 3x3 example, rows = rater a, columns = rater b, categories 1 < 2 < 3:
#          b=1 b=2 b=3
#   a=1  [  1,  1,  0 ]   row sums r = [2, 1, 3], column sums c = [2, 3, 1], n = 6
#   a=2  [  0,  1,  0 ]
#   a=3  [  1,  1,  1 ]
# kappa_w = 1 - n * sum(v_ij O_ij) / sum(v_ij r_i c_j), v = disagreement weight.
# unweighted: p_o = 3/6, p_e = (2*2 + 1*3 + 3*1)/36 = 10/36, kappa = (18-10)/(36-10) = 4/13.
# linear v=|i-j|: observed = 1*1 (1,2) + 2*1 (3,1) + 1*1 (3,2) = 4;
#   expected = |1-2|*2*3 + |1-3|*2*1 + |2-1|*1*2 + |2-3|*1*1 + |3-1|*3*2 + |3-2|*3*3
#            = 6 + 4 + 2 + 1 + 12 + 9 = 34; kappa = 1 - 6*4/34 = 5/17.
# quadratic v=(i-j)^2: observed = 1 + 4 + 1 = 6;
#   expected = 1*2*3 + 4*2*1 + 1*1*2 + 1*1*1 + 4*3*2 + 1*3*3 = 6 + 8 + 2 + 1 + 24 + 9 = 50;
#   kappa = 1 - 6*6/50 = 7/25. (Check with the moment formula on positions 0..2:
#   var a = 29/36, var b = 17/36, cov = 7/36, (mean a - mean b)^2 = 4/36 -> 14/50.)
HAND_A = [1, 1, 2, 3, 3, 3]
HAND_B = [1, 2, 2, 1, 2, 3]


@pytest.mark.parametrize(
    ("weights", "expected"),
    [("none", Fraction(4, 13)), ("linear", Fraction(5, 17)), ("quadratic", Fraction(7, 25))],
)
def test_cohen_kappa_hand_computed_weighted(weights: str, expected: Fraction) -> None:
    result = cohen_kappa(HAND_A, HAND_B, [1, 2, 3], weights)  # type: ignore[arg-type]
    assert result.value == pytest.approx(float(expected))


# Symmetric hand example: table [[2,1,0],[1,2,1],[0,1,2]], r = c = [3,4,3], n = 10.
# unweighted: p_o = .6, p_e = (9+16+9)/100 = .34, kappa = .26/.66 = 13/33.
# linear: observed = 4 (four adjacent off-diagonal cells of 1);
#   expected = 1*(12+12+12+12) + 2*(9+9) = 84, kappa = 1 - 10*4/84 = 11/21.
# quadratic: expected = 48 + 4*18 = 120, kappa = 1 - 40/120 = 2/3.
@pytest.mark.parametrize(
    ("weights", "expected"),
    [("none", Fraction(13, 33)), ("linear", Fraction(11, 21)), ("quadratic", Fraction(2, 3))],
)
def test_cohen_kappa_from_table_symmetric_hand_example(weights: str, expected: Fraction) -> None:
    table = [[2, 1, 0], [1, 2, 1], [0, 1, 2]]
    result = cohen_kappa_from_table(table, weights)  # type: ignore[arg-type]
    assert result.value == pytest.approx(float(expected))


def test_quadratic_kappa_matches_moment_formula_oracle() -> None:
    # For equally spaced categories, quadratic-weighted kappa equals
    # 2 cov(a, b) / (var a + var b + (mean a - mean b)^2) with population moments.
    rng = np.random.default_rng(7)
    a = rng.integers(0, 5, 200)
    b = np.clip(a + rng.integers(-2, 3, 200), 0, 4)
    cov = float(np.mean((a - a.mean()) * (b - b.mean())))
    oracle = 2 * cov / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    assert cohen_kappa(a, b, [0, 1, 2, 3, 4], "quadratic").value == pytest.approx(oracle)


def test_weighted_kappa_absent_end_category_no_effect_but_middle_does() -> None:
    base = cohen_kappa(HAND_A, HAND_B, [1, 2, 3], "linear").value
    with_end = cohen_kappa(HAND_A, HAND_B, [0, 1, 2, 3, 4], "linear").value
    assert with_end == pytest.approx(base)
    # An unused category between 2 and 3 puts 3 at position 3, so 3-1 is three steps and 3-2
    # two: observed = 1*1 (1,2) + 3*1 (3,1) + 2*1 (3,2) = 6;
    # expected = 1*2*3 + 3*2*1 + 1*1*2 + 2*1*1 + 3*3*2 + 2*3*3 = 6 + 6 + 2 + 2 + 18 + 18 = 52;
    # kappa = 1 - 6*6/52 = 4/13 (down from 5/17 without the gap).
    with_middle = cohen_kappa(HAND_A, HAND_B, [1, 2, 2.5, 3], "linear").value
    assert with_middle == pytest.approx(4 / 13)


def test_kappa_one_class_only_is_undefined() -> None:
    result = cohen_kappa(["x"] * 5, ["x"] * 5, ["x", "y"])
    assert result.value is None
    assert result.observed_agreement == 1.0
    assert result.chance_agreement == 1.0
    for weights in ("linear", "quadratic"):
        assert cohen_kappa([2] * 4, [2] * 4, [1, 2, 3], weights).value is None


def test_kappa_each_rater_a_different_single_class_is_zero() -> None:
    # p_o = 0 and p_e = 0, so kappa = 0 / 1.
    assert cohen_kappa(["x"] * 3, ["y"] * 3, ["x", "y"]).value == 0.0


def test_kappa_empty_and_single_item() -> None:
    empty = cohen_kappa([], [], [1, 2])
    assert empty.value is None
    assert empty.n == 0
    assert empty.observed_agreement is None
    assert cohen_kappa([1], [1], [1, 2]).value is None  # one item = one class
    assert cohen_kappa([1], [2], [1, 2]).value == 0.0


def test_kappa_rejects_bad_weights_and_tables() -> None:
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1], [1], [1, 2], "cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="square"):
        cohen_kappa_from_table([[1, 2, 3]])
    with pytest.raises(ValueError, match="non-negative"):
        cohen_kappa_from_table([[1, -1], [0, 1]])


def test_dailyreport_style_weighted_kappa_on_1_to_4_ratings() -> None:
    # UserPref vs human overall 1-4 ratings, all four categories, some unused cells.
    judge = [1, 2, 2, 3, 4, 4, 3, 1, 2, 4]
    human = [1, 2, 3, 3, 4, 3, 3, 2, 2, 4]
    cm = confusion_matrix(judge, human, [1, 2, 3, 4])
    assert cm.n == 10
    via_table = cohen_kappa_from_table(cm.array(), "quadratic").value
    direct = cohen_kappa(judge, human, [1, 2, 3, 4], "quadratic").value
    a = np.array(judge, dtype=float)
    b = np.array(human, dtype=float)
    oracle = (
        2
        * np.mean((a - a.mean()) * (b - b.mean()))
        / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    )
    assert via_table == pytest.approx(oracle)
    assert direct == pytest.approx(oracle)


# ----------------------------------------------------------------------------- Gwet's AC1


def test_gwet_ac1_hand_computed() -> None:
    # Same 2x2 data as the kappa example: p_a = 0.7;
    # pi_yes = (25 + 30) / 100 = 0.55, pi_no = 0.45; q = 2;
    # p_e = (0.55*0.45 + 0.45*0.55) / (2 - 1) = 0.495;
    # AC1 = (0.7 - 0.495) / (1 - 0.495) = 0.205 / 0.505.
    result = gwet_ac1_from_table([[20, 5], [10, 15]])
    assert result.value == pytest.approx(0.205 / 0.505)
    assert result.chance_agreement == pytest.approx(0.495)


def test_gwet_ac1_three_categories_hand_computed() -> None:
    # HAND table: p_a = 3/6; pi = ((2+2)/12, (1+3)/12, (3+1)/12) = (1/3, 1/3, 1/3);
    # p_e = 3 * (1/3)(2/3) / (3 - 1) = 1/3; AC1 = (1/2 - 1/3) / (2/3) = 1/4.
    assert gwet_ac1(HAND_A, HAND_B, [1, 2, 3]).value == pytest.approx(0.25)


def test_gwet_ac1_one_class_is_one_and_degenerate_cases() -> None:
    # p_a = 1, pi = (1, 0), p_e = 0, AC1 = 1: AC1 has no kappa paradox here.
    assert gwet_ac1(["x"] * 4, ["x"] * 4, ["x", "y"]).value == 1.0
    assert gwet_ac1([], [], ["x", "y"]).value is None
    assert gwet_ac1(["x"], ["x"], ["x"]).value is None  # q = 1: chance agreement undefined


def test_gwet_ac1_multi_published_krippendorff_data() -> None:
    # irrCAC (Gwet's package) test suite and handbook: AC1 of the 4-rater x 12-unit data with
    # missing ratings, q = 5, is 0.77544.
    result = gwet_ac1_multi(K2011_UNITS, [1, 2, 3, 4, 5])
    assert result.value == pytest.approx(0.77544, abs=5e-6)
    assert result.n == 11  # unit 12 has a single rating


def test_gwet_ac1_multi_two_complete_raters_equals_two_rater_formula() -> None:
    units = [[a, b] for a, b in zip(HAND_A, HAND_B, strict=True)]
    assert gwet_ac1_multi(units, [1, 2, 3]).value == pytest.approx(
        gwet_ac1(HAND_A, HAND_B, [1, 2, 3]).value
    )


def test_gwet_ac1_multi_all_missing_is_undefined() -> None:
    assert gwet_ac1_multi([[N, N], [N, 1]], [1, 2]).value is None
    assert gwet_ac1_multi([], [1, 2]).value is None


# ----------------------------------------------------------------------------- Krippendorff


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_published_example(level: str, expected: float) -> None:
    result = krippendorff_alpha(K2011_UNITS, level)  # type: ignore[arg-type]
    assert result.value is not None
    assert round(result.value, 3) == expected
    # 11 pairable units (unit 12 has one value) holding 40 pairable values, as in the paper.
    assert result.n_units == 11
    assert result.n == 40


def test_krippendorff_2011_nominal_exact_fraction() -> None:
    # alpha_nominal = 1 - (n-1) * sum_{c!=k} o_ck / sum_{c!=k} n_c n_k.
    # Pairable values: n_1..n_5 = 9, 13, 10, 5, 3 (n = 40). Off-diagonal coincidences, ordered
    # pairs weighted 1/(m_u - 1): unit 2 {2,2,3,2}: 6/3 = 2; unit 6 {1,2,3,4}: 12/3 = 4;
    # unit 8 {1,1,2,1}: 6/3 = 2; total 8. sum_{c!=k} n_c n_k = 40^2 - (81+169+100+25+9) = 1216.
    # alpha = 1 - 39 * 8 / 1216 = 0.743421...
    result = krippendorff_alpha(K2011_UNITS, "nominal")
    assert result.value == pytest.approx(1 - 39 * 8 / 1216)


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.691), ("interval", 0.811)])
def test_krippendorff_wikipedia_example(level: str, expected: float) -> None:
    result = krippendorff_alpha(WIKI_UNITS, level)  # type: ignore[arg-type]
    assert result.value is not None
    assert round(result.value, 3) == expected


def test_krippendorff_ordinal_with_string_categories() -> None:
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    units = [[names[v] if v is not None else None for v in unit] for unit in K2011_UNITS]
    order = ["very low", "low", "mid", "high", "very high"]
    result = krippendorff_alpha(units, "ordinal", categories=order)
    assert result.value is not None
    assert round(result.value, 3) == 0.815


def test_krippendorff_nan_counts_as_missing() -> None:
    arr = np.array([[np.nan if v is None else v for v in unit] for unit in K2011_UNITS])
    assert krippendorff_alpha(arr, "interval").value == pytest.approx(
        krippendorff_alpha(K2011_UNITS, "interval").value
    )


def test_krippendorff_all_missing_and_unpairable() -> None:
    empty = krippendorff_alpha([[N, N], [N, N]])
    assert empty.value is None
    assert empty.n == 0
    assert empty.observed_disagreement is None
    assert krippendorff_alpha([]).value is None
    # each unit has one value: nothing is pairable
    assert krippendorff_alpha([[1, N], [N, 2]]).value is None


def test_krippendorff_no_variation_is_undefined_perfect_is_one() -> None:
    same = krippendorff_alpha([[3, 3], [3, 3, 3]])
    assert same.value is None
    assert same.observed_disagreement == 0.0
    for level in ("nominal", "ordinal", "interval", "ratio"):
        assert krippendorff_alpha([[1, 1], [2, 2, 2], [3, 3]], level).value == 1.0


def test_krippendorff_errors() -> None:
    with pytest.raises(ValueError, match="not in categories"):
        krippendorff_alpha([[1, 2]], categories=[1])
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], "interval")
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2], [1, 1]], "circular")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- correlations

DR3_LLM = [61.25, 62.80, 49.15, 52.32, 67.01]
DR3_HUMAN = [61.27, 62.10, 48.67, 52.50, 66.38]


def test_dr3_eval_fixture_against_scipy() -> None:
    # DR3-Eval Table 8 five-case means: r ~ 0.999, rho = 1.0, PAR = 1.0.
    r = pearson(DR3_LLM, DR3_HUMAN)
    assert r.value == pytest.approx(stats.pearsonr(DR3_LLM, DR3_HUMAN).statistic)
    assert r.value == pytest.approx(0.999, abs=1e-3)
    assert r.n == 5
    assert spearman(DR3_LLM, DR3_HUMAN).value == pytest.approx(1.0)
    par = pairwise_agreement(DR3_LLM, DR3_HUMAN)
    assert par.value == 1.0
    assert par.n == 10


def test_spearman_with_ties_against_scipy() -> None:
    a = [1, 2, 2, 3, 5, 5, 5, 8]
    b = [2, 1, 3, 3, 4, 6, 6, 7]
    assert spearman(a, b).value == pytest.approx(stats.spearmanr(a, b).statistic)
    assert kendall_tau_b(a, b).value == pytest.approx(stats.kendalltau(a, b).statistic)
    assert average_ranks(a) == pytest.approx(stats.rankdata(a))


def test_correlation_undefined_cases() -> None:
    for fn in (pearson, spearman, kendall_tau_b):
        assert fn([], []).value is None
        assert fn([1.0], [2.0]).value is None
        assert fn([1, 1, 1], [1, 2, 3]).value is None
        assert fn([1, 2, 3], [4, 4, 4]).value is None
        assert fn([1, 2], [3, 5]).value == pytest.approx(1.0)
        assert fn([1, 2], [5, 3]).value == pytest.approx(-1.0)


def test_correlation_rejects_missing_and_mismatch() -> None:
    with pytest.raises(ValueError, match="NaN"):
        pearson([1.0, math.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        spearman([1.0, None], [1.0, 2.0])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="length mismatch"):
        pearson([1, 2, 3], [1, 2])


def test_pearson_extreme_magnitudes() -> None:
    a = [1e200, 2e200, 4e200]
    b = [1e-200, 2e-200, 3e-200]
    expected = stats.pearsonr([1, 2, 4], [1, 2, 3]).statistic
    assert pearson(a, b).value == pytest.approx(expected)


def test_mae_and_signed_difference() -> None:
    assert mean_absolute_error([1, 2, 3], [2, 2, 1]).value == pytest.approx((1 + 0 + 2) / 3)
    assert mean_signed_difference([1, 2, 3], [2, 2, 1]).value == pytest.approx((-1 + 0 + 2) / 3)
    assert mean_absolute_error([], []).value is None
    assert mean_signed_difference([], []).value is None


def test_wilson_interval_against_scipy() -> None:
    for k, n in [(7, 10), (0, 12), (12, 12), (993, 1000)]:
        ci = wilson_interval(k, n)
        assert ci is not None
        oracle = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert ci[0] == pytest.approx(oracle.low, abs=1e-12)
        assert ci[1] == pytest.approx(oracle.high, abs=1e-12)
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


# ----------------------------------------------------------------------------- PAR

# Hand example, two tasks, two rater slots.
# Task 0: method [3, 2, 1]; ratings item0 [5, 4], item1 [4, 4], item2 [1, 5].
#   pairs (0,1), (0,2), (1,2): method signs +, +, +.
#   mean human [4.5, 4, 3]: signs +, +, +            -> 3 of 3 agree.
#   rater 0 [5, 4, 1]: signs +, +, +                 -> 3 agree.
#   rater 1 [4, 4, 5]: signs 0, -, -                 -> 0 agree, 1 human tie.
#   inter-rater (r0 vs r1): (+,0) (+,-) (+,-)        -> 0 of 3.
# Task 1: method [1, 1] (a method tie); ratings item0 [2, None], item1 [2, 3].
#   mean human [2, 2.5]: sign -  vs method 0         -> disagree.
#   rater 0 [2, 2]: sign 0 vs method 0               -> agree under "match" only.
#   rater 1: item0 missing                           -> no comparison.
#   inter-rater: rater 1 missing item0               -> no comparison.
PAR_METHOD = [[3.0, 2.0, 1.0], [1.0, 1.0]]
PAR_HUMAN: list[list[list[float | None]]] = [
    [[5, 4], [4, 4], [1, 5]],
    [[2, None], [2, 3]],
]


def test_par_vs_mean_human_hand_example() -> None:
    result = par_vs_mean_human(PAR_METHOD, PAR_HUMAN)
    assert (result.n, result.n_agreements) == (4, 3)
    assert result.value == pytest.approx(0.75)
    assert (result.n_human_ties, result.n_method_ties) == (0, 1)


def test_par_vs_each_rater_hand_example() -> None:
    match = par_vs_each_rater(PAR_METHOD, PAR_HUMAN, ties="match")
    assert (match.n, match.n_agreements) == (7, 4)
    assert match.value == pytest.approx(4 / 7)
    assert (match.n_human_ties, match.n_method_ties) == (2, 1)
    strict = par_vs_each_rater(PAR_METHOD, PAR_HUMAN, ties="disagree")
    assert (strict.n, strict.n_agreements) == (7, 3)


def test_par_inter_rater_hand_example() -> None:
    result = par_inter_rater(PAR_HUMAN)
    assert (result.n, result.n_agreements) == (3, 0)
    assert result.value == 0.0


def test_par_denominators_300_and_900() -> None:
    rng = np.random.default_rng(3)
    method = rng.normal(size=(50, 4)).tolist()
    human = rng.integers(1, 11, size=(50, 4, 3)).astype(float).tolist()
    assert par_vs_mean_human(method, human).n == 300
    assert par_vs_each_rater(method, human).n == 900
    assert par_inter_rater(human).n == 900


def test_par_tie_epsilon() -> None:
    # Method scores 1.0 and 1.05 differ by less than 0.1, so that pair is a method tie.
    method = [[1.0, 1.05, 2.0]]
    human: list[list[list[float | None]]] = [[[1], [1], [3]]]
    exact = par_vs_mean_human(method, human)
    loose = par_vs_mean_human(method, human, tie_epsilon=0.1)
    # exact: pair (0,1) method -, human tie -> disagree; others agree: 2/3.
    assert exact.value == pytest.approx(2 / 3)
    # with epsilon: tie vs tie agrees under "match": 3/3.
    assert loose.value == 1.0
    assert loose.n_method_ties == 1
    with pytest.raises(ValueError, match="tie_epsilon"):
        par_vs_mean_human(method, human, tie_epsilon=-1.0)
    with pytest.raises(ValueError, match="ties"):
        par_vs_mean_human(method, human, ties="ignore")  # type: ignore[arg-type]


def test_pairwise_agreement_dr3_ties_count_as_disagreement() -> None:
    # pairs (0,1) both tied, (0,2) and (1,2) both negative.
    a = [1, 1, 2]
    b = [1, 1, 3]
    assert pairwise_agreement(a, b).value == pytest.approx(2 / 3)
    assert pairwise_agreement(a, b, ties="match").value == 1.0
    result = pairwise_agreement(a, b)
    assert (result.n_human_ties, result.n_method_ties) == (1, 1)


def test_pairwise_agreement_empty_and_single() -> None:
    assert pairwise_agreement([], []).value is None
    assert pairwise_agreement([1.0], [2.0]).n == 0


def test_pairwise_agreement_matches_brute_force_on_blocks() -> None:
    rng = np.random.default_rng(11)
    a = rng.integers(0, 5, 3000).astype(float)
    b = a + rng.integers(-1, 2, 3000)
    sa = np.sign(a[:, None] - a[None, :])
    sb = np.sign(b[:, None] - b[None, :])
    upper = np.triu(np.ones((3000, 3000), dtype=bool), 1)
    expected = np.count_nonzero((sa * sb > 0) & upper)
    result = pairwise_agreement(a, b)
    assert result.n == 3000 * 2999 // 2
    assert result.n_agreements == expected


def test_par_mismatched_shapes_raise() -> None:
    with pytest.raises(ValueError, match="tasks"):
        par_vs_mean_human([[1.0]], [])
    with pytest.raises(ValueError, match="human items"):
        par_vs_mean_human([[1.0, 2.0]], [[[1.0]]])
    with pytest.raises(ValueError, match="rater slots"):
        par_vs_each_rater([[1.0, 2.0]], [[[1.0, 2.0], [1.0]]])


# ----------------------------------------------------------------------------- ICC, FAP, OPC


def test_icc_spec_worked_example() -> None:
    # deepresearch_bench.md 5.2: MSB = 6.0, MSW = 0.8333, ICC = 0.674.
    result = icc_1_1([[7, 6, 8], [5, 5, 6], [8, 7, 9], [4, 6, 5]])
    assert result.ms_between == pytest.approx(6.0)
    assert result.ms_within == pytest.approx(5 / 6)
    assert result.value == pytest.approx(0.674, abs=5e-4)
    assert (result.n, result.n_raters) == (4, 3)


def test_icc_matches_one_way_anova_oracle() -> None:
    # ICC(1,1) = (F - 1) / (F + k - 1) with F the one-way ANOVA F over items.
    rng = np.random.default_rng(5)
    ratings = rng.normal(size=(6, 4)) + rng.normal(size=(6, 1)) * 2
    f = stats.f_oneway(*ratings).statistic
    k = ratings.shape[1]
    assert icc_1_1(ratings).value == pytest.approx((f - 1) / (f + k - 1))


def test_icc_can_be_negative_and_bounded() -> None:
    # Item means all 5: MSB = 0, so ICC = -MSW / ((k-1) MSW) = -1/(k-1) = -1 for k = 2.
    assert icc_1_1([[1, 9], [9, 1], [4, 6]]).value == pytest.approx(-1.0)


def test_icc_undefined_and_missing() -> None:
    assert icc_1_1([[5, 5], [5, 5]]).value is None  # no variance
    assert icc_1_1([[0.1, 0.1, 0.1]] * 4).value is None  # identical non-representable floats
    assert icc_1_1([[1, 2]]).value is None  # one item
    assert icc_1_1([[1], [2]]).value is None  # one rater
    assert icc_1_1([]).value is None
    # Listwise deletion: the row with a missing rating is dropped.
    with_missing = icc_1_1([[7, 6, 8], [5, 5, 6], [8, 7, 9], [4, 6, 5], [1, None, 3]])
    assert with_missing.n == 4
    assert with_missing.value == pytest.approx(0.674, abs=5e-4)


def _fap_fixture() -> tuple[list[list[float | None]], list[list[list[float | None]]]]:
    method: list[list[float | None]] = [
        [7.5, 5.0, 8.0, 5.2],  # task 0: ICC 0.674, kept
        [1.0, 2.0, 3.0, 4.0],  # task 1: item means all 5 -> ICC -1/(k-1) = -0.5, dropped
        [1.0, 2.0, 3.0, 4.0],  # task 2: identical ratings -> ICC undefined, dropped
        [5.0, 5.0, 5.0, 5.0],  # task 3: kept, but constant method -> r undefined
        [2.0, 1.0, 6.0, 9.0],  # task 4: kept
    ]
    human: list[list[list[float | None]]] = [
        [[7, 6, 8], [5, 5, 6], [8, 7, 9], [4, 6, 5]],
        [[1, 9, 5], [9, 1, 5], [5, 5, 5], [4, 6, 5]],
        [[3, 3, 3], [3, 3, 3], [3, 3, 3], [3, 3, 3]],
        [[1, 2, 1], [5, 5, 6], [8, 7, 8], [3, 3, 2]],
        [[1, 2, 1], [3, 3, 4], [5, 6, 5], [8, 7, 8]],
    ]
    return method, human


def test_filtered_average_correlations_against_scipy() -> None:
    method, human = _fap_fixture()
    result = filtered_average_correlations(method, human)
    assert result.n_tasks == 5
    assert result.kept_tasks == (0, 3, 4)
    assert result.n_kept == 3
    assert result.icc[1] == pytest.approx(-0.5)
    assert result.icc[2] is None
    means = [np.array(human[t], dtype=float).mean(axis=1) for t in (0, 4)]
    rs = [stats.pearsonr(method[t], m).statistic for t, m in zip((0, 4), means, strict=True)]
    rhos = [stats.spearmanr(method[t], m).statistic for t, m in zip((0, 4), means, strict=True)]
    assert result.fap.n == 2  # task 3's r is undefined
    assert result.fap.value == pytest.approx(np.mean(rs))
    assert result.fas.n == 2
    assert result.fas.value == pytest.approx(np.mean(rhos))


def test_filtered_average_correlations_threshold_and_empty() -> None:
    method, human = _fap_fixture()
    strict = filtered_average_correlations(method, human, icc_threshold=0.99)
    assert strict.n_kept == 0
    assert strict.fap.value is None
    assert strict.fap.n == 0
    empty = filtered_average_correlations([], [])
    assert empty.n_tasks == 0
    assert empty.fas.value is None


def test_overall_pearson_correlation_against_scipy() -> None:
    method: list[list[float | None]] = [[1.0, 2.0, 3.0], [2.0, 2.0, 5.0], [0.0, 3.0, 4.0]]
    human: list[list[list[float | None]]] = [
        [[1, 2], [2, 2], [4, 4]],
        [[2, 2], [1, 3], [5, 5]],
        [[1, 1], [3, 4], [3, 3]],
    ]
    x = np.array(method, dtype=float).mean(axis=0)  # per-system mean method score: [1, 7/3, 4]
    y = np.array([np.array(t, dtype=float).mean(axis=1) for t in human]).mean(axis=0)
    result = overall_pearson_correlation(method, human)
    assert result.n == 3
    assert result.value == pytest.approx(stats.pearsonr(x, y).statistic)


def test_overall_pearson_correlation_missing_and_shapes() -> None:
    # System 2 has no method score in task 1, so its means use task 0 only: x = 3, y = 4.
    method: list[list[float | None]] = [[1.0, 2.0, 3.0], [2.0, 4.0, None]]
    human: list[list[list[float | None]]] = [[[1], [2], [4]], [[3], [1], [9]]]
    expected = stats.pearsonr([1.5, 3.0, 3.0], [2.0, 1.5, 4.0]).statistic
    assert overall_pearson_correlation(method, human).value == pytest.approx(expected)
    assert overall_pearson_correlation([], []).value is None
    with pytest.raises(ValueError, match="numbers of systems"):
        overall_pearson_correlation([[1.0], [1.0, 2.0]], [[[1]], [[1], [2]]])


def test_drb_overall_score_matches_published_row() -> None:
    # Table 2, RACE (Full): (71.33 + 99.54 + 60.24 + 59.12) / 4 = 72.56 (rounded).
    assert round(drb_overall_score(71.33, 99.54, 60.24, 59.12) or 0.0, 2) == 72.56
    assert drb_overall_score(0.7, None, 0.6, 0.5) is None


# ----------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_deterministic_per_seed() -> None:
    rng = np.random.default_rng(0)
    data = rng.normal(size=200)
    first = bootstrap_ci(lambda d: float(np.mean(d)), data, n_resamples=300, seed=42)
    again = bootstrap_ci(lambda d: float(np.mean(d)), data, n_resamples=300, seed=42)
    other = bootstrap_ci(lambda d: float(np.mean(d)), data, n_resamples=300, seed=43)
    assert first == again
    assert first != other
    assert first.n_used == 300
    assert first.lower is not None and first.upper is not None
    assert first.lower < first.estimate < first.upper  # type: ignore[operator]


def test_bootstrap_mean_close_to_scipy_percentile_interval() -> None:
    rng = np.random.default_rng(1)
    data = rng.exponential(size=400)
    ours = bootstrap_ci(lambda d: float(np.mean(d)), data, n_resamples=4000, seed=0)
    oracle = stats.bootstrap(
        (data,), np.mean, n_resamples=4000, method="percentile", random_state=0
    ).confidence_interval
    # Different random draws: each 2.5%/97.5% quantile from 4000 resamples has a Monte Carlo
    # error of about 0.04 standard errors, so the two intervals should agree to ~0.25 se.
    se = float(np.std(data) / math.sqrt(len(data)))
    assert ours.lower == pytest.approx(oracle.low, abs=0.25 * se)
    assert ours.upper == pytest.approx(oracle.high, abs=0.25 * se)


def test_bootstrap_skips_undefined_resamples_and_counts_them() -> None:
    data = [0, 1, 2, 3, 4]

    def undefined_if_zero_present(sample: list[int]) -> float | None:
        return None if 0 in sample else float(sum(sample))

    result = bootstrap_ci(undefined_if_zero_present, data, n_resamples=500, seed=9)
    # Replay the documented draw scheme: one integers(0, n, n) vector per resample.
    rng = np.random.default_rng(9)
    expected_used = sum(1 for _ in range(500) if 0 not in rng.integers(0, 5, size=5))
    assert result.n_used == expected_used
    assert 0 < result.n_used < 500
    assert result.estimate is None  # full data contains 0


def test_bootstrap_empty_and_all_undefined() -> None:
    empty = bootstrap_ci(lambda d: accuracy(d, d), np.array([]))
    assert (empty.estimate, empty.lower, empty.upper, empty.n_used) == (None, None, None, 0)
    one_class = np.array([["x", "x"]] * 20)
    result = bootstrap_ci(lambda d: cohen_kappa(d[:, 0], d[:, 1], ["x", "y"]), one_class)
    assert result.estimate is None
    assert result.lower is None
    assert result.n_used == 0


def test_bootstrap_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(lambda d: 0.0, [1, 2], n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(lambda d: 0.0, [1, 2], confidence=1.0)


def test_bootstrap_table_ci_equals_generic_bootstrap() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(1, 5, 500)
    b = np.where(rng.random(500) < 0.6, a, rng.integers(1, 5, 500))
    cats = [1, 2, 3, 4]
    generic = bootstrap_ci(
        lambda d: cohen_kappa(d[:, 0], d[:, 1], cats, "linear"),
        np.column_stack([a, b]),
        n_resamples=200,
        seed=5,
    )
    fast = bootstrap_table_ci(
        lambda t: cohen_kappa_from_table(t, "linear"), a, b, cats, n_resamples=200, seed=5
    )
    assert fast.n_used == generic.n_used == 200
    assert fast.estimate == pytest.approx(generic.estimate)
    assert fast.lower == pytest.approx(generic.lower)
    assert fast.upper == pytest.approx(generic.upper)


def test_bootstrap_over_tasks_for_par() -> None:
    rng = np.random.default_rng(4)
    tasks = [
        (rng.normal(size=4).tolist(), rng.integers(1, 11, size=(4, 3)).astype(float).tolist())
        for _ in range(30)
    ]

    def par(sample: list[tuple[list[float], list[list[float]]]]) -> float | None:
        return par_vs_each_rater([m for m, _ in sample], [h for _, h in sample]).value

    result = bootstrap_ci(par, tasks, n_resamples=200, seed=1)
    assert result.n_used == 200
    assert result.lower is not None and result.upper is not None
    assert 0.0 <= result.lower <= result.upper <= 1.0


def test_bootstrap_60k_items_is_fast() -> None:
    rng = np.random.default_rng(0)
    n = 60_000
    a = rng.integers(1, 5, n)
    b = np.where(rng.random(n) < 0.7, a, rng.integers(1, 5, n))
    start = time.perf_counter()
    acc = bootstrap_ci(lambda d: accuracy(d[:, 0], d[:, 1]), np.column_stack([a, b]))
    kappa = bootstrap_table_ci(lambda t: cohen_kappa_from_table(t, "quadratic"), a, b, [1, 2, 3, 4])
    elapsed = time.perf_counter() - start
    assert acc.n_used == kappa.n_used == 1000
    assert acc.lower is not None and acc.upper is not None
    assert acc.lower <= (acc.estimate or 0.0) <= acc.upper
    assert elapsed < 10.0  # about 0.8 s on the development machine
