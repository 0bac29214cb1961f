"""Handing work out: a plan's subjects or a set of reports, dealt to reviewers with an overlap.

Every (target, reviewer) pair is one ``assign`` event by whoever hands the work out, all in one
transaction. A target that already went to someone is left alone, so handing out the same plan
twice changes nothing, and a second batch can hand out what the first did not cover (or what
was taken back from everyone it went to: :mod:`store.assignments.take_back`).
"""

from __future__ import annotations

import sqlite3
import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from reviewer.assignment import Assignment, AssignmentError, deal
from store.assignments.holding import held_targets
from store.reviewlog.events import ReviewLog
from store.sqlite.tx import transaction


@dataclass(frozen=True, slots=True)
class Target:
    """A subject or a report, by its portable target, with its report here."""

    target: str
    report_id: int


@dataclass(slots=True)
class HandedOut:
    batch: str
    targets: int
    overlap: int
    """Targets that went to two or more reviewers."""
    skipped: int
    """Targets left alone: already assigned to someone."""
    per_reviewer: dict[str, int] = field(default_factory=dict)


def plan_targets(conn: sqlite3.Connection, plan: str) -> list[Target]:
    """A plan's subjects in the plan's order."""
    row = conn.execute("SELECT id FROM plan WHERE name = ?", (plan,)).fetchone()
    if row is None:
        raise AssignmentError(f"no plan named {plan!r} (see `gavel plan list`)")
    return [
        Target(str(target), int(report_id))
        for target, report_id in conn.execute(
            """SELECT s.target, s.report_id FROM plan_draw d JOIN subject s ON s.id = d.subject_id
               WHERE d.plan_id = ? GROUP BY s.id ORDER BY min(d.position)""",
            (int(row[0]),),
        )
    ]


def report_targets(conn: sqlite3.Connection, report_ids: Sequence[int]) -> list[Target]:
    """Whole reports (every verdict in them), in the order given."""
    found = {
        int(rid): str(target)
        for rid, target in conn.execute(
            """SELECT r.id, 'r:' || s.ext_id || '/' || r.ext_id FROM report r
               JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id"""
        )
    }
    return [Target(found[rid], rid) for rid in report_ids if rid in found]


def hand_out(
    conn: sqlite3.Connection,
    log: ReviewLog,
    targets: Sequence[Target],
    reviewers: Sequence[str],
    overlap: float,
    k: int = 2,
    seed: int = 0,
) -> HandedOut:
    """Deal ``targets`` not yet assigned to ``reviewers`` and record it, as ``log``'s
    reviewer, in one transaction."""
    batch = str(uuidlib.uuid4())
    with transaction(conn):
        taken = held_targets(conn)
        fresh = [t for t in targets if t.target not in taken]
        dealt = deal([t.target for t in fresh], reviewers, overlap, k, seed)
        result = HandedOut(batch, len(dealt), 0, len(targets) - len(fresh))
        result.per_reviewer = dict.fromkeys(reviewers, 0)
        for item in fresh:
            names = dealt.get(item.target, ())
            if len(names) > 1:
                result.overlap += 1
            for name in names:
                log.assign(
                    item.target, Assignment(name, batch, len(names)).encode(), item.report_id
                )
                result.per_reviewer[name] += 1
    return result
