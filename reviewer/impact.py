"""Impact: how far a single verdict flip could move a report's score.

The queue orders by it so a reviewer with little time checks first the verdicts that matter.
For each judgment we try every other value on its scale (continuous scales: ±2 points), rescore
the report, and keep the largest change of the framework's first headline metric, breaking ties
by the summed change of its other headline metrics. Flips that are interchangeable (same kind,
subtask and current value, no criterion of their own — e.g. two correct claims of one subtask)
are scored once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reviewer.framework import Framework, ReportScores
from reviewer.inputs import ReportInput, VerdictIn
from reviewer.registry import get_kind


@dataclass(frozen=True, slots=True)
class Impact:
    primary: float
    secondary: float
    judgment_id: int | None

    def key(self) -> tuple[float, float]:
        return (self.primary, self.secondary)


def alternatives(verdict: VerdictIn) -> list[str]:
    """Every other value on the verdict's scale (continuous scales: ±2 points, clipped)."""
    kind = get_kind(verdict.kind)
    if kind is None:
        return []
    scale = kind.scale
    current = verdict.effective
    if scale.continuous:
        if current is None:
            return []
        value = float(current)
        out = []
        for delta in (-2.0, 2.0):
            candidate = value + delta
            if scale.low is not None:
                candidate = max(scale.low, candidate)
            if scale.high is not None:
                candidate = min(scale.high, candidate)
            if candidate != value:
                out.append(scale.normalize(candidate))
        return out
    return [c.code for c in scale.choices if c.code != current]


def report_impact(framework: Framework, report: ReportInput, options: Mapping[str, str]) -> Impact:
    rescore = _Rescorer.of(framework, report, options)
    if rescore is None:
        return Impact(0.0, 0.0, None)
    best = Impact(0.0, 0.0, None)
    seen: set[tuple[object, ...]] = set()
    for index, verdict in enumerate(rescore.original):
        signature = _signature(verdict)
        interchangeable = verdict.criterion_id is None and verdict.key is None
        for alternative in alternatives(verdict):
            if interchangeable:
                if (*signature, alternative) in seen:
                    continue
                seen.add((*signature, alternative))
            impact = rescore.impact(index, alternative)
            if impact.key() > best.key():
                best = impact
    return best


def _delta(a: float | None, b: float | None) -> float:
    if a is None and b is None:
        return 0.0
    if a is None or b is None:
        return 1.0
    return abs(b - a)


def _signature(verdict: VerdictIn) -> tuple[object, ...]:
    """What makes two flips interchangeable when neither has a criterion or key of its own."""
    return (
        verdict.kind,
        verdict.subtask_id,
        verdict.criterion_id,
        verdict.ref_idx,
        verdict.key,
        verdict.effective,
    )


@dataclass(slots=True)
class _Rescorer:
    """One report rescored with one verdict flipped, against its scores as they stand."""

    framework: Framework
    report: ReportInput
    options: Mapping[str, str]
    original: list[VerdictIn]
    base: ReportScores
    primary: str
    others: list[str]

    @classmethod
    def of(
        cls, framework: Framework, report: ReportInput, options: Mapping[str, str]
    ) -> _Rescorer | None:
        """None when there is nothing to move: no headline metric, or no verdict."""
        heads = [m.name for m in framework.metrics if m.headline]
        if not heads or not report.verdicts:
            return None
        base = framework.score_report(report, "adjudicated", options)
        return cls(framework, report, options, report.verdicts, base, heads[0], heads[1:])

    def impact(self, index: int, alternative: str) -> Impact:
        """The change of the first headline metric, and the summed change of the others, with
        verdict ``index`` set to ``alternative`` (the report's own list is put back)."""
        verdict = self.original[index]
        flipped = list(self.original)
        flipped[index] = verdict._replace(effective=alternative)
        self.report.verdicts = flipped
        try:
            scores = self.framework.score_report(self.report, "adjudicated", self.options)
        finally:
            self.report.verdicts = self.original
        base = self.base
        return Impact(
            _delta(base.get(self.primary), scores.get(self.primary)),
            sum(_delta(base.get(m), scores.get(m)) for m in self.others),
            verdict.id,
        )


def verdict_impacts(
    framework: Framework, report: ReportInput, options: Mapping[str, str]
) -> dict[int, Impact]:
    """Each verdict's own impact: the largest change one flip of that verdict makes (what an
    impact-ordered review of single verdicts follows). Interchangeable verdicts share one
    rescoring, as in :func:`report_impact`."""
    rescore = _Rescorer.of(framework, report, options)
    if rescore is None:
        return {}
    out: dict[int, Impact] = {}
    shared: dict[tuple[object, ...], Impact] = {}
    for index, verdict in enumerate(rescore.original):
        signature = _signature(verdict)
        interchangeable = verdict.criterion_id is None and verdict.key is None
        if interchangeable and signature in shared:
            found = shared[signature]
            out[verdict.id] = Impact(found.primary, found.secondary, verdict.id)
            continue
        best = Impact(0.0, 0.0, verdict.id)
        for alternative in alternatives(verdict):
            impact = rescore.impact(index, alternative)
            if impact.key() > best.key():
                best = impact
        out[verdict.id] = best
        if interchangeable:
            shared[signature] = best
    return out
