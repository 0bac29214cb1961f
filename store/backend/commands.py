"""What a screen asks the workstation's writer to do, and what the writer answers.

One small frozen dataclass per action: a screen builds one and hands it to ``Backend.submit``;
the writer matches on its type, so a new command the writer does not apply is a type error,
not a keypress silently dropped. ``WriteResult`` travels back to the screens in the
``DecisionStored`` message.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, TypeAlias

from store.sqlite.tx import now_iso

if TYPE_CHECKING:
    import sqlite3

    from store.plans.design import Plan, PlanSpec
    from store.reviewlog.events import Recorded
    from store.runs.activation import ActivationPreview
    from store.views.screens import History, JudgmentView, Rank, ScoreLine


# -- decisions on one subject or report: recorded in the review log, scores updated -------


@dataclass(frozen=True, slots=True)
class Decide:
    """This reviewer's verdict on a judgment's subject."""

    label: ClassVar[str] = "decide"
    judgment_id: int
    value: str
    rationale: str = ""
    reason: str | None = None
    at: str = field(default_factory=now_iso)
    """When the reviewer acted (the keypress): the event's time stamp, however long the
    command waits in the queue for the write lock."""


@dataclass(frozen=True, slots=True)
class Adjudicate:
    """A verdict that resolves a subject reviewers decided differently; it outranks every
    reviewer's decision on it."""

    label: ClassVar[str] = "decide"
    judgment_id: int
    value: str
    rationale: str = ""
    reason: str | None = None
    at: str = field(default_factory=now_iso)
    """When the reviewer acted (the keypress): the event's time stamp, however long the
    command waits in the queue for the write lock."""


@dataclass(frozen=True, slots=True)
class Confirm:
    """The judge is right."""

    label: ClassVar[str] = "confirm"
    judgment_id: int
    rationale: str = ""
    only_if_undecided: bool = False
    """Refused where this reviewer already decided the subject (the enter key must never
    replace an override)."""
    at: str = field(default_factory=now_iso)
    """When the reviewer acted (the keypress): the event's time stamp, however long the
    command waits in the queue for the write lock."""


@dataclass(frozen=True, slots=True)
class Flag:
    """Raise a flag for discussion, the note saying why, or lower it."""

    label: ClassVar[str] = "flag"
    judgment_id: int
    on: bool = True
    note: str = ""
    at: str = field(default_factory=now_iso)
    """When the reviewer acted (the keypress): the event's time stamp, however long the
    command waits in the queue for the write lock."""


@dataclass(frozen=True, slots=True)
class Rate:
    """An overall rating of a whole report on its benchmark's scale."""

    label: ClassVar[str] = "rate"
    report_id: int
    value: str
    rationale: str = ""
    at: str = field(default_factory=now_iso)
    """When the reviewer acted (the keypress): the event's time stamp, however long the
    command waits in the queue for the write lock."""


@dataclass(frozen=True, slots=True)
class Undo:
    """Reverse this reviewer's latest decision: in ``report_id`` when given, else anywhere."""

    label: ClassVar[str] = "undo"
    report_id: int | None = None
    at: str = field(default_factory=now_iso)
    """When the reviewer acted (the keypress): the event's time stamp, however long the
    command waits in the queue for the write lock."""


@dataclass(frozen=True, slots=True)
class Redo:
    """Re-apply this reviewer's latest undo: in ``report_id`` when given, else anywhere."""

    label: ClassVar[str] = "redo"
    report_id: int | None = None
    at: str = field(default_factory=now_iso)
    """When the reviewer acted (the keypress): the event's time stamp, however long the
    command waits in the queue for the write lock."""


# -- ground-truth expansions: a proposal, or a decision on one that rescores its task ---------


@dataclass(frozen=True, slots=True)
class Propose:
    """Propose an item the benchmark lacks, drafted from what is selected in a report."""

    label: ClassVar[str] = "propose"
    report_id: int
    judgment_id: int | None
    kind: str
    text: str
    rationale: str = ""


@dataclass(frozen=True, slots=True)
class AcceptProposal:
    label: ClassVar[str] = "accept"
    uuid: str
    rationale: str = ""
    force: bool = False
    """Accept it even though it looks like a duplicate of an existing item."""


@dataclass(frozen=True, slots=True)
class RejectProposal:
    label: ClassVar[str] = "reject"
    uuid: str
    rationale: str = ""


# -- judge runs: each manages its own transaction ----------------------------------------------


@dataclass(frozen=True, slots=True)
class PreviewActivation:
    """What activating a run would change; it takes the write lock (it applies the activation
    and rolls it back)."""

    label: ClassVar[str] = "preview_activation"
    run: str


@dataclass(frozen=True, slots=True)
class Activate:
    label: ClassVar[str] = "activate"
    run: str
    confirmed: bool = False
    """Activate even where the preview asks to be looked at first."""


@dataclass(frozen=True, slots=True)
class Retire:
    label: ClassVar[str] = "deactivate"
    run: str


# -- the rest ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DrawPlan:
    """Draw a review plan: a sample of subjects with recorded inclusion probabilities."""

    label: ClassVar[str] = "new_plan"
    spec: PlanSpec


@dataclass(frozen=True, slots=True)
class Call:
    """A write that is not a keypress (a judge run started from the workstation), run in the
    writer's turn so that every write still goes through the one writer.

    ``run`` applies it and hands its result on; ``fail`` hands on the exception it raised.
    """

    label: ClassVar[str] = "call"
    run: Callable[[sqlite3.Connection], None]
    fail: Callable[[BaseException], None]


RunCommand: TypeAlias = PreviewActivation | Activate | Retire
ProposalCommand: TypeAlias = Propose | AcceptProposal | RejectProposal
LogCommand: TypeAlias = Decide | Adjudicate | Confirm | Flag | Rate | Undo | Redo
WriteCommand: TypeAlias = LogCommand | ProposalCommand | RunCommand | DrawPlan | Call
"""Everything the writer applies; ``Backend.submit`` refuses anything else at once."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What the writer committed, with everything the screen needs to redraw."""

    command: WriteCommand
    recorded: Recorded | None = None
    error: str | None = None
    judgments: dict[int, JudgmentView] = field(default_factory=dict)
    history: dict[int, History] = field(default_factory=dict)
    scores: list[ScoreLine] = field(default_factory=list)
    rank: Rank | None = None
    stored_at: float = field(default_factory=time.perf_counter)
    note: str | None = None
    """For proposals: what was recorded, and the nearest existing item if it looks alike."""
    waiting: float | None = None
    """Set on an interim result: the command is still queued behind another process's write
    lock, this many seconds so far (``note`` then says who holds it)."""
    data: ActivationPreview | Plan | None = None
    """What a command that reads or draws rather than decides returns: an activation
    preview, a drawn plan."""
