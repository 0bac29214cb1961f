"""The human layer's vocabulary: review actions, the judge-error taxonomy, portable events.

Events are the unit of the append-only review log. They name their subject by a portable key
(suite/report/run/kind/subject) rather than a database id, so a log exported from one database
merges into another that imported the same bundle.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from reviewer.actions import DECISION_ACTIONS as DECISION_ACTIONS
from reviewer.actions import REASON_CODES as REASON_CODES
from reviewer.actions import UNDOABLE_ACTIONS as UNDOABLE_ACTIONS
from reviewer.actions import Action


class ReviewEvent(BaseModel):
    """One line of an exported review log (JSONL)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    uuid: str = Field(min_length=8)
    target: str = Field(min_length=3)
    reviewer: str = Field(min_length=1)
    action: Action
    value: str | None = None
    rationale: str = ""
    reason: str | None = None
    created_at: str
    supersedes: str | None = None


def judgment_target(suite: str, report: str, run: str, kind: str, subject: str) -> str:
    return f"j:{suite}/{report}/{run}/{kind}/{subject}"


def report_target(suite: str, report: str) -> str:
    return f"r:{suite}/{report}"
