"""What is assigned to whom, and how far each reviewer and the team got.

Assignments name subjects or whole reports; everything here works on subjects (a report's are
its subjects with a verdict in force). A pair (subject, reviewer) is *done* when that reviewer
has a decision on the subject that still counts, whatever anyone else decided: on the overlap
each reviewer's own decision is what is asked for.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field

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


@dataclass(slots=True)
class _Hold:
    """One reviewer's hold on one report: all its subjects in force but ``excluded`` when
    ``whole`` (some assignment named the report), plus the subjects named one by one."""

    whole: bool = False
    excluded: set[int] | None = None
    explicit: set[int] = field(default_factory=set)

    def has(self, sid: int) -> bool:
        return (self.whole and sid not in (self.excluded or ())) or sid in self.explicit

    def count(self, in_force: int) -> int:
        if self.whole:
            return in_force - len(self.excluded or ())
        return len(self.explicit)


@dataclass(slots=True)
class _Holdings:
    """Who holds what, per report, without a row per subject: held events are few, and a
    report's assignment is its count of subjects in force less the few taken back."""

    holds: dict[int, dict[str, _Hold]]
    in_force: dict[int, int]

    def holders(self, sid: int, rid: int) -> list[str]:
        return [name for name, hold in self.holds.get(rid, {}).items() if hold.has(sid)]

    def pairs(self, rid: int) -> dict[str, int]:
        return {name: hold.count(self.in_force[rid]) for name, hold in self.holds[rid].items()}

    def special(self, rid: int) -> set[int]:
        """A report's subjects some holder holds differently from the whole report."""
        found: set[int] = set()
        for hold in self.holds[rid].values():
            found |= hold.excluded or set()
            found |= hold.explicit
        return found

    def overlap_count(self, rid: int) -> int:
        special = self.special(rid)
        whole = sum(hold.whole for hold in self.holds[rid].values())
        rest = self.in_force[rid] - len(special) if whole > 1 else 0
        return rest + sum(len(self.holders(sid, rid)) > 1 for sid in special)


def _holdings(conn: sqlite3.Connection, reviewer: str | None = None) -> _Holdings:
    return _holdings_of(conn, held_events(conn, reviewer))


def _holdings_of(conn: sqlite3.Connection, events: list[Held]) -> _Holdings:
    reports = _report_ids(conn) if any(e.target.startswith("r:") for e in events) else {}
    named = {e.target for e in events} | {t for e in events for t in e.released}
    subjects = _subjects_in_force(conn, named)
    holds: dict[int, dict[str, _Hold]] = defaultdict(dict)
    for event in events:
        if event.target in subjects:
            sid, rid = subjects[event.target]
            holds[rid].setdefault(event.to, _Hold()).explicit.add(sid)
            continue
        rid_or_none = reports.get(event.target)
        if rid_or_none is None:
            continue
        hold = holds[rid_or_none].setdefault(event.to, _Hold())
        hold.whole = True
        gone = {
            subjects[t][0] for t in event.released if subjects.get(t, (0, -1))[1] == rid_or_none
        }
        hold.excluded = gone if hold.excluded is None else hold.excluded & gone
    for by_name in holds.values():
        for hold in by_name.values():
            if hold.excluded:
                hold.excluded -= hold.explicit
    return _Holdings(dict(holds), _in_force_counts(conn, list(holds)))


def _report_ids(conn: sqlite3.Connection) -> dict[str, int]:
    return {
        str(target): int(rid)
        for target, rid in conn.execute(
            """SELECT 'r:' || su.ext_id || '/' || r.ext_id, r.id FROM report r
               JOIN system y ON y.id = r.system_id JOIN suite su ON su.id = y.suite_id"""
        )
    }


def _subjects_in_force(conn: sqlite3.Connection, targets: set[str]) -> dict[str, tuple[int, int]]:
    """Subject target → (subject id, report id), of those named that have a verdict in force."""
    if not targets:
        return {}
    return {
        str(target): (int(sid), int(rid))
        for target, sid, rid in conn.execute(
            f"""SELECT s.target, s.id, s.report_id FROM subject s
                WHERE s.target IN (SELECT value FROM json_each(?)) AND {_IN_FORCE}""",
            (json.dumps(sorted(targets)),),
        )
    }


def _in_force_counts(conn: sqlite3.Connection, report_ids: list[int]) -> dict[int, int]:
    counts = dict.fromkeys(report_ids, 0)
    if report_ids:
        for rid, n in conn.execute(
            f"""SELECT s.report_id, count(*) FROM subject s
                WHERE s.report_id IN (SELECT value FROM json_each(?)) AND {_IN_FORCE}
                GROUP BY s.report_id""",
            (json.dumps(report_ids),),
        ):
            counts[int(rid)] = int(n)
    return counts


def _subject_ids(conn: sqlite3.Connection, report_ids: list[int]) -> dict[int, list[int]]:
    """The subjects in force of the reports named, for the callers that need them one by one."""
    found: dict[int, list[int]] = defaultdict(list)
    if report_ids:
        for sid, rid in conn.execute(
            f"""SELECT s.id, s.report_id FROM subject s
                WHERE s.report_id IN (SELECT value FROM json_each(?)) AND {_IN_FORCE}""",
            (json.dumps(report_ids),),
        ):
            found[int(rid)].append(int(sid))
    return found


def _report_of(conn: sqlite3.Connection, subject_ids: list[int]) -> dict[int, int]:
    """Subject id → its report id, of the subjects named that are in force."""
    if not subject_ids:
        return {}
    return {
        int(sid): int(rid)
        for sid, rid in conn.execute(
            f"""SELECT s.id, s.report_id FROM subject s
                WHERE s.id IN (SELECT value FROM json_each(?)) AND {_IN_FORCE}""",
            (json.dumps(subject_ids),),
        )
    }


def _decided_subjects(
    conn: sqlite3.Connection, reviewer: str | None = None
) -> dict[tuple[int, int], set[str]]:
    """(subject id, report id) → who decided it, of the subjects in force."""
    decided = decided_by(conn, reviewer)
    subjects = _subjects_in_force(conn, {target for target, _ in decided})
    found: dict[tuple[int, int], set[str]] = defaultdict(set)
    for target, name in decided:
        if target in subjects:
            found[subjects[target]].add(name)
    return found


def my_work(conn: sqlite3.Connection, reviewer: str) -> dict[int, Work]:
    """Per report, ``reviewer``'s assigned subjects and how many of them they decided."""
    held = _holdings(conn, reviewer)
    if not held.holds:
        return {}
    done: dict[int, int] = defaultdict(int)
    for (sid, rid), _names in _decided_subjects(conn, reviewer).items():
        done[rid] += reviewer in held.holders(sid, rid)
    found = {rid: Work(held.pairs(rid).get(reviewer, 0), done[rid]) for rid in held.holds}
    return {rid: work for rid, work in found.items() if work.assigned}


@dataclass(frozen=True, slots=True)
class ReviewerProgress:
    assigned: int
    decided: int
    overlap: int
    """Of the assigned subjects, those handed out to more than one reviewer (k above one)."""


def reviewer_progress(conn: sqlite3.Connection) -> dict[str, ReviewerProgress]:
    """Each reviewer's assigned subjects, how many they decided, and how many of them were
    handed out on the overlap, as ``gavel assign`` shows them."""
    events = held_events(conn)
    held = _holdings_of(conn, events)
    shared = _holdings_of(conn, [e for e in events if e.k > 1])
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for rid in held.holds:
        for name, n in held.pairs(rid).items():
            counts[name][0] += n
    for rid in shared.holds:
        for name, n in shared.pairs(rid).items():
            counts[name][2] += n
    for (sid, rid), names in _decided_subjects(conn).items():
        for name in held.holders(sid, rid):
            counts[name][1] += name in names
    return {name: ReviewerProgress(*c) for name, c in sorted(counts.items()) if c[0]}


def my_subjects(conn: sqlite3.Connection, reviewer: str) -> set[int]:
    """The subjects assigned to ``reviewer`` (plan mode serves them first)."""
    held = _holdings(conn, reviewer)
    whole = [rid for rid, by_name in held.holds.items() if by_name[reviewer].whole]
    found = {
        sid
        for rid, sids in _subject_ids(conn, whole).items()
        for sid in sids
        if held.holds[rid][reviewer].has(sid)
    }
    return found | {sid for by_name in held.holds.values() for sid in by_name[reviewer].explicit}


def overlap_reviewers(conn: sqlite3.Connection) -> dict[int, tuple[str, ...]]:
    """Subjects on the overlap (assigned to two or more reviewers) and to whom."""
    held = _holdings(conn)
    shared = [
        rid for rid, by_name in held.holds.items() if sum(h.whole for h in by_name.values()) > 1
    ]
    found: dict[int, tuple[str, ...]] = {}
    for rid, sids in _subject_ids(conn, shared).items():
        whole = tuple(sorted(name for name, h in held.holds[rid].items() if h.whole))
        special = held.special(rid)
        found.update((sid, whole) for sid in sids if sid not in special)
    for rid in held.holds:
        for sid in held.special(rid):
            names = held.holders(sid, rid)
            if len(names) > 1:
                found[sid] = tuple(sorted(names))
    return found


def team_progress(conn: sqlite3.Connection) -> TeamProgress:
    held = _holdings(conn)
    pairs = sum(sum(held.pairs(rid).values()) for rid in held.holds)
    if not pairs:
        return TeamProgress(0, 0, 0, 0, 0, 0)
    statuses = {
        int(sid): str(status)
        for sid, status in conn.execute(
            "SELECT subject_id, status FROM decision WHERE status IN ('conflict', 'adjudicated')"
        )
    }
    done = complete = disagreements = 0
    for (sid, rid), names in _decided_subjects(conn).items():
        holders = held.holders(sid, rid)
        done += sum(name in names for name in holders)
        if len(holders) > 1 and all(name in names for name in holders):
            complete += 1
            disagreements += statuses.get(sid) == "conflict"
    adjudicated = [sid for sid, status in statuses.items() if status == "adjudicated"]
    return TeamProgress(
        pairs,
        done,
        sum(held.overlap_count(rid) for rid in held.holds),
        complete,
        disagreements,
        sum(len(held.holders(sid, rid)) > 1 for sid, rid in _report_of(conn, adjudicated).items()),
    )


def my_status(conn: sqlite3.Connection, reviewer: str) -> tuple[set[int], set[int]]:
    """The subjects assigned to ``reviewer``, and those of them they decided themselves: on
    the overlap, a subject someone else decided is still theirs to decide."""
    held = _holdings(conn, reviewer)
    decided = {
        sid
        for (sid, rid), _names in _decided_subjects(conn, reviewer).items()
        if reviewer in held.holders(sid, rid)
    }
    return my_subjects(conn, reviewer) if held.holds else set(), decided


def blind_subjects(
    conn: sqlite3.Connection, reviewer: str, report_id: int | None = None
) -> set[int]:
    """Overlap subjects ``reviewer`` has yet to decide: until they do, the other reviewers'
    values stay hidden from them, so the two reviews stay independent
    (:mod:`store.assignments.blind` says what else that hides)."""
    found = blind_per_report(conn, reviewer, None if report_id is None else [report_id])
    return {sid for subjects in found.values() for sid in subjects}
