"""The review vocabulary: actions and the judge-error taxonomy (no dependencies, cheap to import).

Kept apart from the pydantic event model so the workstation can draw its first screen without
importing pydantic.
"""

from __future__ import annotations

from typing import Literal

Action = Literal[
    "confirm",
    "override",
    "adjudicate",
    "flag",
    "rate",
    "propose",
    "accept",
    "reject",
    "undo",
    "redo",
]
DECISION_ACTIONS: frozenset[str] = frozenset({"confirm", "override", "adjudicate"})
UNDOABLE_ACTIONS: frozenset[str] = frozenset({"confirm", "override", "adjudicate", "flag", "rate"})

REASON_CODES: dict[str, str] = {
    "misread-rubric": "the judge misread the rubric",
    "unsupported-judged-supported": "unsupported, but judged supported",
    "supported-judged-unsupported": "supported, but judged unsupported",
    "partial-support": "the source supports the claim only in part",
    "source-unreachable": "the source is unreachable or has changed",
    "evidence-not-in-source": "the quoted evidence is not in the source",
    "claim-misextracted": "the claim was mis-extracted from the report",
    "other": "other (see the rationale)",
}


def rationale_required(
    require_rationale: bool, value: str, judge: str | None, *, blind: bool = False
) -> bool:
    """Whether a decision needs a rationale before it is stored: the one policy of the
    workstation and of ``gavel decide`` (config ``require_rationale``, on by default).

    An override (a value other than the judge's) needs one, a confirmation does not; in blind
    mode every decision does, since whether it overrides would reveal the hidden verdict.
    """
    return require_rationale and (blind or value != judge)


RATIONALE_POLICY = (
    "an override needs a rationale (require_rationale is on in the config file; "
    "set require_rationale = false to record overrides without one)"
)
"""What the workstation and the command line say when the policy refuses a decision."""
