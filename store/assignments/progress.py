"""What is assigned to whom, and how far each reviewer and the team got.

Assignments name subjects or whole reports; everything here works on subjects (a report's are
its subjects with a verdict in force). A pair (subject, reviewer) is *done* when that reviewer
has a decision on the subject that still counts, whatever anyone else decided: on the overlap
each reviewer's own decision is what is asked for.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass

from reviewer.actions import DECISION_ACTIONS
from store.assignments.blind import blind_per_report
from store.assignments.holding import Held, held_events


@dataclass(frozen=True, slots=True)
class Assigned:
    subject_id: int
    report_id: int
    target: str
    reviewer: str
    k: int


@dataclass(frozen=True, slots=True)
class Work:
    """One reviewer's assignments in one report."""

    assigned: int
    done: int

    @property
    def open(self) -> int:
        return self.assigned - self.done


@dataclass(frozen=True, slots=True)
class TeamProgress:
    pairs: int
    """(subject, reviewer) assignments."""
    done: int
    overlap: int
    """Subjects assigned to two or more reviewers."""
    overlap_done: int
    """Of those, subjects every assigned reviewer decided."""
    disagreements: int
    """Of those, subjects the reviewers decided differently and nobody adjudicated yet."""
    adjudicated: int

    def line(self) -> str:
        if not self.pairs:
            return ""
        text = f"team {self.done:,}/{self.pairs:,}"
        if self.overlap:
            text += f" · overlap {self.overlap_done:,}/{self.overlap:,}"
            if self.disagreements:
                text += f", {self.disagreements:,} to adjudicate"
        return text


def assignments(conn: sqlite3.Connection, reviewer: str | None = None) -> list[Assigned]:
    """Every assigned (subject, reviewer) pair here (``reviewer``'s alone when given), less
    what was taken back (:mod:`store.assignments.holding`); an assignment of a subject or
    report this database does not have waits, like a decision."""
    events = held_events(conn, reviewer)
    if not events:
        return []
    subjects = {
        str(target): (int(sid), int(rid))
        for sid, rid, target in conn.execute(
            f"SELECT s.id, s.report_id, s.target FROM subject s WHERE {_IN_FORCE}"
        )
    }
    by_report = _report_subjects(conn) if any(e.target.startswith("r:") for e in events) else {}
    return _expanded(events, subjects, by_report)


def _expanded(
    events: list[Held],
    subjects: dict[str, tuple[int, int]],
    by_report: dict[str, list[tuple[str, int, int]]],
) -> list[Assigned]:
    """One pair per (subject, reviewer): a report's assignment is one of each of its
    subjects not taken back; the largest k a subject got counts."""
    found: dict[tuple[int, str], Assigned] = {}
    for event in events:
        target, name, k = event.target, event.to, event.k
        if target in subjects:
            pairs = [(target, *subjects[target])]
        else:
            pairs = by_report.get(target, [])
        for subject, sid, rid in pairs:
            if subject in event.released:
                continue
            old = found.get((sid, name))
            if old is None or old.k < k:
                found[(sid, name)] = Assigned(sid, rid, subject, name, k)
    return list(found.values())


_IN_FORCE = "EXISTS (SELECT 1 FROM judgment j WHERE j.subject_id = s.id AND j.current = 1)"
"""Subjects with a verdict in force: a report's subjects, as its queue row counts them."""


def _report_subjects(conn: sqlite3.Connection) -> dict[str, list[tuple[str, int, int]]]:
    """Each report's target with its subjects (target, subject id, report id)."""
    by_report: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for report_target, target, sid, rid in conn.execute(
        f"""SELECT 'r:' || su.ext_id || '/' || r.ext_id, s.target, s.id, r.id FROM subject s
            JOIN report r ON r.id = s.report_id JOIN system y ON y.id = r.system_id
            JOIN suite su ON su.id = y.suite_id WHERE {_IN_FORCE}"""
    ):
        by_report[str(report_target)].append((str(target), int(sid), int(rid)))
    return by_report


def decided_by(conn: sqlite3.Connection, reviewer: str | None = None) -> set[tuple[str, str]]:
    """(subject target, reviewer name) of every decision that counts (``reviewer``'s alone)."""
    mine = "AND e.reviewer = ?" if reviewer is not None else ""
    params: tuple[str, ...] = (reviewer,) if reviewer is not None else ()
    actions = ",".join(f"'{a}'" for a in sorted(DECISION_ACTIONS - {"adjudicate"}))
    return {
        (str(target), str(name))
        for target, name in conn.execute(
            f"""SELECT DISTINCT e.target, e.reviewer FROM review_event e
                JOIN event_live l ON l.uuid = e.uuid
                WHERE l.live = 1 AND e.action IN ({actions}) {mine}""",
            params,
        )
    }


def my_work(conn: sqlite3.Connection, reviewer: str) -> dict[int, Work]:
    """Per report, ``reviewer``'s assigned subjects and how many of them they decided."""
    assigned = assignments(conn, reviewer)
    if not assigned:
        return {}
    decided = decided_by(conn, reviewer)
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for item in assigned:
        counts[item.report_id][0] += 1
        counts[item.report_id][1] += (item.target, reviewer) in decided
    return {rid: Work(total, done) for rid, (total, done) in counts.items()}


def my_subjects(conn: sqlite3.Connection, reviewer: str) -> set[int]:
    """The subjects assigned to ``reviewer`` (plan mode serves them first)."""
    return {item.subject_id for item in assignments(conn, reviewer)}


def overlap_reviewers(conn: sqlite3.Connection) -> dict[int, tuple[str, ...]]:
    """Subjects on the overlap (assigned to two or more reviewers) and to whom."""
    return _overlap(assignments(conn))


def _overlap(assigned: list[Assigned]) -> dict[int, tuple[str, ...]]:
    who: dict[int, set[str]] = defaultdict(set)
    for item in assigned:
        who[item.subject_id].add(item.reviewer)
    return {sid: tuple(sorted(names)) for sid, names in who.items() if len(names) > 1}


def team_progress(conn: sqlite3.Connection) -> TeamProgress:
    assigned = assignments(conn)
    if not assigned:
        return TeamProgress(0, 0, 0, 0, 0, 0)
    decided = decided_by(conn)
    done = sum((item.target, item.reviewer) in decided for item in assigned)
    overlap = _overlap(assigned)
    targets = {item.subject_id: item.target for item in assigned}
    statuses = dict(
        conn.execute(
            "SELECT subject_id, status FROM decision WHERE status IN ('conflict', 'adjudicated')"
        ).fetchall()
    )
    complete = [
        sid
        for sid, names in overlap.items()
        if all((targets[sid], name) in decided for name in names)
    ]
    return TeamProgress(
        len(assigned),
        done,
        len(overlap),
        len(complete),
        sum(statuses.get(sid) == "conflict" for sid in complete),
        sum(statuses.get(sid) == "adjudicated" for sid in overlap),
    )


def my_status(conn: sqlite3.Connection, reviewer: str) -> tuple[set[int], set[int]]:
    """The subjects assigned to ``reviewer``, and those of them they decided themselves: on
    the overlap, a subject someone else decided is still theirs to decide."""
    assigned = assignments(conn, reviewer)
    decided = decided_by(conn, reviewer)
    return (
        {a.subject_id for a in assigned},
        {a.subject_id for a in assigned if (a.target, reviewer) in decided},
    )


def blind_subjects(
    conn: sqlite3.Connection, reviewer: str, report_id: int | None = None
) -> set[int]:
    """Overlap subjects ``reviewer`` has yet to decide: until they do, the other reviewers'
    values stay hidden from them, so the two reviews stay independent
    (:mod:`store.assignments.blind` says what else that hides)."""
    found = blind_per_report(conn, reviewer, None if report_id is None else [report_id])
    return {sid for subjects in found.values() for sid in subjects}
