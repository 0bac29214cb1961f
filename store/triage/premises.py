"""Flags whose premise a reviewer's decision changed.

The stored flags are computed from the judges' verdicts only (:mod:`store.triage.suspicion`).
A *contradiction* flag is about two sides: a verdict on a claim's part said against the
verdict on the whole (or the reverse). When a reviewer overrides the other side, the reason as
stored no longer describes what stands ("the claim itself is judged unknown" after the claim
was decided correct). Here each such flag is checked again with the other side as decided: it
either still stands (its reason recomputed) or the decision settled it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reviewer.grading import Entailment, Evidence, Verdict
from reviewer.suspicion import contradictions

RULE = "contradiction"
"""The one shared rule whose premise is another subject's verdict."""


@dataclass(frozen=True, slots=True)
class Side:
    """One verdict of a report as the recheck needs it."""

    subject: int
    kind: str
    claim: str | None
    ref: int | None
    judge: str | None
    decided: str | None
    """The reviewers' value where it overrides the judge's, else None."""


def recheck(
    sides: Sequence[Side], flagged: set[int], entailments: Sequence[Entailment]
) -> dict[int, str | None]:
    """Subject -> its contradiction flag's reason as things stand (None: a decision on the
    other side settled it), for the ``flagged`` subjects whose claim has an overridden
    verdict on another subject; subjects not returned keep their flag as stored."""
    by_claim: dict[str, list[Side]] = defaultdict(list)
    for side in sides:
        if side.claim is not None:
            by_claim[side.claim].append(side)
    out: dict[int, str | None] = {}
    for side in sides:
        if side.subject not in flagged or side.claim is None:
            continue
        group = by_claim[side.claim]
        if not any(o.decided is not None and o.subject != side.subject for o in group):
            continue
        out[side.subject] = _still(side, group, entailments)
    return out


def _still(side: Side, group: Sequence[Side], entailments: Sequence[Entailment]) -> str | None:
    """The subject's contradiction against the claim's other verdicts as decided, if any."""
    verdicts = [
        Verdict(
            i,
            o.subject,
            o.kind,
            o.judge if o.subject == side.subject or o.decided is None else o.decided,
            claim=o.claim,
            ref=o.ref,
        )
        for i, o in enumerate(group)
    ]
    found = [
        f.reason
        for f in contradictions(Evidence("", verdicts=verdicts), entailments)
        if f.subject == side.subject
    ]
    if not found:
        return None
    return " ".join(dict.fromkeys(found)) + " (the other side as a reviewer decided it)"


def entailments_of(frameworks: Sequence[str], registry: Mapping[str, object]) -> list[Entailment]:
    """The entailments the frameworks' gradings declare (every framework of a suite)."""
    out: list[Entailment] = []
    for name in frameworks:
        grading = getattr(registry.get(name), "grading", None)
        if grading is not None:
            out += grading.entailments
    return out
