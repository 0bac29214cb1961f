"""Agreement statistics say when they mislead: κ on a table where a rater used one class is 0
by construction (shown as n/a, AC1 beside it), κ deflated by prevalence is marked with AC1
beside it, an interval every resample agrees on is 'no spread', and few pairs are weak."""

from __future__ import annotations

from rich.console import Console

from reviewer.agreement import BootstrapCI, ChanceCorrected
from reviewer.comparison import compare_categorical
from tui.render.agreement import _ci, _kappa, _pair_kappa

LABELS = ("correct", "incorrect", "unknown")


def _text(value: object) -> str:
    console = Console(width=200, record=True)
    console.print(value)
    return console.export_text()


def test_one_class_makes_kappa_meaningless_and_says_so() -> None:
    judge = ["correct"] * 5 + ["incorrect"]
    human = ["correct"] * 6
    comparison = compare_categorical(judge, human, LABELS, ordinal=False, n_resamples=200)
    assert comparison.kappa.estimate == 0.0
    assert any("human used one class only (correct)" in c for c in comparison.caveats)
    assert any("only 6 pairs" in c for c in comparison.caveats)
    shown = _kappa(comparison)
    assert shown.startswith("n/a: one class") and "AC1" in shown
    assert "[0.00, 0.00]" not in shown


def test_the_prevalence_paradox_is_named_with_ac1_beside_kappa() -> None:
    judge = ["correct"] * 36 + ["incorrect", "correct", "unknown", "correct"]
    human = ["correct"] * 36 + ["correct", "incorrect", "correct", "unknown"]
    comparison = compare_categorical(judge, human, LABELS, ordinal=False, n_resamples=200)
    assert comparison.ac1.value is not None and comparison.ac1.value > 0.85
    assert any(c.startswith("prevalence paradox") for c in comparison.caveats)
    assert "⚠ prevalence (AC1 0.895)" in _kappa(comparison)


def test_balanced_agreement_has_no_caveat() -> None:
    judge = ["correct", "incorrect"] * 10 + ["unknown"] * 5
    human = ["correct", "incorrect"] * 10 + ["unknown"] * 4 + ["correct"]
    comparison = compare_categorical(judge, human, LABELS, ordinal=False, n_resamples=200)
    assert comparison.caveats == ()
    assert "⚠" not in _kappa(comparison)


def test_an_interval_without_spread_is_not_shown_as_one() -> None:
    assert _ci(BootstrapCI(0.0, 0.0, 0.0, 0.95, 1000, 1000)) == "0.000 (no spread)"
    assert _ci(BootstrapCI(0.5, None, None, 0.95, 1000, 0)) == "0.500 (no interval)"
    assert _ci(BootstrapCI(0.5, 0.4, 0.6, 0.95, 1000, 1000)) == "0.500 [0.40, 0.60]"


def test_reviewer_pairs_say_when_kappa_misleads() -> None:
    assert _pair_kappa(ChanceCorrected(None, 8, 1.0, 1.0)) == "n/a: one class"
    assert "prevalence" in _pair_kappa(ChanceCorrected(-0.05, 20, 0.9, 0.905))
    assert _pair_kappa(ChanceCorrected(0.8, 20, 0.9, 0.5)) == "0.800"
