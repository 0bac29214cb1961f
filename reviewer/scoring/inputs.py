"""What a scoring function sees of one report: structure plus verdicts in both variants.

Plain slotted dataclasses rather than pydantic models: a full recompute builds a few hundred
thousand of these, and validation already happened at import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


@dataclass(slots=True)
class VerdictIn:
    """A judgment with its judge value and its effective (adjudicated) value, as scale codes."""

    id: int
    kind: str
    criterion_id: int | None
    claim_id: int | None
    ref_idx: int | None
    key: str | None
    judge: str | None
    effective: str | None
    error: str | None = None

    def value(self, variant: str) -> str | None:
        return self.judge if variant == "judge" else self.effective


@dataclass(slots=True)
class ReportInput:
    report_id: int
    task_id: int
    system_id: int
    task_metadata: dict[str, Any] = field(default_factory=dict)
    subtasks: list[SubtaskIn] = field(default_factory=list)
    criteria: list[CriterionIn] = field(default_factory=list)
    claims: list[ClaimIn] = field(default_factory=list)
    verdicts: list[VerdictIn] = field(default_factory=list)
