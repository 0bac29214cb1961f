"""What a scoring function sees of one report: structure plus verdicts in both variants.

Plain slotted dataclasses rather than pydantic models: scoring from rows builds one per verdict
and claim, and validation already happened at import. A full recompute reads most reports as
counts instead (:class:`CountedReports`: columns, no object per report).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


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

    A NamedTuple because scoring from rows builds one per verdict straight from database rows
    (``VerdictIn._make(row)``); ``subtask_id`` is the subtask of the judged
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


@dataclass(frozen=True, slots=True)
class TaskShapes:
    """The structure of the tasks that counted reports answer, as columns: every subtask of
    those tasks, in task order and, within a task, in the subtasks' order; and the criteria
    filed under them, counted by dimension. Reports of one task share it."""

    task: npt.NDArray[np.int64]
    """(S,) each subtask's task, an index (the one :attr:`CountedReports.report_task` uses)"""
    importance: Sequence[str]
    """(S,) each subtask's importance"""
    group: Sequence[str | None]
    """(S,) each subtask's group"""
    criterion_subtask: npt.NDArray[np.int64]
    """(C,) the subtask (an index into the above) of each (subtask, dimension) counted"""
    criterion_dimension: Sequence[str]
    """(C,) its dimension"""
    criterion_count: npt.NDArray[np.int64]
    """(C,) how many criteria of its task are filed under that subtask in that dimension"""


@dataclass(frozen=True, slots=True)
class VerdictCounts:
    """How many verdicts in force there are per (report, kind, subtask, cited, value), as
    columns of one row per such group, in report order (a count may be negative: a human
    decision moves one verdict from the judge's value to its own, as a -1 and a +1). Narrow
    integers: a run has a million groups."""

    report: npt.NDArray[np.int32]
    """the report, an index into :attr:`CountedReports.report_ids`"""
    kind: npt.NDArray[np.int32]
    """an index into :attr:`CountedReports.kinds`"""
    subtask: npt.NDArray[np.int32]
    """the verdict's subtask, an index into :class:`TaskShapes`; -1 when it has none among its
    report's task's subtasks"""
    cited: npt.NDArray[np.int32]
    """1 where the verdict's claim cites a reference (a citation or a url), else 0"""
    value: npt.NDArray[np.int32]
    """an index into :attr:`CountedReports.codes`; ``len(codes)`` for any other value,
    ``len(codes) + 1`` for no value"""
    count: npt.NDArray[np.int32]


@dataclass(frozen=True, slots=True)
class CountedReports:
    """What a full recompute reads of many reports when SQL has counted their verdicts, for
    a framework that declares a :class:`reviewer.framework.BulkSpec`: each report's task and
    metadata, its extracted claims, the tasks' structure, and its verdicts counted (of one
    variant: the judge's values, or with the human decisions in force). Plain columns, so a
    framework scores every report at once instead of building objects per report.

    Every report's extracted claims each have exactly one verdict of the claim kind in force,
    filed under the claim's own subtask, from one extraction (the store scores any other
    report from its rows).
    """

    kinds: tuple[str, ...]
    """the verdict kinds counted: the spec's kinds, then its claim kind"""
    codes: tuple[str, ...]
    """the values counted by name"""
    report_ids: npt.NDArray[np.int64]
    """(R,) ascending"""
    report_task: npt.NDArray[np.int64]
    """(R,) each report's task, an index (:attr:`TaskShapes.task`)"""
    metadata: Sequence[Mapping[str, Any]]
    """(R,) each report's metadata"""
    claims: npt.NDArray[np.int64]
    """(R,) each report's extracted claims"""
    tasks: TaskShapes
    verdicts: VerdictCounts

    @property
    def other(self) -> int:
        """The value index of a value that is none of :attr:`codes`."""
        return len(self.codes)

    @property
    def none(self) -> int:
        """The value index of no value."""
        return len(self.codes) + 1

    def between(self, lo: int, hi: int) -> CountedReports:
        """Reports ``lo`` to ``hi - 1`` (positions), with their counts: one run of the rows,
        which are in report order."""
        v = self.verdicts
        a, b = (int(at) for at in v.report.searchsorted([lo, hi]))
        verdicts = VerdictCounts(
            v.report[a:b] - lo,
            v.kind[a:b],
            v.subtask[a:b],
            v.cited[a:b],
            v.value[a:b],
            v.count[a:b],
        )
        return replace(
            self,
            report_ids=self.report_ids[lo:hi],
            report_task=self.report_task[lo:hi],
            metadata=self.metadata[lo:hi],
            claims=self.claims[lo:hi],
            verdicts=verdicts,
        )

    def subset(self, keep: npt.NDArray[np.bool_]) -> CountedReports:
        """The reports ``keep`` marks (an (R,) mask), with their counts."""
        if keep.all():
            return self
        position = keep.cumsum() - 1
        v = self.verdicts
        rows = keep[v.report]
        verdicts = VerdictCounts(
            position[v.report[rows]],
            v.kind[rows],
            v.subtask[rows],
            v.cited[rows],
            v.value[rows],
            v.count[rows],
        )
        return replace(
            self,
            report_ids=self.report_ids[keep],
            report_task=self.report_task[keep],
            metadata=[self.metadata[i] for i in keep.nonzero()[0].tolist()],
            claims=self.claims[keep],
            verdicts=verdicts,
        )
