"""Taking work back from a reviewer, and moving it to others.

Only what the reviewer has not decided moves: a decision is ground truth about its subject, and
the assignment that asked for it stays with it. What moves is released by ``unassign`` events
(:mod:`store.assignments.holding`) naming the assignments they end, and, when it goes to other
reviewers, handed to them by ``assign`` events with the same ``k``: a subject on the overlap
stays on it. A receiver never gets a subject they already hold (as the other reviewer of an
overlap subject, say), which would make one reviewer stand for two; the subject goes to another
receiver, or stays where it was when none can take it. Everything is written in one
transaction, signed by whoever moves the work, like handing it out.
"""

from __future__ import annotations

import sqlite3
import uuid as uuidlib
from collections import defaultdict
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from reviewer.assignment import Assignment, AssignmentError, Release, check_reviewer_name
from store.assignments.holding import Held, held_events
from store.assignments.progress import Assigned, assignments, decided_by
from store.reviewlog.events import ReviewLog
from store.sqlite.tx import transaction


@dataclass(frozen=True, slots=True)
class Scope:
    """Which of a reviewer's work to move: a plan's subjects, some reports, or (both None)
    all of it."""

    subjects: frozenset[str] | None = None
    reports: frozenset[int] | None = None

    def covers(self, item: Assigned) -> bool:
        return (self.subjects is None or item.target in self.subjects) and (
            self.reports is None or item.report_id in self.reports
        )


@dataclass(slots=True)
class Moved:
    batch: str
    giver: str
    moved: int = 0
    """Subjects the giver no longer holds (released, or handed to a receiver)."""
    decided: int = 0
    """Subjects in scope the giver decided: they stay theirs."""
    stuck: int = 0
    """Subjects no receiver could take (each already held them): they stay with the giver."""
    per_reviewer: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Group:
    """The giver's assignments of one target, and every subject they hold through them."""

    target: str
    report_id: int
    uuids: tuple[str, ...]
    k: int
    subjects: frozenset[str]
    whole: bool
    """Whether the giver still holds the target whole: no subject of a report was taken back
    from them already (it may be someone else's now)."""


def take_back(
    conn: sqlite3.Connection,
    log: ReviewLog,
    giver: str,
    receivers: Sequence[str] = (),
    scope: Scope | None = None,
) -> Moved:
    """Release ``giver``'s undecided assignments in ``scope``, handing each to the least
    loaded of ``receivers`` who does not hold it yet (none named: released to nobody)."""
    giver = check_reviewer_name(giver)
    names = _receivers(giver, receivers)
    scope = scope or Scope()
    moved = Moved(str(uuidlib.uuid4()), giver, per_reviewer=dict.fromkeys(names, 0))
    with transaction(conn):
        held = assignments(conn, giver)
        decided = {target for target, _ in decided_by(conn, giver)}
        in_scope = [a for a in held if scope.covers(a)]
        moving = {a.target: a for a in in_scope if a.target not in decided}
        moved.decided = len(in_scope) - len(moving)
        if not moving:
            return moved
        groups = _groups(conn, held_events(conn, giver), held)
        if names:
            leaving = _hand_over(conn, log, groups, moving, names, moved)
        else:
            leaving = set(moving)
        _release(log, groups, leaving, moved)
        moved.moved = len(leaving)
    return moved


def _receivers(giver: str, receivers: Sequence[str]) -> list[str]:
    names = [check_reviewer_name(name) for name in receivers]
    if giver in names:
        raise AssignmentError(f"{giver} cannot take over their own work: name someone else")
    if len(set(names)) != len(names):
        raise AssignmentError("a reviewer is named twice")
    return names


def _groups(conn: sqlite3.Connection, events: list[Held], held: list[Assigned]) -> list[_Group]:
    """The giver's assignments by target, each with every subject the giver holds through
    it: a subject's own assignment, and its report's unless that released the subject."""
    report_of = _report_targets(conn, {a.report_id for a in held})
    by_target: dict[str, list[Held]] = defaultdict(list)
    for event in events:
        by_target[event.target].append(event)
    covered: dict[str, set[str]] = defaultdict(set)
    report_ids: dict[str, int] = {}
    for item in held:
        for target in (item.target, report_of.get(item.report_id, "")):
            if any(item.target not in e.released for e in by_target.get(target, ())):
                covered[target].add(item.target)
                report_ids[target] = item.report_id
    return [
        _Group(
            target,
            report_ids[target],
            tuple(sorted(e.uuid for e in by_target[target])),
            max(e.k for e in by_target[target]),
            frozenset(subjects),
            not frozenset.intersection(*(e.released for e in by_target[target])),
        )
        for target, subjects in sorted(covered.items())
    ]


def _report_targets(conn: sqlite3.Connection, report_ids: set[int]) -> dict[int, str]:
    ids = ",".join(str(int(r)) for r in report_ids)
    return {
        int(rid): str(target)
        for rid, target in conn.execute(
            f"""SELECT r.id, 'r:' || s.ext_id || '/' || r.ext_id FROM report r
                JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id
                WHERE r.id IN ({ids})"""
        )
    }


def _hand_over(
    conn: sqlite3.Connection,
    log: ReviewLog,
    groups: list[_Group],
    moving: dict[str, Assigned],
    names: list[str],
    moved: Moved,
) -> set[str]:
    """Hand the moving subjects to receivers, each to whoever has the least open work; the
    subjects handed over."""
    receiving = _Receiving(names, {}, {})
    for name in names:
        theirs = {a.target for a in assignments(conn, name)}
        receiving.holds[name] = theirs
        receiving.load[name] = len(theirs - {t for t, _ in decided_by(conn, name)})
    handed = _hand_over_reports(log, groups, moving, receiving, moved)
    return handed | _hand_over_subjects(log, groups, moving, handed, receiving, moved)


@dataclass(slots=True)
class _Receiving:
    """The receivers, what each holds, and how much of it each has still to decide."""

    names: list[str]
    holds: dict[str, set[str]]
    load: dict[str, int] = field(default_factory=dict)

    def least_loaded(self, subjects: AbstractSet[str]) -> str | None:
        """The receiver with the least open work who holds none of ``subjects``."""
        free = [name for name in self.names if not self.holds[name] & subjects]
        order = self.names.index
        return min(free, key=lambda name: (self.load.get(name, 0), order(name))) if free else None

    def take(self, name: str, subjects: AbstractSet[str], moved: Moved) -> None:
        self.load[name] = self.load.get(name, 0) + len(subjects)
        self.holds[name] |= subjects
        moved.per_reviewer[name] += len(subjects)


def _hand_over_reports(
    log: ReviewLog,
    groups: list[_Group],
    moving: dict[str, Assigned],
    receiving: _Receiving,
    moved: Moved,
) -> set[str]:
    """Reports handed whole: all the giver holds of it moves and one receiver holds none of
    it (subjects that appear in it later then follow it)."""
    handed: set[str] = set()
    for group in groups:
        if not group.whole or not group.target.startswith("r:"):
            continue
        if not group.subjects <= moving.keys():
            continue
        name = receiving.least_loaded(group.subjects)
        if name is None:
            continue
        log.assign(group.target, Assignment(name, moved.batch, group.k).encode(), group.report_id)
        receiving.take(name, group.subjects, moved)
        handed |= group.subjects
    return handed


def _hand_over_subjects(
    log: ReviewLog,
    groups: list[_Group],
    moving: dict[str, Assigned],
    handed: set[str],
    receiving: _Receiving,
    moved: Moved,
) -> set[str]:
    """Each other moving subject on its own, with the largest k the giver had it with; one
    every receiver holds already stays with the giver."""
    given: set[str] = set()
    for target, item in sorted(moving.items()):
        if target in handed:
            continue
        name = receiving.least_loaded({target})
        if name is None:
            moved.stuck += 1
            continue
        k = max(g.k for g in groups if target in g.subjects)
        log.assign(target, Assignment(name, moved.batch, k).encode(), item.report_id)
        receiving.take(name, {target}, moved)
        given.add(target)
    return given


def _release(log: ReviewLog, groups: list[_Group], leaving: set[str], moved: Moved) -> None:
    """One ``unassign`` per target: a whole assignment when all it holds leaves, else each
    leaving subject of it on its own (the rest stays the giver's)."""
    ends: dict[str, set[str]] = defaultdict(set)
    report_ids: dict[str, int] = {}
    for group in groups:
        going = group.subjects & leaving
        for target in [group.target] if going == group.subjects else sorted(going):
            ends[target].update(group.uuids)
            report_ids[target] = group.report_id
    for target, uuids in sorted(ends.items()):
        release = Release(moved.giver, moved.batch, tuple(sorted(uuids)))
        log.unassign(target, release.encode(), report_ids[target])
