"""Review plans: which subjects to review, drawn so that what reviewers decide is a probability
sample of everything the judge decided.

An impact order tells a reviewer where a flip matters most, but nothing valid can be
estimated from it. A plan draws subjects with known inclusion probabilities instead, in an
order whose every prefix is itself a valid sample — a team that stops at 38 of 120 still holds
a sample it can estimate from:

* **uniform** — a random permutation of the frame; the first ``budget`` are the plan (simple
  random sampling without replacement).
* **stratified** — the frame split into strata (framework, dimension, system, or any
  combination), each sampled without replacement; the allocation is proportional to stratum
  size, or Neyman's (size × expected spread of the judge's errors), with at least two draws per
  stratum when the budget allows (a variance needs two). The strata's draws are interleaved
  evenly so any prefix keeps the allocation's shares.
* **weighted** — draws with replacement, each with probability ``(1 − floor)·w_i/Σw +
  floor/N``: the weights (impact, judge uncertainty) send reviewers where errors matter, and
  the uniform floor keeps every subject's probability positive so the estimate stays unbiased.
  Draws are independent, so every prefix is a sample too; a subject drawn twice counts twice.

Everything is a pure function of the frame (in a fixed order) and a seed: the same frame and
seed give the same plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

Design = Literal["uniform", "stratified", "weighted"]
DESIGNS: tuple[Design, ...] = ("uniform", "stratified", "weighted")
Allocation = Literal["proportional", "neyman"]
ALLOCATIONS: tuple[Allocation, ...] = ("proportional", "neyman")

Ints: TypeAlias = npt.NDArray[np.int64]
Floats: TypeAlias = npt.NDArray[np.float64]

MIN_PER_STRATUM = 2
"""Draws every stratum gets when the budget allows: a variance needs two."""
DEFAULT_FLOOR = 0.2
"""Share of a weighted plan's probability spread uniformly over the frame."""


@dataclass(frozen=True, slots=True)
class Draws:
    """A plan's draws in review order."""

    index: Ints
    """Positions in the frame (a weighted plan may repeat one)."""
    stratum: Ints
    p: Floats
    """Probability that a single draw picks this subject within its stratum (1/N_h for
    sampling without replacement)."""
    pi: Floats
    """Probability that the subject is in the plan at its full budget."""
    allocation: Ints
    """Draws per stratum."""
    with_replacement: bool


def draw_uniform(size: int, budget: int, seed: int) -> Draws:
    if size <= 0:
        raise ValueError("the frame is empty: nothing to draw")
    budget = min(budget, size)
    order = np.random.default_rng(seed).permutation(size)[:budget].astype(np.int64)
    n = len(order)
    return Draws(
        order,
        np.zeros(n, dtype=np.int64),
        np.full(n, 1.0 / size),
        np.full(n, budget / size),
        np.array([budget], dtype=np.int64),
        False,
    )


def allocate(
    sizes: Ints, budget: int, scores: Floats | None = None, minimum: int = MIN_PER_STRATUM
) -> Ints:
    """Draws per stratum: proportional to ``scores`` (stratum sizes when None), at least
    ``minimum`` each where the budget and the stratum allow, never more than a stratum holds;
    rounded by largest remainder so the total is exactly the budget (or the frame).

    Strata that the proportional share would put above their size or below the minimum are
    fixed there and the rest of the budget is shared again among the others, so the shares
    stay proportional wherever no bound binds.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    count = len(sizes)
    budget = min(int(budget), int(sizes.sum()))
    raw = (sizes if scores is None else np.asarray(scores, dtype=np.float64)).astype(np.float64)
    if raw.sum() <= 0:
        raw = sizes.astype(np.float64)
    floor = (
        np.minimum(sizes, minimum) if budget >= minimum * count else np.zeros(count, dtype=np.int64)
    )
    target = _bounded_shares(sizes, budget, raw, floor)
    return _round_to_budget(target, sizes, budget)


def _bounded_shares(sizes: Ints, budget: int, raw: Floats, floor: Ints) -> Floats:
    """Shares proportional to ``raw``, with the strata a bound binds (their size above, the
    floor below) fixed there and the rest of the budget shared again among the others."""
    count = len(sizes)
    fixed = np.zeros(count, dtype=bool)
    target = np.zeros(count)
    while True:
        free = ~fixed
        remaining = budget - target[fixed].sum()
        weights = np.where(free, raw, 0.0)
        if weights.sum() <= 0:
            weights = np.where(free, sizes, 0).astype(np.float64)
        ideal = np.where(free, remaining * weights / max(weights.sum(), 1e-300), 0.0)
        over = free & (ideal > sizes)
        under = free & (ideal < floor)
        if not over.any() and not under.any():
            return np.where(free, ideal, target)
        target = np.where(over, sizes, np.where(under, floor, target))
        fixed |= over | under


def _round_to_budget(target: Floats, sizes: Ints, budget: int) -> Ints:
    """Whole draws by largest remainder (ties to the earlier stratum), never above a size."""
    count = len(sizes)
    out = np.floor(target + 1e-9).astype(np.int64)
    short = budget - int(out.sum())
    order = np.lexsort((np.arange(count), -(target - out)))
    for h in order:
        if short <= 0:
            break
        if out[h] < sizes[h]:
            out[h] += 1
            short -= 1
    return out


def _interleave(allocation: Ints, rng: np.random.Generator) -> Ints:
    """The stratum of each position: stratum h's j-th draw sits at (j + u_h)/n_h of the way
    through the plan (u_h a random offset), so every prefix holds each stratum's share."""
    keys: list[float] = []
    owners: list[int] = []
    offsets = rng.random(len(allocation))
    for h, n in enumerate(allocation.tolist()):
        for j in range(n):
            keys.append((j + offsets[h]) / n)
            owners.append(h)
    order = np.argsort(np.array(keys), kind="stable")
    return np.array(owners, dtype=np.int64)[order]


def draw_stratified(
    strata: Ints,
    budget: int,
    seed: int,
    allocation: Allocation = "proportional",
    spread: Floats | None = None,
) -> Draws:
    """``strata[i]`` is the stratum (0..H-1) of frame position i; ``spread[h]`` the expected
    standard deviation of the judge's errors in stratum h (Neyman allocation)."""
    strata = np.asarray(strata, dtype=np.int64)
    if not len(strata):
        raise ValueError("the frame is empty: nothing to draw")
    count = int(strata.max()) + 1
    sizes = np.bincount(strata, minlength=count).astype(np.int64)
    if allocation == "neyman":
        if spread is None:
            raise ValueError("Neyman allocation needs each stratum's expected spread")
        scores: Floats | None = sizes.astype(np.float64) * np.asarray(spread, dtype=np.float64)
    else:
        scores = None
    alloc = allocate(sizes, budget, scores)
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(strata == h) for h in range(count)]
    picked = [m[rng.permutation(len(m))[: alloc[h]]] for h, m in enumerate(members)]
    owners = _interleave(alloc, rng)
    cursor = np.zeros(count, dtype=np.int64)
    index = np.empty(len(owners), dtype=np.int64)
    for position, h in enumerate(owners.tolist()):
        index[position] = picked[h][cursor[h]]
        cursor[h] += 1
    size_of = sizes[owners].astype(np.float64)
    return Draws(index, owners, 1.0 / size_of, alloc[owners] / size_of, alloc, False)


def weighted_probabilities(weights: Floats, floor: float = DEFAULT_FLOOR) -> Floats:
    """Each subject's single-draw probability: the weights' share, mixed with a uniform floor
    (every probability at least ``floor / N``)."""
    w = np.asarray(weights, dtype=np.float64)
    if not len(w):
        raise ValueError("the frame is empty: nothing to draw")
    if not 0.0 < floor <= 1.0:
        raise ValueError("the floor must be in (0, 1]: every subject needs a chance")
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative")
    total = w.sum()
    uniform = np.full(len(w), 1.0 / len(w))
    if total <= 0:
        return uniform
    return np.asarray((1.0 - floor) * w / total + floor * uniform, dtype=np.float64)


def draw_weighted(weights: Floats, budget: int, seed: int, floor: float = DEFAULT_FLOOR) -> Draws:
    p = weighted_probabilities(weights, floor)
    rng = np.random.default_rng(seed)
    index = rng.choice(len(p), size=budget, replace=True, p=p).astype(np.int64)
    chosen = p[index]
    pi = -np.expm1(budget * np.log1p(-np.minimum(chosen, 1 - 1e-16)))
    return Draws(
        index,
        np.zeros(budget, dtype=np.int64),
        chosen,
        pi,
        np.array([budget], dtype=np.int64),
        True,
    )
