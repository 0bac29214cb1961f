"""Judge scores corrected by a plan's human decisions: a design-based PPI++ estimator for any
metric a framework computes.

**What is estimated.** The *target* is what a metric would be if a human had decided every
subject of the run — the adjudicated score under full review. The judge's verdicts are known
everywhere; a plan's reviews are a probability sample of the subjects; decisions outside the
plan are known exactly, and so are the plan's own: the *anchor* is the adjudicated state (the
judge's values with every decision applied), what remains unknown are the errors of the judge
on the subjects nobody reviewed.

**Linearisation.** Benchmark metrics are not means of verdicts: DailyReport's Fac weighs claims
by their subtask's instruction score and pools subtasks, RACE divides weighted sums, F1
combines precision and recall. Each reviewed subject's *influence* ``d_i`` is how much the
human's verdict moves the metric against the judge's, one verdict at a time on the adjudicated
state (computed with the framework's own scoring, :mod:`reviewer.estimates.influence`). To first
order the target is ``anchor + Σ_unreviewed d_i = anchor + Σ_all d_i − Σ_reviewed d_i``, and
``Σ_all d_i`` is a population total a probability sample estimates without bias. For a mean of
verdicts, or a ratio whose denominator no verdict moves, the first order is exact. Where several
errors interact (one subtask's instruction and claim verdicts; a level such as UserPref) it is
an approximation whose error shrinks as reviews accumulate: with every subject reviewed the
estimate is the adjudicated score itself, exactly, with no interval left.

**PPI++ on the influences.** Within each *cell* (a post-stratum: stratum of the plan × system ×
kind of verdict, pooled where reviews are few, :func:`post_strata`),
the Hájek-weighted sample mean of ``d`` estimates the cell's mean influence — PPI's rectifier.
PPI++'s power tuning is the control variate ``(1 − λ)(ā_S − ā)`` on the judge's own
contribution ``a_i = s·x_i`` (``x`` its verdict as a number, ``s`` the metric's average
sensitivity to that kind of verdict in that system, estimated from the disagreements seen),
whose population mean is known because the judge judged everything. With pseudo-labels
``ỹ = a + d`` the cell estimate is exactly ppi-python's mean estimate of ``ỹ`` with
predictions ``a`` on the sample and on the whole cell, so for a mean of verdicts this *is*
PPI++; λ = 1 is PPI, λ = 0 leans on the reviews alone (for a mean of verdicts: the human sample
mean). λ is learnt on the other of two folds of the reviews (:func:`_crossfit`).

**Variance.** The plan is the only randomness, so the variance is the design's: per cell, the
linearised (Hájek) variance of the weighted mean of ``d + (1 − λ)·a`` times ``N_c²``, with the
finite-population correction for sampling without replacement (the anchor moves with the
sample too: it holds the reviewed influences, so the estimate is to first order the judge's
value plus the estimated total, whose variance this is); cells add up. A weighted plan draws
with replacement and is estimated by Hansen–Hurwitz (unbiased; see :class:`Population`).
Unlike ppi-python's interval there is no term for the judge mean's own sampling error: it is
known for every subject of this run, which is the population. λ is treated as fixed, as in
ppi-python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from reviewer.estimates.ppi import Moments, point, power_tuning, t_value

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


MIN_INTERVAL_DISAGREEMENTS = 2
"""Disagreements moving a target before any interval is shown. With one, the spread of the
judge's errors rests on a single point: the simulation test measured 91% coverage even with
the t quantile's 12.7 (from two on: 96–98%)."""


def interval_half_width(variance: float, disagreements: int, confidence: float = 0.95) -> float:
    """The interval's half-width: a t quantile with one degree of freedom fewer than the
    disagreements seen. A correction is a sum over the few reviews where human and judge
    differ, so its variance is estimated from about that many points; with a handful the
    normal quantile is too short (the simulation test shows 80–90% coverage instead of 95%)."""
    return t_value(confidence, max(1, disagreements - 1)) * float(np.sqrt(max(variance, 0.0)))


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
    first: Bools | None = None
    """True on the first draw of each subject (a weighted plan may draw one twice); None when
    every row is a different subject."""


@dataclass(frozen=True, slots=True)
class Population:
    """What is known about every subject the plan could have drawn (outside decisions
    removed)."""

    cell_size: Floats
    fpc: bool
    """Sampling without replacement: apply the finite-population correction. Otherwise the
    draws are independent with replacement (a weighted plan) and each cell's total is the
    Hansen–Hurwitz estimator, mean of d/p over draws: unbiased, where the Hájek ratio
    (dividing by the drawn weights' sum) is not when weights vary as much as impact makes
    them — a third of a standard error in the simulation test."""
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
    outside: Floats | None = None
    """(targets,): the summed influence of every decision made outside the plan on subjects of
    its frame — known exactly, subtracted from the frame's estimated total (the difference
    estimator; see :func:`correct`)."""
    skip_cell: Ints | None = None
    """The cell of each skipped plan draw (drawn before the last decided one, undecided)."""
    skip_low: Floats | None = None
    """(skips × targets): the least a skipped subject's human verdict could move each target
    (0 or below: the judge may be right)."""
    skip_high: Floats | None = None
    """(skips × targets): the most it could move it (0 or above)."""
    sensitivity: Floats | None = None
    """(groups × targets): the target's change per unit of a verdict's number, probed on the
    run; the human-only estimate's judge contribution where no review of the group disagreed."""


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
    unreviewed: Floats
    """Subjects that could move the target and nobody reviewed (0: the estimate is exact)."""
    row_share: Floats
    """(rows × targets): each row's share of the λ = 1 correction (PPI's rectifier, net of
    what the row itself settled), for resampling tasks."""
    population: Floats
    """Subjects that could move the target in cells holding a review (what the sample speaks
    for)."""
    magnitude: Floats
    """Mean absolute influence of the disagreements moving the target (0 when none)."""
    skip_low: Floats
    skip_high: Floats
    """How far the plan's skipped draws could move the (λ = 1) estimate down and up, whatever
    their human verdicts (worst case; both 0 without skips)."""
    df: Floats | None = None
    """Degrees of freedom of the variance where the design fixes them (a report plan: the
    decided reports less one per stratum, Satterthwaite's); None: the disagreements' rule
    (:func:`reviewer.estimates.intervals.half_width`)."""
    third: Floats | None = None
    """The estimate's third cumulant where the design gives it (None: taken as symmetric):
    the interval is corrected for its skewness
    (:func:`reviewer.estimates.intervals.skewed_half_widths`)."""


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
    starts = (
        np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        if len(order)
        else np.zeros(0, dtype=np.int64)
    )
    present = np.zeros(cells, dtype=bool)
    present[ordered[starts]] = True
    w = sample.weight
    layout = _Cells(
        order,
        starts,
        present,
        keep.astype(np.float64),
        cells,
        w,
        np.zeros(cells),
        np.zeros(cells),
        np.zeros(cells),
    )
    layout.n = layout.sum(np.ones(len(w)))
    layout.sw = layout.sum(w)
    layout.sw2 = layout.sum(w * w)
    return layout


def _slope(
    sample: Sample, keep: Bools, d: Floats, expand: Floats, population: Population
) -> Floats:
    """(groups × targets): the metric's average change per unit of a verdict's number, from
    the kept rows' disagreements (expansion-weighted least squares through the origin)."""
    groups = population.member.shape[0]
    moved = (sample.dx != 0) & keep
    numerator = np.zeros((groups, d.shape[1]))
    np.add.at(numerator, sample.group, (expand * sample.dx * moved)[:, None] * d)
    denominator = np.bincount(
        sample.group, weights=expand * sample.dx * sample.dx * moved, minlength=groups
    )
    safe = np.where(denominator > 0, denominator, 1.0)[:, None]
    return np.where(denominator[:, None] > 0, numerator / safe, 0.0) * population.member


def _moments(
    layout: _Cells, sample: Sample, d: Floats, slope: Floats, population: Population
) -> tuple[Moments, Floats]:
    """The cells' PPI++ sums with pseudo-labels ``ỹ = a + d``, ``a = slope·x``; and the
    cells' population totals of ``a``."""
    cells, targets = len(population.cell_size), d.shape[1]
    a = slope[sample.group] * sample.x[:, None]
    y = a + d
    w, w2 = layout.w[:, None], (layout.w * layout.w)[:, None]
    pop_a = np.zeros((cells, targets))
    pop_a2 = np.zeros((cells, targets))
    np.add.at(
        pop_a, population.pair_cell, slope[population.pair_group] * population.pair_x[:, None]
    )
    np.add.at(
        pop_a2,
        population.pair_cell,
        slope[population.pair_group] ** 2 * population.pair_x2[:, None],
    )

    def col(v: Floats) -> Floats:
        return np.broadcast_to(v[:, None], (cells, targets)).astype(np.float64)

    wy, wa = w * y, w * a
    w2y, w2a = w2 * y, w2 * a
    m = Moments(
        n=col(layout.n),
        # Hansen–Hurwitz: the weights' sum replaced by its expectation, n·N_c.
        sw=col(layout.sw if population.fpc else layout.n * population.cell_size),
        sw2=col(layout.sw2),
        swy=layout.sum(wy),
        swp=layout.sum(wa),
        sw2y=layout.sum(w2y),
        sw2p=layout.sum(w2a),
        sw2yp=layout.sum(w2y * a),
        sw2y2=layout.sum(w2y * y),
        sw2p2=layout.sum(w2a * a),
        big_n=col(population.cell_size),
        sq=pop_a,
        sq2=pop_a2,
    )
    return m, pop_a


def _per_cell(
    m: Moments,
    pop_a: Floats,
    lam: Floats,
    fpc: Floats,
    rho: Floats,
    hansen_hurwitz: bool = False,
    damp: bool = False,
) -> tuple[Floats, Floats]:
    """Each cell's estimated total of ``d`` over all its subjects (PPI++ on ỹ, minus the
    known total of ``a``) and the design variance of its unreviewed part: the Hájek
    linearised variance of the weighted mean of ``e = ρ·d + (1 − λ)·a = ρ·ỹ + (1 − ρ − λ)·a``
    times ``N_c²``, with the finite-population correction ``fpc``."""
    has = m.n > 0
    if damp:
        # A fold's control variate, weighted (1 − λ) by the share of the cell still
        # unreviewed: any fixed weight keeps the estimate unbiased, and this one makes a fully
        # reviewed cell's estimate its reviewed total exactly, whatever λ the folds learnt
        # (a half-sample's mean of a is not the cell's, even when the cell is all reviewed).
        lam = 1.0 - (1.0 - lam) * fpc[:, None]
    total = np.where(has, m.big_n * point(m, lam) - pop_a, 0.0)
    r = rho[:, None]
    c = 1.0 - r - lam
    se = r * m.swy + c * m.swp
    se2w = r * m.sw2y + c * m.sw2p
    see = r * r * m.sw2y2 + 2 * r * c * m.sw2yp + c * c * m.sw2p2
    safe_sw = np.where(m.sw > 0, m.sw, 1.0)
    if hansen_hurwitz:
        # Var of the mean of z = e/p over independent draws: Σ w̃²e² − (Σ w̃e)²/n.
        spread = (see - se * se / np.where(m.n > 0, m.n, 1.0)) / (safe_sw * safe_sw)
    else:
        mean_e = se / safe_sw
        spread = (see - 2 * mean_e * se2w + mean_e * mean_e * m.sw2) / (safe_sw * safe_sw)
    factor = np.where(m.n > 1, m.n / np.where(m.n > 1, m.n - 1, 1.0), 0.0)
    var = m.big_n**2 * factor * np.maximum(spread, 0.0) * fpc[:, None]
    return total, np.where(has, var, 0.0)


def _tuned(m: Moments) -> Floats:
    return np.where(m.n >= LAMBDA_MIN_N, power_tuning(m), 1.0)


def correct(sample: Sample, population: Population, crossfit: bool = True) -> Correction:
    """``crossfit=False`` tunes λ on every row of a cell, as ppi-python does (and then agrees
    with it exactly); the default learns it on the other fold (see :func:`_crossfit`)."""
    if not crossfit and sample.fold is not None:
        sample = Sample(
            sample.cell,
            sample.group,
            sample.weight,
            sample.x,
            sample.dx,
            sample.d,
            None,
            sample.first,
        )
    cells = len(population.cell_size)
    targets = population.member.shape[1]
    rows = len(sample.cell)
    d = sample.d.reshape(rows, targets)
    big_n = population.cell_size
    every = np.ones(rows, dtype=bool)
    layout = _cells(sample, every, cells)
    # Weights that expand each review to the subjects it stands for (N_c w_i / Σ_c w).
    cell_sw = layout.sw[sample.cell]
    expand = np.where(
        cell_sw > 0, big_n[sample.cell] * sample.weight / np.where(cell_sw > 0, cell_sw, 1.0), 0.0
    )
    fpc = (
        np.clip(1.0 - layout.n / np.where(big_n > 0, big_n, 1.0), 0.0, 1.0)
        if population.fpc
        else np.ones(cells)
    )
    first = np.ones(rows, dtype=bool) if sample.first is None else sample.first
    # What the reviews already settled, exactly: the anchor holds it, the estimate of the
    # whole cell's total must not count it twice.
    known = _cells(sample, first, cells).sum(d)
    # The anchor holds the reviewed subjects' influences exactly, so the estimate is, to first
    # order, judge + N·mean(d) whatever the anchor: the variance is that of the whole cell
    # total (ρ = 1), which the finite-population correction already takes to 0 as n → N.
    rho = np.ones(cells)
    slope = _slope(sample, every, d, expand, population)
    m, pop_a = _moments(layout, sample, d, slope, population)
    hh = not population.fpc
    ppi_cells, ppi_var = _per_cell(m, pop_a, np.ones((cells, targets)), fpc, rho, hh)
    tuned_cells, tuned_var, lam, human_cells, human_var = _crossfit(
        sample, d, expand, population, fpc, rho
    )
    present = np.zeros((cells, targets))
    np.add.at(
        present,
        population.pair_cell,
        population.pair_n[:, None] * population.relevant[population.pair_group],
    )
    size = np.where(layout.n[:, None] > 0, big_n[:, None], 0.0) * (present > 0)
    total_size = size.sum(axis=0)
    lam_mean = np.where(
        total_size > 0, (lam * size).sum(axis=0) / np.where(total_size > 0, total_size, 1.0), 1.0
    )
    member_rows = population.relevant[sample.group]
    reviewed_unique = _cells(sample, first, cells).sum(member_rows.astype(np.float64))
    # Decisions outside the plan are known exactly: the plan's sample still estimates the
    # frame as drawn (every cell at its full size), and what those decisions settled is
    # subtracted like the plan's own reviews — never by shrinking the population, which
    # would count the errors they fixed a second time.
    outside = np.zeros(targets) if population.outside is None else population.outside
    known_total = known.sum(axis=0) + outside
    moving = member_rows & (d != 0)
    count = moving.sum(axis=0)
    magnitude = np.where(count > 0, (np.abs(d) * moving).sum(axis=0) / np.maximum(count, 1), 0.0)
    low, high = _skip_shifts(layout, sample, d, population)
    return Correction(
        tuned=tuned_cells.sum(axis=0) - known_total,
        ppi=ppi_cells.sum(axis=0) - known_total,
        human=human_cells.sum(axis=0) - known_total,
        var_tuned=tuned_var.sum(axis=0),
        var_ppi=ppi_var.sum(axis=0),
        var_human=human_var.sum(axis=0),
        lam=lam_mean,
        reviews=member_rows.sum(axis=0).astype(np.int64),
        disagreements=(member_rows & (d != 0)).sum(axis=0).astype(np.int64),
        single_cells=((layout.n[:, None] == 1) & (present > 0)).sum(axis=0).astype(np.int64),
        empty_population=np.where(layout.n[:, None] == 0, present, 0.0).sum(axis=0),
        unreviewed=np.maximum(present - reviewed_unique, 0.0).sum(axis=0),
        row_share=(expand - first)[:, None] * d,
        population=size_relevant(layout, present),
        magnitude=magnitude,
        skip_low=low,
        skip_high=high,
    )


def size_relevant(layout: _Cells, present: Floats) -> Floats:
    """Subjects that could move each target in the cells holding a review."""
    return np.asarray(np.where(layout.n[:, None] > 0, present, 0.0).sum(axis=0), dtype=np.float64)


def _skip_shifts(
    layout: _Cells, sample: Sample, d: Floats, population: Population
) -> tuple[Floats, Floats]:
    """How far the plan's skipped draws could move the plain (λ = 1) estimate: each cell's
    total recomputed with its skipped draws counted as drawn and their unknown influences
    at their least and at their most, against the total from the decided draws alone (the
    missing-at-random estimate). Worst-case (Manski) bounds: no model of why they were
    skipped."""
    targets = d.shape[1]
    zero = np.zeros(targets)
    skip_cell, skip_low, skip_high = population.skip_cell, population.skip_low, population.skip_high
    if skip_cell is None or skip_low is None or skip_high is None or not len(skip_cell):
        return zero, zero.copy()
    cells = len(population.cell_size)
    skips = np.bincount(skip_cell, minlength=cells).astype(np.float64)
    decided = layout.sum(sample.weight[:, None] * d)
    n, big_n = layout.n, population.cell_size
    has = n > 0
    safe_n = np.where(has, n, 1.0)
    mar = np.where(has[:, None], big_n[:, None] * decided / safe_n[:, None], 0.0)

    def filled(values: Floats) -> Floats:
        extra = np.zeros((cells, targets))
        np.add.at(extra, skip_cell, values)
        total = big_n[:, None] * (decided + extra) / (safe_n + skips)[:, None]
        return np.asarray(np.where(has[:, None], total - mar, 0.0).sum(axis=0), dtype=np.float64)

    return np.minimum(filled(skip_low), 0.0), np.maximum(filled(skip_high), 0.0)


def _crossfit(
    sample: Sample, d: Floats, expand: Floats, population: Population, fpc: Floats, rho: Floats
) -> tuple[Floats, Floats, Floats, Floats, Floats]:
    """PPI++ with λ, and the sensitivities behind ``a``, cross-fitted over two folds; and the
    λ = 0 end on every review (it tunes nothing). Returns the tuned cells' totals and
    variances, their λ, and the λ = 0 totals and variances.

    A λ tuned on the very reviews it weights is biased when disagreements are few (each one
    moves both the correction and λ) — measurably, in ppi-python too; so are sensitivities
    learnt from the reviews they then weigh. Here each fold's cells are corrected with what
    was learnt on the other fold, and the folds are averaged (weighted by their reviews); the
    variance treats λ as fixed, as ppi-python does. λ is tuned only where both folds of a cell
    hold :data:`LAMBDA_MIN_DISAGREEMENTS` disagreements, else it is 1 (plain PPI). Without
    folds, λ is tuned on the whole cell: ppi-python's estimator, exactly.
    """
    cells, targets = len(population.cell_size), d.shape[1]
    zero = np.zeros((cells, targets))
    if sample.fold is None:
        return _whole_cells(sample, d, expand, population, fpc, rho, zero)
    folds = [sample.fold == f for f in (0, 1)]
    layouts = [_cells(sample, keep, cells) for keep in folds]
    slopes = [_slope(sample, keep, d, expand, population) for keep in folds]
    lams = _fold_lambdas(layouts, slopes, sample, d, population)
    n = (layouts[0].n + layouts[1].n)[:, None]
    share = [np.where(n > 0, layouts[f].n[:, None] / np.where(n > 0, n, 1.0), 0.0) for f in (0, 1)]
    fit = _FoldFit(layouts, slopes, share, sample, d, population, fpc, rho)
    # Each fold's cells are corrected with the λ tuned on the other fold.
    total, var = fit.averaged((lams[1], lams[0]))
    lam = share[0] * lams[1] + share[1] * lams[0]
    # Human only needs no tuning, hence no folds: with the sensitivities learnt on every
    # review, a_i + d_i is the human's own contribution wherever the group holds a
    # disagreement, and λ = 0 is the reviews' estimate alone (for a mean of verdicts, the
    # human sample mean itself — not the judge's mean, which a fold without a disagreement
    # would leave in place).
    human, human_var = _human_only(sample, d, expand, population, fpc, rho, zero)
    return total, var, lam, human, human_var


def _human_only(
    sample: Sample,
    d: Floats,
    expand: Floats,
    population: Population,
    fpc: Floats,
    rho: Floats,
    zero: Floats,
) -> tuple[Floats, Floats]:
    """The λ = 0 end: the reviews' own estimate. The judge's contribution ``a`` must be the
    judge's real share of the metric for ``a + d`` to be the human's: learnt from every
    disagreement of a group, and probed (``population.sensitivity``) for a group none of whose
    reviews disagreed (a learnt 0 there would leave the judge's own mean in place)."""
    every = np.ones(len(sample.cell), dtype=bool)
    layout = _cells(sample, every, len(population.cell_size))
    slope = _slope(sample, every, d, expand, population)
    if population.sensitivity is not None:
        moved = np.bincount(
            sample.group, weights=(sample.dx != 0).astype(np.float64), minlength=slope.shape[0]
        )
        slope = np.where(moved[:, None] > 0, slope, population.sensitivity * population.member)
    m, pop_a = _moments(layout, sample, d, slope, population)
    return _per_cell(m, pop_a, zero, fpc, rho, not population.fpc)


def _whole_cells(
    sample: Sample,
    d: Floats,
    expand: Floats,
    population: Population,
    fpc: Floats,
    rho: Floats,
    zero: Floats,
) -> tuple[Floats, Floats, Floats, Floats, Floats]:
    """Without folds: λ tuned on the whole cell, ppi-python's estimator exactly."""
    every = np.ones(len(sample.cell), dtype=bool)
    layout = _cells(sample, every, len(population.cell_size))
    slope = _slope(sample, every, d, expand, population)
    m, pop_a = _moments(layout, sample, d, slope, population)
    lam = _tuned(m)
    total, var = _per_cell(m, pop_a, lam, fpc, rho, not population.fpc)
    human, human_var = _human_only(sample, d, expand, population, fpc, rho, zero)
    return total, var, lam, human, human_var


def _fold_lambdas(
    layouts: list[_Cells], slopes: list[Floats], sample: Sample, d: Floats, population: Population
) -> list[Floats]:
    """Each fold's own tuned λ, where both folds of a cell hold enough disagreements; else 1."""
    own = [_moments(layouts[f], sample, d, slopes[f], population)[0] for f in (0, 1)]
    moving = [layouts[f].sum((d != 0).astype(np.float64)) for f in (0, 1)]
    enough = (moving[0] >= LAMBDA_MIN_DISAGREEMENTS) & (moving[1] >= LAMBDA_MIN_DISAGREEMENTS)
    return [np.where(enough, _tuned(m), 1.0) for m in own]


@dataclass(frozen=True, slots=True)
class _FoldFit:
    """The two folds of a cross-fitted correction: each fold's cells with the sensitivities
    learnt on the other fold, averaged by the folds' shares of the reviews."""

    layouts: list[_Cells]
    slopes: list[Floats]
    share: list[Floats]
    sample: Sample
    d: Floats
    population: Population
    fpc: Floats
    rho: Floats

    def averaged(self, lam: tuple[Floats, Floats]) -> tuple[Floats, Floats]:
        """The cells' totals and variances with ``lam[f]`` in fold f."""
        shape = (len(self.population.cell_size), self.d.shape[1])
        total = np.zeros(shape)
        var = np.zeros(shape)
        for f in (0, 1):
            m, pop_a = _moments(
                self.layouts[f], self.sample, self.d, self.slopes[1 - f], self.population
            )
            fold_total, fold_var = _per_cell(
                m, pop_a, lam[f], self.fpc, self.rho, not self.population.fpc, damp=True
            )
            total += self.share[f] * fold_total
            var += self.share[f] ** 2 * fold_var
        return total, var


def post_strata(
    stratum: Ints, system: Ints, group: Ints, reviewed: Ints, min_cell: int = MIN_CELL
) -> tuple[Ints, int]:
    """Cells for (stratum, system, kind) triples (``group`` is the system's kind): a triple
    with at least ``min_cell`` reviews is a cell of its own; the rest of a (stratum, system)
    pair shares one if together they reach ``min_cell``; whatever is left of a stratum shares
    the last. Finer cells keep the Hájek weights of a cell alike (a weighted plan weighs kinds
    very differently) and are the classic post-stratification gain; coarse ones keep every
    variance on enough points. ``reviewed[j]`` counts the reviews of triple j; returns each
    triple's cell and the number of cells."""
    level: list[tuple[int, ...]] = []
    for h, s, g, n in zip(
        stratum.tolist(), system.tolist(), group.tolist(), reviewed.tolist(), strict=True
    ):
        level.append((h, s, g) if n >= min_cell else (h, s))
    pooled: dict[tuple[int, ...], int] = {}
    for key, n in zip(level, reviewed.tolist(), strict=True):
        if len(key) == 2:
            pooled[key] = pooled.get(key, 0) + n
    cell = np.empty(len(stratum), dtype=np.int64)
    ids: dict[tuple[int, ...], int] = {}
    for j, key in enumerate(level):
        if len(key) == 2 and pooled[key] < min_cell:
            key = (key[0],)
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
    first: Bools | None = None


@dataclass(frozen=True, slots=True)
class Skips:
    """Plan draws passed over: drawn before the last decided draw and still undecided. They
    are sample members whose value is missing; ``low`` and ``high`` (skips × targets) are the
    least and most their human verdicts could move each target."""

    stratum: Ints
    group: Ints
    low: Floats
    high: Floats


def _floats(values: npt.ArrayLike) -> Floats:
    return np.asarray(values, dtype=np.float64)


def assemble(
    frame: Frame,
    reviews: Reviews,
    group_system: Ints,
    target_system: Ints,
    relevant: Bools,
    fpc: bool,
    min_cell: int = MIN_CELL,
    outside: Floats | None = None,
    skips: Skips | None = None,
    sensitivity: Floats | None = None,
) -> tuple[Sample, Population]:
    """Cells from the reviews' spread over (stratum, system, kind), and the sums
    :func:`correct` needs. ``target_system[t]`` is −1 for a target over every system.
    ``frame`` is the plan's frame as drawn, subjects decided outside the plan included;
    ``outside`` is the summed influence of those decisions on each target."""
    groups = len(group_system)
    width = max(1, groups, int(max(frame.group.max(initial=-1), reviews.group.max(initial=-1))) + 1)
    pairs, pair_of = np.unique(frame.stratum * width + frame.group, return_inverse=True)
    wanted = reviews.stratum * width + reviews.group
    review_pair = np.searchsorted(pairs, wanted)
    if len(review_pair) and (
        np.any(review_pair >= len(pairs))
        or np.any(pairs[np.minimum(review_pair, len(pairs) - 1)] != wanted)
    ):
        raise ValueError("a review lies outside the frame")
    reviewed = np.bincount(review_pair, minlength=len(pairs))
    if not fpc:
        min_cell = 1 << 62  # Hansen–Hurwitz needs the whole stratum as one cell
    pair_group = pairs % width
    pair_cell, cells = post_strata(
        pairs // width, group_system[pair_group], pair_group, reviewed.astype(np.int64), min_cell
    )
    cell = pair_cell[pair_of]
    combos, combo_of = np.unique(cell * groups + frame.group, return_inverse=True)
    member = (group_system[:, None] == target_system[None, :]) | (target_system[None, :] < 0)
    skip_cell, skip_low, skip_high = _skip_fields(skips, pairs, width, pair_cell)
    population = Population(
        cell_size=_floats(np.bincount(cell, weights=frame.count, minlength=cells)),
        fpc=fpc,
        pair_cell=(combos // groups).astype(np.int64),
        pair_group=(combos % groups).astype(np.int64),
        pair_n=_floats(np.bincount(combo_of, weights=frame.count, minlength=len(combos))),
        pair_x=_floats(np.bincount(combo_of, weights=frame.count * frame.x, minlength=len(combos))),
        pair_x2=_floats(
            np.bincount(combo_of, weights=frame.count * frame.x * frame.x, minlength=len(combos))
        ),
        member=member,
        relevant=member & relevant,
        outside=None if outside is None else _floats(outside),
        skip_cell=skip_cell,
        skip_low=skip_low,
        skip_high=skip_high,
        sensitivity=None if sensitivity is None else _floats(sensitivity),
    )
    sample = Sample(
        cell=pair_cell[review_pair],
        group=reviews.group,
        weight=reviews.weight,
        x=reviews.x,
        dx=reviews.dx,
        d=reviews.d,
        fold=reviews.fold,
        first=reviews.first,
    )
    return sample, population


def _skip_fields(
    skips: Skips | None, pairs: Ints, width: int, pair_cell: Ints
) -> tuple[Ints | None, Floats | None, Floats | None]:
    """The skipped draws' cells (those of their (stratum, kind) pairs) and bounds."""
    if skips is None or not len(skips.stratum):
        return None, None, None
    wanted = skips.stratum * width + skips.group
    at = np.minimum(np.searchsorted(pairs, wanted), len(pairs) - 1)
    if np.any(pairs[at] != wanted):
        raise ValueError("a skipped draw lies outside the frame")
    return pair_cell[at].astype(np.int64), _floats(skips.low), _floats(skips.high)
