"""DailyReport scored from SQL's verdict counts, every report of a run at once (``BulkSpec``).

The definitions of :mod:`reviewer.frameworks.dailyreport.scoring` (Eq. 2–6, Algorithm 1, the
claim and trace metrics) on arrays instead of objects: one matrix per subtask quantity, a row
per subtask position and a column per report, gathered from the task structure that a task's
reports share, so a full recompute builds nothing per report but its row of scores.

Exactness (the score cache must equal scoring every report from its rows, bit for bit): every
float comes from the same IEEE operations, in the same order, as the row path. Sums over
subtasks run sequentially along the position axis (a loop over positions, vectorised across
reports: numpy's pairwise summation would differ in the last bit), and a position a report
does not have adds 0.0, which moves no sum of non-negative values. Where Algorithm 1's c0 or
c1 lands next to a threshold, the level is decided again in exact integer arithmetic, as the
row path does in fractions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from reviewer.framework import ScoreMatrix
from reviewer.frameworks.dailyreport.scoring import (
    EXACT_THRESHOLDS,
    HALVES,
    NEAR,
    SEARCH_METRICS,
    THRESHOLDS,
    preference_level,
    search_counts,
)
from reviewer.inputs import CountedReports

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]

_REVIEW = ("empty_fac", "unjudged_claims", "failed_verdicts", "missing_ins")
NAMES = (
    "UserPref",
    "Ins",
    "Fac",
    "Rat",
    "SubTaskPass",
    "Reference_Ratio",
    "Reference_Support",
    "No_Reference_Support",
    "Refer_Claim_Consistency",
    "NeedsReview",
    "_n",
    "_ins_sum",
    "_fac_num",
    "_fac_den",
    "_rat_num",
    "_rat_den",
    "_fac_k",
    "_rat_k",
    "_pass",
    "_v2_vacuous",
    "_c0",
    "_c1",
    "_claims",
    "_claims_ref",
    "_correct_ref",
    "_correct_noref",
    "_pairs",
    "_pairs_support",
    *(f"_review_{name}" for name in _REVIEW),
    *SEARCH_METRICS,
    "Trace_na",
)
"""Every metric a report can have, in the order a report's dict lists them."""
_AT = {name: i for i, name in enumerate(NAMES)}
_MAIN = tuple(range(_AT["_pairs_support"] + 1))
"""What every report with a subtask scored has, before its review flags."""
_FLAGS = tuple(_AT[f"_review_{name}"] for name in _REVIEW)
_TRACE = tuple(_AT[name] for name in (*SEARCH_METRICS, "Trace_na"))
_IMPORTANCE = {"P0": 0, "P1": 1, "P2a": 2}
_OTHER_IMPORTANCE = 3


@dataclass(slots=True)
class _Grid:
    """The task structure gathered per (subtask position, report): position j of report r is
    the j-th subtask of r's task. Positions past a task's last subtask are not ``valid``."""

    valid: Bools
    ins_expected: Ints
    """ins criteria of the subtask"""
    rat_expected: Ints
    has_fac: Bools
    importance: Ints
    group: Ints
    """the P2a group's index within its task (groups numbered by first appearance)"""
    groups: int
    """the most groups any task has"""
    start: Ints
    """(T,) the index of each task's first subtask"""


def _grid(table: CountedReports) -> _Grid:
    shapes = table.tasks
    subtasks = len(shapes.importance)
    tasks = int(max(shapes.task.max(initial=-1), table.report_task.max(initial=-1))) + 1
    length = np.bincount(shapes.task, minlength=tasks).astype(np.int64)
    start = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
    width = int(length.max(initial=0))
    task = table.report_task
    position = np.arange(width, dtype=np.int64)[:, None]
    valid = position < length[task][None, :]
    index = np.where(valid, start[task][None, :] + position, 0)
    ins, rat, fac = _criteria(table, subtasks)
    importance, group, groups = _importance(table, subtasks)
    return _Grid(
        valid, ins[index], rat[index], fac[index], importance[index], group[index], groups, start
    )


def _criteria(table: CountedReports, subtasks: int) -> tuple[Ints, Ints, Bools]:
    """Per subtask: its ins criteria, its rat criteria, and whether it has a fac rubric."""
    shapes = table.tasks
    dimension = np.array(shapes.criterion_dimension, dtype=object)

    def of(name: str) -> Ints:
        chosen = dimension == name
        return np.bincount(
            shapes.criterion_subtask[chosen],
            weights=shapes.criterion_count[chosen],
            minlength=subtasks,
        ).astype(np.int64)

    return of("ins"), of("rat"), of("fac") > 0


def _importance(table: CountedReports, subtasks: int) -> tuple[Ints, Ints, int]:
    """Per subtask: its importance code and its P2a group's index within its task."""
    shapes = table.tasks
    importance = np.fromiter(
        (_IMPORTANCE.get(i, _OTHER_IMPORTANCE) for i in shapes.importance),
        dtype=np.int64,
        count=subtasks,
    )
    group = np.zeros(subtasks, dtype=np.int64)
    numbered: dict[tuple[int, str], int] = {}
    per_task: dict[int, int] = {}
    for s in np.flatnonzero(importance == _IMPORTANCE["P2a"]).tolist():
        task = int(shapes.task[s])
        key = (task, shapes.group[s] or "")
        found = numbered.get(key)
        if found is None:
            found = numbered[key] = per_task.get(task, 0)
            per_task[task] = found + 1
        group[s] = found
    return importance, group, max(per_task.values(), default=0)


@dataclass(slots=True)
class _Tallies:
    """The counts the definitions read, per (position, report) or per report."""

    ins: Ints
    """(3, P, R) usable ins verdicts by value in halves (0, 0.5, 1)"""
    rat: Ints
    claims_total: Ints
    """(P, R) claim verdicts of the subtask, whatever their value"""
    claims_correct: Ints
    unjudged: Ints
    """(R,) claim verdicts without a value"""
    cited: Ints
    """(R,) claims citing a reference"""
    correct_cited: Ints
    correct: Ints
    pairs: Ints
    """(R,) claim × reference pairs judged (or every pair: option failed_consistency)"""
    pairs_support: Ints


def _tallies(table: CountedReports, grid: _Grid, options: Mapping[str, str]) -> _Tallies:
    verdicts = table.verdicts
    reports = len(table.report_ids)
    width = grid.valid.shape[0]
    kind, value, count, report = verdicts.kind, verdicts.value, verdicts.count, verdicts.report
    codes = table.codes
    placed = verdicts.subtask >= 0
    # (position, report) as one index, in 32 bits: a table is scored in slices of at most
    # _CELLS cells. (Rows without a subtask get an index they are never counted at.)
    start = grid.start[table.report_task].astype(np.int32)
    cell = (verdicts.subtask - start[report]) * np.int32(reports) + report
    cells = width * reports

    def per_cell(chosen: Bools) -> Ints:
        chosen = chosen & placed
        return _bincount(cell[chosen], count[chosen], cells).reshape(width, reports)

    def per_report(chosen: Bools) -> Ints:
        return _bincount(report[chosen], count[chosen], reports)

    half = np.full(len(codes) + 2, -1, dtype=np.int8)
    for code, number in HALVES.items():
        half[codes.index(code)] = number
    halves = half[value]

    def by_half(name: str) -> Ints:
        chosen = (kind == table.kinds.index(name)) & (halves >= 0) & placed
        flat = halves[chosen].astype(np.int64) * cells + cell[chosen]
        return _bincount(flat, count[chosen], 3 * cells).reshape(3, width, reports)

    claim = kind == len(table.kinds) - 1
    correct = claim & (value == codes.index("correct"))
    consistency = kind == table.kinds.index("consistency")
    judged = consistency & (
        (value != table.none) | (options["failed_consistency"] == "not_support")
    )
    cited = verdicts.cited == 1
    return _Tallies(
        by_half("ins"),
        by_half("rat"),
        per_cell(claim),
        per_cell(correct),
        per_report(claim & (value == table.none)),
        per_report(claim & cited),
        per_report(correct & cited),
        per_report(correct),
        per_report(judged),
        per_report(consistency & (value == codes.index("support"))),
    )


def _bincount(at: npt.NDArray[np.integer], weights: npt.NDArray[np.integer], size: int) -> Ints:
    # Float weights hold whole counts exactly (far below 2**53).
    return np.bincount(at, weights=weights, minlength=size).astype(np.int64)


@dataclass(slots=True)
class _Dimension:
    """One dimension of every subtask from its criteria's usable verdicts, as the exact value
    num/den where ``has`` (option several_criteria), and the verdicts missing (failed)."""

    num: Ints
    den: Ints
    has: Bools
    failed: Ints
    usable: Ints


def _dimension(halves: Ints, expected: Ints, how: str, exclude_failed: bool) -> _Dimension:
    """``_criteria_value`` of the row path: the ``expected`` criteria's missing verdicts count
    as 0 or are left out (option failed_verdict); the mean or the weakest of what is left."""
    zero, half, one = halves
    usable = zero + half + one
    failed = np.maximum(expected - usable, 0)
    padded = np.zeros_like(failed) if exclude_failed else failed
    counted = usable + padded
    has = counted > 0
    if how == "min":
        lowest = np.where(zero > 0, 0, np.where(half > 0, 1, 2))
        num = np.where(padded > 0, 0, lowest)
        den = np.full_like(num, 2)
    else:
        num = half + 2 * one
        den = 2 * counted
    return _Dimension(np.where(has, num, 0), np.where(has, den, 1), has, failed, usable)


@dataclass(slots=True)
class _Subtasks:
    """ins_k, fac_k, rat_k and o_k of every (position, report), exact and in floats, which
    positions are scored, and the review flags they raise."""

    included: Bools
    ins: _Dimension
    fac: _Dimension
    rat: _Dimension
    ins_f: Floats
    fac_f: Floats
    rat_f: Floats
    o: Floats
    passed: Bools
    empty_fac: Ints
    failed: Ints
    missing_ins: Ints


def _subtasks(grid: _Grid, tallies: _Tallies, options: Mapping[str, str]) -> _Subtasks:
    how = options["several_criteria"]
    exclude_failed = options["failed_verdict"] == "exclude"
    valid = grid.valid
    ins = _dimension(tallies.ins, grid.ins_expected, how, exclude_failed)
    missing = valid & (grid.ins_expected == 0) & (ins.usable == 0)
    # A subtask without an ins value scores ins_k = 0, or leaves (option missing_ins).
    included = valid & (ins.has | (options["missing_ins"] != "exclude"))
    rat = _dimension(tallies.rat, grid.rat_expected, how, exclude_failed)
    rat.has &= grid.rat_expected > 0
    fac = _fac(grid, tallies, options["empty_claims"] == "exclude")
    ins_f = ins.num / ins.den
    fac_f = fac.num / fac.den
    rat_f = rat.num / rat.den
    o = _o(ins_f, fac_f, rat_f, fac.has, rat.has, options["missing_dimension"] == "zero")
    passed = (ins_f == 1.0) & (~fac.has | (fac_f == 1.0)) & (~rat.has | (rat_f == 1.0)) & included
    failed = np.where(valid, ins.failed, 0) + np.where(included, rat.failed, 0)
    empty = included & grid.has_fac & (tallies.claims_total == 0)
    return _Subtasks(
        included,
        ins,
        fac,
        rat,
        ins_f,
        fac_f,
        rat_f,
        o,
        passed,
        empty.sum(axis=0),
        failed.sum(axis=0),
        missing.sum(axis=0),
    )


def _fac(grid: _Grid, tallies: _Tallies, exclude_empty: bool) -> _Dimension:
    """Eq. 6: verified correct among every extracted claim of the subtask; a fac subtask
    without claims scores 0 or leaves the Fac denominator (option empty_claims)."""
    total = tallies.claims_total
    some = total > 0
    has = grid.has_fac & (some | (not exclude_empty))
    num = np.where(some & has, tallies.claims_correct, 0)
    den = np.where(some & has, total, 1)
    return _Dimension(num, den, has, np.zeros_like(num), total)


def _o(
    ins: Floats, fac: Floats, rat: Floats, has_fac: Bools, has_rat: Bools, zero_missing: bool
) -> Floats:
    """Eq. 5, o_k = ½·ins_k·(fac_k + rat_k), with the missing_dimension reading (each case
    computed as the row path's ``_o`` computes it)."""
    fac0 = np.where(has_fac, fac, 0.0)
    rat0 = np.where(has_rat, rat, 0.0)
    both: Floats = ins * (fac0 + rat0) / 2
    if zero_missing:
        return both
    return np.where(
        has_fac & has_rat,
        both,
        np.where(has_fac, ins * fac0, np.where(has_rat, ins * rat0, ins)),
    )


def _sequential(rows: Floats) -> Floats:
    """The sum over positions, position by position, as Python's ``+=`` adds them."""
    total = np.zeros(rows.shape[1:], dtype=np.float64)
    for row in rows:
        total += row
    return total


@dataclass(slots=True)
class _Sums:
    """The per-report sums of Eq. 2–4 and SubTask Pass."""

    n: Ints
    ins_sum: Floats
    fac_num: Floats
    fac_den: Floats
    fac_k: Ints
    rat_num: Floats
    rat_den: Floats
    rat_k: Ints
    passed: Ints


def _sums(subs: _Subtasks) -> _Sums:
    included = subs.included
    fac = included & subs.fac.has
    rat = included & subs.rat.has
    ins = np.where(included, subs.ins_f, 0.0)
    return _Sums(
        included.sum(axis=0),
        _sequential(ins),
        _sequential(np.where(fac, subs.ins_f * subs.fac_f, 0.0)),
        _sequential(np.where(fac, subs.ins_f, 0.0)),
        fac.sum(axis=0),
        _sequential(np.where(rat, subs.ins_f * subs.rat_f, 0.0)),
        _sequential(np.where(rat, subs.ins_f, 0.0)),
        rat.sum(axis=0),
        subs.passed.sum(axis=0),
    )


@dataclass(slots=True)
class _Preference:
    """Algorithm 1 per report: the level, c0 and c1, and whether v2 held vacuously."""

    level: Floats
    c0: Floats
    c1: Floats
    v2_vacuous: Bools


def _preference(grid: _Grid, subs: _Subtasks, n: Ints, options: Mapping[str, str]) -> _Preference:
    """Algorithm 1 in floats (``user_pref`` with float o_k), then, for the reports whose c0
    or c1 lands within 1e-9 of a threshold, again in exact arithmetic."""
    included, o = subs.included, subs.o
    p0 = included & (grid.importance == _IMPORTANCE["P0"])
    p1 = included & (grid.importance == _IMPORTANCE["P1"])
    p2a = included & (grid.importance == _IMPORTANCE["P2a"])
    n0 = p0.sum(axis=0)
    c0 = np.where(n0 > 0, _sequential(np.where(p0, o, 0.0)) / np.maximum(n0, 1), 1.0)
    c1 = _c1(grid, p1, p2a, o, options["empty_c1"] == "one")
    v1 = ~(p1 & ~(o > 0)).any(axis=0)
    v2_vacuous = ~p2a.any(axis=0)
    v2 = np.where(
        v2_vacuous, options["v2_without_groups"] == "vacuous_true", (p2a & (o > 0)).any(axis=0)
    )
    every_one = (~included | (o == 1.0)).all(axis=0) & (n > 0)
    low, half, high = THRESHOLDS
    level = np.where(
        every_one,
        4.0,
        np.where(
            (c0 == 0) | (c1 < low) | ((c0 < half) & (c1 < half)),
            1.0,
            np.where((c0 >= half) & v1 & v2 & (c1 >= high), 3.0, 2.0),
        ),
    )
    near = np.zeros(len(n), dtype=np.bool_)
    for threshold in THRESHOLDS:
        near |= (np.abs(c0 - threshold) < NEAR) | (np.abs(c1 - threshold) < NEAR)
    for r in np.flatnonzero(near & (n > 0)).tolist():
        level[r], c0[r], c1[r] = _exact_preference(grid, subs, r, options)
    return _Preference(level, c0, c1, v2_vacuous)


def _c1(grid: _Grid, p1: Bools, p2a: Bools, o: Floats, empty_one: bool) -> Floats:
    """c1: the mean of the P1 o_k (in subtask order) and each P2(a) group's mean (in the
    order the groups first appear among the subtasks scored)."""
    reports = o.shape[1]
    every = np.arange(reports)
    groups = max(grid.groups, 1)
    width = o.shape[0]
    total = np.zeros((groups, reports))
    members = np.zeros((groups, reports), dtype=np.int64)
    first = np.full((groups, reports), width, dtype=np.int64)
    for j in range(width):
        chosen = p2a[j]
        group = np.where(chosen, grid.group[j], 0)
        total[group, every] += np.where(chosen, o[j], 0.0)
        members[group, every] += chosen
        seen = first[group, every]
        first[group, every] = np.where(chosen & (seen == width), j, seen)
    mean = total / np.maximum(members, 1)
    pooled = _sequential(np.where(p1, o, 0.0))
    for group in np.argsort(first, axis=0, kind="stable"):
        pooled += np.where(members[group, every] > 0, mean[group, every], 0.0)
    count = p1.sum(axis=0) + (members > 0).sum(axis=0)
    return np.where(count > 0, pooled / np.maximum(count, 1), 1.0 if empty_one else 0.0)


Exact = tuple[int, int]
"""A non-negative rational p/q as (p, q), q > 0, not necessarily reduced: summed in plain
integers, far cheaper than ``Fraction`` arithmetic."""


def _exact_o(subs: _Subtasks, j: int, r: int, zero_missing: bool) -> Exact:
    """o_k of one subtask in exact arithmetic (Eq. 5 as the row path's ``_o`` reads it)."""
    a, b = int(subs.ins.num[j, r]), int(subs.ins.den[j, r])
    fac = (int(subs.fac.num[j, r]), int(subs.fac.den[j, r])) if subs.fac.has[j, r] else None
    rat = (int(subs.rat.num[j, r]), int(subs.rat.den[j, r])) if subs.rat.has[j, r] else None
    if zero_missing or (fac is not None and rat is not None):
        c, d = fac or (0, 1)
        e, f = rat or (0, 1)
        return a * (c * f + e * d), 2 * b * d * f
    only = fac or rat
    return (a, b) if only is None else (a * only[0], b * only[1])


def _exact_mean(values: Sequence[Exact]) -> Exact:
    num, den = 0, 1
    for p, q in values:
        num, den = num * q + p * den, den * q
    return num, den * len(values)


@dataclass(slots=True)
class _ExactSubtasks:
    """One report's scored o_k in exact arithmetic, by importance (P2(a) by group, in the
    order the groups first appear)."""

    every: list[Exact]
    s0: list[Exact]
    s1: list[Exact]
    groups: dict[int, list[Exact]]


def _exact_subtasks(grid: _Grid, subs: _Subtasks, r: int, zero_missing: bool) -> _ExactSubtasks:
    out = _ExactSubtasks([], [], [], {})
    for j in np.flatnonzero(subs.included[:, r]).tolist():
        o = _exact_o(subs, j, r, zero_missing)
        out.every.append(o)
        importance = int(grid.importance[j, r])
        if importance == _IMPORTANCE["P0"]:
            out.s0.append(o)
        elif importance == _IMPORTANCE["P1"]:
            out.s1.append(o)
        elif importance == _IMPORTANCE["P2a"]:
            out.groups.setdefault(int(grid.group[j, r]), []).append(o)
    return out


def _exact_preference(
    grid: _Grid, subs: _Subtasks, r: int, options: Mapping[str, str]
) -> tuple[float, float, float]:
    """Algorithm 1 for report ``r`` in exact arithmetic (``user_pref`` on fractions):
    (level, c0, c1), c0 and c1 rounded once from their exact values."""
    parts = _exact_subtasks(grid, subs, r, options["missing_dimension"] == "zero")
    c0 = Fraction(*_exact_mean(parts.s0)) if parts.s0 else Fraction(1)
    pooled = parts.s1 + [_exact_mean(values) for values in parts.groups.values()]
    empty_c1 = Fraction(1 if options["empty_c1"] == "one" else 0)
    c1 = Fraction(*_exact_mean(pooled)) if pooled else empty_c1
    level, _ = preference_level(c0, c1, *_exact_checks(parts, options), EXACT_THRESHOLDS)
    return float(level), float(c0), float(c1)


def _exact_checks(parts: _ExactSubtasks, options: Mapping[str, str]) -> tuple[bool, bool, bool]:
    """(v1, v2, every o_k = 1) of Algorithm 1."""
    s2 = [p for values in parts.groups.values() for p, _ in values]
    v2 = any(p > 0 for p in s2) if s2 else options["v2_without_groups"] == "vacuous_true"
    v1 = all(p > 0 for p, _ in parts.s1)
    return v1, v2, all(p == q for p, q in parts.every)


def _ratio(num: Floats | Ints, den: Floats | Ints) -> Floats:
    """num / den where den is non-zero, else NaN (no value)."""
    out = np.full(len(num), np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _trace(metadata: Sequence[Mapping[str, object]]) -> tuple[Floats, Bools]:
    """(R, 3) search counts (NaN: none) and whether each report carries trace counts."""
    counts = np.full((len(metadata), 3), np.nan)
    has = np.zeros(len(metadata), dtype=np.bool_)
    for r, meta in enumerate(metadata):
        found = search_counts(meta) if meta else None
        if found is not None:
            has[r] = True
            counts[r] = [np.nan if v is None else v for v in found]
    return counts, has


_CELLS = 1 << 16
"""(subtask position, report) cells scored at a time."""


def score_counted(table: CountedReports, options: Mapping[str, str]) -> ScoreMatrix:
    """:meth:`CascadeFramework.score_report` of every report of ``table``, from its counts.

    Reports are scored in slices of like width (their tasks' subtask counts within a factor
    of two) when one matrix for all would be large: memory then follows the subtasks the
    reports have, not the widest task times every report."""
    shapes = table.tasks
    tasks = int(max(shapes.task.max(initial=-1), table.report_task.max(initial=-1))) + 1
    widths = np.bincount(shapes.task, minlength=tasks)[table.report_task]
    if int(widths.max(initial=0)) * len(widths) <= _CELLS:
        return _score(table, options)
    reports = len(widths)
    values = np.full((reports, len(NAMES)), np.nan)
    layout = np.zeros(reports, dtype=np.intp)
    layouts: dict[tuple[int, ...], int] = {}
    for rows in _slices(widths):
        lo, hi = int(rows[0]), int(rows[-1]) + 1
        if hi - lo == len(rows):  # (the common case: every task about as wide)
            piece = _score(table.between(lo, hi), options)
        else:
            keep = np.zeros(reports, dtype=np.bool_)
            keep[rows] = True
            piece = _score(table.subset(keep), options)
        values[rows] = piece.values
        at = [layouts.setdefault(columns, len(layouts)) for columns in piece.layouts]
        layout[rows] = np.array(at, dtype=np.intp)[piece.layout]
    return ScoreMatrix(NAMES, values, tuple(layouts), layout)


def _slices(widths: Ints) -> list[npt.NDArray[np.intp]]:
    """The reports (ascending) in slices of like width, each of at most ``_CELLS`` cells."""
    bucket = np.ceil(np.log2(np.maximum(widths, 1))).astype(np.int64)
    out: list[npt.NDArray[np.intp]] = []
    for b in np.unique(bucket).tolist():
        members = np.flatnonzero(bucket == b)
        per = max(_CELLS >> b, 1)
        out.extend(members[k : k + per] for k in range(0, len(members), per))
    return out


def _score(table: CountedReports, options: Mapping[str, str]) -> ScoreMatrix:
    grid = _grid(table)
    tallies = _tallies(table, grid, options)
    subs = _subtasks(grid, tallies, options)
    sums = _sums(subs)
    pref = _preference(grid, subs, sums.n, options)
    reports = len(table.report_ids)
    values = np.full((reports, len(NAMES)), np.nan)
    claims = table.claims
    noref = claims - tallies.cited
    flags = (subs.empty_fac, tallies.unjudged, subs.failed, subs.missing_ins)
    needs = sum(flag.astype(bool) for flag in flags)
    columns: dict[str, Floats | Ints] = {
        "UserPref": pref.level,
        "Ins": _ratio(sums.ins_sum, sums.n),
        "Fac": _ratio(sums.fac_num, sums.fac_den),
        "Rat": _ratio(sums.rat_num, sums.rat_den),
        "SubTaskPass": _ratio(sums.passed, sums.n),
        "Reference_Ratio": _ratio(tallies.cited, claims),
        "Reference_Support": _ratio(tallies.correct_cited, tallies.cited),
        "No_Reference_Support": _ratio(tallies.correct - tallies.correct_cited, noref),
        "Refer_Claim_Consistency": _ratio(tallies.pairs_support, tallies.pairs),
        "NeedsReview": np.where(needs > 0, 1.0, 0.0),
        "_n": sums.n,
        "_ins_sum": sums.ins_sum,
        "_fac_num": sums.fac_num,
        "_fac_den": sums.fac_den,
        "_rat_num": sums.rat_num,
        "_rat_den": sums.rat_den,
        "_fac_k": sums.fac_k,
        "_rat_k": sums.rat_k,
        "_pass": sums.passed,
        "_v2_vacuous": np.where(pref.v2_vacuous, 1.0, 0.0),
        "_c0": pref.c0,
        "_c1": pref.c1,
        "_claims": claims,
        "_claims_ref": tallies.cited,
        "_correct_ref": tallies.correct_cited,
        "_correct_noref": tallies.correct - tallies.correct_cited,
        "_pairs": tallies.pairs,
        "_pairs_support": tallies.pairs_support,
    }
    for name, column in columns.items():
        values[:, _AT[name]] = column
    for at, flag in zip(_FLAGS, flags, strict=True):
        values[:, at] = np.where(flag > 0, flag, np.nan)
    search, traced = _trace(table.metadata)
    values[:, _TRACE[:3]] = search
    values[:, _TRACE[3]] = np.where(traced, 0.0, 1.0)
    scored = sums.n > 0
    # Every subtask left out (option missing_ins): the report only says it needs review.
    values[~scored, : _AT["_pairs_support"] + 1] = np.nan
    values[~scored, _AT["NeedsReview"]] = 1.0
    bits = sum((flag > 0).astype(np.int64) << i for i, flag in enumerate(flags))
    kind = np.where(grid.valid.any(axis=0), np.where(scored, 2, 1), 0)
    values[kind == 0] = np.nan  # a task without subtasks: no scores
    key = (kind * 16 + bits) * 2 + traced
    keys, layout = np.unique(key, return_inverse=True)
    return ScoreMatrix(
        NAMES,
        values,
        tuple(_layout(int(k)) for k in keys.tolist()),
        layout.astype(np.intp).reshape(-1),
    )


def _layout(key: int) -> tuple[int, ...]:
    """The columns a report has, in its dict's order, from its layout key (none for a report
    whose task has no subtask; only NeedsReview, its flags and trace where every subtask was
    left out)."""
    key, traced = divmod(key, 2)
    kind, bits = divmod(key, 16)
    if kind == 0:
        return ()
    columns = _MAIN if kind == 2 else (_AT["NeedsReview"],)
    columns += tuple(at for i, at in enumerate(_FLAGS) if bits >> i & 1)
    return columns + (_TRACE if traced else _TRACE[3:])
