"""Judge scores corrected by a plan's human decisions: a design-based PPI++ estimator for any
metric a framework computes.

**What is estimated.** The *target* is what a metric would be if a human had decided every
subject of the run — the adjudicated score under full review. The judge's verdicts are known
everywhere; a plan's reviews are a probability sample of the subjects; decisions outside the
plan are known exactly and sit in the *base* state (judge values with those decisions applied).

**Linearisation.** Benchmark metrics are not means of verdicts: DailyReport's Fac weighs claims
by their subtask's instruction score and pools subtasks, RACE divides weighted sums, F1
combines precision and recall. Each reviewed subject's *influence* ``d_i`` is the change of the
metric when that one verdict is set to the human's value on the base state (computed with the
framework's own scoring, :mod:`reviewer.estimates.influence`). To first order the target is
``base + Σ_all d_i``, and ``Σ_all d_i`` is a population total a probability sample estimates
without bias. For a mean of verdicts, or a ratio whose denominator no verdict moves, the first
order is exact; where several errors in one report interact (a level such as UserPref), it is
an approximation, and callers say so.

**PPI++ on the influences.** Within each *cell* (a post-stratum: stratum of the plan × system),
the Hájek-weighted sample mean of ``d`` estimates the cell's mean influence — PPI's rectifier.
PPI++'s power tuning is the control variate ``(1 − λ)(ā_S − ā)`` on the judge's own
contribution ``a_i = s·x_i`` (``x`` its verdict as a number, ``s`` the metric's average
sensitivity to that kind of verdict in that system, estimated from the disagreements seen),
whose population mean is known because the judge judged everything. With pseudo-labels
``ỹ = a + d`` the cell estimate is exactly ppi-python's mean estimate of ``ỹ`` with
predictions ``a`` on the sample and on the whole cell, so for a mean of verdicts this *is*
PPI++; λ = 1 is PPI, λ = 0 leans on the reviews alone (for a mean of verdicts: the human sample
mean). λ is tuned by ppi-python's formula where a cell has at least :data:`LAMBDA_MIN_N`
reviews, else left at 1 (a λ from a handful of points costs more than it saves).

**Variance.** The plan is the only randomness, so the variance is the design's: per cell, the
linearised (Hájek) variance of the weighted mean of ``ỹ − λa`` times ``N_c²``, with the
finite-population correction for sampling without replacement; cells add up. Unlike
ppi-python's interval there is no term for the judge mean's own sampling error: it is known for
every subject of this run, which is the population. λ is treated as fixed, as in ppi-python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from reviewer.estimates.ppi import Moments, point, power_tuning

Ints: TypeAlias = npt.NDArray[np.int64]
Floats: TypeAlias = npt.NDArray[np.float64]
Bools: TypeAlias = npt.NDArray[np.bool_]

LAMBDA_MIN_N = 10
"""Reviews a cell needs before its PPI++ weight is tuned (else λ = 1, plain PPI)."""
LAMBDA_MIN_DISAGREEMENTS = 10
"""Disagreements moving the target each cross-fitting fold of a cell needs before λ is tuned
there: λ learnt from fewer is noise, which the interval (λ treated as fixed) would not see."""
MIN_CELL = 20
"""Reviews a (stratum, system) post-stratum needs to stand alone; smaller ones are pooled
with the rest of their stratum, so that no variance rests on a handful of points."""


@dataclass(frozen=True, slots=True)
class Sample:
    """The reviewed draws of a plan, one row per draw (a subject drawn twice is two rows)."""

    cell: Ints
    group: Ints
    """(system, kind) group of the subject: the judge-contribution model's unit."""
    weight: Floats
    """Design weight relative to the other draws of its cell (1/p; 1 without replacement)."""
    x: Floats
    """The judge's verdict as a number (0 where its scale gives none)."""
    dx: Floats
    """The human's number minus the judge's."""
    d: Floats
    """(rows × targets): the influence of the human verdict on each target metric."""
    fold: Ints | None = None
    """0 or 1 per row: the cross-fitting folds of the tuned λ (None: tune on every row)."""


@dataclass(frozen=True, slots=True)
class Population:
    """What is known about every subject the plan could have drawn (outside decisions
    removed)."""

    cell_size: Floats
    fpc: bool
    """Sampling without replacement: apply the finite-population correction."""
    pair_cell: Ints
    pair_group: Ints
    """(cell, group) pairs present, with the count and sums of the judge's numbers."""
    pair_n: Floats
    pair_x: Floats
    pair_x2: Floats
    member: Bools
    """(groups × targets): the group's subjects belong to the target's system."""
    relevant: Bools
    """(groups × targets): the group's verdicts can move the target (reviews, disagreements
    and uncorrected subjects are counted over these)."""


@dataclass(frozen=True, slots=True)
class Correction:
    """Per target: the estimated ``target − base`` for tuned λ, λ = 1 and λ = 0, with their
    design variances and what they rest on."""

    tuned: Floats
    ppi: Floats
    human: Floats
    var_tuned: Floats
    var_ppi: Floats
    var_human: Floats
    lam: Floats
    """The cells' λ, averaged with the cells' sizes as weights."""
    reviews: Ints
    """Reviewed draws of subjects whose verdicts can move the target."""
    disagreements: Ints
    """Reviewed draws whose human verdict moves the target."""
    single_cells: Ints
    """Cells holding this target's subjects with exactly one review (no variance)."""
    empty_population: Floats
    """Subjects that could move the target in cells without any review (not corrected)."""
    row_share: Floats
    """(rows × targets): each row's share of the λ = 1 correction (PPI's rectifier), for
    resampling tasks."""


@dataclass(slots=True)
class _Cells:
    """A sample's rows grouped by cell (all rows, or one fold's) for fast per-cell sums."""

    order: Ints
    starts: Ints
    present: Bools
    keep: Floats
    cells: int
    w: Floats
    n: Floats
    sw: Floats
    sw2: Floats

    def sum(self, values: Floats) -> Floats:
        """Per-cell sums of the kept rows' ``values`` ((rows,) or (rows × targets))."""
        kept = values * (self.keep if values.ndim == 1 else self.keep[:, None])
        shape = (self.cells, *values.shape[1:])
        out = np.zeros(shape)
        if len(self.order):
            sums = np.add.reduceat(kept[self.order], self.starts, axis=0)
            out[self.present] = sums
        return out


def _cells(sample: Sample, keep: Bools, cells: int) -> _Cells:
    order = np.argsort(sample.cell, kind="stable")
    ordered = sample.cell[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else \
        np.zeros(0, dtype=np.int64)
    present = np.zeros(cells, dtype=bool)
    present[ordered[starts]] = True
    w = sample.weight
    layout = _Cells(order, starts, present, keep.astype(np.float64), cells, w,
                    np.zeros(cells), np.zeros(cells), np.zeros(cells))
    layout.n = layout.sum(np.ones(len(w)))
    layout.sw = layout.sum(w)
    layout.sw2 = layout.sum(w * w)
    return layout


def _slope(sample: Sample, keep: Bools, d: Floats, expand: Floats, population: Population
           ) -> Floats:
    """(groups × targets): the metric's average change per unit of a verdict's number, from
    the kept rows' disagreements (expansion-weighted least squares through the origin)."""
    groups = population.member.shape[0]
    moved = (sample.dx != 0) & keep
    numerator = np.zeros((groups, d.shape[1]))
    np.add.at(numerator, sample.group, (expand * sample.dx * moved)[:, None] * d)
    denominator = np.bincount(sample.group, weights=expand * sample.dx * sample.dx * moved,
                              minlength=groups)
    safe = np.where(denominator > 0, denominator, 1.0)[:, None]
    return np.where(denominator[:, None] > 0, numerator / safe, 0.0) * population.member


def _moments(layout: _Cells, sample: Sample, d: Floats, slope: Floats,
             population: Population) -> tuple[Moments, Floats]:
    """The cells' PPI++ sums with pseudo-labels ``ỹ = a + d``, ``a = slope·x``; and the
    cells' population totals of ``a``."""
    cells, targets = len(population.cell_size), d.shape[1]
    a = slope[sample.group] * sample.x[:, None]
    y = a + d
    w, w2 = layout.w[:, None], (layout.w * layout.w)[:, None]
    pop_a = np.zeros((cells, targets))
    pop_a2 = np.zeros((cells, targets))
    np.add.at(pop_a, population.pair_cell,
              slope[population.pair_group] * population.pair_x[:, None])
    np.add.at(pop_a2, population.pair_cell,
              slope[population.pair_group] ** 2 * population.pair_x2[:, None])

    def col(v: Floats) -> Floats:
        return np.broadcast_to(v[:, None], (cells, targets)).astype(np.float64)

    wy, wa = w * y, w * a
    w2y, w2a = w2 * y, w2 * a
    m = Moments(
        n=col(layout.n), sw=col(layout.sw), sw2=col(layout.sw2),
        swy=layout.sum(wy), swp=layout.sum(wa), sw2y=layout.sum(w2y), sw2p=layout.sum(w2a),
        sw2yp=layout.sum(w2y * a), sw2y2=layout.sum(w2y * y), sw2p2=layout.sum(w2a * a),
        big_n=col(population.cell_size), sq=pop_a, sq2=pop_a2,
    )
    return m, pop_a


def _per_cell(m: Moments, pop_a: Floats, lam: Floats, fpc: Floats) -> tuple[Floats, Floats]:
    """Each cell's estimated total of ``d`` (PPI++ on ỹ, minus the known total of ``a``) and
    its design variance: the Hájek linearised variance of the weighted mean of ``ỹ − λa``
    times ``N_c²``, with the finite-population correction ``fpc``."""
    has = m.n > 0
    total = np.where(has, m.big_n * point(m, lam) - pop_a, 0.0)
    se = m.swy - lam * m.swp
    se2w = m.sw2y - lam * m.sw2p
    see = m.sw2y2 - 2 * lam * m.sw2yp + lam * lam * m.sw2p2
    safe_sw = np.where(m.sw > 0, m.sw, 1.0)
    mean_e = se / safe_sw
    spread = (see - 2 * mean_e * se2w + mean_e * mean_e * m.sw2) / (safe_sw * safe_sw)
    factor = np.where(m.n > 1, m.n / np.where(m.n > 1, m.n - 1, 1.0), 0.0)
    var = m.big_n ** 2 * factor * np.maximum(spread, 0.0) * fpc[:, None]
    return total, np.where(has, var, 0.0)


def _tuned(m: Moments) -> Floats:
    return np.where(m.n >= LAMBDA_MIN_N, power_tuning(m), 1.0)


def correct(sample: Sample, population: Population) -> Correction:
    cells = len(population.cell_size)
    targets = population.member.shape[1]
    rows = len(sample.cell)
    d = sample.d.reshape(rows, targets)
    big_n = population.cell_size
    every = np.ones(rows, dtype=bool)
    layout = _cells(sample, every, cells)
    # Weights that expand each review to the subjects it stands for (N_c w_i / Σ_c w).
    cell_sw = layout.sw[sample.cell]
    expand = np.where(cell_sw > 0, big_n[sample.cell] * sample.weight /
                      np.where(cell_sw > 0, cell_sw, 1.0), 0.0)
    fpc = np.clip(1.0 - layout.n / np.where(big_n > 0, big_n, 1.0), 0.0, 1.0) \
        if population.fpc else np.ones(cells)
    slope = _slope(sample, every, d, expand, population)
    m, pop_a = _moments(layout, sample, d, slope, population)
    ppi_cells, ppi_var = _per_cell(m, pop_a, np.ones((cells, targets)), fpc)
    tuned_cells, tuned_var, lam, human_cells, human_var = _crossfit(sample, d, expand,
                                                                     population, fpc)
    present = np.zeros((cells, targets))
    np.add.at(present, population.pair_cell,
              population.pair_n[:, None] * population.relevant[population.pair_group])
    size = np.where(layout.n[:, None] > 0, big_n[:, None], 0.0) * (present > 0)
    total_size = size.sum(axis=0)
    lam_mean = np.where(total_size > 0, (lam * size).sum(axis=0) /
                        np.where(total_size > 0, total_size, 1.0), 1.0)
    member_rows = population.relevant[sample.group]
    return Correction(
        tuned=tuned_cells.sum(axis=0), ppi=ppi_cells.sum(axis=0),
        human=human_cells.sum(axis=0), var_tuned=tuned_var.sum(axis=0),
        var_ppi=ppi_var.sum(axis=0), var_human=human_var.sum(axis=0), lam=lam_mean,
        reviews=member_rows.sum(axis=0).astype(np.int64),
        disagreements=(member_rows & (d != 0)).sum(axis=0).astype(np.int64),
        single_cells=((layout.n[:, None] == 1) & (present > 0)).sum(axis=0).astype(np.int64),
        empty_population=np.where(layout.n[:, None] == 0, present, 0.0).sum(axis=0),
        row_share=expand[:, None] * d)


def _crossfit(sample: Sample, d: Floats, expand: Floats, population: Population,
              fpc: Floats) -> tuple[Floats, Floats, Floats, Floats, Floats]:
    """PPI++ with λ, and the sensitivities behind ``a``, cross-fitted over two folds; and the
    λ = 0 end the same way. Returns the tuned cells' totals and variances, their λ, and the
    λ = 0 totals and variances.

    A λ tuned on the very reviews it weights is biased when disagreements are few (each one
    moves both the correction and λ) — measurably, in ppi-python too; so are sensitivities
    learnt from the reviews they then weigh. Here each fold's cells are corrected with what
    was learnt on the other fold, and the folds are averaged (weighted by their reviews); the
    variance treats λ as fixed, as ppi-python does. λ is tuned only where both folds of a cell
    hold :data:`LAMBDA_MIN_DISAGREEMENTS` disagreements, else it is 1 (plain PPI). Without
    folds, λ is tuned on the whole cell: ppi-python's estimator, exactly.
    """
    cells, targets = len(population.cell_size), d.shape[1]
    every = np.ones(len(sample.cell), dtype=bool)
    zero = np.zeros((cells, targets))
    if sample.fold is None:
        layout = _cells(sample, every, cells)
        slope = _slope(sample, every, d, expand, population)
        m, pop_a = _moments(layout, sample, d, slope, population)
        lam = _tuned(m)
        total, var = _per_cell(m, pop_a, lam, fpc)
        human, human_var = _per_cell(m, pop_a, zero, fpc)
        return total, var, lam, human, human_var
    folds = [sample.fold == f for f in (0, 1)]
    layouts = [_cells(sample, keep, cells) for keep in folds]
    slopes = [_slope(sample, keep, d, expand, population) for keep in folds]
    own = [_moments(layouts[f], sample, d, slopes[f], population)[0] for f in (0, 1)]
    moving = [layouts[f].sum((d != 0).astype(np.float64)) for f in (0, 1)]
    enough = (moving[0] >= LAMBDA_MIN_DISAGREEMENTS) & (moving[1] >= LAMBDA_MIN_DISAGREEMENTS)
    lams = [np.where(enough, _tuned(m), 1.0) for m in own]
    n = (layouts[0].n + layouts[1].n)[:, None]
    share = [np.where(n > 0, layouts[f].n[:, None] / np.where(n > 0, n, 1.0), 0.0)
             for f in (0, 1)]
    out = []
    for lam_of in (lambda f: lams[1 - f], lambda f: zero):
        total = np.zeros((cells, targets))
        var = np.zeros((cells, targets))
        for f in (0, 1):
            m, pop_a = _moments(layouts[f], sample, d, slopes[1 - f], population)
            fold_total, fold_var = _per_cell(m, pop_a, lam_of(f), fpc)
            total += share[f] * fold_total
            var += share[f] ** 2 * fold_var
        out.append((total, var))
    lam = share[0] * lams[1] + share[1] * lams[0]
    return out[0][0], out[0][1], lam, out[1][0], out[1][1]


def post_strata(stratum: Ints, system: Ints, reviewed: Ints, min_cell: int = MIN_CELL
                ) -> tuple[Ints, int]:
    """Cells for (stratum, system) pairs: a pair with at least ``min_cell`` reviews is a cell
    of its own; the others of a stratum share one. ``reviewed[j]`` counts the reviews of pair
    j; returns each pair's cell and the number of cells."""
    cell = np.empty(len(stratum), dtype=np.int64)
    ids: dict[tuple[int, int], int] = {}
    for j, (h, s, n) in enumerate(zip(stratum.tolist(), system.tolist(), reviewed.tolist(),
                                      strict=True)):
        key = (h, s) if n >= min_cell else (h, -1)
        cell[j] = ids.setdefault(key, len(ids))
    return cell, len(ids)


@dataclass(frozen=True, slots=True)
class Frame:
    """Every subject the estimate corrects for — the plan's frame without the subjects decided
    outside it (those are known) — as counts: ``count[i]`` subjects share the stratum, system,
    (system, kind) group and judge number of row i."""

    stratum: Ints
    system: Ints
    group: Ints
    x: Floats
    count: Floats


@dataclass(frozen=True, slots=True)
class Reviews:
    """The plan's reviewed draws: where each sits in the frame, its design weight, and what
    the human's verdict changes."""

    stratum: Ints
    system: Ints
    group: Ints
    x: Floats
    weight: Floats
    dx: Floats
    d: Floats
    fold: Ints | None = None


def _floats(values: npt.ArrayLike) -> Floats:
    return np.asarray(values, dtype=np.float64)


def assemble(frame: Frame, reviews: Reviews, group_system: Ints, target_system: Ints,
             relevant: Bools, fpc: bool, min_cell: int = MIN_CELL) -> tuple[Sample, Population]:
    """Cells from the reviews' spread over (stratum, system), and the sums :func:`correct`
    needs. ``target_system[t]`` is −1 for a target over every system."""
    systems = max(1, int(max(frame.system.max(initial=-1), reviews.system.max(initial=-1),
                             group_system.max(initial=-1))) + 1)
    pairs, pair_of = np.unique(frame.stratum * systems + frame.system, return_inverse=True)
    review_pair = np.searchsorted(pairs, reviews.stratum * systems + reviews.system)
    if len(review_pair) and (np.any(review_pair >= len(pairs))
                             or np.any(pairs[np.minimum(review_pair, len(pairs) - 1)]
                                       != reviews.stratum * systems + reviews.system)):
        raise ValueError("a review lies outside the frame")
    reviewed = np.bincount(review_pair, minlength=len(pairs))
    pair_cell, cells = post_strata(pairs // systems, pairs % systems,
                                   reviewed.astype(np.int64), min_cell)
    cell = pair_cell[pair_of]
    groups = len(group_system)
    combos, combo_of = np.unique(cell * groups + frame.group, return_inverse=True)
    member = (group_system[:, None] == target_system[None, :]) | (target_system[None, :] < 0)
    population = Population(
        cell_size=_floats(np.bincount(cell, weights=frame.count, minlength=cells)), fpc=fpc,
        pair_cell=(combos // groups).astype(np.int64),
        pair_group=(combos % groups).astype(np.int64),
        pair_n=_floats(np.bincount(combo_of, weights=frame.count, minlength=len(combos))),
        pair_x=_floats(np.bincount(combo_of, weights=frame.count * frame.x,
                                   minlength=len(combos))),
        pair_x2=_floats(np.bincount(combo_of, weights=frame.count * frame.x * frame.x,
                                    minlength=len(combos))),
        member=member, relevant=member & relevant)
    sample = Sample(cell=pair_cell[review_pair], group=reviews.group, weight=reviews.weight,
                    x=reviews.x, dx=reviews.dx, d=reviews.d, fold=reviews.fold)
    return sample, population
