"""Judge runs side by side: how often they agree on the same items, how far their system
scores differ, and how much scores spread over repeated runs: the noise band (the data
``gavel compare`` prints and the noise screen shows).

Each run is scored on its own (:func:`store.runs.records.run_scores`) over the reports every run
judged, so a difference is the runs' doing, never a difference in what they covered.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from reviewer.agreement import ConfusionMatrix, krippendorff_alpha
from reviewer.comparison import scale_labels, scale_level
from reviewer.errors import InputError
from reviewer.framework import Aggregate, Metric, Variant, VerdictKind
from reviewer.judge.compare import (
    Flips,
    ItemVerdict,
    RankStability,
    agreement_by_kind,
    band,
    mean_sd,
    rank_stability,
    subject_flips,
)
from reviewer.registry import frameworks, get_kind
from store.runs.bands import NoiseBand, repeated_suites
from store.runs.records import (
    RunScores,
    run_report_ids,
    run_rows,
    run_scores,
    run_verdicts,
    scoring_inputs,
    suite_runs,
    verdict_free_scores,
)
from store.scores.cache import ensure_scores


@dataclass(frozen=True, slots=True)
class RunAgreement:
    """Run ``a`` against run ``b`` on one verdict kind, over the items both judged."""

    a: str
    b: str
    kind: str
    n: int
    accuracy: float | None
    kappa: float | None
    weighted_kappa: float | None
    only_a: int
    only_b: int
    errors_a: int
    errors_b: int


@dataclass(frozen=True, slots=True)
class ScoreDifference:
    system: str
    metric: str
    a: float | None
    b: float | None
    delta: float | None


@dataclass(frozen=True, slots=True)
class ScoreSpread:
    system: str
    metric: str
    mean: float | None
    sd: float | None
    runs: int


@dataclass(frozen=True, slots=True)
class RunComparison:
    runs: list[str]
    reports: int
    """Reports every run judged: the ones scores are compared on."""
    variant: str
    std: str
    agreement: list[RunAgreement]
    confusion: list[tuple[str, ConfusionMatrix]]
    """Per kind, run a in rows and run b in columns (only when exactly two runs)."""
    differences: list[ScoreDifference]
    """b − a per system and metric (only when exactly two runs)."""
    robustness: list[ScoreSpread]


def check_runs(runs: Sequence[str]) -> None:
    if len(runs) < 2 or len(set(runs)) != len(runs):
        raise InputError("command line", "compare needs two or more different runs", field="RUN")


def compare_runs(
    conn: sqlite3.Connection,
    runs: Sequence[str],
    metrics: Sequence[tuple[str, str]],
    variant: Variant = "judge",
    std: str = "sample",
) -> RunComparison:
    """Compare two or more different runs on ``metrics`` ((framework, metric) pairs; those of
    frameworks no run scored are left out)."""
    runs = list(runs)
    check_runs(runs)
    ensure_scores(conn)
    verdicts = {
        run: [
            ItemVerdict(v.kind, (v.report_id, v.subject), v.value) for v in run_verdicts(conn, run)
        ]
        for run in runs
    }
    shared = set.intersection(*(set(run_report_ids(conn, run)) for run in runs))
    scores = _RunScores({run: run_scores(conn, run, sorted(shared), variant) for run in runs})
    metrics = [m for m in metrics if m[0] in scores.frameworks()]
    agreement, matrices = _agreement(runs, verdicts)
    differences: list[ScoreDifference] = []
    if len(runs) == 2:
        differences = _differences(scores, runs[0], runs[1], metrics)
    return RunComparison(
        runs,
        len(shared),
        variant,
        std,
        agreement,
        matrices,
        differences,
        _robustness(scores, runs, metrics, std),
    )


class _RunScores:
    """Each run's system scores, read by system, framework and metric."""

    def __init__(self, scores: dict[str, RunScores]) -> None:
        self.scores = scores

    def frameworks(self) -> set[str]:
        return {fw for s in self.scores.values() for (_, fw) in s.systems}

    def systems(self) -> list[str]:
        return sorted({system for s in self.scores.values() for (system, _) in s.systems})

    def value(self, run: str, system: str, fw: str, metric: str) -> float | None:
        agg = self.scores[run].systems.get((system, fw), {}).get(metric)
        return None if agg is None else agg.value


def _agreement(
    runs: list[str], verdicts: dict[str, list[ItemVerdict]]
) -> tuple[list[RunAgreement], list[tuple[str, ConfusionMatrix]]]:
    """Every pair of runs on every verdict kind; with exactly two runs, the confusion
    matrices too."""
    agreement: list[RunAgreement] = []
    matrices: list[tuple[str, ConfusionMatrix]] = []
    for i, first in enumerate(runs):
        for second in runs[i + 1 :]:
            for agreed in agreement_by_kind(verdicts[first], verdicts[second]):
                agreement.append(
                    RunAgreement(
                        first,
                        second,
                        agreed.kind,
                        agreed.n,
                        agreed.accuracy.value,
                        agreed.kappa.value if agreed.kappa else None,
                        agreed.weighted_kappa.value if agreed.weighted_kappa else None,
                        agreed.only_a,
                        agreed.only_b,
                        agreed.failed_a,
                        agreed.failed_b,
                    )
                )
                if agreed.confusion is not None and agreed.n and len(runs) == 2:
                    matrices.append((agreed.kind, agreed.confusion))
    return agreement, matrices


def _differences(
    scores: _RunScores, a: str, b: str, metrics: Sequence[tuple[str, str]]
) -> list[ScoreDifference]:
    """b − a per system and metric."""
    out: list[ScoreDifference] = []
    for system in scores.systems():
        for fw, metric in metrics:
            va, vb = scores.value(a, system, fw, metric), scores.value(b, system, fw, metric)
            delta = None if va is None or vb is None else vb - va
            out.append(ScoreDifference(system, metric, va, vb, delta))
    return out


def _robustness(
    scores: _RunScores, runs: list[str], metrics: Sequence[tuple[str, str]], std: str
) -> list[ScoreSpread]:
    """Each system's metric over the runs: mean and standard deviation."""
    out: list[ScoreSpread] = []
    for system in scores.systems():
        for fw, metric in metrics:
            spread = mean_sd([scores.value(run, system, fw, metric) for run in runs], std)
            out.append(ScoreSpread(system, metric, spread.mean, spread.sd, spread.n))
    return out


# -- the noise band of repeated runs ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupNoise:
    """Run-to-run agreement on one kind (or kind and dimension): how often a subject's value
    flips between two runs, and Krippendorff's α with the runs as raters."""

    flips: Flips
    alpha: float | None
    level: str


@dataclass(frozen=True, slots=True)
class Noise:
    runs: list[str]
    reports: int
    """The reports the bands are over (each system's that every run of a kind judged)."""
    std: str
    bands: list[NoiseBand]
    groups: list[GroupNoise]
    ranks: list[RankStability]


def run_noise(
    conn: sqlite3.Connection,
    runs: Sequence[str],
    metrics: Sequence[tuple[str, str]],
    variant: Variant = "judge",
    std: str = "sample",
    *,
    groups: bool = True,
) -> Noise:
    """The noise band of two or more runs of the same reports: per system and metric the mean,
    sd and range over the runs, per verdict kind and dimension the flip rate and α, and per
    metric how stable the systems' order is (``groups``: False leaves out the verdict-level
    part, for a caller that shows only the bands). A system's band is over the runs that
    judged it, each on the system's reports every run of its verdict kinds judged (a
    benchmark's release may hold one run per system beside a repeat that judged them all)."""
    runs = list(runs)
    check_runs(runs)
    ensure_scores(conn)
    kinds = {run: _kinds(conn, run) for run in runs}
    scored = _compared_reports(conn, runs, kinds)
    shared = sorted(set().union(*scored.values()))
    loaded = scoring_inputs(conn, shared)
    own = {
        run: run_scores(conn, run, sorted(scored[run]), variant, own_only=True, inputs=loaded)
        for run in runs
    }
    baseline = verdict_free_scores(conn, shared, variant, loaded)
    table = _own_values(own, baseline, _noise_metrics(metrics))
    _keep_repeats(table, kinds)
    bands = [
        NoiseBand(system, fw, metric, band([values[run][0] for run in runs], std), _via(values))
        for (system, fw, metric), values in sorted(table.items())
    ]
    agreement = _group_noise(conn, runs) if groups else []
    return Noise(runs, len(shared), std, bands, agreement, _ranks(table, runs))


def _ranks(table: _OwnValues, runs: list[str]) -> list[RankStability]:
    """Rank stability of each metric that two runs ranked systems on."""
    out = []
    for fw, metric in sorted({(fw, metric) for (_, fw, metric) in table}):
        per_run = {
            run: {s: v[run][0] for (s, f, m), v in table.items() if (f, m) == (fw, metric)}
            for run in runs
        }
        stability = rank_stability(metric, per_run)
        if stability.pairs or any(share is not None for *_, share in stability.swaps):
            out.append(stability)
    return out


def _noise_metrics(metrics: Sequence[tuple[str, str]]) -> list[tuple[str, Metric | None, Metric]]:
    """(framework, the metric, its other record) for each metric asked for; a metric that is
    the other record of one also asked for is shown as part of that one."""
    registry = frameworks()
    out: list[tuple[str, Metric | None, Metric]] = []
    asked = set(metrics)
    for fw, name in metrics:
        spec = registry.get(fw)
        if spec is None:
            continue
        by_name = {m.name: m for m in spec.metrics}
        metric = by_name.get(name)
        if metric is None or (metric.same_as is not None and (fw, metric.same_as) in asked):
            continue
        other = next((m for m in spec.metrics if m.same_as == name), None)
        out.append((fw, other, metric))
    return out


_OwnValues = dict[tuple[str, str, str], dict[str, tuple[float | None, bool]]]
"""(system, framework, metric) -> run -> (value, whether it is the metric's other record)."""


def _own_values(
    own: dict[str, RunScores],
    baseline: RunScores,
    metrics: list[tuple[str, Metric | None, Metric]],
) -> _OwnValues:
    """Each run's own value of each system's metric: the metric itself, else its other record
    (``Metric.same_as``); a value the framework gives with no verdict at all (a default the
    run did not inform: DR. Bench's runs of one verdict kind each) is not the run's."""
    systems = sorted({system for s in own.values() for (system, _) in s.systems})
    table: _OwnValues = {}
    for system in systems:
        for fw, other, metric in metrics:
            default = baseline.systems.get((system, fw), {})
            values = {
                run: _run_value(scores.systems.get((system, fw), {}), default, metric, other)
                for run, scores in own.items()
            }
            if any(v is not None for v, _ in values.values()):
                table[(system, fw, metric.name)] = values
    return table


def _compared_reports(
    conn: sqlite3.Connection, runs: list[str], kinds: dict[str, frozenset[str]]
) -> dict[str, set[int]]:
    """Each run's reports to score: per system and set of verdict kinds, the system's reports
    that every run of those kinds that judged the system judged."""
    judged = {run: set(run_report_ids(conn, run)) for run in runs}
    every = sorted(set().union(*judged.values()))
    system_of: dict[int, int] = {}
    for i in range(0, len(every), 900):
        part = every[i : i + 900]
        marks = ",".join("?" * len(part))
        system_of.update(
            conn.execute(f"SELECT id, system_id FROM report WHERE id IN ({marks})", part)
        )
    shared: dict[tuple[int, frozenset[str]], set[int]] = {}
    for run in runs:
        by_system: dict[int, set[int]] = defaultdict(set)
        for rid in judged[run]:
            by_system[system_of[rid]].add(rid)
        for system, ids in by_system.items():
            key = (system, kinds[run])
            shared[key] = shared[key] & ids if key in shared else ids
    return {
        run: {rid for rid in judged[run] if rid in shared[(system_of[rid], kinds[run])]}
        for run in runs
    }


def _kinds(conn: sqlite3.Connection, run: str) -> frozenset[str]:
    rows = run_rows(conn, run)
    marks = ",".join("?" * len(rows))
    return frozenset(
        kind
        for (kind,) in conn.execute(
            f"SELECT DISTINCT kind FROM judgment WHERE run_id IN ({marks})", rows
        )
    )


def _keep_repeats(table: _OwnValues, kinds: dict[str, frozenset[str]]) -> None:
    """Runs are repeats of each other where they judged the same verdict kinds: in each row,
    the direct values of the largest such group of runs stay (the first run's group on a
    tie), and those of runs that judged other kinds (another part of the benchmark, as DR.
    Bench's keyword, URL and rubric runs are) are dropped. A value through the metric's other
    record stays: it is the same quantity by another route."""
    for values in table.values():
        groups: dict[frozenset[str], list[str]] = defaultdict(list)
        for run, (value, via) in values.items():
            if value is not None and not via:
                groups[kinds[run]].append(run)
        if len(groups) < 2:
            continue
        keep = max(groups.values(), key=len)
        for run, (value, via) in list(values.items()):
            if value is not None and not via and run not in keep:
                values[run] = (None, False)


def _value(agg: Aggregate | None) -> float | None:
    return None if agg is None else agg.value


def _run_value(
    aggs: dict[str, Aggregate], default: dict[str, Aggregate], metric: Metric, other: Metric | None
) -> tuple[float | None, bool]:
    """A run's value of one system's metric, else of its other record (and which it is)."""
    value = _informed(aggs, default, metric.name)
    if value is not None or other is None:
        return value, False
    value = _informed(aggs, default, other.name)
    return value, value is not None


def _informed(aggs: dict[str, Aggregate], default: dict[str, Aggregate], name: str) -> float | None:
    """The run's value of a metric, None when it is the framework's value without verdicts."""
    value = _value(aggs.get(name))
    return None if value is not None and value == _value(default.get(name)) else value


def _via(values: dict[str, tuple[float | None, bool]]) -> tuple[str, ...]:
    return tuple(run for run, (_, via) in values.items() if via)


def _group_noise(conn: sqlite3.Connection, runs: list[str]) -> list[GroupNoise]:
    """Per kind and per kind and dimension: each subject's values over the runs that judged
    it with a value (the groups with a subject two runs judged)."""
    values: dict[str, dict[tuple[int, str], dict[str, str]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    kind_of: dict[str, str] = {}
    for run in runs:
        for v in run_verdicts(conn, run):
            if v.value is None:
                continue
            for group in {v.kind, v.group}:
                values[group][(v.report_id, v.subject)][run] = v.value
                kind_of[group] = v.kind
    shared = {
        group: judged
        for group, items in values.items()
        if (judged := {item: given for item, given in items.items() if len(given) > 1})
    }
    return [
        _one_group(group, kind_of[group], items, runs) for group, items in sorted(shared.items())
    ]


def _one_group(
    group: str, kind: str, items: dict[tuple[int, str], dict[str, str]], runs: list[str]
) -> GroupNoise:
    flips = subject_flips(group, [list(given.values()) for given in items.values()])
    spec = get_kind(kind)
    level: str = "nominal" if spec is None else scale_level(spec.scale)
    return GroupNoise(flips, _alpha(spec, level, list(items.values()), runs), level)


def _alpha(
    spec: VerdictKind | None, level: str, items: list[dict[str, str]], runs: list[str]
) -> float | None:
    """Krippendorff's α with the runs as raters, at the scale's level (over the scale's
    labels and any other value a run gave, for a categorical one)."""
    if level == "interval":
        numbers: list[list[object]] = [[_number(given.get(run)) for run in runs] for given in items]
        return krippendorff_alpha(numbers, "interval").value
    labels = list(scale_labels(spec.scale)) if spec is not None else []
    labels += sorted({v for given in items for v in given.values()} - set(labels))
    codes = [[given.get(run) for run in runs] for given in items]
    return krippendorff_alpha(codes, "ordinal" if level == "ordinal" else "nominal", labels).value


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def default_metrics() -> list[tuple[str, str]]:
    """Every framework's headline metrics and those it marks for comparison."""
    return [
        (name, m.name)
        for name, fw in frameworks().items()
        for m in fw.metrics
        if m.headline or m.compare
    ]


def suite_noise(conn: sqlite3.Connection, suite: str, std: str = "sample") -> Noise | None:
    """The noise band of every run of ``suite`` on the default metrics; None with fewer than
    two runs."""
    runs = suite_runs(conn, suite)
    if len(runs) < 2:
        return None
    return run_noise(conn, runs, default_metrics(), "judge", std)


def _first_bands(bands: list[NoiseBand], order: list[tuple[str, str]]) -> dict[str, NoiseBand]:
    """Each system's band on the first metric of ``order`` that two or more runs gave."""
    rank = {metric: i for i, metric in enumerate(order)}
    out: dict[str, NoiseBand] = {}
    for b in sorted(bands, key=lambda b: rank.get((b.framework, b.metric), len(rank))):
        if b.band.n >= 2 and b.system not in out:
            out[b.system] = b
    return out


def system_bands(conn: sqlite3.Connection) -> dict[str, dict[str, NoiseBand]]:
    """Per suite with two or more runs, each system's band on its first headline metric that
    two or more runs gave (what the queue shows beside the scores)."""
    out: dict[str, dict[str, NoiseBand]] = {}
    multi = repeated_suites(conn)
    headline = [
        (name, m.name) for name, fw in frameworks().items() for m in fw.metrics if m.headline
    ]
    for suite in multi:
        noise = run_noise(conn, suite_runs(conn, suite), headline, groups=False)
        per_system = _first_bands(noise.bands, headline)
        if per_system:
            out[suite] = per_system
    return out
