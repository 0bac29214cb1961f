"""What a scoring function sees of one report: structure plus verdicts in both variants.

Plain slotted dataclasses rather than pydantic models: a full recompute builds a few hundred
thousand of these, and validation already happened at import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


@dataclass(slots=True)
class SubtaskIn:
    id: int
    importance: str
    group: str | None


@dataclass(slots=True)
class CriterionIn:
    id: int
    subtask_id: int | None
    dimension: str
    weight: float | None
    text: str = ""


@dataclass(slots=True)
class ClaimIn:
    id: int
    subtask_id: int | None
    criterion_id: int | None
    citations: tuple[int, ...]
    url: str | None = None
    origin: str | None = None
    """The judge run that extracted the claim (``metadata.gavel_judge_run``), None for a claim
    the report was imported with: which extraction a claim belongs to."""
    origin_rank: int = 0
    """The activation order of ``origin`` (0: imported, or a run that is not active): where
    two extractions of one report both have verdicts in force, the newest activated counts."""


class VerdictIn(NamedTuple):
    """A judgment with its judge value and its effective (adjudicated) value, as scale codes.

    A NamedTuple because a full recompute builds a quarter of a million of these straight from
    database rows (``VerdictIn._make(row)``); ``subtask_id`` is the subtask of the judged
    criterion or claim, resolved at import.
    """

    id: int
    report_id: int
    kind: str
    subtask_id: int | None
    criterion_id: int | None
    claim_id: int | None
    ref_idx: int | None
    key: str | None
    judge: str | None
    effective: str | None
    error: str | None = None
    subject: int | None = None
    """The subject's id: human decisions are made on subjects, shared by every judge run."""

    def value(self, variant: str) -> str | None:
        return self.judge if variant == "judge" else self.effective


@dataclass(slots=True)
class ReportInput:
    report_id: int
    task_id: int
    system_id: int
    task_metadata: dict[str, Any] = field(default_factory=dict)
    report_metadata: dict[str, Any] = field(default_factory=dict)
    subtasks: list[SubtaskIn] = field(default_factory=list)
    criteria: list[CriterionIn] = field(default_factory=list)
    claims: list[ClaimIn] = field(default_factory=list)
    verdicts: list[VerdictIn] = field(default_factory=list)
    expansions: list[dict[str, Any]] = field(default_factory=list)
    """Accepted ground-truth expansions of the report's task: {kind, framework, payload}.
    A 'new_claim' / 'new_rubric' raises a recall denominator; 'alias' and 'extra_evidence'
    only widen what counts as a match for an existing item."""


JUDGE_FIELD = VerdictIn._fields.index("judge")
EFFECTIVE_FIELD = VerdictIn._fields.index("effective")


def variant_field(variant: str) -> int:
    """Tuple index of a variant's value, for scoring loops that index rows directly."""
    return JUDGE_FIELD if variant == "judge" else EFFECTIVE_FIELD


def extraction_in_force(claims: list[ClaimIn], judged: set[int | None]) -> set[int] | None:
    """The claims of the one extraction whose verdicts count, when a report has several.

    A judge run that extracts claims itself (FACT statements, DR3-Eval claims) adds them beside
    the imported ones, each extraction with its own verdicts. Counting both would count the
    report's claims twice, so among the extractions with a verdict in force on one of their
    claims (``judged``: claim ids) the newest activated one counts (imported claims rank 0).
    None when there is only one extraction: every claim counts.
    """
    origins = {c.origin for c in claims}
    if len(origins) <= 1:
        return None
    ranked = {(c.origin_rank, c.origin or "") for c in claims if c.id in judged}
    if not ranked:
        return {c.id for c in claims if c.origin is None}
    _, best = max(ranked)
    chosen = best or None
    return {c.id for c in claims if c.origin == chosen}


OTHER = ""
"""A verdict value outside the codes a :class:`reviewer.framework.BulkSpec` counts (None: no
value)."""


@dataclass(slots=True)
class ReportCounts:
    """What a full recompute reads of one report when SQL has counted its verdicts: the
    report's structure (``report`` has its task's subtasks and criteria, no claims and no
    verdicts) and, per verdict kind and subtask, how many verdicts have each value.

    A value is one of the framework's codes, :data:`OTHER` for any other value, or None for
    no value. The counts are of one variant (the judge's values, or with the human decisions
    in force).
    """

    report: ReportInput
    verdicts: dict[tuple[str, int | None], dict[str | None, int]] = field(default_factory=dict)
    """(kind, subtask of the verdict) -> value -> how many (kinds other than the claim kind)"""
    claims: int = 0
    """extracted claims of the report"""
    cited: int = 0
    """of those, claims citing a reference (a citation or a url)"""
    claim_values: dict[int | None, dict[str | None, int]] = field(default_factory=dict)
    """subtask -> value -> how many claims have a verdict of the claim kind with that value
    (every claim has exactly one: a report where that does not hold is scored from rows)"""
    cited_values: dict[str | None, int] = field(default_factory=dict)
    """value -> how many cited claims have a claim-kind verdict with that value"""
