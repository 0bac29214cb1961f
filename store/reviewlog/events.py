"""The append-only review log, undo/redo as events, and effective-verdict resolution.

Every decision is an event about a *subject* (what a verdict is about, in every judge run: see
:mod:`store.reviewlog.subjects`); undo and redo are events too (they name the event they reverse in
``supersedes``), so the undo history survives restarts and merges. Each event is signed by its
author's key (:mod:`reviewer.identity`); an *identity* is a name with a key, and an event can
only undo or supersede events of its own identity. Small derived tables make reads cheap and
are kept in step inside the same transaction as the event:

* ``event_live``    — whether an undoable event currently counts (undo clears it, redo restores);
* ``decision``      — per subject, the human verdict and its provenance (single, unanimous,
                      adjudicated, conflict);
* ``flag`` and ``report_rating``.

How a subject's decision is resolved never depends on which database an event was written in
or merged into, nor on clocks between reviewers: each identity's *standing* decision is its
own latest (by its own timestamps, then uuid); an adjudication outranks reviewers; identities
whose standing values differ are a conflict, never a last-write-wins. :func:`rebuild_state`
recomputes all of it from the log alone; tests hold the incremental path equal to it.
"""

from __future__ import annotations

import json
import sqlite3
import uuid as uuidlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache

from reviewer.actions import DECISION_ACTIONS, REASON_CODES, UNDOABLE_ACTIONS
from reviewer.framework import Rating
from reviewer.identity import Identity, label
from reviewer.registry import find_framework, get_kind
from reviewer.scales import ScaleError
from store.sqlite.tx import now_iso, transaction


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
    subject_id: int | None = None
    note: str | None = None
    """Something the reviewer should know: another reviewer decided the subject differently."""


@dataclass(frozen=True, slots=True)
class JudgmentRef:
    id: int
    report_id: int
    kind: str
    value: str | None
    subject_id: int
    target: str
    """The subject's portable target, ``s:<suite>/<report>/<kind>/<subject>``."""
    run: str
    """The judge run whose verdict this judgment is (kept with a decision as provenance)."""


def judgment_ref(conn: sqlite3.Connection, judgment_id: int) -> JudgmentRef:
    row = conn.execute(
        """SELECT j.id, j.report_id, j.kind, j.value, s.id, s.target, jr.ext_id
           FROM judgment j JOIN subject s ON s.id = j.subject_id
           JOIN judge_run jr ON jr.id = j.run_id
           WHERE j.id = ?""",
        (judgment_id,),
    ).fetchone()
    if row is None:
        raise ReviewError(f"no judgment with id {judgment_id}")
    return JudgmentRef(
        int(row[0]), int(row[1]), str(row[2]), row[3], int(row[4]), str(row[5]), str(row[6])
    )


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
    for name in report_frameworks(conn, report_id):
        fw = find_framework(name)
        if fw is not None and fw.rating is not None:
            return fw.rating
    return None


def report_frameworks(conn: sqlite3.Connection, report_id: int) -> list[str]:
    """The frameworks of the report's suite, in the suite's order."""
    row = conn.execute(
        """SELECT s.frameworks FROM report r JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id WHERE r.id = ?""",
        (report_id,),
    ).fetchone()
    names: list[str] = json.loads(row[0]) if row else []
    return names


def may_reverse(
    name: str, key: str | None, of_name: str, of_key: str | None, owner: str | None = None
) -> bool:
    """Whether an event by (name, key) may undo or supersede one by (of_name, of_key): only
    its own identity's; an unsigned event of the same name (written before signing) only by
    ``owner``, the key that claimed the name (:func:`legacy_owner`)."""
    if name != of_name:
        return False
    if key == of_key:
        return True
    return of_key is None and key is not None and key == owner


def legacy_owner(conn: sqlite3.Connection, name: str) -> str | None:
    """The key that took over ``name``'s unsigned events by a ``claim`` (``gavel identity
    claim``): a name in a log travels without proof, so a key never takes them over by
    signing with the name alone. None while no key, or more than one, has claimed the name:
    two claimants cancel out (neither speaks for the old events, which then stand beside
    both as their own side), whatever order their claims arrived in."""
    keys = {
        str(row[0])
        for row in conn.execute(
            "SELECT DISTINCT key FROM review_event WHERE target = ? AND action = 'claim'",
            (f"i:{name}",),
        )
    }
    return keys.pop() if len(keys) == 1 else None


class Claims:
    """:func:`legacy_owner` per name, asked once per name (a rebuild walks the whole log)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.owners: dict[str, str | None] = {}

    def owner(self, name: str) -> str | None:
        if name not in self.owners:
            self.owners[name] = legacy_owner(self.conn, name)
        return self.owners[name]

    def may_reverse(self, name: str, key: str | None, of_name: str, of_key: str | None) -> bool:
        owner = self.owner(of_name) if of_key is None and key is not None else None
        return may_reverse(name, key, of_name, of_key, owner)


class ReviewLog:
    """Writes events for one reviewer identity on one connection (its owner's)."""

    def __init__(
        self, conn: sqlite3.Connection, reviewer: str, identity: Identity | None = None
    ) -> None:
        name = reviewer.strip()
        if not name:
            raise ReviewError("a reviewer name is required")
        self.conn = conn
        self.reviewer = name
        self._identity = (
            identity if identity is None or identity.name == name else replace(identity, name=name)
        )
        self._key = None if self._identity is None else self._identity.public_key
        self._at: str | None = None

    @contextmanager
    def stamped(self, at: str | None) -> Iterator[None]:
        """Events written inside carry ``at``, when the reviewer acted, rather than when the
        write happened (a decision queued behind another process's write lock keeps the
        time of its keypress, so its place in the reviewer's own history is where they
        made it)."""
        self._at = at
        try:
            yield
        finally:
            self._at = None

    @property
    def identity(self) -> Identity:
        """The signing identity; the installation's key is made here, by the first write that
        needs it, never by opening a database to read."""
        if self._identity is None:
            from store.reviewlog.identity import load_identity

            self._identity = load_identity(self.reviewer)
            self._key = self._identity.public_key
        return self._identity

    @property
    def key(self) -> str | None:
        """The public key, if this installation has one yet (None: nothing signed by it)."""
        if self._key is None and self._identity is None:
            from store.reviewlog.identity import existing_identity

            found = existing_identity(self.reviewer)
            if found is not None:
                self._identity, self._key = found, found.public_key
        return self._key

    def _legacy(self) -> int:
        """1 when this identity claimed its name's unsigned events (they are then its own to
        undo and supersede), else 0: a parameter of the queries below."""
        key = self.key
        return int(key is not None and legacy_owner(self.conn, self.reviewer) == key)

    def claim(self, rationale: str = "") -> Recorded:
        """Take over this name's unsigned events (written before signing) with this key: a
        signed, logged act that travels with the log, so every database lets this key, and
        no other, undo or supersede them."""
        return self._write(
            f"i:{self.reviewer}", "claim", None, rationale, None, None, None, None, None
        )

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
        """Record a human verdict on the judgment's subject; equal to the judge's value it is
        a confirmation."""
        ref = judgment_ref(self.conn, judgment_id)
        kind = get_kind(ref.kind, report_frameworks(self.conn, ref.report_id))
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
            # Whoever adjudicates at this database is one of its adjudicators.
            trust_adjudicator(
                self.conn, self.reviewer, self.identity.public_key, "adjudicated here"
            )
        else:
            action = "confirm" if code == ref.value else "override"
        return self._decision(ref, action, code, rationale, reason)

    def confirm(
        self, judgment_id: int, rationale: str = "", *, only_if_undecided: bool = False
    ) -> Recorded:
        """The judge is right. ``only_if_undecided`` refuses where this reviewer already
        decided the subject (the workstation's enter key must never revert an override)."""
        ref = judgment_ref(self.conn, judgment_id)
        if ref.value is None:
            raise ReviewError(
                f"judgment {judgment_id} has no judge value to confirm (the judge failed); "
                "decide a value instead"
            )
        if only_if_undecided:
            mine = self._mine(ref.target)
            if mine is not None:
                raise ReviewError(
                    f"you already decided this ({mine[0]} → {mine[1]}): press a "
                    "value key or r to change it"
                )
        return self._decision(ref, "confirm", ref.value, rationale, None)

    def flag(self, judgment_id: int, on: bool = True, rationale: str = "") -> Recorded:
        """Flag the subject for discussion; the rationale is the flag's note."""
        ref = judgment_ref(self.conn, judgment_id)
        return self._write(
            ref.target,
            "flag",
            "on" if on else "off",
            rationale,
            None,
            judgment_id,
            ref.report_id,
            ref.subject_id,
            ref.run,
        )

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
        return self._write(target, "rate", code, rationale, None, None, report_id, None, None)

    def assign(self, target: str, value: str, report_id: int | None) -> Recorded:
        """Hand a subject or a report to a reviewer (``value``: an encoded
        :class:`reviewer.assignment.Assignment`); signed and merged like a decision, but it
        decides nothing."""
        return self._write(target, "assign", value, "", None, None, report_id, None, None)

    def unassign(self, target: str, value: str, report_id: int | None) -> Recorded:
        """Take a subject or a report back from a reviewer (``value``: an encoded
        :class:`reviewer.assignment.Release` naming the assignments it ends); signed and
        merged like an assignment, and decides nothing."""
        return self._write(target, "unassign", value, "", None, None, report_id, None, None)

    def _mine(self, target: str) -> tuple[str, str | None] | None:
        """This identity's live decision on a subject: (action, value), or None."""
        row = self.conn.execute(
            f"""SELECT e.action, e.value FROM review_event e
                JOIN event_live l ON l.uuid = e.uuid
                WHERE e.target = ? AND l.live = 1 AND e.reviewer = ?
                  AND (e.key = ? OR (e.key IS NULL AND ? = 1))
                  AND e.action IN ({_in(DECISION_ACTIONS)})
                ORDER BY e.created_at DESC, e.uuid DESC LIMIT 1""",
            (target, self.reviewer, self.key, self._legacy()),
        ).fetchone()
        return None if row is None else (str(row[0]), row[1])

    def _decision(
        self, ref: JudgmentRef, action: str, code: str, rationale: str, reason: str | None
    ) -> Recorded:
        recorded = self._write(
            ref.target,
            action,
            code,
            rationale,
            reason,
            ref.id,
            ref.report_id,
            ref.subject_id,
            ref.run,
        )
        status = self.conn.execute(
            "SELECT status FROM decision WHERE subject_id = ?", (ref.subject_id,)
        ).fetchone()
        if status is not None and status[0] == "conflict":
            others = sorted(
                {who for who, value in standing_values(self.conn, ref.target) if value != code}
            )
            return replace(
                recorded,
                note=f"{', '.join(others)} decided this differently: "
                "it is a conflict to adjudicate",
            )
        return recorded

    # -- undo / redo -----------------------------------------------------------------------

    def undo(self, report_id: int | None = None) -> Recorded | None:
        """Reverse this reviewer's latest decision that still counts — in ``report_id`` when
        given (the report on screen), else anywhere; None if there is none."""
        scope, params = ("AND e.report_id = ?", [report_id]) if report_id is not None else ("", [])
        row = self.conn.execute(
            f"""SELECT e.uuid, e.target, e.judgment_id, e.report_id, e.action, e.run
                FROM review_event e JOIN event_live l ON l.uuid = e.uuid
                WHERE e.reviewer = ? AND (e.key = ? OR (e.key IS NULL AND ? = 1))
                  AND l.live = 1 AND e.action IN ({_in(UNDOABLE_ACTIONS)}) {scope}
                ORDER BY e.seq DESC LIMIT 1""",
            (self.reviewer, self.key, self._legacy(), *params),
        ).fetchone()
        if row is None:
            return None
        recorded = self._write(
            row[1],
            "undo",
            None,
            "",
            None,
            row[2],
            row[3],
            _subject_id(self.conn, row[1]),
            row[5],
            supersedes=row[0],
        )
        return replace(recorded, reverted=str(row[4]))

    def redo(self, report_id: int | None = None) -> Recorded | None:
        """Re-apply the most recent undo (in ``report_id`` when given), unless a new decision
        was made since."""
        scope, params = ("AND e.report_id = ?", [report_id]) if report_id is not None else ("", [])
        last_decision = self.conn.execute(
            f"""SELECT coalesce(max(seq), 0) FROM review_event e
                WHERE reviewer = ? AND (key = ? OR (key IS NULL AND ? = 1))
                  AND action IN ({_in(UNDOABLE_ACTIONS)}) {scope}""",
            (self.reviewer, self.key, self._legacy(), *params),
        ).fetchone()[0]
        row = self.conn.execute(
            f"""SELECT e.uuid, e.target, e.judgment_id, e.report_id, d.action, e.run
                FROM review_event e JOIN review_event d ON d.uuid = e.supersedes
                WHERE e.reviewer = ? AND e.key = ? AND e.action = 'undo' AND e.seq > ? {scope}
                  AND NOT EXISTS (SELECT 1 FROM review_event r
                                  WHERE r.action = 'redo' AND r.supersedes = e.uuid)
                ORDER BY e.seq DESC LIMIT 1""",
            (self.reviewer, self.key, last_decision, *params),
        ).fetchone()
        if row is None:
            return None
        recorded = self._write(
            row[1],
            "redo",
            None,
            "",
            None,
            row[2],
            row[3],
            _subject_id(self.conn, row[1]),
            row[5],
            supersedes=row[0],
        )
        return replace(recorded, reverted=str(row[4]))

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
        subject_id: int | None,
        run: str | None,
        *,
        supersedes: str | None = None,
    ) -> Recorded:
        event_uuid = str(uuidlib.uuid4())
        identity = self.identity  # made now if this is the installation's first signed event
        key = identity.public_key
        with transaction(self.conn):
            if supersedes is None and action in DECISION_ACTIONS:
                previous = self.conn.execute(
                    f"""SELECT e.uuid FROM review_event e JOIN event_live l ON l.uuid = e.uuid
                        WHERE e.target = ? AND e.reviewer = ? AND l.live = 1
                          AND (e.key = ? OR (e.key IS NULL AND ? = 1))
                          AND e.action IN ({_in(DECISION_ACTIONS)})
                        ORDER BY e.key IS NULL, e.created_at DESC, e.uuid DESC LIMIT 1""",
                    (target, self.reviewer, key, self._legacy()),
                ).fetchone()
                supersedes = previous[0] if previous else None
            event = {
                "uuid": event_uuid,
                "target": target,
                "reviewer": self.reviewer,
                "action": action,
                "value": value,
                "rationale": rationale,
                "reason": reason,
                "created_at": self._at or now_iso(),
                "supersedes": supersedes,
                "run": run,
                "key": key,
            }
            signature = identity.sign(event)
            self.conn.execute(
                """INSERT INTO review_event
                   (uuid, target, judgment_id, report_id, reviewer, action, value, rationale,
                    reason, created_at, supersedes, run, key, sig)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                (
                    event_uuid,
                    target,
                    judgment_id,
                    report_id,
                    self.reviewer,
                    action,
                    value,
                    rationale,
                    reason,
                    event["created_at"],
                    supersedes,
                    run,
                    key,
                    signature,
                ),
            )
            apply_event(self.conn, event_uuid, action, supersedes)
            # A claim changes whose events the name's unsigned ones are, wherever they are.
            if note_identity(self.conn, self.reviewer, key) or action == "claim":
                rebuild_state(self.conn)
            else:
                refresh_target(self.conn, target)
        return Recorded(event_uuid, action, judgment_id, report_id, value, subject_id=subject_id)


@dataclass(frozen=True, slots=True)
class Undoable:
    """A reviewer's latest decision that still counts: what an undo would reverse."""

    report_id: int | None
    report: str
    action: str
    value: str | None
    subject: str


def latest_undoable(conn: sqlite3.Connection, reviewer: str, key: str | None) -> Undoable | None:
    row = conn.execute(
        f"""SELECT e.report_id, e.target, e.action, e.value
            FROM review_event e JOIN event_live l ON l.uuid = e.uuid
            WHERE e.reviewer = ? AND (e.key = ? OR (e.key IS NULL AND ? = 1)) AND l.live = 1
              AND e.action IN ({_in(UNDOABLE_ACTIONS)})
            ORDER BY e.seq DESC LIMIT 1""",
        (reviewer, key, int(key is not None and legacy_owner(conn, reviewer) == key)),
    ).fetchone()
    if row is None:
        return None
    parts = str(row[1])[2:].split("/", 3)
    report = parts[1] if len(parts) > 1 else str(row[1])
    subject = parts[3] if len(parts) == 4 else "the whole report"
    return Undoable(row[0], report, str(row[2]), row[3], subject)


def _in(values: Iterable[str]) -> str:
    return ",".join(f"'{v}'" for v in sorted(values))


def _subject_id(conn: sqlite3.Connection, target: str) -> int | None:
    row = conn.execute("SELECT id FROM subject WHERE target = ?", (target,)).fetchone()
    return None if row is None else int(row[0])


def note_identity(conn: sqlite3.Connection, name: str, key: str | None) -> bool:
    """Record who wrote an event; True when this makes a name ambiguous (a second identity
    of the same name), after which every shown name must be recomputed."""
    added = conn.execute(
        "INSERT OR IGNORE INTO reviewer_identity VALUES (?, ?)", (name, key or "")
    ).rowcount
    if not added:
        return False
    return (
        int(
            conn.execute(
                "SELECT count(*) FROM reviewer_identity WHERE name = ?", (name,)
            ).fetchone()[0]
        )
        == 2
    )


def display_name(conn: sqlite3.Connection, name: str, key: str | None) -> str:
    """A reviewer as shown: the name alone, unless two identities share it (``ana#1f2e3d4c``,
    and ``ana (unsigned)`` for events from before signing)."""
    shared = (
        int(
            conn.execute(
                "SELECT count(*) FROM reviewer_identity WHERE name = ?", (name,)
            ).fetchone()[0]
        )
        > 1
    )
    if not shared:
        return name
    return label(name, key) if key else f"{name} (unsigned)"


def apply_event(
    conn: sqlite3.Connection, event_uuid: str, action: str, supersedes: str | None
) -> None:
    """Update ``event_live`` for one new event (its effect on liveness only). The caller has
    checked that an undo or redo reverses its own identity's event."""
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


def refresh_target(conn: sqlite3.Connection, target: str) -> None:
    """Recompute the derived state of one target (a subject or a report) from its events."""
    if target.startswith("s:"):
        subject_id = _subject_id(conn, target)
        if subject_id is not None:
            refresh_decision(conn, subject_id, target)
            refresh_flag(conn, subject_id, target)
    elif target.startswith("r:"):
        report_id = _report_of(conn, target)
        if report_id is not None:
            refresh_ratings(conn, report_id, target)


def _report_of(conn: sqlite3.Connection, target: str) -> int | None:
    suite, _, report = target[2:].partition("/")
    row = conn.execute(
        """SELECT r.id FROM report r JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id WHERE s.ext_id = ? AND r.ext_id = ?""",
        (suite, report),
    ).fetchone()
    return None if row is None else int(row[0])


Row = tuple[str, str, str | None, str, str | None, str, str | None]
"""(uuid, reviewer, key, action, value, created_at, supersedes) of a live event."""


def _standing(rows: Sequence[Row], claims: Claims | None = None) -> dict[str, Row]:
    """Each identity's standing event: its latest by its own time stamps, then uuid (a total
    order that no merge order changes, and that never compares two identities' clocks).

    An event that a later one of the same identity supersedes is retired whatever its time
    stamp; so is an unsigned event (written before signing) that the key which claimed its
    name superseded (``claims``; without them, none) — the only way an unsigned event joins a
    signed identity, so that an unsigned event claiming a name stands beside that reviewer, as
    a conflict, never for them, and a key that only says the name stands beside the old
    events, never for them.
    """
    by_uuid = {row[0]: row for row in rows}
    reverses = claims.may_reverse if claims is not None else may_reverse
    retired = {
        old
        for row in rows
        if (old := row[6]) in by_uuid and reverses(row[1], row[2], by_uuid[old][1], by_uuid[old][2])
    }
    latest: dict[str, Row] = {}
    for row in rows:
        if row[0] in retired:
            continue
        who = label(row[1], row[2])
        if who not in latest or _order(row) > _order(latest[who]):
            latest[who] = row
    return latest


def _order(row: Row) -> tuple[datetime, str]:
    """An event's place in its identity's own history: its instant (offsets normalized, so
    a log that mixes ``Z`` and ``+02:00`` still orders by time), then its uuid."""
    return _instant(row[5]), row[0]


@lru_cache(maxsize=65536)
def _instant(stamp: str) -> datetime:
    try:
        return datetime.fromisoformat(stamp).astimezone(UTC)
    except ValueError:  # never merged (checked); a hand-edited database at worst
        return datetime.min.replace(tzinfo=UTC)


def _live(conn: sqlite3.Connection, target: str, actions: Iterable[str]) -> list[Row]:
    return conn.execute(
        f"""SELECT e.uuid, e.reviewer, e.key, e.action, e.value, e.created_at, e.supersedes
            FROM review_event e JOIN event_live l ON l.uuid = e.uuid
            WHERE e.target = ? AND l.live = 1 AND e.action IN ({_in(actions)})""",
        (target,),
    ).fetchall()


def standing_values(conn: sqlite3.Connection, target: str) -> list[tuple[str, str | None]]:
    """(identity, value) of each reviewer's standing decision on a subject (adjudications
    apart), in identity order."""
    rows = [r for r in _live(conn, target, DECISION_ACTIONS) if r[3] != "adjudicate"]
    standing = _standing(rows, Claims(conn)).values()
    return sorted((display_name(conn, row[1], row[2]), row[4]) for row in standing)


Adjudicators = frozenset[tuple[str, str]]
"""(name, key) identities whose adjudications rule in a database."""


def trusted_adjudicators(conn: sqlite3.Connection) -> Adjudicators:
    """The identities this database holds as adjudicators: those who adjudicated here, and
    those a person trusted (``gavel identity trust``). Local, like the config: who may rule
    is the team's decision, and a log cannot vouch for itself. Two databases resolve the
    same log alike when they hold the same adjudicators."""
    return frozenset(
        (str(name), str(key)) for name, key in conn.execute("SELECT name, key FROM adjudicator_key")
    )


def trust_adjudicator(conn: sqlite3.Connection, name: str, key: str, how: str) -> bool:
    """Hold (name, key) as an adjudicator here; True when it was not already."""
    return bool(
        conn.execute(
            "INSERT OR IGNORE INTO adjudicator_key VALUES (?, ?, ?, ?)",
            (name, key, now_iso(), how),
        ).rowcount
    )


def rulings(
    reviewers: dict[str, Row], adjudications: dict[str, Row], trusted: Adjudicators
) -> tuple[dict[str, Row], dict[str, Row]]:
    """(adjudications that rule, every other standing decision as a side).

    An adjudication rules when signed by a key this database holds as an adjudicator's; an
    unsigned one (written before signing) only among unsigned reviewers, so it never
    replaces a signed reviewer's decision. Any other adjudication is one more side: a
    conflict to show where it differs, never a ruling."""
    any_signed = any(row[2] is not None for row in reviewers.values())
    ruling: dict[str, Row] = {}
    sides = dict(reviewers)
    for who, row in adjudications.items():
        rules = (row[1], row[2]) in trusted if row[2] is not None else not any_signed
        (ruling if rules else sides)[who] = row
    return ruling, sides


def refresh_decision(conn: sqlite3.Connection, subject_id: int, target: str) -> None:
    """Resolve the human verdict of one subject from its live decision events.

    An adjudication that rules (:func:`rulings`) outranks individual reviewers
    (adjudicators who disagree are themselves a conflict). Otherwise each identity's
    standing decision counts; if they differ the subject is in conflict and keeps its judge
    value until someone adjudicates.
    """
    rows = _live(conn, target, DECISION_ACTIONS)
    if not rows:
        conn.execute("DELETE FROM decision WHERE subject_id = ?", (subject_id,))
        return
    claims = Claims(conn)
    reviewers = _standing([r for r in rows if r[3] != "adjudicate"], claims)
    adjudications = _standing([r for r in rows if r[3] == "adjudicate"], claims)
    trusted = trusted_adjudicators(conn) if adjudications else frozenset()
    ruling, sides = rulings(reviewers, adjudications, trusted)
    newest = max((*reviewers.values(), *adjudications.values()), key=_order)
    count = len(set(reviewers) | set(adjudications))
    value, status = _verdict(ruling, sides, count)
    conn.execute(
        "INSERT OR REPLACE INTO decision VALUES (?,?,?,?,?)",
        (subject_id, value, status, count, newest[0]),
    )


def _verdict(ruling: dict[str, Row], sides: dict[str, Row], count: int) -> tuple[str | None, str]:
    """(value, status): the rulings' one value, else the sides' one value, else a conflict."""
    values = {row[4] for row in (ruling or sides).values()}
    if len(values) != 1:
        return None, "conflict"
    status = "adjudicated" if ruling else ("single" if count == 1 else "unanimous")
    return values.pop(), status


def refresh_flag(conn: sqlite3.Connection, subject_id: int, target: str) -> None:
    """Flagged while any identity's latest flag event says 'on'; the newest such note shows."""
    standing = _standing(_live(conn, target, ("flag",)), Claims(conn)).values()
    raised = [row for row in standing if row[4] == "on"]
    if raised:
        newest = max(raised, key=_order)
        note = conn.execute(
            "SELECT rationale FROM review_event WHERE uuid = ?", (newest[0],)
        ).fetchone()[0]
        conn.execute("INSERT OR REPLACE INTO flag VALUES (?, ?, ?)", (subject_id, newest[0], note))
    else:
        conn.execute("DELETE FROM flag WHERE subject_id = ?", (subject_id,))


def refresh_ratings(conn: sqlite3.Connection, report_id: int, target: str) -> None:
    conn.execute("DELETE FROM report_rating WHERE report_id = ?", (report_id,))
    conn.executemany(
        "INSERT INTO report_rating (report_id, reviewer, value, event_uuid) VALUES (?,?,?,?)",
        [
            (report_id, display_name(conn, row[1], row[2]), row[4], row[0])
            for _, row in sorted(_standing(_live(conn, target, ("rate",)), Claims(conn)).items())
        ],
    )


def rebuild_state(conn: sqlite3.Connection) -> None:
    """Recompute every derived table of the log from the events alone.

    An undo or redo that reverses another identity's event (which neither the writer nor a
    merge lets in) is ignored here too, so no log content can cancel someone else's decision.
    """
    with transaction(conn):
        conn.execute("DELETE FROM event_live")
        conn.execute("DELETE FROM decision")
        conn.execute("DELETE FROM flag")
        conn.execute("DELETE FROM report_rating")
        conn.execute("DELETE FROM reviewer_identity")
        conn.execute(
            "INSERT INTO reviewer_identity SELECT DISTINCT reviewer, coalesce(key, '') "
            "FROM review_event"
        )
        live: dict[str, int] = {}
        author: dict[str, tuple[str, str | None]] = {}
        undone_by: dict[str, str] = {}
        targets: set[str] = set()
        claims = Claims(conn)
        for event_uuid, action, supersedes, target, reviewer, key in conn.execute(
            "SELECT uuid, action, supersedes, target, reviewer, key FROM review_event ORDER BY seq"
        ):
            author[event_uuid] = (reviewer, key)
            reversed_author = author.get(supersedes) if supersedes else None
            allowed = reversed_author is not None and claims.may_reverse(
                reviewer, key, *reversed_author
            )
            if action in UNDOABLE_ACTIONS:
                live[event_uuid] = 1
                targets.add(target)
            elif action == "undo" and supersedes in live and allowed:
                live[supersedes] = 0
                undone_by[event_uuid] = supersedes
            elif action == "redo" and supersedes in undone_by and allowed:
                live[undone_by[supersedes]] = 1
        conn.executemany("INSERT INTO event_live VALUES (?, ?)", live.items())
        for target in sorted(targets):
            refresh_target(conn, target)


def refresh_subjects(conn: sqlite3.Connection, subject_ids: Iterable[int]) -> int:
    """Apply events that were waiting for these (new) subjects; returns how many subjects
    had some."""
    ids = sorted(set(subject_ids))
    if not ids:
        return 0
    waiting = conn.execute(
        f"""SELECT DISTINCT s.id, s.target FROM subject s
            JOIN review_event e ON e.target = s.target
            WHERE s.id IN ({",".join("?" * len(ids))})""",
        ids,
    ).fetchall()
    with transaction(conn):
        for subject_id, target in waiting:
            refresh_decision(conn, int(subject_id), str(target))
            refresh_flag(conn, int(subject_id), str(target))
    return len(waiting)


def refresh_suite_ratings(conn: sqlite3.Connection, suite_id: int) -> None:
    """Ratings of a suite's reports that arrived before the reports did."""
    with transaction(conn):
        for target, report_id in conn.execute(
            """SELECT DISTINCT e.target, r.id FROM review_event e
               JOIN report r ON e.target = 'r:' || (SELECT ext_id FROM suite WHERE id = ?)
                                         || '/' || r.ext_id
               JOIN system y ON y.id = r.system_id AND y.suite_id = ?
               WHERE e.action = 'rate'""",
            (suite_id, suite_id),
        ).fetchall():
            refresh_ratings(conn, int(report_id), str(target))


def pending_events(conn: sqlite3.Connection) -> int:
    """Events about subjects or reports this database does not have (yet)."""
    return int(
        conn.execute(
            """SELECT count(*) FROM review_event e
           WHERE (e.target LIKE 's:%' AND NOT EXISTS
                    (SELECT 1 FROM subject s WHERE s.target = e.target))
              OR (e.target LIKE 'r:%' AND NOT EXISTS
                    (SELECT 1 FROM report r JOIN system y ON y.id = r.system_id
                     JOIN suite s ON s.id = y.suite_id
                     WHERE s.ext_id || '/' || r.ext_id = substr(e.target, 3)))"""
        ).fetchone()[0]
    )


def effective_value(conn: sqlite3.Connection, judgment_id: int) -> str | None:
    row = conn.execute(
        """SELECT CASE WHEN d.status IS NOT NULL AND d.status != 'conflict' THEN d.value
                       ELSE j.value END
           FROM judgment j LEFT JOIN decision d ON d.subject_id = j.subject_id
           WHERE j.id = ?""",
        (judgment_id,),
    ).fetchone()
    return None if row is None else row[0]
