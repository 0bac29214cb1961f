"""Calibrating the trust rule: fixed-sequence testing over descending score thresholds
(Jung, Brahman & Choi, *Trust or Escalate*, ICLR 2025).

Every judge verdict gets a confidence score (:mod:`reviewer.trust.score`). For a threshold
``λ`` the rule would accept, unreviewed, every verdict scoring at least ``λ``; the hypothesis
``H_λ`` says that among those the judge disagrees with the humans more often than ``α``. The
thresholds are tested from the highest down, each by the exact binomial (Clopper–Pearson)
upper bound on the error rate of the gold-labelled verdicts above it at confidence
``1 − δ``; the first that fails stops the sequence, and the rule takes the lowest threshold
rejected before it. Fixed-sequence testing needs no correction for the many thresholds
tried: the chance that the chosen threshold's true error rate exceeds ``α`` is at most ``δ``
— the guarantee is agreement ≥ ``1 − α`` with confidence ``1 − δ``.

What that needs:

* the gold labels are a random sample of the verdicts the rule is applied to (exchangeable
  with them), or a sample with known inclusion probabilities, weighted by their inverse;
* the score of a labelled verdict does not depend on its own label (the score is learnt
  from other decisions only);
* the sequence starts where a threshold could pass at all — the first with enough labels
  that no errors would give a bound ≤ ``α`` — which depends on the scores, never on the
  labels, so the order stays fixed before any test is seen.

With unequal weights the bound is the Clopper–Pearson bound at Kish's effective sample
size, an approximation that :attr:`Calibration.weighted` reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from reviewer.trust.bounds import binomial_cdf, upper_bound

Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Step:
    """One threshold tested: the labelled verdicts above it, their errors, the bound."""

    threshold: float
    labels: int
    errors: int
    effective: float
    """Kish's effective number of labels (``labels`` when every weight is equal)."""
    upper: float
    """Upper confidence bound on the error rate above the threshold."""
    passed: bool


@dataclass(frozen=True, slots=True)
class Calibration:
    alpha: float
    delta: float
    labels: int
    threshold: float | None
    """Accept verdicts scoring at least this; None: accept none."""
    steps: tuple[Step, ...]
    weighted: bool
    """Unequal inclusion probabilities: the bound uses the effective sample size."""
    notes: tuple[str, ...] = field(default=())

    @property
    def guaranteed(self) -> float:
        """The agreement the rule guarantees (with confidence ``1 − δ``) where it accepts."""
        return 1.0 - self.alpha

    @property
    def chosen(self) -> Step | None:
        return next((s for s in reversed(self.steps) if s.passed), None)

    @property
    def weak(self) -> bool:
        """Too few labels for any threshold to pass, or none passed."""
        return self.threshold is None


def needed_labels(alpha: float, delta: float) -> int:
    """The fewest labels whose bound can reach ``α`` (with no error among them):
    ``(1 − α)^n ≤ δ``."""
    return math.ceil(math.log(delta) / math.log1p(-alpha))


def calibrate(
    scores: Floats,
    wrong: Bools,
    alpha: float,
    delta: float,
    weights: Floats | None = None,
    *,
    bounds: bool = True,
) -> Calibration:
    """The rule from the gold-labelled verdicts: their ``scores``, whether the judge was
    ``wrong`` on each, and their design ``weights`` (inverse inclusion probabilities; None
    for a simple random sample).

    A threshold passes when ``P(Binomial(n, α) ≤ k) ≤ δ`` — the same as its upper bound
    lying at or below ``α``, without inverting anything; ``bounds`` also computes each
    step's bound for the record (NaN without)."""
    if not 0.0 < alpha < 1.0 or not 0.0 < delta < 1.0:
        raise ValueError("alpha and delta must lie strictly between 0 and 1")
    n = len(scores)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    weighted = bool(n and not np.allclose(w, w[0]))
    need = needed_labels(alpha, delta)
    steps = _test_in_sequence(_nested_sets(scores, wrong, w, weighted), alpha, delta, need, bounds)
    passed = [step for step in steps if step.passed]
    return Calibration(
        alpha,
        delta,
        n,
        passed[-1].threshold if passed else None,
        tuple(steps),
        weighted,
        _notes(n, need, steps, weighted),
    )


@dataclass(frozen=True, slots=True)
class _Nested:
    """The labelled verdicts above each distinct score, highest first: the threshold, their
    count and errors, and the effective count and weighted share of errors."""

    threshold: Floats
    labels: npt.NDArray[np.int64]
    errors: Floats
    effective: Floats
    share: Floats


def _nested_sets(scores: Floats, wrong: Bools, w: Floats, weighted: bool) -> _Nested:
    order = np.argsort(-scores, kind="stable")
    s, e, w = scores[order], wrong[order].astype(np.float64), w[order]
    # The last position of each distinct score: the sets above each threshold, descending.
    ends = np.flatnonzero(np.r_[s[1:] != s[:-1], True]) if len(s) else np.zeros(0, np.int64)
    sum_w = np.cumsum(w)[ends]
    labels = ends + 1
    effective = sum_w**2 / np.cumsum(w * w)[ends] if weighted else labels.astype(np.float64)
    return _Nested(s[ends], labels, np.cumsum(e)[ends], effective, np.cumsum(w * e)[ends] / sum_w)


def _test_in_sequence(
    sets: _Nested, alpha: float, delta: float, need: int, bounds: bool
) -> list[Step]:
    """Fixed-sequence testing from the highest threshold down, from the first with ``need``
    labels (effective) to the first failure."""
    steps: list[Step] = []
    for j in np.flatnonzero(sets.effective >= need).tolist():
        n, k = float(sets.effective[j]), float(sets.share[j] * sets.effective[j])
        passed = binomial_cdf(k, n, alpha) <= delta
        upper = upper_bound(k, n, delta) if bounds else math.nan
        steps.append(
            Step(
                float(sets.threshold[j]),
                int(sets.labels[j]),
                int(sets.errors[j]),
                n,
                upper,
                passed,
            )
        )
        if not passed:
            break
    return steps


def _notes(n: int, need: int, steps: list[Step], weighted: bool) -> tuple[str, ...]:
    """What limits the calibration, in words."""
    notes = []
    if n < need:
        notes.append(
            f"{n} gold labels: at least {need} are needed before any threshold can pass "
            "(review more of the plan)"
        )
    elif steps and not steps[0].passed:
        notes.append(
            "the most confident verdicts already fail the bound: no verdict can be accepted "
            "at this α and δ"
        )
    if weighted:
        notes.append(
            "unequal inclusion probabilities: the bound uses Kish's effective sample size "
            "(approximate)"
        )
    return tuple(notes)


def accepted(scores: Floats, calibration: Calibration) -> Bools:
    """Which verdicts the rule accepts."""
    if calibration.threshold is None:
        return np.zeros(len(scores), dtype=bool)
    return np.asarray(scores >= calibration.threshold, dtype=bool)
