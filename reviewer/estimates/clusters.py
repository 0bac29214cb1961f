"""Report plans: whole reports as the sampling unit, for the metrics a subject plan cannot
estimate.

DailyReport's UserPref is a threshold rule over a report's verdicts and RACE's score a ratio
``T/(T+R)`` of two sums over a report's verdicts. A subject plan sees a handful of a report's
verdicts, and the truth depends on *which* of them err together (a judge errs more on some
reports than on others): neither single-verdict influences (first order) nor imputing the
unseen verdicts one by one (independently) recovers it. When the plan draws whole reports and
every verdict of a drawn report is decided, the report's exact score under the human verdicts
is known, and the metric — a mean of report values, or a smooth aggregate of pooled report
parts — is estimated without any model of the errors:

* each report ``r`` carries ``c_r``, what deciding its verdicts moved each target (the
  framework's own rescoring of the report with all its decided verdicts set back to the
  judge's, at once: exact for a mean of report values, the report's linearised contribution
  to a pooled ratio — the delta method with the report as the unit);
* the plan is stratified simple random sampling of reports (by system), so the frame's
  total ``Σ_r c_r`` is estimated by ``Σ_h N_h·mean_{S_h}(c)`` with the design variance
  ``Σ_h N_h²·(1 − n_h/N_h)·s_h²/n_h``;
* what was decided outside the plan is known exactly and subtracted, as for subjects: the
  correction of the anchor is the estimated total less every report's known ``c_r``.

A stratum with a single decided report has no variance of its own: it borrows the pooled
within-stratum variance of the others. A stratum none of whose drawn reports is decided in
full leaves its targets without an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from reviewer.estimates.correction import Correction
from reviewer.estimates.designs import draw_stratified

Ints: TypeAlias = npt.NDArray[np.int64]
Floats: TypeAlias = npt.NDArray[np.float64]
Bools: TypeAlias = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class ClusterTotals:
    """Per target: the estimated frame total of ``c``, its design variance, the decided
    reports it rests on, those of them whose ``c`` moves the target, the reports it speaks
    for, and whether every stratum the target covers holds a decided report."""

    total: Floats
    variance: Floats
    reviews: Ints
    disagreements: Ints
    population: Floats
    covered: Bools
    magnitude: Floats
    """Mean |c| of the decided reports whose ``c`` moves the target."""
    third: Floats
    """The estimate's third cumulant: ``Σ_h N_h³·(1 − f_h)(1 − 2f_h)·k3_h/n_h²`` (``k3_h`` the
    stratum's unbiased third central moment; 0 below three decided reports)."""
    df: Floats
    """Satterthwaite's degrees of freedom of the variance (the decided reports less one per
    stratum when the strata's variances are alike)."""


def cluster_totals(
    stratum: Ints, c: Floats, sizes: Floats, relevant: Bools, fpc: bool = True
) -> ClusterTotals:
    """The stratified expansion estimate of ``Σ_r c_r`` over the frame's reports.

    ``stratum``, ``c``: the decided sampled reports' strata and values (reports × targets);
    ``sizes``: reports per stratum in the frame; ``relevant``: (strata × targets) whether the
    stratum's reports can move the target (a system's target is moved by its own reports
    only)."""
    strata, targets = len(sizes), c.shape[1]
    n = np.bincount(stratum, minlength=strata).astype(np.float64)
    sums = np.zeros((strata, targets))
    np.add.at(sums, stratum, c)
    means = sums / np.maximum(n, 1.0)[:, None]
    squares = np.zeros((strata, targets))
    np.add.at(squares, stratum, (c - means[stratum]) ** 2)
    s2 = squares / np.maximum(n - 1.0, 1.0)[:, None]
    s2 = _borrowed(s2, squares, n)
    f = np.where(sizes > 0, 1.0 - n / np.maximum(sizes, 1.0), 0.0) if fpc else np.ones(strata)
    per = sizes[:, None] ** 2 * np.maximum(f, 0.0)[:, None] * s2 / np.maximum(n, 1.0)[:, None]
    total = (sizes[:, None] * means * relevant).sum(axis=0)
    variance = (per * relevant).sum(axis=0)
    cubes = np.zeros((strata, targets))
    np.add.at(cubes, stratum, (c - means[stratum]) ** 3)
    k3 = np.where(
        (n >= 3)[:, None], cubes * n[:, None] / np.maximum((n - 1.0) * (n - 2.0), 1.0)[:, None], 0.0
    )
    f3 = np.maximum(f, 0.0) * (1.0 - 2.0 * (1.0 - f)) if fpc else np.ones(strata)
    third = (
        sizes[:, None] ** 3 * f3[:, None] * k3 / np.maximum(n, 1.0)[:, None] ** 2 * relevant
    ).sum(axis=0)
    own = (n >= 2)[:, None] & relevant
    freedom = np.maximum(n - 1.0, 1.0)[:, None]
    spread = (np.where(own, per, 0.0) ** 2 / freedom).sum(axis=0)
    df = np.where(
        spread > 0, np.where(own, per, 0.0).sum(axis=0) ** 2 / np.maximum(spread, 1e-300), 0.0
    )
    present = (n > 0)[:, None]
    covered = np.all(present | ~relevant | (sizes[:, None] == 0), axis=0)
    moving = (c != 0) & relevant[stratum]
    count = moving.sum(axis=0)
    magnitude = np.where(count > 0, (np.abs(c) * moving).sum(axis=0) / np.maximum(count, 1), 0.0)
    return ClusterTotals(
        total,
        variance,
        (relevant[stratum]).sum(axis=0).astype(np.int64),
        count.astype(np.int64),
        (sizes[:, None] * relevant).sum(axis=0),
        covered,
        magnitude,
        third,
        df,
    )


def _borrowed(s2: Floats, squares: Floats, n: Floats) -> Floats:
    """A stratum with one decided report takes the within-stratum variance pooled over the
    strata with two or more (its own is not measurable)."""
    several = n >= 2
    if not several.any() or several.all():
        return s2
    pooled = squares[several].sum(axis=0) / max(float((n[several] - 1.0).sum()), 1.0)
    out = s2.copy()
    out[n == 1] = pooled
    return out


def cluster_correction(totals: ClusterTotals, known: Floats, rows: int = 0) -> Correction:
    """The correction of every target by a report plan, in the form of the store's other
    designs: the estimated frame total less ``known`` (``Σ_r c_r`` over every report whose
    decisions are known, in the plan or not). A target some stratum of which holds no
    decided report gets no estimate (NaN). ``rows``: the reviewed rows the caller's rank
    comparisons hold (their share of the correction is left at 0: a report's correction is
    not split among its verdicts)."""
    correction = np.where(totals.covered, totals.total - known, np.nan)
    variance = np.where(totals.covered, totals.variance, np.nan)
    targets = len(correction)
    zeros = np.zeros(targets)
    return Correction(
        tuned=correction,
        ppi=correction,
        human=correction,
        var_tuned=variance,
        var_ppi=variance,
        var_human=variance,
        lam=np.ones(targets),
        reviews=totals.reviews,
        disagreements=totals.disagreements,
        single_cells=zeros.astype(np.int64),
        empty_population=zeros,
        unreviewed=np.maximum(totals.population - totals.reviews, 0.0),
        row_share=np.zeros((rows, targets)),
        population=totals.population,
        magnitude=totals.magnitude,
        skip_low=zeros.copy(),
        skip_high=zeros.copy(),
        df=np.where(totals.df > 0, totals.df, np.nan),
        third=np.where(totals.covered, totals.third, 0.0),
    )


def draw_reports(strata: Ints, budget: int, seed: int) -> tuple[Ints, Floats]:
    """Reports (positions in ``strata``, in review order) of a report plan: each stratum
    (system) gets its proportional share of ``budget`` (at least two where it has two), its
    reports drawn without replacement, the strata interleaved so every prefix keeps the
    shares; and each drawn report's inclusion probability ``n_h/N_h``."""
    drawn = draw_stratified(strata, budget, seed, "proportional")
    return drawn.index, drawn.pi
