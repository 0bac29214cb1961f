"""What an adjudication resolved, written into the adjudication event itself.

An adjudication settles a conflict between reviewers. The review log is what travels between
databases, so the record of *what* was adjudicated goes into the event's own text rather than
into a table that a merge would have to rebuild: the adjudicator's rationale is followed by
every side, e.g.::

    The page gives 11 branches, not 12.

    [adjudicated between: ana → incorrect (event 1b4e…: "source says 11"); ben → correct
    (event 9c0d…: "matches the page", reason other)]

The sides are also recoverable from the log (each reviewer's standing decision before the
adjudication); the note makes them readable in any export without that reconstruction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Side:
    """One reviewer's standing decision on a judgment (a side of a conflict)."""

    reviewer: str
    value: str | None
    rationale: str
    reason: str | None
    created_at: str
    event: str


SIDES_MARKER = "[adjudicated between: "


def adjudication_rationale(rationale: str, sides: Sequence[Side]) -> str:
    """The adjudicator's rationale followed by the sides (reviewers in name order, each
    rationale JSON-quoted so that quotes and newlines in it cannot break the note)."""
    if not sides:
        return rationale
    parts = [
        f"{s.reviewer} → {s.value} (event {s.event}: {json.dumps(s.rationale, ensure_ascii=False)}"
        + (f", reason {s.reason}" if s.reason else "")
        + ")"
        for s in sorted(sides, key=lambda s: (s.reviewer, s.event))
    ]
    note = SIDES_MARKER + "; ".join(parts) + "]"
    return f"{rationale}\n\n{note}" if rationale.strip() else note
