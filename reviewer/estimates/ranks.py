"""Could two adjacent systems swap ranks? A paired bootstrap over tasks.

Tasks are the unit a benchmark samples (claims and rubrics are nested in reports, reports in
tasks), and every system answered the same tasks, so a resample draws tasks with replacement
and keeps each task's systems together: the difference between two systems is resampled as a
pair, and what they share (a hard task) cancels. Each system's metric moves with the resample
through its per-task influence (:mod:`reviewer.estimates.influence`: the first-order effect of
weighting a task once more), so a thousand resamples of seventeen systems are one matrix
product rather than seventeen thousand aggregations.

**Intervals with few tasks.** A percentile interval of a bootstrap over *T* tasks is too
narrow when *T* is small: the bootstrap's spread is the plug-in one (a divisor of *T*, not
*T − 1*) and its quantiles ignore that the spread itself is estimated. The interval of a
difference is therefore ``d ± t_{T−1}·se``, ``se`` the resamples' standard deviation times
``√(T/(T−1))``: the t interval of a mean over tasks, with the resamples supplying the
influence-based variance.

**Could swap, over several pairs.** A pair *could swap* when its difference is not
significantly different from zero — with the test corrected for the number of adjacent pairs
in the ranking (Holm's step-down procedure on the pairs' t statistics), so that "no pair could
swap" is a statement about the whole ranking at the stated confidence, not about each pair.
Each pair's own interval stays a per-pair 95% interval. The *reversed share* is the share of
resamples in which the order reverses (ties count half): a description of the resamples, not
a probability that the systems would swap.

With fewer than :data:`MIN_TASKS` tasks, or when every resample gives the same difference,
the result says so instead of showing an interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from reviewer.estimates.ppi import t_value

Floats = npt.NDArray[np.float64]

MIN_TASKS = 10
"""Tasks below which a bootstrap over tasks is too coarse to trust (flagged as weak)."""
DEFAULT_RESAMPLES = 1000


def task_weights(tasks: int, resamples: int, seed: int) -> Floats:
    """(resamples × tasks): how often each task is drawn in each resample."""
    rng = np.random.default_rng(seed)
    if tasks == 0:
        return np.zeros((resamples, 0))
    return rng.multinomial(tasks, np.full(tasks, 1.0 / tasks), size=resamples).astype(np.float64)


def replicates(values: Floats, influence: Floats, weights: Floats) -> Floats:
    """(resamples × systems): each system's value under each resample, to first order."""
    return np.asarray(values[None, :] + (weights - 1.0) @ influence, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class RankPair:
    """Two systems adjacent in one variant's ranking (``upper`` ranks above ``lower``)."""

    upper: int
    lower: int
    difference: float
    lower_bound: float | None
    upper_bound: float | None
    reversed_share: float | None
    """Share of resamples in which the order reverses (ties count half): descriptive only."""
    could_swap: bool | None
    """The difference is not significantly non-zero, Holm-corrected over the ranking's
    adjacent pairs."""
    status: str
    """'ok', 'weak' (too few tasks) or 'undefined' (degenerate resamples)."""
    note: str
    t: float | None = None
    """The difference over its standard error (t on tasks − 1 degrees of freedom)."""


def adjacent_pairs(
    values: Sequence[float | None],
    reps: Floats,
    tasks: int,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> list[RankPair]:
    """Rank the systems with a value and test each adjacent pair (Holm over the pairs)."""
    ranked = _ranked(values, higher_is_better)
    out: list[RankPair] = []
    for upper, lower in pairwise(ranked):
        a, b = values[upper], values[lower]
        assert a is not None and b is not None
        diff = a - b if higher_is_better else b - a
        if tasks < 2 or reps.shape[0] == 0:
            out.append(_undefined(upper, lower, diff, f"{tasks} task(s): nothing to resample"))
            continue
        boot = reps[:, upper] - reps[:, lower]
        out.append(
            _tested(upper, lower, diff, boot if higher_is_better else -boot, tasks, confidence)
        )
    return holm(out, tasks, confidence)


def holm(pairs: list[RankPair], tasks: int, confidence: float = 0.95) -> list[RankPair]:
    """``could_swap`` by Holm's step-down over the tested pairs: the pair with the largest
    |t| is compared with the quantile at α/m, the next with α/(m − 1), …; from the first that
    falls short, every remaining pair could swap."""
    tested = [i for i, p in enumerate(pairs) if p.t is not None]
    order = sorted(tested, key=lambda i: -abs(pairs[i].t or 0.0))
    alpha = 1.0 - confidence
    out = list(pairs)
    m = len(order)
    rejecting = True
    for step, i in enumerate(order):
        quantile = t_value(1.0 - alpha / (m - step), max(1, tasks - 1))
        rejecting = rejecting and abs(pairs[i].t or 0.0) > quantile
        out[i] = replace(out[i], could_swap=not rejecting)
    return out


def _ranked(values: Sequence[float | None], higher_is_better: bool) -> list[int]:
    """The systems with a value, best first (ties by index)."""
    return sorted(
        (i for i, v in enumerate(values) if v is not None),
        key=lambda i: (-(values[i] or 0.0) if higher_is_better else values[i] or 0.0, i),
    )


def _undefined(upper: int, lower: int, diff: float, note: str) -> RankPair:
    return RankPair(upper, lower, diff, None, None, None, None, "undefined", note)


def _tested(
    upper: int, lower: int, diff: float, boot: Floats, tasks: int, confidence: float
) -> RankPair:
    """One adjacent pair on the resampled differences (upper − lower, better first): a t
    interval on tasks − 1 degrees of freedom."""
    if float(np.ptp(boot)) <= 1e-12 * max(1.0, abs(diff)):
        return _undefined(
            upper,
            lower,
            diff,
            "every resample gives the same difference (no variation across tasks): no interval",
        )
    se = float(np.std(boot)) * np.sqrt(tasks / max(1, tasks - 1))
    half = t_value(confidence, max(1, tasks - 1)) * se
    reversed_share = float(np.mean(boot < 0) + 0.5 * np.mean(boot == 0))
    status, note = ("ok", "")
    if tasks < MIN_TASKS:
        status, note = "weak", f"only {tasks} tasks (< {MIN_TASKS}) to resample"
    t = diff / se if se > 0 else None
    return RankPair(
        upper,
        lower,
        diff,
        diff - half,
        diff + half,
        reversed_share,
        diff - half <= 0.0,
        status,
        note,
        t,
    )
