"""Judge runs side by side: how often they agree on the same items, how far their system
scores differ, and how much scores spread over repeated runs (the data ``gavel compare``
prints).

Each run is scored on its own (:func:`store.runs.records.run_scores`) over the reports every run
judged, so a difference is the runs' doing, never a difference in what they covered.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from reviewer.agreement import ConfusionMatrix
from reviewer.errors import InputError
from reviewer.framework import Variant
from reviewer.judge.compare import ItemVerdict, agreement_by_kind, mean_sd
from store.runs.records import RunScores, run_report_ids, run_scores, run_verdicts
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
