"""The append-only review log, undo/redo as events, and effective-verdict resolution.

Every decision is an event; undo and redo are events too (they name the event they reverse in
``supersedes``), so the undo history survives restarts and merges. Three small derived tables
make reads cheap and are kept in step inside the same transaction as the event:

* ``event_live``   — whether an undoable event currently counts (undo clears it, redo restores);
* ``decision``     — per judgment, the human verdict and its provenance (single, unanimous,
                     adjudicated, conflict);
* ``flag`` and ``report_rating``.

:func:`rebuild_state` recomputes all three from the log alone; tests check that the incremental
path always agrees with it.
"""

from __future__ import annotations

import json
import sqlite3
import uuid as uuidlib
from collections.abc import Iterable
from dataclasses import dataclass

from reviewer.actions import DECISION_ACTIONS, REASON_CODES, UNDOABLE_ACTIONS
from reviewer.framework import Rating
from reviewer.registry import frameworks, get_kind
from reviewer.scales import ScaleError
from store.tx import now_iso, transaction


class ReviewError(ValueError):
    """A decision that cannot be recorded as asked (unknown judgment, value off the scale)."""


@dataclass(frozen=True, slots=True)
class Recorded:
    """What an event changed: the caller recomputes scores for exactly these reports."""

    uuid: str
    action: str
    judgment_id: int | None
    report_id: int | None
    value: str | None
    reverted: str | None = None
    """For undo/redo: the action of the event that was undone or redone."""


@dataclass(frozen=True, slots=True)
class JudgmentRef:
    id: int
    report_id: int
    kind: str
    value: str | None
    target: str


def judgment_ref(conn: sqlite3.Connection, judgment_id: int) -> JudgmentRef:
    row = conn.execute(
        """SELECT j.id, j.report_id, j.kind, j.value,
                  'j:' || s.ext_id || '/' || r.ext_id || '/' || jr.ext_id || '/' || j.kind
                  || '/' || j.subject
           FROM judgment j
           JOIN report r ON r.id = j.report_id
           JOIN judge_run jr ON jr.id = j.run_id
           JOIN suite s ON s.id = jr.suite_id
           WHERE j.id = ?""",
        (judgment_id,),
    ).fetchone()
    if row is None:
        raise ReviewError(f"no judgment with id {judgment_id}")
    return JudgmentRef(int(row[0]), int(row[1]), str(row[2]), row[3], str(row[4]))


def report_target(conn: sqlite3.Connection, report_id: int) -> str:
    row = conn.execute(
        """SELECT 'r:' || s.ext_id || '/' || r.ext_id FROM report r
           JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id
           WHERE r.id = ?""",
        (report_id,),
    ).fetchone()
    if row is None:
        raise ReviewError(f"no report with id {report_id}")
    return str(row[0])


def report_rating(conn: sqlite3.Connection, report_id: int) -> Rating | None:
    """The overall rating a report's frameworks define (the first that has one)."""
    row = conn.execute(
        """SELECT s.frameworks FROM report r JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id WHERE r.id = ?""", (report_id,)).fetchone()
    registry = frameworks()
    for name in json.loads(row[0]) if row else []:
        fw = registry.get(name)
        if fw is not None and fw.rating is not None:
            return fw.rating
    return None


class ReviewLog:
    """Writes events for one reviewer on one connection (its owner's)."""

    def __init__(self, conn: sqlite3.Connection, reviewer: str) -> None:
        if not reviewer.strip():
            raise ReviewError("a reviewer name is required")
        self.conn = conn
        self.reviewer = reviewer.strip()

    # -- decisions -------------------------------------------------------------------------

    def decide(
        self,
        judgment_id: int,
        value: object,
        rationale: str = "",
        reason: str | None = None,
        *,
        adjudicate: bool = False,
    ) -> Recorded:
        """Record a human verdict; equal to the judge's value it is a confirmation."""
        ref = judgment_ref(self.conn, judgment_id)
        kind = get_kind(ref.kind)
        if kind is None:
            raise ReviewError(f"judgment {judgment_id} has unknown kind {ref.kind}")
        try:
            code = kind.scale.normalize(value)
        except ScaleError as exc:
            raise ReviewError(str(exc)) from exc
        if reason is not None and reason not in REASON_CODES:
            raise ReviewError(f"unknown reason code {reason!r} (known: {', '.join(REASON_CODES)})")
        if adjudicate:
            action = "adjudicate"
        else:
            action = "confirm" if code == ref.value else "override"
        return self._write(ref.target, action, code, rationale, reason, judgment_id, ref.report_id)

    def confirm(self, judgment_id: int, rationale: str = "") -> Recorded:
        ref = judgment_ref(self.conn, judgment_id)
        if ref.value is None:
            raise ReviewError(
                f"judgment {judgment_id} has no judge value to confirm (the judge failed); "
                "decide a value instead"
            )
        return self._write(ref.target, "confirm", ref.value, rationale, None, judgment_id,
                           ref.report_id)

    def flag(self, judgment_id: int, on: bool = True, rationale: str = "") -> Recorded:
        ref = judgment_ref(self.conn, judgment_id)
        return self._write(ref.target, "flag", "on" if on else "off", rationale, None,
                           judgment_id, ref.report_id)

    def rate(self, report_id: int, value: object, rationale: str = "") -> Recorded:
        """An overall rating of a whole report on its benchmark's scale (DailyReport's 1–4
        user-preference levels); refused where the report's benchmarks define none."""
        target = report_target(self.conn, report_id)
        rating = report_rating(self.conn, report_id)
        if rating is None:
            raise ReviewError(f"report {report_id}'s benchmarks have no overall rating")
        try:
            code = rating.scale.normalize(value)
        except ScaleError as exc:
            raise ReviewError(str(exc)) from exc
        return self._write(target, "rate", code, rationale, None, None, report_id)

    # -- undo / redo -----------------------------------------------------------------------

    def undo(self) -> Recorded | None:
        """Reverse this reviewer's latest decision that still counts; None if there is none."""
        row = self.conn.execute(
            f"""SELECT e.uuid, e.target, e.judgment_id, e.report_id, e.action
                FROM review_event e JOIN event_live l ON l.uuid = e.uuid
                WHERE e.reviewer = ? AND l.live = 1
                  AND e.action IN ({_in(UNDOABLE_ACTIONS)})
                ORDER BY e.seq DESC LIMIT 1""",
            (self.reviewer,),
        ).fetchone()
        if row is None:
            return None
        recorded = self._write(row[1], "undo", None, "", None, row[2], row[3], supersedes=row[0])
        return _with_reverted(recorded, str(row[4]))

    def redo(self) -> Recorded | None:
        """Re-apply the most recent undo, unless a new decision was made since."""
        last_decision = self.conn.execute(
            f"""SELECT coalesce(max(seq), 0) FROM review_event
                WHERE reviewer = ? AND action IN ({_in(UNDOABLE_ACTIONS)})""",
            (self.reviewer,),
        ).fetchone()[0]
        row = self.conn.execute(
            """SELECT u.uuid, u.target, u.judgment_id, u.report_id, d.action
               FROM review_event u JOIN review_event d ON d.uuid = u.supersedes
               WHERE u.reviewer = ? AND u.action = 'undo' AND u.seq > ?
                 AND NOT EXISTS (SELECT 1 FROM review_event r
                                 WHERE r.action = 'redo' AND r.supersedes = u.uuid)
               ORDER BY u.seq DESC LIMIT 1""",
            (self.reviewer, last_decision),
        ).fetchone()
        if row is None:
            return None
        recorded = self._write(row[1], "redo", None, "", None, row[2], row[3], supersedes=row[0])
        return _with_reverted(recorded, str(row[4]))

    # -- writing ---------------------------------------------------------------------------

    def _write(
        self,
        target: str,
        action: str,
        value: str | None,
        rationale: str,
        reason: str | None,
        judgment_id: int | None,
        report_id: int | None,
        *,
        supersedes: str | None = None,
    ) -> Recorded:
        event_uuid = str(uuidlib.uuid4())
        with transaction(self.conn):
            if supersedes is None and action in DECISION_ACTIONS and judgment_id is not None:
                previous = self.conn.execute(
                    f"""SELECT e.uuid FROM review_event e JOIN event_live l ON l.uuid = e.uuid
                        WHERE e.judgment_id = ? AND e.reviewer = ? AND l.live = 1
                          AND e.action IN ({_in(DECISION_ACTIONS)})
                        ORDER BY e.seq DESC LIMIT 1""",
                    (judgment_id, self.reviewer),
                ).fetchone()
                supersedes = previous[0] if previous else None
            self.conn.execute(
                """INSERT INTO review_event
                   (uuid, target, judgment_id, report_id, reviewer, action, value, rationale,
                    reason, created_at, supersedes)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?)""",
                (event_uuid, target, judgment_id, report_id, self.reviewer, action, value,
                 rationale, reason, now_iso(), supersedes),
            )
            apply_event(self.conn, event_uuid, action, supersedes)
            refresh_subject(self.conn, judgment_id, report_id)
        return Recorded(event_uuid, action, judgment_id, report_id, value)


def _with_reverted(recorded: Recorded, action: str) -> Recorded:
    return Recorded(recorded.uuid, recorded.action, recorded.judgment_id, recorded.report_id,
                    recorded.value, action)


def _in(values: Iterable[str]) -> str:
    return ",".join(f"'{v}'" for v in sorted(values))


def apply_event(conn: sqlite3.Connection, event_uuid: str, action: str,
                supersedes: str | None) -> None:
    """Update ``event_live`` for one new event (its effect on liveness only)."""
    if action in UNDOABLE_ACTIONS:
        conn.execute("INSERT OR REPLACE INTO event_live VALUES (?, 1)", (event_uuid,))
    elif action == "undo" and supersedes is not None:
        conn.execute("UPDATE event_live SET live = 0 WHERE uuid = ?", (supersedes,))
    elif action == "redo" and supersedes is not None:
        conn.execute(
            """UPDATE event_live SET live = 1
               WHERE uuid = (SELECT supersedes FROM review_event WHERE uuid = ?)""",
            (supersedes,),
        )


def refresh_subject(conn: sqlite3.Connection, judgment_id: int | None,
                    report_id: int | None) -> None:
    if judgment_id is not None:
        refresh_decision(conn, judgment_id)
        refresh_flag(conn, judgment_id)
    elif report_id is not None:
        refresh_ratings(conn, report_id)


def refresh_decision(conn: sqlite3.Connection, judgment_id: int) -> None:
    """Resolve the human verdict of one judgment from its live decision events.

    An adjudication outranks individual reviewers. Otherwise each reviewer's latest decision
    counts; if they differ the judgment is in conflict and keeps its judge value until someone
    adjudicates (never a silent last-write-wins).
    """
    rows = conn.execute(
        f"""SELECT e.uuid, e.reviewer, e.action, e.value
            FROM review_event e JOIN event_live l ON l.uuid = e.uuid
            WHERE e.judgment_id = ? AND l.live = 1 AND e.action IN ({_in(DECISION_ACTIONS)})
            ORDER BY e.created_at, e.seq""",
        (judgment_id,),
    ).fetchall()
    if not rows:
        conn.execute("DELETE FROM decision WHERE judgment_id = ?", (judgment_id,))
        return
    adjudications = [r for r in rows if r[2] == "adjudicate"]
    latest: dict[str, tuple[str, str]] = {}
    for event_uuid, reviewer, action, value in rows:
        if action != "adjudicate":
            latest[reviewer] = (event_uuid, value)
    reviewers = len(latest)
    if adjudications:
        event_uuid, value, status = adjudications[-1][0], adjudications[-1][3], "adjudicated"
        reviewers = len(latest | {adjudications[-1][1]: ("", "")})
    else:
        values = {v for _, v in latest.values()}
        event_uuid = rows[-1][0]
        if len(values) == 1:
            value = values.pop()
            status = "single" if reviewers == 1 else "unanimous"
        else:
            value, status = None, "conflict"
    conn.execute(
        "INSERT OR REPLACE INTO decision VALUES (?,?,?,?,?)",
        (judgment_id, value, status, reviewers, event_uuid),
    )


def refresh_flag(conn: sqlite3.Connection, judgment_id: int) -> None:
    row = conn.execute(
        """SELECT e.uuid, e.value FROM review_event e JOIN event_live l ON l.uuid = e.uuid
           WHERE e.judgment_id = ? AND l.live = 1 AND e.action = 'flag'
           ORDER BY e.created_at DESC, e.seq DESC LIMIT 1""",
        (judgment_id,),
    ).fetchone()
    if row is not None and row[1] == "on":
        conn.execute("INSERT OR REPLACE INTO flag VALUES (?, ?)", (judgment_id, row[0]))
    else:
        conn.execute("DELETE FROM flag WHERE judgment_id = ?", (judgment_id,))


def refresh_ratings(conn: sqlite3.Connection, report_id: int) -> None:
    conn.execute("DELETE FROM report_rating WHERE report_id = ?", (report_id,))
    conn.execute(
        """INSERT INTO report_rating (report_id, reviewer, value, event_uuid)
           SELECT report_id, reviewer, value, uuid FROM (
               SELECT e.report_id, e.reviewer, e.value, e.uuid,
                      row_number() OVER (PARTITION BY e.reviewer
                                         ORDER BY e.created_at DESC, e.seq DESC) AS rn
               FROM review_event e JOIN event_live l ON l.uuid = e.uuid
               WHERE e.report_id = ? AND e.action = 'rate' AND l.live = 1)
           WHERE rn = 1""",
        (report_id,),
    )


def rebuild_state(conn: sqlite3.Connection) -> None:
    """Recompute every derived table of the log from the events alone."""
    with transaction(conn):
        conn.execute("DELETE FROM event_live")
        conn.execute("DELETE FROM decision")
        conn.execute("DELETE FROM flag")
        conn.execute("DELETE FROM report_rating")
        live: dict[str, int] = {}
        undone_by: dict[str, str] = {}
        judgments: set[int] = set()
        reports: set[int] = set()
        for event_uuid, action, supersedes, judgment_id, report_id in conn.execute(
            "SELECT uuid, action, supersedes, judgment_id, report_id FROM review_event "
            "ORDER BY seq"
        ):
            if action in UNDOABLE_ACTIONS:
                live[event_uuid] = 1
            elif action == "undo" and supersedes in live:
                live[supersedes] = 0
                undone_by[event_uuid] = supersedes
            elif action == "redo" and supersedes in undone_by:
                live[undone_by[supersedes]] = 1
            if judgment_id is not None:
                judgments.add(judgment_id)
            elif report_id is not None:
                reports.add(report_id)
        conn.executemany("INSERT INTO event_live VALUES (?, ?)", live.items())
        for judgment_id in judgments:
            refresh_decision(conn, judgment_id)
            refresh_flag(conn, judgment_id)
        for report_id in reports:
            refresh_ratings(conn, report_id)


def effective_value(conn: sqlite3.Connection, judgment_id: int) -> str | None:
    row = conn.execute(
        """SELECT CASE WHEN d.status IS NOT NULL AND d.status != 'conflict' THEN d.value
                       ELSE j.value END
           FROM judgment j LEFT JOIN decision d ON d.judgment_id = j.id WHERE j.id = ?""",
        (judgment_id,),
    ).fetchone()
    return None if row is None else row[0]
