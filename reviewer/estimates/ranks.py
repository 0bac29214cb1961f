"""Could two adjacent systems swap ranks? A paired bootstrap over tasks.

Tasks are the unit a benchmark samples (claims and rubrics are nested in reports, reports in
tasks), and every system answered the same tasks, so a resample draws tasks with replacement
and keeps each task's systems together: the difference between two systems is resampled as a
pair, and what they share (a hard task) cancels. Each system's metric moves with the resample
through its per-task influence (:mod:`reviewer.estimates.influence`: the first-order effect of
weighting a task once more), so a thousand resamples of seventeen systems are one matrix
product rather than seventeen thousand aggregations.

A pair *could swap* when the percentile interval of their difference reaches zero; the
probability of a swap is the share of resamples that reverse the order. With fewer than
:data:`MIN_TASKS` tasks, or when every resample gives the same difference, the result says
so instead of showing an interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

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
    p_swap: float | None
    """Share of resamples in which the order reverses (ties count half)."""
    could_swap: bool | None
    status: str
    """'ok', 'weak' (too few tasks) or 'undefined' (degenerate resamples)."""
    note: str


def adjacent_pairs(
    values: Sequence[float | None],
    reps: Floats,
    tasks: int,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> list[RankPair]:
    """Rank the systems with a value and test each adjacent pair."""
    ranked = _ranked(values, higher_is_better)
    tail = (1 - confidence) / 2
    out: list[RankPair] = []
    for upper, lower in pairwise(ranked):
        a, b = values[upper], values[lower]
        assert a is not None and b is not None
        diff = a - b if higher_is_better else b - a
        if tasks < 2 or reps.shape[0] == 0:
            out.append(_undefined(upper, lower, diff, f"{tasks} task(s): nothing to resample"))
            continue
        boot = reps[:, upper] - reps[:, lower]
        out.append(_tested(upper, lower, diff, boot if higher_is_better else -boot, tasks, tail))
    return out


def _ranked(values: Sequence[float | None], higher_is_better: bool) -> list[int]:
    """The systems with a value, best first (ties by index)."""
    return sorted(
        (i for i, v in enumerate(values) if v is not None),
        key=lambda i: (-(values[i] or 0.0) if higher_is_better else values[i] or 0.0, i),
    )


def _undefined(upper: int, lower: int, diff: float, note: str) -> RankPair:
    return RankPair(upper, lower, diff, None, None, None, None, "undefined", note)


def _tested(upper: int, lower: int, diff: float, boot: Floats, tasks: int, tail: float) -> RankPair:
    """One adjacent pair tested on the resampled differences (upper − lower, better first)."""
    if float(np.ptp(boot)) <= 1e-12 * max(1.0, abs(diff)):
        return _undefined(
            upper,
            lower,
            diff,
            "every resample gives the same difference (no variation across tasks): no interval",
        )
    lo, hi = (float(v) for v in np.quantile(boot, [tail, 1 - tail]))
    p_swap = float(np.mean(boot < 0) + 0.5 * np.mean(boot == 0))
    swap = lo <= 0.0
    status, note = ("ok", "")
    if tasks < MIN_TASKS:
        status, note = "weak", f"only {tasks} tasks (< {MIN_TASKS}) to resample"
    return RankPair(upper, lower, diff, lo, hi, p_swap, swap, status, note)
