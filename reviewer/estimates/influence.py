"""How one human verdict moves a metric, computed with the framework's own scoring.

The estimators never look inside a benchmark's definitions: a subject's *influence* is the
framework's metric with that one verdict set to the human's value minus the metric on the base
state, report by report through ``score_report`` and system by system through ``aggregate``.
That keeps every framework — cascade attribution, RACE ratios, F1 — estimable without a line of
benchmark-specific code, and it is exactly the first-order (delta-method) term of the metric.

Aggregates are black boxes too, but most are smooth functions of per-key means over reports
(means of report values, ratios of pooled parts). :class:`Collapsed` checks that a system's
aggregate is one — the aggregate of a single "mean report" equals the aggregate of the reports —
and then differentiates it numerically in those means, which turns "this report's values
changed" and "this task was resampled" into dot products instead of aggregate calls.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from reviewer.framework import Framework, ReportScores
from reviewer.inputs import ReportInput, VerdictIn

Floats = npt.NDArray[np.float64]

TOLERANCE = 1e-9
LINEAR_REPORTS = 50
"""Reports from which an aggregate is differentiated rather than recomputed per flip."""


def score_at(
    framework: Framework, report: ReportInput, verdicts: list[VerdictIn], options: Mapping[str, str]
) -> ReportScores:
    """The report scored with ``verdicts`` as its effective values (the report's own list is
    put back afterwards)."""
    original = report.verdicts
    report.verdicts = verdicts
    try:
        return framework.score_report(report, "adjudicated", options)
    finally:
        report.verdicts = original


def metric_delta(
    before: Mapping[str, object], after: Mapping[str, object], metrics: Sequence[str]
) -> list[float]:
    """after − before per metric; a metric undefined on either side moves by 0 (and the caller
    counts it)."""
    out = []
    for name in metrics:
        a, b = before.get(name), after.get(name)
        out.append(
            float(b) - float(a)
            if isinstance(a, int | float) and isinstance(b, int | float)
            else 0.0
        )
    return out


def aggregate_values(
    framework: Framework, reports: Sequence[ReportScores], options: Mapping[str, str]
) -> dict[str, float | None]:
    return {name: agg.value for name, agg in framework.aggregate(reports, options).items()}


@dataclass(slots=True)
class SystemScores:
    """One system's per-report scores (in report-id order, as the score cache aggregates them)
    and its aggregate on them."""

    framework: Framework
    options: Mapping[str, str]
    report_ids: list[int]
    scores: list[ReportScores]
    values: dict[str, float | None] = field(default_factory=dict)
    position: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.position = {rid: i for i, rid in enumerate(self.report_ids)}
        self.values = aggregate_values(self.framework, self.scores, self.options)

    def replaced(self, report_id: int, scores: ReportScores) -> dict[str, float | None]:
        """The aggregate with one report's scores replaced."""
        changed = list(self.scores)
        changed[self.position[report_id]] = scores
        return aggregate_values(self.framework, changed, self.options)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


@dataclass(slots=True)
class Collapsed:
    """A system's reports as per-key means, when its aggregate depends on them only through
    those means (checked on the data: ``ok``), with the aggregate's gradient in them.

    A key starting with ``_`` is a part to pool: its mean is over every report, a missing value
    counting 0. Any other key is a report value: its mean is over the reports that have it.
    """

    keys: list[str]
    sums: Floats
    """(tasks × keys) sums of the values in each task."""
    counts: Floats
    """(tasks × keys) how many values each task's sum adds."""
    means: dict[str, float]
    metrics: list[str]
    values: dict[str, float | None]
    ok: bool
    gradient: Floats
    """(keys × metrics) ∂metric / ∂mean of key."""
    _scale: Floats | None = None
    _index: dict[str, int] = field(default_factory=dict)

    def task_influence(self) -> Floats:
        """(tasks × metrics): the first-order effect of weighting each task once more
        (the bootstrap's and the jackknife's linear term)."""
        totals = self.counts.sum(axis=0)
        means = np.array([self.means.get(k, 0.0) for k in self.keys])
        safe = np.where(totals > 0, totals, 1.0)
        shift = np.where(totals > 0, (self.sums - self.counts * means) / safe, 0.0)
        return np.asarray(shift @ self.gradient, dtype=np.float64)

    def report_influence(self, before: ReportScores, after: ReportScores) -> list[float]:
        """The first-order effect on each metric of one report's scores changing."""
        if self._scale is None:
            totals = self.counts.sum(axis=0)
            self._scale = np.where(totals > 0, 1.0 / np.where(totals > 0, totals, 1.0), 0.0)
            self._index = {k: j for j, k in enumerate(self.keys)}
        change = np.zeros(len(self.keys))
        for key in before.keys() | after.keys():
            j = self._index.get(key)
            if j is not None:
                change[j] = _key_change(key, before.get(key), after.get(key))
        return [float(v) for v in (change * self._scale) @ self.gradient]


def _key_change(key: str, before: object, after: object) -> float:
    """How much one key's value moves the sum its mean is taken over: a pooled part moves by
    the difference (missing counts 0); a report value only when it is there on both sides
    (appearing or vanishing changes the count, not the sum)."""
    a, b = _number(before), _number(after)
    if a == b or (a is None and b is None):
        return 0.0
    if key.startswith("_") or (a is not None and b is not None):
        return (b or 0.0) - (a or 0.0)
    return 0.0


def collapse(
    framework: Framework,
    options: Mapping[str, str],
    tasks: Sequence[Sequence[ReportScores]],
    metrics: Sequence[str],
) -> Collapsed:
    """Per-key task sums, the mean report, the check that the aggregate of the mean report is
    the aggregate of the reports, and the aggregate's gradient in the means (central
    differences)."""
    position = _key_positions(tasks)
    keys = list(position)
    parts = np.array([k.startswith("_") for k in keys], dtype=bool)
    sums = np.zeros((len(tasks), len(keys)))
    counts = np.zeros((len(tasks), len(keys)))
    for t, reports in enumerate(tasks):
        _add_task(sums[t], counts[t], reports, position, parts)
    totals = counts.sum(axis=0)
    means = {k: float(sums[:, j].sum() / totals[j]) for k, j in position.items() if totals[j] > 0}
    every = [s for reports in tasks for s in reports]
    values = aggregate_values(framework, every, options)
    ok = _mean_report_agrees(framework, options, every, values, means, metrics)
    gradient = np.zeros((len(keys), len(metrics)))
    if ok:
        _fill_gradient(gradient, framework, options, means, position, metrics)
    return Collapsed(keys, sums, counts, means, list(metrics), values, ok, gradient)


def _mean_report_agrees(
    framework: Framework,
    options: Mapping[str, str],
    every: Sequence[ReportScores],
    values: Mapping[str, float | None],
    means: Mapping[str, float],
    metrics: Sequence[str],
) -> bool:
    """The aggregate of the one mean report is the aggregate of the reports, metric by
    metric: the check that the aggregate depends on the reports only through the means."""
    mean_values = aggregate_values(framework, [dict(means)], options) if means else {}
    return bool(every) and all(
        _close(_number(values.get(m)), _number(mean_values.get(m))) for m in metrics
    )


def _key_positions(tasks: Sequence[Sequence[ReportScores]]) -> dict[str, int]:
    """Every key with a finite number somewhere, in first-seen order."""
    position: dict[str, int] = {}
    finite = math.isfinite
    for reports in tasks:
        for scores in reports:
            for key, value in scores.items():
                if (
                    key not in position
                    and (type(value) is float or type(value) is int)
                    and finite(value)
                ):
                    position[key] = len(position)
    return position


def _add_task(
    row_sum: Floats,
    row_count: Floats,
    reports: Sequence[ReportScores],
    position: Mapping[str, int],
    parts: npt.NDArray[np.bool_],
) -> None:
    """One task's sums and counts: a scored report counts once for every pooled part, and for
    a report value only where it has a finite one."""
    finite = math.isfinite
    for scores in reports:
        if not scores:
            continue
        row_count[parts] += 1
        for key, value in scores.items():
            j = position.get(key)
            if j is None or not (type(value) is float or type(value) is int) or not finite(value):
                continue
            row_sum[j] += value
            if not parts[j]:
                row_count[j] += 1


def _fill_gradient(
    gradient: Floats,
    framework: Framework,
    options: Mapping[str, str],
    means: Mapping[str, float],
    position: Mapping[str, int],
    metrics: Sequence[str],
) -> None:
    """∂metric / ∂mean of each key by central differences on the mean report."""
    for key, value in means.items():
        step = 1e-6 * max(1.0, abs(value))
        up = aggregate_values(framework, [{**means, key: value + step}], options)
        down = aggregate_values(framework, [{**means, key: value - step}], options)
        for i, metric in enumerate(metrics):
            hi, lo = _number(up.get(metric)), _number(down.get(metric))
            if hi is not None and lo is not None:
                gradient[position[key], i] = (hi - lo) / (2 * step)


def jackknife_influence(
    framework: Framework,
    options: Mapping[str, str],
    tasks: Sequence[Sequence[ReportScores]],
    metrics: Sequence[str],
) -> Floats:
    """(tasks × metrics): (θ − θ without the task)·(T − 1)/T — the jackknife's estimate of the
    linear term :meth:`Collapsed.task_influence` gives — for aggregates that do not collapse
    (one aggregate call per task)."""
    every = [s for reports in tasks for s in reports]
    full = aggregate_values(framework, every, options)
    out = np.zeros((len(tasks), len(metrics)))
    scale = (len(tasks) - 1) / len(tasks) if tasks else 0.0
    for t in range(len(tasks)):
        rest = [s for u, reports in enumerate(tasks) if u != t for s in reports]
        without = aggregate_values(framework, rest, options)
        out[t] = [_scaled_difference(full, without, metric, scale) for metric in metrics]
    return out


def _scaled_difference(
    full: Mapping[str, float | None], without: Mapping[str, float | None], metric: str, scale: float
) -> float:
    a, b = _number(full.get(metric)), _number(without.get(metric))
    return 0.0 if a is None or b is None else (a - b) * scale


@dataclass(frozen=True, slots=True)
class Target:
    """A number to estimate: a framework's metric for one system, or over every system
    (``system`` None: the framework's aggregate of every report of the run)."""

    framework: str
    metric: str
    system: int | None


@dataclass(frozen=True, slots=True)
class Flip:
    """One reviewed verdict: the report, its position in the report's verdict list, and the
    human's value."""

    report: int
    index: int
    value: str | None
    more: tuple[tuple[int, str | None], ...] = ()
    """Further verdicts of the same report set at once ((position, value) each): a report
    plan's whole report, whose verdicts act together (a level, a ratio)."""


def influences(
    framework: Framework,
    options: Mapping[str, str],
    inputs: Mapping[int, ReportInput],
    base: Mapping[int, list[VerdictIn]],
    scores: Mapping[int, ReportScores],
    system_of: Mapping[int, int],
    flips: Sequence[Flip],
    targets: Sequence[Target],
    collapsed: Mapping[int, Collapsed] | None = None,
) -> Floats:
    """(flips × targets): each flip's effect on each target, alone on the base state.

    ``inputs`` and ``base`` (the base verdicts) are needed for the reports flipped;
    ``scores`` holds the base scores of every report of the framework (the reports the
    aggregates run over), ``system_of`` their systems; ``collapsed`` the systems' collapsed
    base scores where the caller has them already (any grouping of reports will do).
    """
    out = np.zeros((len(flips), len(targets)))
    if not flips or not targets:
        return out
    metrics = sorted({t.metric for t in targets})
    movers = _system_movers(framework, options, scores, system_of, flips, metrics, collapsed or {})
    columns = _columns(targets, movers)
    overall = _overall_mover(framework, options, scores, metrics) if columns[None] else None
    for i, flip in enumerate(flips):
        after = _flipped(framework, options, inputs, base, flip)
        before = scores[flip.report]
        system = system_of[flip.report]
        if columns[system]:
            _fill(
                out[i], columns[system], targets, movers[system].moved(flip.report, before, after)
            )
        if overall is not None:
            _fill(out[i], columns[None], targets, overall.moved(flip.report, before, after))
    return out


def _columns(targets: Sequence[Target], systems: Iterable[int]) -> dict[int | None, list[int]]:
    """The columns of each flipped system's targets, and (None) of the targets over every
    report."""
    columns: dict[int | None, list[int]] = {s: [] for s in systems}
    columns[None] = []
    for j, target in enumerate(targets):
        if target.system in columns:
            columns[target.system].append(j)
    return columns


def _fill(
    row: Floats, columns: list[int], targets: Sequence[Target], moved: Mapping[str, float]
) -> None:
    for j in columns:
        row[j] = moved[targets[j].metric]


def _flipped(
    framework: Framework,
    options: Mapping[str, str],
    inputs: Mapping[int, ReportInput],
    base: Mapping[int, list[VerdictIn]],
    flip: Flip,
) -> ReportScores:
    """The flipped report's scores with the verdict (or verdicts) set to the value(s)."""
    verdicts = list(base[flip.report])
    for index, value in ((flip.index, flip.value), *flip.more):
        verdicts[index] = verdicts[index]._replace(effective=value)
    return score_at(framework, inputs[flip.report], verdicts, options)


@dataclass(slots=True)
class _Linear:
    """A collapsing aggregate: a flip's effect is a dot product with its gradient."""

    model: Collapsed

    def moved(self, report_id: int, before: ReportScores, after: ReportScores) -> dict[str, float]:
        model = self.model
        return dict(zip(model.metrics, model.report_influence(before, after), strict=True))


@dataclass(slots=True)
class _Exact:
    """Any other aggregate: recomputed with the one report's scores replaced."""

    system: SystemScores
    metrics: list[str]

    def moved(self, report_id: int, before: ReportScores, after: ReportScores) -> dict[str, float]:
        changed = self.system.replaced(report_id, after)
        deltas = metric_delta(self.system.values, changed, self.metrics)
        return dict(zip(self.metrics, deltas, strict=True))


def _system_movers(
    framework: Framework,
    options: Mapping[str, str],
    scores: Mapping[int, ReportScores],
    system_of: Mapping[int, int],
    flips: Sequence[Flip],
    metrics: list[str],
    known: Mapping[int, Collapsed],
) -> dict[int, _Linear | _Exact]:
    """How each flipped system's aggregate takes a flip."""
    by_system: dict[int, list[int]] = {}
    for rid in sorted(scores):
        by_system.setdefault(system_of[rid], []).append(rid)
    return {
        s: _system_mover(framework, options, scores, by_system[s], metrics, known.get(s))
        for s in {system_of[f.report] for f in flips}
    }


def _system_mover(
    framework: Framework,
    options: Mapping[str, str],
    scores: Mapping[int, ReportScores],
    rids: list[int],
    metrics: list[str],
    known: Collapsed | None,
) -> _Linear | _Exact:
    """A large system whose aggregate collapses takes each flip as a dot product; the others
    are re-aggregated per flip (exact, and cheaper than collapsing a small system)."""
    if len(rids) >= LINEAR_REPORTS:
        model = known or collapse(framework, options, [[scores[r]] for r in rids], metrics)
        if model.ok and set(metrics) <= set(model.metrics):
            return _Linear(model)
    return _Exact(SystemScores(framework, options, rids, [scores[r] for r in rids]), metrics)


def _overall_mover(
    framework: Framework,
    options: Mapping[str, str],
    scores: Mapping[int, ReportScores],
    metrics: list[str],
) -> _Linear | _Exact:
    """The same choice for the aggregate over every report of the run."""
    every = sorted(scores)
    if len(every) >= LINEAR_REPORTS:
        pooled = collapse(framework, options, [[scores[r]] for r in every], metrics)
        if pooled.ok:
            return _Linear(pooled)
    return _Exact(SystemScores(framework, options, every, [scores[r] for r in every]), metrics)
