"""What a weighted plan weighs: how far a verdict could move its report's headline metrics,
and how likely the judge is to be wrong about it.

The best single-draw probabilities are proportional to each subject's expected squared
influence; neither factor is known before review, so a weighted plan uses a stand-in for one
of them and keeps a uniform floor so that a poor stand-in costs efficiency, never validity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reviewer.framework import Framework
from reviewer.impact import alternatives
from reviewer.inputs import ReportInput


def verdict_impacts(
    framework: Framework, report: ReportInput, options: Mapping[str, str], metrics: Sequence[str]
) -> dict[int, list[float]]:
    """Position in ``report.verdicts`` (of this framework's kinds) -> the largest change of each
    metric over the verdict's alternative values, on the report's effective verdicts.

    Verdicts that are interchangeable — same kind, subtask and value, no criterion or key of
    their own (two correct claims of one subtask) — are rescored once.
    """
    base = framework.score_report(report, "adjudicated", options)
    original = report.verdicts
    memo: dict[tuple[object, ...], list[float]] = {}
    out: dict[int, list[float]] = {}
    try:
        for index, verdict in enumerate(original):
            if verdict.kind not in framework.kinds:
                continue
            signature = (
                verdict.kind,
                verdict.subtask_id,
                verdict.criterion_id,
                verdict.ref_idx,
                verdict.key,
                verdict.effective,
            )
            shared = verdict.criterion_id is None and verdict.key is None
            if shared and signature in memo:
                out[index] = memo[signature]
                continue
            best = [0.0] * len(metrics)
            for value in alternatives(verdict):
                flipped = list(original)
                flipped[index] = verdict._replace(effective=value)
                report.verdicts = flipped
                scores = framework.score_report(report, "adjudicated", options)
                for i, metric in enumerate(metrics):
                    best[i] = max(best[i], _change(base.get(metric), scores.get(metric)))
            report.verdicts = original
            out[index] = best
            if shared:
                memo[signature] = best
    finally:
        report.verdicts = original
    return out


def _change(a: float | None, b: float | None) -> float:
    if a is None and b is None:
        return 0.0
    if a is None or b is None:
        return 1.0
    return abs(b - a)


def normalised_impacts(rows: Sequence[Sequence[float]]) -> list[float]:
    """One weight per subject from its per-metric changes: each metric divided by its mean
    change over the frame (so a 1–4 level does not drown a 0–1 share), then summed."""
    if not rows:
        return []
    width = len(rows[0])
    means = [sum(r[i] for r in rows) / len(rows) for i in range(width)]
    return [sum(r[i] / means[i] for i in range(width) if means[i] > 0) for r in rows]


def uncertainty(disagreed: int, decided: int) -> float:
    """A verdict's chance of being overruled, from how often humans overruled the judge on
    verdicts of the same kind and value (Laplace-smoothed: 1/2 with no decisions)."""
    return (disagreed + 1) / (decided + 2)
