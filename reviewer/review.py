"""The human layer's vocabulary: review actions, the judge-error taxonomy, portable events.

Events are the unit of the append-only review log. They name what they are about by a portable
target built from the bundle's own ids (``s:<suite>/<report>/<kind>/<subject>`` for a subject)
rather than a database id, so a log exported from one database merges into another that
imported the same bundle — whichever judge runs either of them holds.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from reviewer.actions import DECISION_ACTIONS as DECISION_ACTIONS
from reviewer.actions import REASON_CODES as REASON_CODES
from reviewer.actions import UNDOABLE_ACTIONS as UNDOABLE_ACTIONS
from reviewer.actions import Action
from reviewer.textsafety import hidden_characters


class ReviewEvent(BaseModel):
    """One line of an exported review log (JSONL)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    uuid: str = Field(min_length=8, max_length=64)
    target: str = Field(min_length=3)
    reviewer: str = Field(min_length=1, max_length=200)
    action: Action
    value: str | None = None
    rationale: str = ""
    reason: str | None = None
    created_at: str
    supersedes: str | None = None
    run: str | None = None
    """The judge run whose verdict the reviewer had on screen (provenance, not the subject)."""
    key: str | None = None
    """The author's Ed25519 public key (base64); None for events from before signing."""
    sig: str | None = None
    """The author's signature over the event (see :mod:`reviewer.identity`)."""

    @field_validator("reviewer")
    @classmethod
    def _a_name(cls, value: str) -> str:
        # A name is read by people: characters that hide or reorder text would let one name
        # pass for another ("ana" + U+200B) or act on the terminal it is shown on.
        hidden = hidden_characters(value)
        if hidden:
            raise ValueError(
                f"a reviewer name with hidden or control characters ({', '.join(hidden)})"
            )
        return value

    @field_validator("created_at")
    @classmethod
    def _a_time(cls, value: str) -> str:
        try:
            stamp = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO 8601 time") from None
        if stamp.tzinfo is None:
            raise ValueError(f"{value!r} has no time zone (events are stamped in UTC)")
        return value


def subject_target(suite: str, report: str, kind: str, subject: str) -> str:
    return f"s:{suite}/{report}/{kind}/{subject}"


def report_target(suite: str, report: str) -> str:
    return f"r:{suite}/{report}"
