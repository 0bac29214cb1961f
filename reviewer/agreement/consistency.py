"""Judge-vs-human consistency metrics of DeepResearch Bench (PAR, OPC, ICC(1,1), FAP, FAS) and
DR3-Eval's pairwise agreement.

DeepResearch Bench data is organised by task: every task has the same systems' reports
(``items``), one method score per item and several human ratings per item from that task's own
raters. Here that is

- ``method[t][i]``: the method's score of item ``i`` in task ``t``;
- ``human[t][i][r]``: rater slot ``r``'s score of item ``i`` in task ``t``.

Rater slots are per task (DeepResearch Bench's raters differ between tasks). ``None`` or NaN
marks a missing score; every function below says how it skips those. Items must be in the
same system order in every task for :func:`overall_pearson_correlation`; the other functions
only compare items within a task.

Pair preferences use ``sign_eps(d) = 0 if |d| <= tie_epsilon else sign(d)``, so scores that
differ only by rounding noise can be declared tied. ``ties`` decides what a tie means:

- ``"match"``: preferences are three-way (better / worse / tie) and agree when equal, so a
  tie agrees only with a tie. This reads DeepResearch Bench's "human preference in {A better,
  B better, tie}" literally;
- ``"disagree"``: a pair agrees only when both sides strictly prefer the same item; a tie on
  either side is a disagreement (DR3-Eval's ``(A_i - A_j)(B_i - B_j) > 0``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from reviewer.agreement._core import Estimate, FloatArray, Numbers, paired_arrays
from reviewer.agreement.correlation import pearson, spearman

TiePolicy: TypeAlias = Literal["match", "disagree"]
MethodScores: TypeAlias = Sequence[Sequence[float | None]]
HumanScores: TypeAlias = Sequence[Sequence[Sequence[float | None]]]


@dataclass(frozen=True, slots=True)
class PARResult:
    """A pairwise agreement rate with its denominator and tie counts.

    ``n`` is the number of comparisons actually made (the published 300 vs 900 question), and
    ``value`` is ``n_agreements / n`` or ``None`` when ``n == 0``. Tie counts are over the same
    comparisons and let a reader see how much the tie policy matters.
    """

    value: float | None
    n: int
    n_agreements: int
    n_human_ties: int
    n_method_ties: int


@dataclass(frozen=True, slots=True)
class ICCResult:
    """ICC(1,1) with its ANOVA mean squares; ``n`` is the number of items (targets) used."""

    value: float | None
    n: int
    n_raters: int
    ms_between: float | None
    ms_within: float | None


@dataclass(frozen=True, slots=True)
class FilteredCorrelations:
    """FAP and FAS over the tasks whose human ICC(1,1) passed the filter.

    ``fap.n`` / ``fas.n`` count the kept tasks whose per-task correlation was defined (it is
    not when the method or the mean human scores are constant within the task), which can be
    fewer than ``n_kept``. ``icc`` holds every task's ICC (``None`` = undefined, never kept).
    """

    fap: Estimate
    fas: Estimate
    n_tasks: int
    n_kept: int
    kept_tasks: tuple[int, ...]
    icc: tuple[float | None, ...]


def _check_epsilon(tie_epsilon: float) -> None:
    if not (math.isfinite(tie_epsilon) and tie_epsilon >= 0.0):
        raise ValueError(f"tie_epsilon must be finite and >= 0, got {tie_epsilon}")


def _check_ties(ties: str) -> None:
    if ties not in ("match", "disagree"):
        raise ValueError(f"ties must be 'match' or 'disagree', got {ties!r}")


def _sign(d: FloatArray, eps: float) -> npt.NDArray[np.int8]:
    return np.where(np.abs(d) <= eps, 0, np.sign(d)).astype(np.int8)


@dataclass(slots=True)
class _Tally:
    n: int = 0
    agree: int = 0
    human_ties: int = 0
    method_ties: int = 0

    def add(self, dm: FloatArray, dh: FloatArray, eps: float, ties: TiePolicy) -> None:
        """Count the comparisons of method differences ``dm`` with human differences ``dh``;
        positions where either is NaN (a missing score) are not comparisons."""
        valid = ~(np.isnan(dm) | np.isnan(dh))
        sm = _sign(dm[valid], eps)
        sh = _sign(dh[valid], eps)
        self.n += int(sm.shape[0])
        if ties == "match":
            self.agree += int(np.count_nonzero(sm == sh))
        else:
            self.agree += int(np.count_nonzero(sm.astype(np.int16) * sh > 0))
        self.human_ties += int(np.count_nonzero(sh == 0))
        self.method_ties += int(np.count_nonzero(sm == 0))

    def result(self) -> PARResult:
        value = self.agree / self.n if self.n else None
        return PARResult(value, self.n, self.agree, self.human_ties, self.method_ties)


def _float_or_nan(value: float | None, where: str) -> float:
    if value is None:
        return math.nan
    x = float(value)
    if math.isinf(x):
        raise ValueError(f"{where}: infinite score")
    return x


def _method_array(scores: Sequence[float | None], t: int) -> FloatArray:
    return np.array([_float_or_nan(v, f"method[{t}]") for v in scores], dtype=np.float64)


def _human_array(ratings: Sequence[Sequence[float | None]], t: int) -> FloatArray:
    """Items x rater slots, NaN for missing; rows must have equal length within a task."""
    rows = [[_float_or_nan(v, f"human[{t}]") for v in item] for item in ratings]
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise ValueError(f"human[{t}]: items have different numbers of rater slots {widths}")
    width = widths.pop() if widths else 0
    return np.array(rows, dtype=np.float64).reshape(len(rows), width)


def _row_means(h: FloatArray) -> FloatArray:
    """Mean of the available ratings per item; NaN when an item has none."""
    present = ~np.isnan(h)
    count = present.sum(axis=1)
    total = np.where(present, h, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _tasks(method: MethodScores, human: HumanScores) -> list[tuple[FloatArray, FloatArray]]:
    if len(method) != len(human):
        raise ValueError(f"{len(method)} method tasks vs {len(human)} human tasks")
    out = []
    for t, (m_t, h_t) in enumerate(zip(method, human, strict=True)):
        m = _method_array(m_t, t)
        h = _human_array(h_t, t)
        if m.shape[0] != h.shape[0]:
            raise ValueError(f"task {t}: {m.shape[0]} method scores vs {h.shape[0]} human items")
        out.append((m, h))
    return out


def _pair_differences(x: FloatArray) -> FloatArray:
    i, j = np.triu_indices(x.shape[0], 1)
    return np.asarray(x[i] - x[j])


def par_vs_mean_human(
    method: MethodScores,
    human: HumanScores,
    *,
    tie_epsilon: float = 0.0,
    ties: TiePolicy = "match",
) -> PARResult:
    """PAR against the mean human score of each item: one comparison per item pair per task
    (DeepResearch Bench's stated ``N_t x N_p``, 50 x 6 = 300 comparisons).

    The human mean uses whichever ratings an item has; items with no rating or no method score
    drop out of their pairs.
    """
    _check_epsilon(tie_epsilon)
    _check_ties(ties)
    tally = _Tally()
    for m, h in _tasks(method, human):
        tally.add(_pair_differences(m), _pair_differences(_row_means(h)), tie_epsilon, ties)
    return tally.result()


def par_vs_each_rater(
    method: MethodScores,
    human: HumanScores,
    *,
    tie_epsilon: float = 0.0,
    ties: TiePolicy = "match",
) -> PARResult:
    """PAR against every rater separately: one comparison per item pair per rater per task
    (50 x 6 x 3 = 900), the denominator DeepResearch Bench's published values fit.

    A rater's comparison of a pair is skipped when that rater did not score both items.
    """
    _check_epsilon(tie_epsilon)
    _check_ties(ties)
    tally = _Tally()
    for m, h in _tasks(method, human):
        dm = _pair_differences(m)
        for r in range(h.shape[1]):
            tally.add(dm, _pair_differences(h[:, r]), tie_epsilon, ties)
    return tally.result()


def par_inter_rater(
    human: HumanScores,
    *,
    tie_epsilon: float = 0.0,
    ties: TiePolicy = "match",
) -> PARResult:
    """Human inter-agreement PAR: every pair of rater slots within a task compared on every item
    pair (3 rater pairs x 6 x 50 = 900). In the result the first rater of each rater pair
    plays "method" (``n_method_ties``) and the second plays "human" (``n_human_ties``).
    """
    _check_epsilon(tie_epsilon)
    _check_ties(ties)
    tally = _Tally()
    for t, h_t in enumerate(human):
        h = _human_array(h_t, t)
        diffs = [_pair_differences(h[:, r]) for r in range(h.shape[1])]
        for r in range(len(diffs)):
            for s in range(r + 1, len(diffs)):
                tally.add(diffs[r], diffs[s], tie_epsilon, ties)
    return tally.result()


def pairwise_agreement(
    a: Numbers,
    b: Numbers,
    *,
    tie_epsilon: float = 0.0,
    ties: TiePolicy = "disagree",
) -> PARResult:
    """DR3-Eval's pairwise agreement over all ``C(n, 2)`` pairs of one list of cases.

    ``a`` plays the method (automated totals), ``b`` the human (adjudicated totals). The
    default ``ties="disagree"`` is DR3-Eval's rule. Scores must be finite. O(n^2) time, in
    blocks of about four million pairs so memory stays bounded.
    """
    _check_epsilon(tie_epsilon)
    _check_ties(ties)
    x, y = paired_arrays(a, b)
    n = x.shape[0]
    tally = _Tally()
    block = max(1, (1 << 22) // max(n, 1))
    for start in range(0, n, block):
        rows = np.arange(start, min(start + block, n))
        upper = np.arange(n)[None, :] > rows[:, None]
        dm = (x[rows][:, None] - x[None, :])[upper]
        dh = (y[rows][:, None] - y[None, :])[upper]
        tally.add(dm, dh, tie_epsilon, ties)
    return tally.result()


def icc_1_1(ratings: Sequence[Sequence[float | None]] | npt.NDArray[Any]) -> ICCResult:
    """ICC(1,1), one-way random effects, single rater (Shrout & Fleiss 1979), for one task.

    ``ratings`` is items x raters. With ``k`` raters per item,
    ``ICC = (MSB - MSW) / (MSB + (k - 1) MSW)``, ranging over ``[-1/(k-1), 1]``. A one-way
    model is the right one when, as in DeepResearch Bench, each task has its own raters.

    The ANOVA needs a balanced design, so items with any missing rating are dropped
    (listwise). ``value`` is ``None`` with fewer than two complete items, fewer than two
    raters, or when every rating is identical (no variance at all: 0/0).
    """
    h = _human_array([list(row) for row in ratings], 0)
    h = h[~np.isnan(h).any(axis=1)] if h.size else h
    n, k = h.shape
    if n < 2 or k < 2:
        return ICCResult(None, n, k, None, None)
    # Shifting by one observed rating keeps identical ratings exactly zero after subtraction.
    x = h - h[0, 0]
    item_means = x.mean(axis=1)
    grand = float(x.mean())
    ms_between = k * float(((item_means - grand) ** 2).sum()) / (n - 1)
    ms_within = float(((x - item_means[:, None]) ** 2).sum()) / (n * (k - 1))
    denominator = ms_between + (k - 1) * ms_within
    if np.ptp(x) == 0.0 or denominator == 0.0:
        return ICCResult(None, n, k, ms_between, ms_within)
    return ICCResult((ms_between - ms_within) / denominator, n, k, ms_between, ms_within)


def _mean_defined(values: Sequence[float | None]) -> Estimate:
    defined = [v for v in values if v is not None]
    return Estimate(sum(defined) / len(defined) if defined else None, len(defined))


def filtered_average_correlations(
    method: MethodScores,
    human: HumanScores,
    *,
    icc_threshold: float = 0.0,
) -> FilteredCorrelations:
    """FAP and FAS: the mean per-task Pearson and Spearman between method scores and mean human
    scores, over tasks whose human ICC(1,1) is defined and ``>= icc_threshold``.

    DeepResearch Bench keeps tasks with ICC >= 0 (37 of 50). Within a task, items without a
    method score or any human rating are left out of that task's correlation; the ICC itself
    uses only items rated by every rater slot. A kept task whose correlation is undefined
    (constant scores) is left out of the average and shows up as ``fap.n < n_kept``.
    """
    icc_values: list[float | None] = []
    kept: list[int] = []
    rs: list[float | None] = []
    rhos: list[float | None] = []
    for t, (m, h) in enumerate(_tasks(method, human)):
        icc = icc_1_1(h).value
        icc_values.append(icc)
        if icc is None or icc < icc_threshold:
            continue
        kept.append(t)
        mean_h = _row_means(h)
        ok = ~(np.isnan(m) | np.isnan(mean_h))
        rs.append(pearson(m[ok], mean_h[ok]).value)
        rhos.append(spearman(m[ok], mean_h[ok]).value)
    return FilteredCorrelations(
        fap=_mean_defined(rs),
        fas=_mean_defined(rhos),
        n_tasks=len(icc_values),
        n_kept=len(kept),
        kept_tasks=tuple(kept),
        icc=tuple(icc_values),
    )


def overall_pearson_correlation(method: MethodScores, human: HumanScores) -> Estimate:
    """OPC: Pearson's r between systems' mean method scores and mean human scores over tasks.

    Item ``i`` must be the same system in every task. Each system is averaged over the tasks
    where it has both a method score and at least one human rating, so both means rest on the
    same tasks; a system with no such task is dropped. ``n`` is the number of systems, which
    in DeepResearch Bench is 4, so the value carries little information.
    """
    tasks = _tasks(method, human)
    if not tasks:
        return Estimate(None, 0)
    widths = {m.shape[0] for m, _ in tasks}
    if len(widths) > 1:
        raise ValueError(f"tasks have different numbers of systems {sorted(widths)}")
    m_all = np.vstack([m for m, _ in tasks])
    h_all = np.vstack([_row_means(h) for _, h in tasks])
    both = ~(np.isnan(m_all) | np.isnan(h_all))
    count = both.sum(axis=0)
    keep = count > 0
    safe = np.maximum(count, 1)
    x = np.where(both, m_all, 0.0).sum(axis=0)[keep] / safe[keep]
    y = np.where(both, h_all, 0.0).sum(axis=0)[keep] / safe[keep]
    return pearson(x, y)


def drb_overall_score(
    par: float | None, opc: float | None, fap: float | None, fas: float | None
) -> float | None:
    """DeepResearch Bench's "Overall Score": the plain mean of PAR, OPC, FAP and FAS (all on
    the same scale, fractions or percentages). ``None`` if any component is undefined,
    because averaging the remaining three would not be the published quantity.
    """
    parts = (par, opc, fap, fas)
    if any(p is None for p in parts):
        return None
    return sum(p for p in parts if p is not None) / 4.0
