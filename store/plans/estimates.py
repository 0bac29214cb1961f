"""Corrected estimates from a review plan: every headline metric of every framework of a run,
per system and overall, with its interval, the judge's bias, the human-only estimate, how many
more reviews reach a target precision, and which adjacent ranks could swap.

This module only gathers what the statistics need from the database — the plan's frame and
draws, who decided what, the cached per-report scores — and rescores the reports holding a
reviewed disagreement to measure its influence. The statistics are in
:mod:`reviewer.estimates` (method and assumptions: docs/estimates.md).

* **Anchor**: the adjudicated scores, every decision applied. Decisions made outside the plan
  are known there and correct their own subjects only; the plan's decisions are known there
  too *and* are the random sample that speaks for the subjects nobody reviewed.
* **Corrected** = anchor + the estimated total influence of the judge's errors on the plan's
  unreviewed subjects (PPI++).
* **Bias** = judge − corrected: positive when the judge scores higher than humans would.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from reviewer.estimates.active import (
    DEFAULT_SHARES,
    ActiveSkips,
    active_correction,
    decided_share,
    skip_bounds,
)
from reviewer.estimates.clusters import cluster_correction, cluster_totals
from reviewer.estimates.correction import (
    Correction,
    Frame,
    Reviews,
    Skips,
    assemble,
    correct,
)
from reviewer.estimates.influence import (
    Collapsed,
    Flip,
    Target,
    aggregate_values,
    collapse,
    influences,
    jackknife_influence,
    score_at,
)
from reviewer.estimates.intervals import corrected_intervals, half_width
from reviewer.estimates.ranks import (
    DEFAULT_RESAMPLES,
    RankPair,
    adjacent_pairs,
    replicates,
    task_weights,
)
from reviewer.estimates.sizes import cs_half_width, reviews_needed
from reviewer.framework import Framework, Metric, ReportScores
from reviewer.impact import alternatives
from reviewer.inputs import ReportInput, VerdictIn
from reviewer.registry import frameworks, get_kind
from store.plans.design import Plan, active_rates, get_plan, has_plans, suite_row
from store.scores import report_rows as report_scores
from store.scores.cache import load_options
from store.scores.inputs import load_inputs

Floats = npt.NDArray[np.float64]

MIN_REVIEWS = 30
"""Reviews moving a target below which its interval is flagged weak."""
MIN_DISAGREEMENTS = 10
"""Disagreements moving a target below which its interval is flagged weak (and widened: a
t quantile with one degree of freedom fewer than the disagreements)."""
NOT_ESTIMABLE = (
    "not estimable from this sample: a level or a ratio within a report moves with which of "
    "its verdicts err together, which a sample of single verdicts cannot see; the value is "
    "first-order, without an interval (a report plan estimates it: `gavel plan new --design "
    "reports`)"
)
DEFAULT_HALF_WIDTH = 0.02
VARIANTS = ("judge", "adjudicated", "corrected")
OVERALL = "overall"


@dataclass(frozen=True, slots=True)
class MetricEstimate:
    """One metric of one system (or of every system: ``system == "overall"``)."""

    framework: str
    metric: str
    label: str
    digits: int
    system: str
    system_id: int | None
    judge: float | None
    adjudicated: float | None
    """Every decision applied: the anchor the correction starts from."""
    corrected: float | None
    lower: float | None
    upper: float | None
    se: float | None
    bias: float | None
    bias_lower: float | None
    bias_upper: float | None
    human: float | None
    human_lower: float | None
    human_upper: float | None
    lam: float | None
    reviews: int
    disagreements: int
    half_width: float | None
    needed: int | None
    anytime: float | None
    """Half-width of the anytime-valid confidence sequence at this many reviews."""
    skip_low: float
    skip_high: float
    """How far the plan's skipped draws could move the estimate down and up (worst case):
    the interval is widened by them."""
    status: str
    """'ok', 'weak' (computed, but see the notes) or 'undefined' (no number to trust)."""
    notes: tuple[str, ...]
    additive: bool = True
    """The metric's :attr:`reviewer.framework.Metric.additive`."""
    ranks: dict[str, int | None] = field(default_factory=dict)
    swaps: dict[str, str] = field(default_factory=dict)
    """variant -> '↑', '↓' or '↕': could swap with the system ranked above / below / both."""


@dataclass(frozen=True, slots=True)
class RankRow:
    framework: str
    metric: str
    variant: str
    upper: str
    lower: str
    difference: float
    lower_bound: float | None
    upper_bound: float | None
    reversed_share: float | None
    """Share of the resamples that reverse the order (descriptive, not a probability)."""
    could_swap: bool | None
    """Not significantly ordered, Holm-corrected over the ranking's adjacent pairs."""
    status: str
    note: str


@dataclass(frozen=True, slots=True)
class EstimateReport:
    suite: str
    plan: Plan | None
    confidence: float
    target_half_width: float
    resamples: int
    tasks: int
    rows: tuple[MetricEstimate, ...]
    ranks: tuple[RankRow, ...]
    notes: tuple[str, ...]
    elapsed: float
    counts: dict[str, int] = field(default_factory=dict)
    """What the reviewers did around the plan: ``in_plan`` (decided draws' subjects),
    ``outside_plan`` (decided subjects of the frame not drawn), ``outside_frame`` (decided
    subjects not in the frame), ``skipped`` (draws passed over)."""

    def rows_for(self, framework: str, metric: str) -> list[MetricEstimate]:
        return [r for r in self.rows if r.framework == framework and r.metric == metric]


@dataclass(slots=True)
class _Run:
    """The run's reports and their cached scores."""

    reports: list[int]
    system_of: dict[int, int]
    task_of: dict[int, int]
    systems: list[int]
    system_name: dict[int, str]
    tasks: list[int]
    scores: dict[tuple[str, str], dict[int, ReportScores]]
    """(framework, variant) -> report -> scores."""
    system_values: dict[tuple[str, str], dict[int, dict[str, float | None]]]
    """(framework, variant) -> system -> metric -> cached value."""


def _load_run(conn: sqlite3.Connection, suite_id: int, names: Sequence[str]) -> _Run:
    rows = conn.execute(
        """SELECT r.id, r.system_id, r.task_id, y.ext_id FROM report r
           JOIN system y ON y.id = r.system_id
           WHERE y.suite_id = ? AND y.is_reference = 0 ORDER BY r.id""",
        (suite_id,),
    ).fetchall()
    reports = [int(r[0]) for r in rows]
    task_of = {int(r[0]): int(r[2]) for r in rows}
    system_name = {int(r[1]): str(r[3]) for r in rows}
    return _Run(
        reports,
        {int(r[0]): int(r[1]) for r in rows},
        task_of,
        sorted(system_name),
        system_name,
        sorted(set(task_of.values())),
        _report_scores(conn, reports, names),
        _system_values(conn, set(system_name)),
    )


def _report_scores(
    conn: sqlite3.Connection, reports: Sequence[int], names: Sequence[str]
) -> dict[tuple[str, str], dict[int, ReportScores]]:
    """(framework, variant) -> report -> its cached scores (empty when it has none)."""
    scores: dict[tuple[str, str], dict[int, ReportScores]] = {
        (name, variant): {rid: {} for rid in reports}
        for name in names
        for variant in ("judge", "adjudicated")
    }
    wanted = set(reports)
    for rid, framework, variant, values in report_scores.read(conn):
        if rid in wanted and (framework, variant) in scores:
            scores[(framework, variant)][rid] = values
    return scores


def _system_values(
    conn: sqlite3.Connection, systems: set[int]
) -> dict[tuple[str, str], dict[int, dict[str, float | None]]]:
    """(framework, variant) -> system -> metric -> its cached value."""
    values: dict[tuple[str, str], dict[int, dict[str, float | None]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for scope, framework, variant, metric, value in conn.execute(
        "SELECT scope, framework, variant, metric, value FROM score "
        "WHERE scope >= 'system:' AND scope < 'system;'"
    ):
        sid = int(scope[7:])
        if sid in systems:
            values[(framework, variant)][sid][metric] = value
    return values


def _number(value: object) -> float:
    return 0.0 if not isinstance(value, int | float) else float(value)


_NUMBERS: dict[tuple[str, str | None], float] = {}


def _numeric(kind: str, code: str | None) -> float:
    """A verdict as a number (0 for no value or a class without one): the judge
    contribution model's ``x``."""
    key = (kind, code)
    number = _NUMBERS.get(key)
    if number is None:
        verdict_kind = get_kind(kind)
        value = None if verdict_kind is None or code is None else verdict_kind.scale.numeric(code)
        number = _NUMBERS[key] = 0.0 if value is None else float(value)
        if len(_NUMBERS) > 100_000:
            _NUMBERS.clear()
    return number


def _probe(
    framework: Framework,
    options: Mapping[str, str],
    inputs: Mapping[int, ReportInput],
    metrics: Sequence[str],
) -> dict[str, set[str]]:
    """Which metrics a verdict of each kind can move: each kind's first verdicts in a few
    reports flipped to every other value, the one-report aggregate compared."""
    moves: dict[str, set[str]] = defaultdict(set)
    tried: dict[str, int] = defaultdict(int)
    for report in inputs.values():
        base_scores = framework.score_report(report, "adjudicated", options)
        before = aggregate_values(framework, [base_scores], options)
        for index, verdict in enumerate(report.verdicts):
            if verdict.kind not in framework.kinds or tried[verdict.kind] >= 6:
                continue
            tried[verdict.kind] += 1
            for value in alternatives(verdict):
                verdicts = list(report.verdicts)
                verdicts[index] = verdict._replace(effective=value)
                after = aggregate_values(
                    framework, [score_at(framework, report, verdicts, options)], options
                )
                for metric in metrics:
                    if before.get(metric) != after.get(metric):
                        moves[verdict.kind].add(metric)
    return moves


@dataclass(slots=True)
class _Scope:
    """What an estimate is of: the run's frameworks, their options, the run's reports and
    scores, and the targets (each headline metric per system and overall)."""

    registry: Mapping[str, Framework]
    names: list[str]
    kinds: list[str]
    options: Mapping[str, Mapping[str, str]]
    run: _Run
    targets: list[Target]

    def metrics_of(self, name: str) -> list[str]:
        return sorted({t.metric for t in self.targets if t.framework == name})


@dataclass(slots=True)
class _Sample:
    """The plan's draws a human decided (position, subject, stratum, draw probability), and
    the decisions made outside the plan."""

    reviewed: list[tuple[int, int, int, float]]
    sampled: set[int]
    outside: set[int]
    skipped: list[tuple[int, int]] = field(default_factory=list)
    """(subject, stratum) of each draw passed over: before the last decided draw, undecided."""
    outside_frame: set[int] = field(default_factory=set)
    """The decisions outside the plan on subjects of its frame."""


@dataclass(slots=True)
class _Flips:
    """The reviewed disagreements: the reports holding one (their inputs and the verdicts of
    the anchor), each flip numbered, by framework, and each subject's flip number."""

    inputs: dict[int, ReportInput]
    anchor_verdicts: dict[int, list[VerdictIn]]
    by_framework: dict[str, list[tuple[int, Flip]]]
    of_subject: dict[int, int]


def estimate(
    conn: sqlite3.Connection,
    plan: str | None = None,
    *,
    suite: str | None = None,
    metrics: Sequence[str] = (),
    half_width: float = DEFAULT_HALF_WIDTH,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    ranks: bool = True,
    crossfit: bool = True,
) -> EstimateReport:
    """Every headline metric (and ``metrics``) of the plan's run, corrected by the plan.

    Without a plan (none made yet) the judge and adjudicated values and their ranks are still
    reported; corrected values are undefined and say why. ``crossfit=False`` tunes PPI++'s λ
    as ppi-python does, on the reviews it then weighs (see reviewer.estimates.correction).
    """
    started = time.perf_counter()
    chosen = _chosen_plan(conn, plan, suite)
    suite_id, suite_ext, suite_frameworks = suite_row(
        conn, chosen.suite if chosen is not None else suite
    )
    scope = _scope(conn, suite_id, chosen.frameworks if chosen else suite_frameworks, metrics)
    known = _decided(conn, suite_id, set(scope.kinds))
    notes: list[str] = []
    sample = _plan_sample(conn, chosen, known, notes)
    if chosen is not None:
        notes.extend(_frame_notes(conn, chosen, suite_id, set(scope.kinds)))
    # The anchor is the adjudicated state, every decision applied: each reviewed
    # disagreement's influence is measured there (its human value against the judge's, the
    # others as decided), so only the reports holding one are loaded.
    flips = _reviewed_flips(conn, known, sample.sampled | sample.outside_frame)
    # Each system's scores collapsed by task are shared by the influences and the rank
    # comparisons (adjudicated and corrected variants).
    collapsed = _collapsed(scope, ("judge", "adjudicated") if ranks else ("adjudicated",))
    d_flips = _flip_influences(scope, flips, collapsed)
    correction: Correction | None = None
    pop_n = 0
    if chosen is not None and sample.reviewed:
        correction, pop_n = _plan_correction(
            conn, chosen, scope, known, sample, flips, d_flips, collapsed, crossfit
        )
        gone = max(0, chosen.frame - pop_n)
        if gone:
            notes.append(
                f"{gone:,} subjects of plan {chosen.name}'s frame have no current "
                "verdict any more (left out)"
            )
    rows = _rows(scope, correction, chosen, sample.reviewed, pop_n, half_width, confidence, notes)
    rank_rows: list[RankRow] = []
    if ranks:
        rank_rows = _ranks(
            scope,
            correction,
            rows,
            collapsed,
            [known[sid].report for _, sid, _, _ in sample.reviewed],
            resamples,
            seed,
            confidence,
        )
        rows = _mark_ranks(rows, rank_rows)
    return EstimateReport(
        suite_ext,
        chosen,
        confidence,
        half_width,
        resamples,
        len(scope.run.tasks),
        tuple(rows),
        tuple(rank_rows),
        tuple(notes),
        time.perf_counter() - started,
        {
            "in_plan": len(sample.sampled),
            "outside_plan": len(sample.outside_frame),
            "outside_frame": len(sample.outside - sample.outside_frame),
            "skipped": len(sample.skipped),
        },
    )


def _plan_correction(
    conn: sqlite3.Connection,
    plan: Plan,
    scope: _Scope,
    known: dict[int, _Known],
    sample: _Sample,
    flips: _Flips,
    d_flips: Floats,
    collapsed: Mapping[tuple[str, str, int], Collapsed],
    crossfit: bool,
) -> tuple[Correction, int]:
    """The plan's correction of every target: its reviews, what the decisions outside it
    settled, the bounds of its skipped draws, and the probed sensitivities."""
    moves = _moves(conn, scope, flips, d_flips)
    outside = np.zeros(len(scope.targets))
    for sid in sample.outside_frame:
        if sid in flips.of_subject:
            outside += d_flips[flips.of_subject[sid]]
    if plan.reports:
        return _report_correct(conn, plan, scope, sample, collapsed), plan.frame
    skips = _skip_bounds(conn, scope, sample.skipped, collapsed)
    groups = len(scope.run.systems) * len(scope.kinds)
    if plan.active:
        return _active_correct(
            conn, plan, scope, known, sample.reviewed, flips, d_flips, moves, outside, skips
        )
    sensitivity = _sensitivity(conn, scope, collapsed, groups)
    return _correct(
        conn,
        plan,
        scope,
        known,
        sample.reviewed,
        _Reviewed(flips.of_subject, d_flips, outside, skips, sensitivity),
        moves,
        crossfit,
    )


def _chosen_plan(conn: sqlite3.Connection, plan: str | None, suite: str | None) -> Plan | None:
    """The plan named; else the newest (of the suite named), if any can be read."""
    if plan is not None:
        return get_plan(conn, plan)
    if not has_plans(conn):
        return None
    suite_id = suite_row(conn, suite)[0] if suite is not None else None
    try:
        return get_plan(conn, None, suite_id)
    except Exception:
        return None


def _scope(
    conn: sqlite3.Connection, suite_id: int, planned: Sequence[str], metrics: Sequence[str]
) -> _Scope:
    """The run's registered frameworks (of those planned) and its targets."""
    registry = frameworks()
    names = [n for n in planned if n in registry]
    run = _load_run(conn, suite_id, names)
    kinds = [k for name in names for k in registry[name].kinds]
    targets = _targets(registry, names, metrics, run.systems)
    return _Scope(registry, names, kinds, load_options(conn), run, targets)


def _targets(
    registry: Mapping[str, Framework],
    names: Sequence[str],
    metrics: Sequence[str],
    systems: Sequence[int],
) -> list[Target]:
    """Each headline metric (and each of ``metrics``) of each framework, per system and
    then overall."""
    targets: list[Target] = []
    for name in names:
        wanted = [m.name for m in registry[name].metrics if m.headline or m.name in metrics]
        for metric in wanted:
            targets.extend(Target(name, metric, s) for s in systems)
            targets.append(Target(name, metric, None))
    return targets


def _plan_sample(
    conn: sqlite3.Connection, plan: Plan | None, known: Mapping[int, _Known], notes: list[str]
) -> _Sample:
    """The plan's decided draws, in draw order, and the decisions outside the plan (noted:
    they correct their own subjects only)."""
    draws: list[tuple[int, int, int, float]] = []
    if plan is not None:
        draws = [
            (int(a), int(b), int(c), float(d))
            for a, b, c, d in conn.execute(
                "SELECT position, subject_id, stratum, p FROM plan_draw WHERE plan_id = ? "
                "ORDER BY position",
                (plan.id,),
            )
        ]
    drawn = {subject for _, subject, _, _ in draws}
    outside = set(known) - drawn
    reviewed = [(pos, sid, stratum, p) for pos, sid, stratum, p in draws if sid in known]
    sample = _Sample(
        reviewed,
        {sid for _, sid, _, _ in reviewed},
        outside,
        _skipped(draws, reviewed, known),
        _in_frame(conn, plan, outside) if plan is not None else set(),
    )
    notes.extend(_sample_notes(plan, sample))
    return sample


def _skipped(
    draws: Sequence[tuple[int, int, int, float]],
    reviewed: Sequence[tuple[int, int, int, float]],
    known: Mapping[int, _Known],
) -> list[tuple[int, int]]:
    """(subject, stratum) of the draws passed over: before the last decided draw and
    undecided (a conflict is not a decision)."""
    last = max((pos for pos, _, _, _ in reviewed), default=-1)
    skipped: dict[int, int] = {}
    for pos, sid, stratum, _ in draws:
        if pos < last and sid not in known:
            skipped.setdefault(sid, stratum)
    return sorted(skipped.items())


def _sample_notes(plan: Plan | None, sample: _Sample) -> list[str]:
    """What the reviewers did around the plan, and what the estimate makes of it."""
    notes = []
    if sample.outside_frame:
        notes.append(
            f"{len(sample.outside_frame):,} subjects of the plan's frame were decided outside "
            f"the plan: they correct themselves exactly and are subtracted from what the "
            f"plan's {len(sample.reviewed):,} reviews estimate for the whole frame (counted "
            "once, whatever order they were reviewed in)"
        )
    elif sample.outside:
        notes.append(
            f"{len(sample.outside):,} decisions outside the plan correct their own subjects "
            "exactly (not in its frame)"
        )
    if plan is not None and plan.reports:
        notes.append(
            f"plan {plan.name} draws whole reports: 'reviews (≠)' counts its reports decided "
            "in full (and those whose decisions moved the target); each report's score is "
            "recomputed exactly, so levels and ratios within a report get a valid interval"
        )
    if sample.skipped and plan is not None and plan.reports:
        notes.append(
            f"{len(sample.skipped):,} subjects of plan {plan.name} were skipped (drawn before "
            "the last decided one, undecided): a report counts in the sample once every "
            "subject of it drawn is decided, so their reports are left out (the estimate "
            "assumes they err like the reports decided in full)"
        )
    elif sample.skipped and plan is not None:
        notes.append(
            f"{len(sample.skipped):,} subjects of plan {plan.name} were skipped (drawn before "
            "the last decided one, undecided): the estimate assumes they err like the "
            f"decided ones; the intervals are widened by the most {len(sample.skipped):,} "
            "skips could move them"
        )
    return notes


def _in_frame(conn: sqlite3.Connection, plan: Plan, subjects: set[int]) -> set[int]:
    """Those of ``subjects`` in the plan's frame."""
    ids = sorted(subjects)
    found: set[int] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found.update(
            int(sid)
            for (sid,) in conn.execute(
                f"SELECT subject_id FROM plan_frame WHERE plan_id = ? AND subject_id IN "
                f"({','.join('?' * len(chunk))})",
                (plan.id, *chunk),
            )
        )
    return found


def _reviewed_flips(
    conn: sqlite3.Connection, known: Mapping[int, _Known], sampled: set[int]
) -> _Flips:
    """Each sampled subject whose human value differs from the judge's, as the flip that
    takes the human's value back to the judge's (negated later: what the review moved)."""
    disagreeing = sorted(
        {known[sid].report for sid in sampled if known[sid].human != known[sid].judge}
    )
    inputs = load_inputs(conn, disagreeing) if disagreeing else {}
    flips = _Flips(inputs, {}, defaultdict(list), {})
    for rid, report in inputs.items():
        flips.anchor_verdicts[rid] = list(report.verdicts)
        for index, verdict in enumerate(report.verdicts):
            if verdict.subject not in sampled:
                continue
            kind = get_kind(verdict.kind)
            if kind is None or known[int(verdict.subject)].human == verdict.judge:
                continue
            number = len(flips.of_subject)
            flips.of_subject[int(verdict.subject)] = number
            flips.by_framework[kind.framework].append((number, Flip(rid, index, verdict.judge)))
    return flips


def _collapsed(scope: _Scope, variants: Sequence[str]) -> dict[tuple[str, str, int], Collapsed]:
    """(framework, variant, system) -> the system's report scores collapsed by task."""
    run = scope.run
    return {
        (name, variant, system): collapse(
            scope.registry[name],
            scope.options[name],
            _by_task(run, run.scores[(name, variant)], system),
            scope.metrics_of(name),
        )
        for name in scope.names
        for variant in variants
        for system in run.systems
    }


def _flip_influences(
    scope: _Scope, flips: _Flips, collapsed: Mapping[tuple[str, str, int], Collapsed]
) -> Floats:
    """(flips × targets): what each reviewed disagreement moved each target by, measured on
    the anchor."""
    d_flips = np.zeros((len(flips.of_subject), len(scope.targets)))
    column_of = {t: j for j, t in enumerate(scope.targets)}
    for name in scope.names:
        mine = [t for t in scope.targets if t.framework == name]
        listed = flips.by_framework.get(name, [])
        if listed and mine:
            block = _framework_influences(scope, name, flips, listed, mine, collapsed)
            flip_rows = [number for number, _ in listed]
            d_flips[np.ix_(flip_rows, [column_of[t] for t in mine])] = -block
    return d_flips


def _framework_influences(
    scope: _Scope,
    name: str,
    flips: _Flips,
    listed: Sequence[tuple[int, Flip]],
    targets: Sequence[Target],
    collapsed: Mapping[tuple[str, str, int], Collapsed],
) -> Floats:
    """(listed flips × targets) of one framework, on the anchor: the adjudicated scores."""
    run = scope.run
    return influences(
        scope.registry[name],
        scope.options[name],
        flips.inputs,
        flips.anchor_verdicts,
        run.scores[(name, "adjudicated")],
        run.system_of,
        [f for _, f in listed],
        targets,
        {s: collapsed[(name, "adjudicated", s)] for s in run.systems},
    )


def _moves(
    conn: sqlite3.Connection, scope: _Scope, flips: _Flips, d_flips: Floats
) -> dict[tuple[str, str], set[str]]:
    """(framework, kind) -> the metrics a verdict of that kind can move: probed on a few
    reports, and any a reviewed disagreement did move."""
    reports = scope.run.reports
    probe_ids = reports[:: max(1, len(reports) // 4)][:4]
    probe_inputs = load_inputs(conn, probe_ids) if probe_ids else {}
    moves: dict[tuple[str, str], set[str]] = {}
    for name in scope.names:
        fw = scope.registry[name]
        found = _probe(fw, scope.options[name], probe_inputs, scope.metrics_of(name))
        for kind_name in fw.kinds:
            moves[(name, kind_name)] = found.get(kind_name, set())
    for listed in flips.by_framework.values():
        for number, flip in listed:
            verdict = flips.inputs[flip.report].verdicts[flip.index]
            kind = get_kind(verdict.kind)
            if kind is None:
                continue
            moved = moves.setdefault((kind.framework, verdict.kind), set())
            moved.update(
                target.metric
                for j, target in enumerate(scope.targets)
                if target.framework == kind.framework and d_flips[number, j] != 0
            )
    return moves


@dataclass(frozen=True, slots=True)
class _Known:
    """A decided subject: its report, kind, the judge's and the human's value."""

    report: int
    kind: str
    judge: str | None
    human: str | None


def _decided(conn: sqlite3.Connection, suite_id: int, kinds: set[str]) -> dict[int, _Known]:
    """Every subject of the run a human has decided (a conflict is not decided).

    CROSS JOIN keeps the decisions outermost: without statistics the planner would walk every
    current verdict to find the few decided ones."""
    return {
        int(sid): _Known(int(rid), str(kind), judge, human)
        for sid, rid, kind, judge, human in conn.execute(
            """SELECT sj.id, sj.report_id, sj.kind, j.value, d.value
                   FROM decision d CROSS JOIN subject sj ON sj.id = d.subject_id
                   JOIN judgment j ON j.subject_id = sj.id AND j.current = 1
                   JOIN report r ON r.id = sj.report_id JOIN system y ON y.id = r.system_id
                   WHERE y.suite_id = ? AND y.is_reference = 0 AND d.status != 'conflict'""",
            (suite_id,),
        )
        if kind in kinds
    }


def _frame_notes(conn: sqlite3.Connection, plan: Plan, suite_id: int, kinds: set[str]) -> list[str]:
    notes = []
    newer = sum(
        int(n)
        for kind, n in conn.execute(
            """SELECT sj.kind, count(*) FROM subject sj
           JOIN report r ON r.id = sj.report_id JOIN system y ON y.id = r.system_id
           JOIN judgment j INDEXED BY judgment_subject ON j.subject_id = sj.id
                AND j.current = 1
           LEFT JOIN decision d ON d.subject_id = sj.id
           WHERE sj.id > (SELECT coalesce(max(subject_id), 0) FROM plan_frame
                          WHERE plan_id = ?)
             AND y.suite_id = ? AND y.is_reference = 0
             AND (d.status IS NULL OR d.status = 'conflict')
           GROUP BY sj.kind""",
            (plan.id, suite_id),
        )
        if kind in kinds
    )
    if newer:
        notes.append(
            f"{newer:,} undecided subjects were judged after plan {plan.name} was "
            "drawn: their judge values stand uncorrected"
        )
    return notes


FRAME_SQL = """
    SELECT pf.stratum, r.system_id, j.kind, j.value, count(*)
    FROM plan_frame pf
    JOIN judgment j ON j.subject_id = pf.subject_id AND j.current = 1
    JOIN report r ON r.id = j.report_id
    WHERE pf.plan_id = ?
    GROUP BY 1, 2, 3, 4
"""
"""The plan's frame as drawn, counted by stratum, system, kind and judge value: all the
estimator needs to know of the subjects nobody reviewed. Subjects decided outside the plan
stay in it — the sample stands for the frame it was drawn from — and their known influences
are subtracted instead (:func:`reviewer.estimates.correction.correct`). (A verdict's report
and kind are its subject's: reading them from the verdict's index spares a lookup of every
subject.)"""


@dataclass(frozen=True, slots=True)
class _Reviewed:
    """What the decisions moved: each reviewed disagreement's flip number and influences, the
    summed influence of the decisions outside the plan on its frame, and the skipped draws'
    bounds."""

    flip_of_subject: dict[int, int]
    d_flips: Floats
    outside: Floats
    skips: _SkipBounds
    sensitivity: Floats


@dataclass(frozen=True, slots=True)
class _SkipBounds:
    """The skipped draws: subject, stratum, system, kind, and the least and most each could
    move each target (skips × targets)."""

    subject: list[int]
    stratum: list[int]
    system: list[int]
    kind: list[str]
    low: Floats
    high: Floats


def _anchor_influences(
    scope: _Scope,
    inputs: Mapping[int, ReportInput],
    flips: Sequence[Flip],
    collapsed: Mapping[tuple[str, str, int], Collapsed],
) -> Floats:
    """(flips × targets): each flip's effect on every target, alone on the anchor (the
    reports' verdicts as loaded: every decision applied), framework by framework."""
    out = np.zeros((len(flips), len(scope.targets)))
    column_of = {t: j for j, t in enumerate(scope.targets)}
    base = {rid: list(report.verdicts) for rid, report in inputs.items()}
    by_framework = _by_framework(inputs, flips)
    for name in scope.names:
        mine = [t for t in scope.targets if t.framework == name]
        rows = by_framework.get(name, [])
        if not rows or not mine:
            continue
        block = influences(
            scope.registry[name],
            scope.options[name],
            inputs,
            base,
            scope.run.scores[(name, "adjudicated")],
            scope.run.system_of,
            [flips[i] for i in rows],
            mine,
            _adjudicated_models(scope, name, collapsed),
        )
        out[np.ix_(rows, [column_of[t] for t in mine])] = block
    return out


def _adjudicated_models(
    scope: _Scope, name: str, collapsed: Mapping[tuple[str, str, int], Collapsed]
) -> dict[int, Collapsed]:
    return {s: collapsed[(name, "adjudicated", s)] for s in scope.run.systems}


def _by_framework(inputs: Mapping[int, ReportInput], flips: Sequence[Flip]) -> dict[str, list[int]]:
    """Framework -> the positions of the flips of its verdicts."""
    out: dict[str, list[int]] = defaultdict(list)
    for i, flip in enumerate(flips):
        kind = get_kind(inputs[flip.report].verdicts[flip.index].kind)
        if kind is not None:
            out[kind.framework].append(i)
    return out


def _skipped_verdicts(
    conn: sqlite3.Connection, scope: _Scope, subjects: Sequence[int]
) -> tuple[dict[int, ReportInput], list[tuple[int, int, int, VerdictIn]]]:
    """The skipped subjects' reports, and (subject, report, position, verdict) of each, in
    subject order."""
    wanted = set(subjects)
    rids = sorted(
        {
            int(r)
            for chunk in _chunks(sorted(wanted))
            for (r,) in conn.execute(
                f"SELECT report_id FROM subject WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            )
        }
    )
    inputs = load_inputs(conn, rids)
    found = sorted(
        (int(v.subject), rid, index, v)
        for rid, report in inputs.items()
        for index, v in enumerate(report.verdicts)
        if v.subject is not None and int(v.subject) in wanted and v.kind in scope.kinds
    )
    return inputs, found


def _skip_bounds(
    conn: sqlite3.Connection,
    scope: _Scope,
    skipped: Sequence[tuple[int, int]],
    collapsed: Mapping[tuple[str, str, int], Collapsed],
) -> _SkipBounds:
    """Each skipped draw's verdict set to every value of its scale, one at a time, on the
    anchor: the least and most (with 0, the judge being right) it moves each target."""
    targets = len(scope.targets)
    if not skipped:
        return _SkipBounds([], [], [], [], np.zeros((0, targets)), np.zeros((0, targets)))
    stratum_of = dict(skipped)
    inputs, found = _skipped_verdicts(conn, scope, list(stratum_of))
    listed = [
        (row, Flip(rid, index, value))
        for row, (_, rid, index, verdict) in enumerate(found)
        for value in alternatives(verdict)
    ]
    moved = _anchor_influences(scope, inputs, [f for _, f in listed], collapsed)
    low = np.zeros((len(found), targets))
    high = np.zeros((len(found), targets))
    owner = np.array([row for row, _ in listed], dtype=np.int64)
    np.minimum.at(low, owner, moved)
    np.maximum.at(high, owner, moved)
    return _SkipBounds(
        [sid for sid, _, _, _ in found],
        [stratum_of[sid] for sid, _, _, _ in found],
        [scope.run.system_of[rid] for _, rid, _, _ in found],
        [v.kind for _, _, _, v in found],
        low,
        high,
    )


def _probes(scope: _Scope, inputs: Mapping[int, ReportInput]) -> dict[int, tuple[Flip, float]]:
    """Group -> one verdict of that (system, kind) flipped to a value whose number differs,
    and by how much the number moves."""
    kinds = scope.kinds
    system_index = {s: i for i, s in enumerate(scope.run.systems)}
    probes: dict[int, tuple[Flip, float]] = {}
    for rid, report in inputs.items():
        for index, verdict in enumerate(report.verdicts):
            if verdict.kind not in kinds:
                continue
            group = system_index[scope.run.system_of[rid]] * len(kinds) + kinds.index(verdict.kind)
            if group in probes:
                continue
            here = _numeric(verdict.kind, verdict.effective)
            step = next(
                (
                    (value, _numeric(verdict.kind, value) - here)
                    for value in alternatives(verdict)
                    if _numeric(verdict.kind, value) != here
                ),
                None,
            )
            if step is not None:
                probes[group] = (Flip(rid, index, step[0]), step[1])
    return probes


def _sensitivity(
    conn: sqlite3.Connection,
    scope: _Scope,
    collapsed: Mapping[tuple[str, str, int], Collapsed],
    groups: int,
) -> Floats:
    """(groups × targets): each target's change per unit of a verdict's number, probed by
    flipping one verdict of each (system, kind) group on the anchor — the judge's share of
    the metric, for the human-only estimate where no review of a group disagreed."""
    first: dict[int, list[int]] = defaultdict(list)
    for rid in scope.run.reports:
        if len(first[scope.run.system_of[rid]]) < 3:
            first[scope.run.system_of[rid]].append(rid)
    inputs = load_inputs(conn, sorted(r for rids in first.values() for r in rids))
    probes = _probes(scope, inputs)
    out = np.zeros((groups, len(scope.targets)))
    if probes:
        order = sorted(probes)
        moved = _anchor_influences(scope, inputs, [probes[g][0] for g in order], collapsed)
        out[order] = moved / np.array([probes[g][1] for g in order])[:, None]
    return out


def _chunks(ids: Sequence[int], size: int = 500) -> list[list[int]]:
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]


def _correct(
    conn: sqlite3.Connection,
    plan: Plan,
    scope: _Scope,
    known: dict[int, _Known],
    reviewed: list[tuple[int, int, int, float]],
    moved: _Reviewed,
    moves: dict[tuple[str, str], set[str]],
    crossfit: bool,
) -> tuple[Correction, int]:
    """The PPI++ correction of every target by the plan's reviews, and the size of the
    population it speaks for (the frame as drawn, with a current verdict)."""
    kinds, targets = scope.kinds, scope.targets
    kind_index = {k: i for i, k in enumerate(kinds)}
    system_index = {s: i for i, s in enumerate(scope.run.systems)}
    frame = _frame(conn, plan, kind_index, system_index, len(kinds))
    reviews = _reviews(plan, scope, known, reviewed, kind_index, system_index)
    for r, (_, sid, _, _) in enumerate(reviewed):
        if sid in moved.flip_of_subject:
            reviews.d[r] = moved.d_flips[moved.flip_of_subject[sid]]
    skips = moved.skips
    skip_system = np.array([system_index[s] for s in skips.system], dtype=np.int64)
    skip_kind = np.array([kind_index[k] for k in skips.kind], dtype=np.int64)
    groups = len(scope.run.systems) * len(kinds)
    group_system = np.arange(groups, dtype=np.int64) // max(1, len(kinds))
    target_system = np.array(
        [-1 if t.system is None else system_index[t.system] for t in targets], dtype=np.int64
    )
    sample, population = assemble(
        frame,
        reviews,
        group_system,
        target_system,
        _relevant(kinds, groups, targets, moves),
        fpc=not plan.with_replacement,
        outside=moved.outside,
        skips=Skips(
            np.array(skips.stratum, dtype=np.int64),
            skip_system * len(kinds) + skip_kind,
            skips.low,
            skips.high,
        ),
        sensitivity=moved.sensitivity,
    )
    return correct(sample, population, crossfit), int(frame.count.sum())


def _active_correct(
    conn: sqlite3.Connection,
    plan: Plan,
    scope: _Scope,
    known: dict[int, _Known],
    reviewed: list[tuple[int, int, int, float]],
    flips: _Flips,
    d_flips: Floats,
    moves: dict[tuple[str, str], set[str]],
    outside: Floats,
    skips: _SkipBounds,
) -> tuple[Correction, int]:
    """An active plan's correction (:func:`reviewer.estimates.active.active_correction`):
    each reviewed draw with its batch and its inclusion probability — scaled, in a batch
    decided only in part, by the share of it decided (its draws are in random order, so the
    decided ones are a random part of it) — and the worst-case bounds of its skipped draws
    (:func:`reviewer.estimates.active.skip_bounds`)."""
    kinds = scope.kinds
    kind_index = {k: i for i, k in enumerate(kinds)}
    system_index = {s: i for i, s in enumerate(scope.run.systems)}
    frame = _frame(conn, plan, kind_index, system_index, len(kinds))
    reviews = _reviews(plan, scope, known, reviewed, kind_index, system_index)
    for r, (_, sid, _, _) in enumerate(reviewed):
        if sid in flips.of_subject:
            reviews.d[r] = d_flips[flips.of_subject[sid]]
    drawn, batch, raw, skipped = _active_draws(conn, plan, reviewed, skips)
    pi = raw * decided_share(batch, drawn)
    groups = len(scope.run.systems) * len(kinds)
    relevant = _relevant(kinds, groups, scope.targets, moves) & _members(scope, groups, len(kinds))
    present = (
        np.bincount(frame.group, weights=frame.count, minlength=groups)[:, None] * relevant
    ).sum(axis=0)
    correction = active_correction(
        batch,
        pi,
        reviews.d,
        relevant[reviews.group],
        present,
        outside,
        DEFAULT_SHARES,
        skip_bounds(batch, raw, reviews.d, drawn, skipped, DEFAULT_SHARES),
        active_rates(conn, plan, [sid for _, sid, _, _ in reviewed]),
    )
    return correction, int(frame.count.sum())


def _active_draws(
    conn: sqlite3.Connection,
    plan: Plan,
    reviewed: list[tuple[int, int, int, float]],
    skips: _SkipBounds,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], Floats, ActiveSkips]:
    """Which batch drew each reviewed and each skipped draw, with its inclusion probability
    as drawn, and how many draws each batch made."""
    draws = conn.execute(
        "SELECT position, subject_id, CAST(weight AS INTEGER), p FROM plan_draw WHERE plan_id = ?",
        (plan.id,),
    ).fetchall()
    batch_of = {int(pos): int(b) for pos, _, b, _ in draws}
    drawn = np.bincount(np.array(list(batch_of.values()), dtype=np.int64))
    batch = np.array([batch_of[pos] for pos, _, _, _ in reviewed], dtype=np.int64)
    raw = np.array([p for _, _, _, p in reviewed], dtype=np.float64)
    drawn_as = {int(sid): (int(b), float(p)) for _, sid, b, p in draws}
    skipped = ActiveSkips(
        np.array([drawn_as[sid][0] for sid in skips.subject], dtype=np.int64),
        np.array([drawn_as[sid][1] for sid in skips.subject], dtype=np.float64),
        skips.low,
        skips.high,
    )
    return drawn, batch, raw, skipped


@dataclass(frozen=True, slots=True)
class _ReportDraws:
    """A report plan's drawn reports in plan order, each with its stratum and whether every
    one of its drawn subjects is decided, and the frame's reports per stratum."""

    reports: list[int]
    stratum: dict[int, int]
    complete: dict[int, bool]
    sizes: Floats

    def skipped(self) -> list[int]:
        """Drawn reports before the last complete one that are not complete."""
        last = max((k for k, r in enumerate(self.reports) if self.complete[r]), default=-1)
        return [r for r in self.reports[:last] if not self.complete[r]]


def _report_draws(conn: sqlite3.Connection, plan: Plan, decided: set[int]) -> _ReportDraws:
    """Which reports a report plan drew, which of them are decided in full, and how many
    reports of each stratum its frame holds."""
    reports: list[int] = []
    stratum: dict[int, int] = {}
    complete: dict[int, bool] = {}
    for rid, h, sid in conn.execute(
        """SELECT sj.report_id, pd.stratum, pd.subject_id FROM plan_draw pd
           JOIN subject sj ON sj.id = pd.subject_id WHERE pd.plan_id = ?
           ORDER BY pd.position""",
        (plan.id,),
    ):
        if rid not in stratum:
            reports.append(int(rid))
            stratum[int(rid)] = int(h)
            complete[int(rid)] = True
        complete[int(rid)] = complete[int(rid)] and int(sid) in decided
    sizes = np.zeros(len(plan.strata) or 1 + max(stratum.values(), default=0))
    for h, n in conn.execute(
        """SELECT pf.stratum, count(DISTINCT sj.report_id) FROM plan_frame pf
           JOIN subject sj ON sj.id = pf.subject_id WHERE pf.plan_id = ? GROUP BY 1""",
        (plan.id,),
    ):
        if int(h) >= len(sizes):
            sizes = np.concatenate([sizes, np.zeros(int(h) + 1 - len(sizes))])
        sizes[int(h)] = n
    return _ReportDraws(reports, stratum, complete, sizes)


def _report_flips(
    conn: sqlite3.Connection, known: Mapping[int, _Known], subjects: set[int]
) -> tuple[dict[int, ReportInput], list[Flip]]:
    """Each report holding a decided disagreement among ``subjects``, as one flip setting
    every such verdict of it back to the judge's value at once (negated later: what the
    decisions moved)."""
    reports = sorted({known[s].report for s in subjects if known[s].human != known[s].judge})
    inputs = load_inputs(conn, reports) if reports else {}
    flips: list[Flip] = []
    for rid, report in inputs.items():
        # One flip per framework: each is rescored by its own framework's scoring.
        back = _decided_back(report, known, subjects)
        flips.extend(Flip(rid, one[0][0], one[0][1], tuple(one[1:])) for one in back.values())
    return inputs, flips


def _decided_back(
    report: ReportInput, known: Mapping[int, _Known], subjects: set[int]
) -> dict[str, list[tuple[int, str | None]]]:
    """Framework -> (position, judge value) of each of the report's verdicts on ``subjects``
    that a human decided otherwise."""
    back: dict[str, list[tuple[int, str | None]]] = defaultdict(list)
    for index, verdict in enumerate(report.verdicts):
        subject = verdict.subject
        if subject is None or int(subject) not in subjects:
            continue
        kind = get_kind(verdict.kind)
        if kind is not None and known[int(subject)].human != verdict.judge:
            back[kind.framework].append((index, verdict.judge))
    return back


def _report_correct(
    conn: sqlite3.Connection,
    plan: Plan,
    scope: _Scope,
    sample: _Sample,
    collapsed: Mapping[tuple[str, str, int], Collapsed],
) -> Correction:
    """A report plan's correction of every target (:mod:`reviewer.estimates.clusters`):
    what deciding each report's verdicts moved (all of them at once, exactly, on the anchor);
    the reports drawn and decided in full are the sample, every report's known part is
    subtracted (the plan's and what was decided outside it alike)."""
    known = _decided(conn, plan.suite_id, set(scope.kinds))
    inputs, flips = _report_flips(conn, known, sample.sampled | sample.outside_frame)
    moved = -_anchor_influences(scope, inputs, flips, collapsed)
    targets = len(scope.targets)
    c_of: dict[int, Floats] = defaultdict(lambda: np.zeros(targets))
    for i, flip in enumerate(flips):
        c_of[flip.report] = c_of[flip.report] + moved[i]
    draws = _report_draws(conn, plan, set(known))
    done = [r for r in draws.reports if draws.complete[r]]
    c = np.array([c_of[r] for r in done]).reshape(len(done), targets)
    totals = cluster_totals(
        np.array([draws.stratum[r] for r in done], dtype=np.int64),
        c,
        draws.sizes,
        _stratum_targets(plan, scope, len(draws.sizes)),
    )
    return cluster_correction(totals, moved.sum(axis=0), len(sample.reviewed))


def _stratum_targets(plan: Plan, scope: _Scope, strata: int) -> npt.NDArray[np.bool_]:
    """(strata × targets): a report plan's stratum (a system) moves that system's targets
    and the overall ones, of the plan's frameworks."""
    system_of = {name: sid for sid, name in scope.run.system_name.items()}
    stratum_system = {h: system_of.get(s.label) for h, s in enumerate(plan.strata)}
    return np.array(
        [
            [
                t.framework in plan.frameworks
                and (t.system is None or t.system == stratum_system.get(h))
                for t in scope.targets
            ]
            for h in range(strata)
        ],
        dtype=bool,
    ).reshape(strata, len(scope.targets))


def _members(scope: _Scope, groups: int, n_kinds: int) -> npt.NDArray[np.bool_]:
    """(groups × targets): the group's subjects belong to the target's system."""
    system_index = {s: i for i, s in enumerate(scope.run.systems)}
    group_system = np.arange(groups) // max(1, n_kinds)
    target_system = np.array(
        [-1 if t.system is None else system_index[t.system] for t in scope.targets]
    )
    return np.asarray(
        (group_system[:, None] == target_system[None, :]) | (target_system[None, :] < 0),
        dtype=bool,
    )


def _frame(
    conn: sqlite3.Connection,
    plan: Plan,
    kind_index: Mapping[str, int],
    system_index: Mapping[int, int],
    n_kinds: int,
) -> Frame:
    """The plan's frame (less the subjects decided outside it) as counts per stratum, system,
    (system, kind) group and judge number."""
    counted = [
        (int(h), system_index[int(sid)], kind_index[kind], _numeric(kind, value), int(n))
        for h, sid, kind, value, n in conn.execute(FRAME_SQL, (plan.id,))
        if kind in kind_index and int(sid) in system_index
    ]
    stratum, system, kind_of, x, count = (
        (np.array(c) for c in zip(*counted, strict=True))
        if counted
        else (np.zeros(0, dtype=np.int64),) * 5
    )
    return Frame(
        stratum=stratum.astype(np.int64),
        system=system.astype(np.int64),
        group=(system * n_kinds + kind_of).astype(np.int64),
        x=x.astype(np.float64),
        count=count.astype(np.float64),
    )


def _reviews(
    plan: Plan,
    scope: _Scope,
    known: Mapping[int, _Known],
    reviewed: list[tuple[int, int, int, float]],
    kind_index: Mapping[str, int],
    system_index: Mapping[int, int],
) -> Reviews:
    """The plan's reviewed draws as the estimator reads them: where each sits in the frame,
    its design weight, its judge number and what the human changed (``d``, the influences on
    the targets, is left zero for the caller to fill)."""
    rows = len(reviewed)
    r_system = np.zeros(rows, dtype=np.int64)
    r_group = np.zeros(rows, dtype=np.int64)
    r_x = np.zeros(rows)
    dx = np.zeros(rows)
    for r, (_, sid, _, _) in enumerate(reviewed):
        item = known[sid]
        r_system[r] = system_index[scope.run.system_of[item.report]]
        r_group[r] = r_system[r] * len(scope.kinds) + kind_index[item.kind]
        r_x[r] = _numeric(item.kind, item.judge)
        dx[r] = _numeric(item.kind, item.human) - r_x[r]
    return Reviews(
        stratum=np.array([stratum for _, _, stratum, _ in reviewed], dtype=np.int64),
        system=r_system,
        group=r_group,
        x=r_x,
        weight=np.array([1.0 / p if plan.with_replacement else 1.0 for _, _, _, p in reviewed]),
        dx=dx,
        d=np.zeros((rows, len(scope.targets))),
        fold=np.array([pos % 2 for pos, _, _, _ in reviewed], dtype=np.int64),
    )


def _relevant(
    kinds: Sequence[str],
    groups: int,
    targets: Sequence[Target],
    moves: Mapping[tuple[str, str], set[str]],
) -> npt.NDArray[np.bool_]:
    """(groups × targets): whether a verdict of the group's kind can move the target."""
    relevant = np.zeros((groups, len(targets)), dtype=bool)
    for g in range(groups):
        kind = kinds[g % len(kinds)]
        verdict_kind = get_kind(kind)
        if verdict_kind is None:
            continue
        for j, target in enumerate(targets):
            relevant[g, j] = verdict_kind.framework == target.framework and (
                target.metric in moves.get((target.framework, kind), set())
            )
    return relevant


def _aggregate(
    framework: Framework,
    options: Mapping[str, str],
    scores: Mapping[int, ReportScores],
    rids: Sequence[int],
) -> dict[str, float | None]:
    return aggregate_values(framework, [scores[r] for r in rids], options)


class _Values:
    """Each framework's metric values in a variant: one system's cached aggregate, or every
    system's (aggregated here from the report scores), each computed once."""

    def __init__(self, scope: _Scope) -> None:
        self.scope = scope
        self.cache: dict[tuple[str, str, int | None], dict[str, float | None]] = {}

    def of(self, name: str, variant: str, system: int | None) -> dict[str, float | None]:
        key = (name, variant, system)
        if key not in self.cache:
            run = self.scope.run
            if system is not None:
                self.cache[key] = run.system_values[(name, variant)].get(system, {})
            else:
                self.cache[key] = _aggregate(
                    self.scope.registry[name],
                    self.scope.options[name],
                    run.scores[(name, variant)],
                    run.reports,
                )
        return self.cache[key]


@dataclass(slots=True)
class _Corrected:
    """A target's corrected value and what goes with it (every field None when undefined)."""

    status: str
    reasons: list[str]
    reviews: int = 0
    disagreements: int = 0
    corrected: float | None = None
    lower: float | None = None
    upper: float | None = None
    se: float | None = None
    half: float | None = None
    lam: float | None = None
    human: float | None = None
    human_lower: float | None = None
    human_upper: float | None = None
    bias: float | None = None
    bias_lower: float | None = None
    bias_upper: float | None = None
    needed: int | None = None
    anytime: float | None = None
    skip_low: float = 0.0
    skip_high: float = 0.0


@dataclass(frozen=True, slots=True)
class _Precision:
    """What the estimate is asked for: the target half-width, at what confidence, with how
    many plan reviews of how large a population."""

    half_width: float
    confidence: float
    reviewed: int
    population: int


def _rows(
    scope: _Scope,
    correction: Correction | None,
    plan: Plan | None,
    reviewed: list[tuple[int, int, int, float]],
    pop_n: int,
    half_width: float,
    confidence: float,
    notes: list[str],
) -> list[MetricEstimate]:
    """One estimate per target, in target order."""
    if plan is None:
        notes.append(
            "no review plan: only decisions made so far correct the judge, and only "
            "their own subjects; draw one with `gavel plan new --budget N`"
        )
    elif not reviewed:
        notes.append(
            f"no subject of plan {plan.name} is decided yet: review it (queue: L) "
            "and the estimates follow"
        )
    values = _Values(scope)
    precision = _Precision(half_width, confidence, len(reviewed), pop_n)
    bands = (
        None
        if correction is None or plan is None
        else _bands(scope, values, correction, plan, confidence)
    )
    out: list[MetricEstimate] = []
    for j, target in enumerate(scope.targets):
        fw = scope.registry[target.framework]
        metric = next(m for m in fw.metrics if m.name == target.metric)
        judge = _value(values.of(target.framework, "judge", target.system).get(target.metric))
        adjudicated = _value(
            values.of(target.framework, "adjudicated", target.system).get(target.metric)
        )
        result = _target_result(plan, correction, bands, adjudicated, j, metric, judge, precision)
        out.append(
            MetricEstimate(
                framework=target.framework,
                metric=target.metric,
                label=metric.label,
                digits=metric.digits,
                system=OVERALL if target.system is None else scope.run.system_name[target.system],
                system_id=target.system,
                judge=judge,
                adjudicated=adjudicated,
                corrected=result.corrected,
                lower=result.lower,
                upper=result.upper,
                se=result.se,
                bias=result.bias,
                bias_lower=result.bias_lower,
                bias_upper=result.bias_upper,
                human=result.human,
                human_lower=result.human_lower,
                human_upper=result.human_upper,
                lam=result.lam,
                reviews=result.reviews,
                disagreements=result.disagreements,
                half_width=result.half,
                needed=result.needed,
                anytime=result.anytime,
                skip_low=result.skip_low,
                skip_high=result.skip_high,
                status=result.status,
                notes=tuple(result.reasons),
                additive=metric.additive,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class _Bands:
    """Every target's corrected estimate, interval and the variance behind it, and the
    human-only estimate and interval (:func:`reviewer.estimates.intervals.corrected_intervals`)."""

    estimate: Floats
    lower: Floats
    upper: Floats
    variance: Floats
    magnitude: Floats
    human: Floats
    human_lower: Floats
    human_upper: Floats


def _bands(
    scope: _Scope, values: _Values, correction: Correction, plan: Plan, confidence: float
) -> _Bands:
    """The intervals of every target at once: a target with no disagreement borrows the
    typical size of one from the same metric's other targets."""
    anchor = np.array(
        [
            _value(values.of(t.framework, "adjudicated", t.system).get(t.metric)) or 0.0
            for t in scope.targets
        ]
    )
    metric_of = {(n, m.name): m for n in scope.names for m in scope.registry[n].metrics}
    bounds = [metric_of[(t.framework, t.metric)].bounds for t in scope.targets]
    keys = [(t.framework, t.metric) for t in scope.targets]
    fpc = not plan.with_replacement
    estimate, lower, upper, variance, magnitude = corrected_intervals(
        correction, anchor, bounds, keys, fpc, confidence
    )
    human_only = replace(correction, tuned=correction.human, var_tuned=correction.var_human)
    human, human_lower, human_upper, _, _ = corrected_intervals(
        human_only, anchor, bounds, keys, fpc, confidence
    )
    return _Bands(estimate, lower, upper, variance, magnitude, human, human_lower, human_upper)


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _target_result(
    plan: Plan | None,
    correction: Correction | None,
    bands: _Bands | None,
    adjudicated: float | None,
    j: int,
    metric: Metric,
    judge: float | None,
    precision: _Precision,
) -> _Corrected:
    """Target ``j``'s correction, or why there is none."""
    if plan is None:
        return _Corrected("undefined", ["no review plan"])
    if correction is None or bands is None:
        return _Corrected("undefined", ["no plan reviews yet"])
    if adjudicated is None:
        return _Corrected("undefined", ["the metric is undefined here"])
    return _corrected(correction, j, metric, judge, plan, precision, bands)


def _corrected(
    correction: Correction,
    j: int,
    metric: Metric,
    judge: float | None,
    plan: Plan,
    precision: _Precision,
    bands: _Bands,
) -> _Corrected:
    """Target ``j``'s corrected value (the adjudicated value plus the estimated influence of
    the unreviewed errors, never clipped: clipping would bias it), its interval, the
    human-only estimate, the bias, the reviews still needed, and how far to trust it."""
    reviews = int(correction.reviews[j])
    disagreements = int(correction.disagreements[j])
    var = float(bands.variance[j])
    estimable = metric.additive or plan.reports
    status, reasons, lower, upper = _interval(correction, bands, j, metric, estimable)
    out = _Corrected(status, reasons, reviews, disagreements)
    if status == "undefined":
        return out
    exact = correction.unreviewed[j] == 0
    spread = 0.0 if exact else half_width(var, disagreements, precision.confidence)
    out.se, out.lam = math.sqrt(var), float(correction.lam[j])
    out.half = None if lower is None else spread
    if plan.reports and lower is not None and upper is not None:
        out.half = (upper - lower) / 2  # its own df and skewness: the interval's half
    out.corrected, out.lower, out.upper = float(bands.estimate[j]), lower, upper
    out.human = float(bands.human[j])
    if estimable:
        out.human_lower = _finite(bands.human_lower[j])
        out.human_upper = _finite(bands.human_upper[j])
    _forecasts(out, var, spread, plan, precision)
    out.skip_low, out.skip_high = float(correction.skip_low[j]), float(correction.skip_high[j])
    reasons.extend(_range_notes(metric, out, estimable))
    _bias(out, judge)
    return out


def _interval(
    correction: Correction, bands: _Bands, j: int, metric: Metric, estimable: bool
) -> tuple[str, list[str], float | None, float | None]:
    """(status, why, lower, upper) of target ``j``: a level or a ratio within a report that
    the plan cannot estimate has no interval, whatever was computed."""
    reviews, disagreements = int(correction.reviews[j]), int(correction.disagreements[j])
    lower, upper = _finite(bands.lower[j]), _finite(bands.upper[j])
    status, reasons = _trust(correction, j, metric, reviews, disagreements, lower is not None)
    if not estimable and status != "undefined" and correction.unreviewed[j] > 0:
        return "weak", _not_estimable(disagreements, reviews), None, None
    return status, reasons, lower, upper


def _not_estimable(disagreements: int, reviews: int) -> list[str]:
    """Why a level or a ratio within a report has no interval under a subject plan, and what
    its first-order value rests on."""
    plural = "s" if disagreements != 1 else ""
    return [
        NOT_ESTIMABLE,
        f"first order from {disagreements} disagreement{plural} in {reviews} reviews",
    ]


def _forecasts(
    out: _Corrected, var: float, spread: float, plan: Plan, precision: _Precision
) -> None:
    """The reviews still needed and the anytime half-width, which count subjects: none for a
    report plan, whose unit is the report."""
    if plan.reports:
        return
    if out.lower is not None:
        out.needed = _needed(var, out.disagreements, spread, plan, precision)
    out.anytime = cs_half_width(var, precision.reviewed, plan.budget, precision.confidence)


def _bias(out: _Corrected, judge: float | None) -> None:
    """judge − corrected, and its interval from the corrected one."""
    if judge is None or out.corrected is None:
        return
    out.bias = judge - out.corrected
    if out.lower is not None and out.upper is not None:
        out.bias_lower, out.bias_upper = judge - out.upper, judge - out.lower


def _range_notes(metric: Metric, out: _Corrected, estimable: bool) -> list[str]:
    """What the skipped draws did to the interval, and an estimate outside the range
    (``estimable``: the estimate claims no bias, so it is never clipped)."""
    notes = []
    if out.skip_low or out.skip_high:
        notes.append(
            f"widened by {out.skip_low:+.{metric.digits}f} / {out.skip_high:+.{metric.digits}f}"
            " for what the skipped draws could hold"
        )
    corrected = out.corrected
    if metric.bounds is None or corrected is None:
        return notes
    low, high = metric.bounds
    if not estimable and out.human is not None:
        out.human = min(high, max(low, out.human))  # first order: see below
    if low <= corrected <= high:
        return notes
    if estimable:
        notes.append(
            f"the estimate lies outside the metric's range [{low:g}, {high:g}] (not clipped: "
            "clipping would bias it; the interval is within the range)"
        )
        return notes
    # A first-order extrapolation of a level or a ratio beyond its range says nothing more
    # than the range's edge: no unbiasedness is claimed for it to lose.
    notes.append(
        f"the first-order estimate {corrected:.{metric.digits}f} lies outside the metric's "
        f"range [{low:g}, {high:g}]: shown at its edge"
    )
    out.corrected = min(high, max(low, corrected))
    return notes


def _trust(
    correction: Correction,
    j: int,
    metric: Metric,
    reviews: int,
    disagreements: int,
    has_interval: bool,
) -> tuple[str, list[str]]:
    """(status, why): undefined when no review can speak for the verdicts that move the
    target, exact when every one is reviewed, weak when the spread rests on little."""
    if correction.empty_population[j] > 0:
        return (
            "undefined",
            [
                f"{int(correction.empty_population[j]):,} verdicts that move it "
                "are in strata without a review"
            ],
        )
    if reviews == 0:
        return "undefined", ["no reviewed verdict can move it"]
    if not math.isfinite(float(correction.tuned[j])):
        return "undefined", ["a system it covers has no report decided in full yet"]
    if correction.unreviewed[j] == 0:
        return "ok", ["exact: every verdict that moves it is reviewed"]
    df = None if correction.df is None else float(correction.df[j])
    reasons = _spread_reasons(reviews, disagreements, has_interval, df)
    if reviews < MIN_REVIEWS:
        reasons.append(f"{reviews} reviews < {MIN_REVIEWS}")
    if int(correction.single_cells[j]):
        reasons.append("a stratum with a single review (no variance there)")
    return ("weak" if reasons else "ok"), reasons


def _spread_reasons(
    reviews: int, disagreements: int, has_interval: bool, df: float | None = None
) -> list[str]:
    """Why the disagreements are too few to trust the spread measured from them, if so
    (``df``: the design's degrees of freedom where it caps them, a report plan's)."""
    bound = f"~{min(1.0, 3 / reviews):.0%}"
    if disagreements == 0 and not has_interval:
        return [
            f"none of {reviews} reviews moved it, nor any target of this metric: no size of an "
            f"error to form an interval from (errors could still be up to {bound} of these "
            "verdicts, rule of three)"
        ]
    if disagreements == 0:
        return [
            f"none of {reviews} reviews moved it: an interval from the typical error of this "
            f"metric elsewhere (errors could still be up to {bound} of these verdicts, rule "
            "of three)"
        ]
    if disagreements < MIN_DISAGREEMENTS:
        return [
            f"{disagreements} disagreement{'s' if disagreements > 1 else ''} < "
            f"{MIN_DISAGREEMENTS}: a rough interval (pseudo-observations, t on "
            f"{_freedom(disagreements, df)} df)"
        ]
    return []


def _freedom(disagreements: int, df: float | None) -> str:
    """The interval's degrees of freedom as :func:`reviewer.estimates.intervals.half_width`
    takes them: the disagreements plus two, capped by the design's."""
    freedom = float(disagreements + 2)
    if df is not None and math.isfinite(df) and df > 0:
        freedom = min(freedom, df)
    return f"{freedom:.0f}" if abs(freedom - round(freedom)) < 0.05 else f"{freedom:.1f}"


def _needed(
    var: float, disagreements: int, spread: float, plan: Plan, precision: _Precision
) -> int | None:
    """Reviews still needed to reach the target half-width: none forecast from fewer
    disagreements than the weak line (a forecast from a handful is noise); 0 once the
    interval (t quantile) is narrow enough."""
    if disagreements < MIN_DISAGREEMENTS:
        return None
    if spread <= precision.half_width:
        return 0
    forecast = reviews_needed(
        var,
        precision.reviewed,
        precision.population,
        precision.half_width,
        precision.confidence,
        not plan.with_replacement,
    )
    return max(1, forecast or 1)


def _value(value: object) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _variant_value(row: MetricEstimate, variant: str) -> float | None:
    if variant == "judge":
        return row.judge
    return row.adjudicated if variant == "adjudicated" else row.corrected


def _ranks(
    scope: _Scope,
    correction: Correction | None,
    rows: list[MetricEstimate],
    collapsed: Mapping[tuple[str, str, int], Collapsed],
    reviewed_reports: list[int],
    resamples: int,
    seed: int,
    confidence: float,
) -> list[RankRow]:
    """Adjacent systems per framework, metric and variant: paired bootstrap over tasks."""
    run = scope.run
    task_index = {t: i for i, t in enumerate(run.tasks)}
    weights = task_weights(len(run.tasks), resamples, seed)
    value_of = {(r.framework, r.metric, r.system_id): r for r in rows}
    # per-task correction shares of each reviewed row (λ = 1 rectifier)
    task_of_row = [task_index[run.task_of[rid]] for rid in reviewed_reports]
    out: list[RankRow] = []
    for name, metrics in _overall_metrics(scope.targets).items():
        for variant in VARIANTS:
            influence = _task_influence(scope, name, metrics, variant, collapsed)
            if variant == "corrected" and correction is not None and reviewed_reports:
                _add_correction_shares(scope, name, metrics, influence, task_of_row, correction)
            out.extend(
                _variant_ranks(
                    run, name, metrics, variant, influence, value_of, weights, confidence
                )
            )
    return out


def _variant_ranks(
    run: _Run,
    name: str,
    metrics: Sequence[str],
    variant: str,
    influence: Floats,
    value_of: Mapping[tuple[str, str, int | None], MetricEstimate],
    weights: Floats,
    confidence: float,
) -> list[RankRow]:
    """One framework's adjacent pairs in one variant, metric by metric."""
    out: list[RankRow] = []
    for k, metric in enumerate(metrics):
        values = [
            _variant_value(value_of[(name, metric, system)], variant) for system in run.systems
        ]
        out.extend(
            _rank_row(run, name, metric, variant, pair)
            for pair in _adjacent(values, influence[:, :, k], weights, confidence)
        )
    return out


def _adjacent(
    values: Sequence[float | None], influence: Floats, weights: Floats, confidence: float
) -> list[RankPair]:
    """The systems ranked by ``values``, each adjacent pair tested on the bootstrap
    replicates of their values (``influence``: tasks × systems)."""
    filled = np.array([0.0 if v is None else v for v in values])
    reps = replicates(filled, influence, weights)
    return adjacent_pairs(values, reps, influence.shape[0], confidence)


def _overall_metrics(targets: Sequence[Target]) -> dict[str, list[str]]:
    """Framework -> its metrics estimated over every system, in target order."""
    by_fw: dict[str, list[str]] = defaultdict(list)
    for target in targets:
        if target.system is None and target.metric not in by_fw[target.framework]:
            by_fw[target.framework].append(target.metric)
    return by_fw


def _rank_row(run: _Run, name: str, metric: str, variant: str, pair: RankPair) -> RankRow:
    return RankRow(
        name,
        metric,
        variant,
        run.system_name[run.systems[pair.upper]],
        run.system_name[run.systems[pair.lower]],
        pair.difference,
        pair.lower_bound,
        pair.upper_bound,
        pair.reversed_share,
        pair.could_swap,
        pair.status,
        pair.note,
    )


def _task_influence(
    scope: _Scope,
    name: str,
    metrics: Sequence[str],
    variant: str,
    collapsed: Mapping[tuple[str, str, int], Collapsed],
) -> Floats:
    """(tasks × systems × metrics): each task's influence on each system's value, from the
    collapsed means where they describe the aggregate, else by jackknife."""
    run = scope.run
    source = "judge" if variant == "judge" else "adjudicated"
    influence = np.zeros((len(run.tasks), len(run.systems), len(metrics)))
    for s, system in enumerate(run.systems):
        model = collapsed[(name, source, system)]
        if model.ok:
            columns = [model.metrics.index(m) for m in metrics]
            influence[:, s, :] = model.task_influence()[:, columns]
        else:
            influence[:, s, :] = jackknife_influence(
                scope.registry[name],
                scope.options[name],
                _by_task(run, run.scores[(name, source)], system),
                metrics,
            )
    return influence


def _add_correction_shares(
    scope: _Scope,
    name: str,
    metrics: Sequence[str],
    influence: Floats,
    task_of_row: Sequence[int],
    correction: Correction,
) -> None:
    """The corrected variant: each reviewed row's share of the correction, in its task."""
    column_of = {t: j for j, t in enumerate(scope.targets)}
    for s, system in enumerate(scope.run.systems):
        for k, metric in enumerate(metrics):
            j = column_of[Target(name, metric, system)]
            np.add.at(influence[:, s, k], task_of_row, correction.row_share[:, j])


def _by_task(
    run: _Run, scores: Mapping[int, ReportScores], system: int
) -> list[list[ReportScores]]:
    """One system's report scores grouped by task, in the run's task order (a task the
    system did not answer is an empty group: resamples stay paired across systems)."""
    tasks: list[list[ReportScores]] = [[] for _ in run.tasks]
    position = {t: i for i, t in enumerate(run.tasks)}
    for rid in run.reports:
        if run.system_of[rid] == system:
            tasks[position[run.task_of[rid]]].append(scores[rid])
    return tasks


def _mark_ranks(rows: list[MetricEstimate], rank_rows: list[RankRow]) -> list[MetricEstimate]:
    """Each system's rank in every variant, and whether it could swap with a neighbour."""
    swap: dict[tuple[str, str, str, str], set[str]] = defaultdict(set)
    for pair in rank_rows:
        if pair.could_swap:
            swap[(pair.framework, pair.metric, pair.variant, pair.upper)].add("↓")
            swap[(pair.framework, pair.metric, pair.variant, pair.lower)].add("↑")
    rank = _system_ranks(rows)
    out = []
    for row in rows:
        if row.system_id is None:
            out.append(row)
            continue
        ranks = {v: rank.get((row.framework, row.metric, v, row.system)) for v in VARIANTS}
        marks = {}
        for v in VARIANTS:
            found = swap.get((row.framework, row.metric, v, row.system), set())
            marks[v] = "↕" if len(found) == 2 else (next(iter(found)) if found else "")
        out.append(_with(row, ranks, marks))
    return out


def _system_ranks(rows: list[MetricEstimate]) -> dict[tuple[str, str, str, str], int]:
    """(framework, metric, variant, system) -> rank among the systems with a value (1 is the
    highest; ties share the better rank)."""
    groups: dict[tuple[str, str], list[MetricEstimate]] = defaultdict(list)
    for row in rows:
        if row.system_id is not None:
            groups[(row.framework, row.metric)].append(row)
    rank: dict[tuple[str, str, str, str], int] = {}
    for (name, metric), members in groups.items():
        for variant in VARIANTS:
            present = [
                (r.system, value)
                for r in members
                if (value := _variant_value(r, variant)) is not None
            ]
            for system, mine in present:
                rank[(name, metric, variant, system)] = 1 + sum(
                    1 for _, other in present if other > mine
                )
    return rank


def _with(
    row: MetricEstimate, ranks: dict[str, int | None], swaps: dict[str, str]
) -> MetricEstimate:
    from dataclasses import replace

    return replace(row, ranks=ranks, swaps=swaps)


def report_json(report: EstimateReport) -> dict[str, object]:
    """The report as plain data (``gavel estimate --format json``)."""
    from dataclasses import asdict

    plan = report.plan
    return {
        "suite": report.suite,
        "plan": None
        if plan is None
        else {
            "name": plan.name,
            "design": plan.design,
            "budget": plan.budget,
            "seed": plan.seed,
            "reviewed": plan.progress.decided,
            "subjects": plan.progress.subjects,
        },
        "confidence": report.confidence,
        "target_half_width": report.target_half_width,
        "resamples": report.resamples,
        "tasks": report.tasks,
        "estimates": [asdict(r) | {"notes": list(r.notes)} for r in report.rows],
        "ranks": [asdict(r) for r in report.ranks],
        "decisions": dict(report.counts),
        "notes": list(report.notes),
        "seconds": round(report.elapsed, 3),
    }


def dumps(report: EstimateReport) -> str:
    return json.dumps(report_json(report), ensure_ascii=False, indent=2)
