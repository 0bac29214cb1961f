"""Syncing a local database with a review hub: push the events the hub lacks, pull the rest.

Decisions are local first: a reviewer writes to the local SQLite file and nothing waits for the
network. A sync then

1. registers this database's suites with the hub (a suite id the hub knows from different
   content is refused: nothing is pushed or pulled, the message names the suite);
2. pushes, in local log order, every local event the hub may not have;
3. pulls every hub event after this database's cursor and merges it with
   :func:`store.reviews.merge.merge_events` — the same union by uuid, signature checks, authorship
   rules, pending subjects and conflict resolution as ``gavel merge``, so a hub sync and a
   file merge can never disagree, and nothing is ever last-write-wins;
4. reports what changed: events each way, new conflicts, reports to redraw.

An event the hub holds but this database refuses (a forged signature written to the hub by
hand, say) must not wedge every later sync, nor be silently dropped: it is *quarantined* —
recorded with the reason in ``hub_rejected``, reported by every sync, never merged — and the
events after it are merged. Every client applies the same checks to the same events, so they
all quarantine the same ones.

The local bookkeeping is three small tables, created on first sync rather than by a schema
migration because they are a cache of where the hub is, never data: deleting them costs one
full re-push (ignored by the hub as duplicates) and re-pull (ignored by the merge).

* ``hub_sync``   — per hub id: ``pulled_id``, the last hub event merged here, and
  ``pushed_seq``, below which every local event is on the hub;
* ``hub_pulled`` — local seq ranges of events that came from the hub (the merge appends them
  to the local log), which need no push: without them every pulled event would count as
  "pending" until the next push;
* ``hub_rejected`` — the quarantine.

Every step is idempotent and interruptible: a connection lost mid-push leaves ``pushed_seq``
where it was (the re-push is ignored as duplicates); a merge commits with its cursor in one
transaction. A hub down for a day therefore loses nothing: events wait locally, counted as
pending, and go out with the next sync that reaches it.

Plans and proposals ride the same way: proposals are ``propose``/``accept``/``reject`` events
already. A review plan, once drawn, is immutable (its sample and inclusion probabilities), so it
can travel either as an event carrying the plan (as a proposal does) or as rows of a second
append-only hub table keyed by plan uuid; the hub's schema version (``gavel_hub.meta``) is what
``gavel hub init`` would bump to add such a table.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from reviewer.errors import InputError
from reviewer.logfile import LogEvent, check_event, normalized
from store.hub.server import EVENT_FIELDS, Hub, HubRefused, HubRow, SuiteIdentity, proposal_suite
from store.reviews.merge import merge_events
from store.sqlite.tx import now_iso, transaction

PUSH_BATCH = 5_000
"""Events per push transaction on the hub."""
PULL_BATCH = 2_000
"""Events per pull, merged in one local transaction: small enough that the merge takes the
incremental path and holds the database's write lock only briefly (a reviewer's decision in
the workstation waits no longer), large enough that a new database's first pull costs about
what one big merge would."""

_TABLES = (
    """CREATE TABLE IF NOT EXISTS hub_sync (
        hub TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        pulled_id INTEGER NOT NULL DEFAULT 0,
        pushed_seq INTEGER NOT NULL DEFAULT 0,
        synced_at TEXT
    ) STRICT""",
    """CREATE TABLE IF NOT EXISTS hub_pulled (
        hub TEXT NOT NULL,
        lo INTEGER NOT NULL,
        hi INTEGER NOT NULL,
        PRIMARY KEY (hub, lo)
    ) STRICT, WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS hub_rejected (
        hub TEXT NOT NULL,
        hub_event INTEGER NOT NULL,
        uuid TEXT,
        reason TEXT NOT NULL,
        PRIMARY KEY (hub, hub_event)
    ) STRICT, WITHOUT ROWID""",
)


@dataclass(slots=True)
class SyncResult:
    hub: str
    """The hub as shown (no password)."""
    hub_id: str
    pushed: int = 0
    """Local events the hub did not have and now does."""
    already_on_hub: int = 0
    pulled: int = 0
    """Hub events read after this database's cursor."""
    merged: int = 0
    """Of those, events new to this database."""
    pending_subjects: int = 0
    """Merged events about subjects, reports or tasks this database does not have (yet)."""
    rejected: list[tuple[int, str | None, str]] = field(default_factory=list)
    """(hub id, uuid, why) of hub events quarantined by this sync."""
    quarantined: int = 0
    """Hub events quarantined here so far, this sync's included."""
    diverged: list[str] = field(default_factory=list)
    """Local event uuids the hub holds with different content."""
    new_conflicts: list[str] = field(default_factory=list)
    """Subject targets in conflict now that were not before this sync."""
    conflicts: int | None = None
    """Subjects in conflict after the sync (None: nothing merged, so unchanged)."""
    reports: list[int] = field(default_factory=list)
    """Local report ids whose decisions, ratings or proposals the pulled events changed."""
    pending: int = 0
    """Local events still not on the hub (0 after a sync that completed)."""
    gap: tuple[int, int] | None = None
    """(last id read, next id the hub has) where the hub's ids jump: the pull stopped
    there, and nothing after it was merged."""
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class LocalState:
    """What this database knows of a hub without asking it (the status line when offline)."""

    hub_id: str | None
    pending: int
    synced_at: str | None
    quarantined: int


def ensure_tables(conn: sqlite3.Connection) -> None:
    if conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'hub_rejected'"
    ).fetchone() and _has_ordered_cursor(conn):
        return
    with transaction(conn):
        for statement in _TABLES:
            conn.execute(statement)
        if not _has_ordered_cursor(conn):
            # A cursor kept before hubs numbered events densely may have jumped past events
            # (a hostile id): 0 here makes the next sync pull everything once, which the
            # merge ignores where it already has it.
            conn.execute("ALTER TABLE hub_sync ADD COLUMN ordered INTEGER NOT NULL DEFAULT 0")


def _has_ordered_cursor(conn: sqlite3.Connection) -> bool:
    return any(row[1] == "ordered" for row in conn.execute("PRAGMA table_info(hub_sync)"))


def local_state(conn: sqlite3.Connection, hub_id: str | None = None) -> LocalState:
    """Pending events and last sync for ``hub_id`` (the only hub this database synced with,
    if None). Read-only: works on a database that never synced."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'hub_sync'").fetchone():
        total = int(conn.execute("SELECT count(*) FROM review_event").fetchone()[0])
        return LocalState(None, total, None, 0)
    if hub_id is None:
        row = conn.execute("SELECT hub FROM hub_sync ORDER BY synced_at DESC LIMIT 1").fetchone()
        hub_id = None if row is None else str(row[0])
    if hub_id is None:
        total = int(conn.execute("SELECT count(*) FROM review_event").fetchone()[0])
        return LocalState(None, total, None, 0)
    row = conn.execute("SELECT synced_at FROM hub_sync WHERE hub = ?", (hub_id,)).fetchone()
    quarantined = int(
        conn.execute("SELECT count(*) FROM hub_rejected WHERE hub = ?", (hub_id,)).fetchone()[0]
    )
    return LocalState(hub_id, pending_count(conn, hub_id), row[0] if row else None, quarantined)


def pending_count(conn: sqlite3.Connection, hub_id: str) -> int:
    """Local events not yet known to be on the hub."""
    row = conn.execute("SELECT pushed_seq FROM hub_sync WHERE hub = ?", (hub_id,)).fetchone()
    pushed = int(row[0]) if row else 0
    total = int(
        conn.execute("SELECT count(*) FROM review_event WHERE seq > ?", (pushed,)).fetchone()[0]
    )
    pulled = int(
        conn.execute(
            "SELECT coalesce(sum(hi - max(lo, ?)), 0) FROM hub_pulled WHERE hub = ? AND hi > ?",
            (pushed, hub_id, pushed),
        ).fetchone()[0]
    )
    return total - pulled


def sync(
    conn: sqlite3.Connection,
    hub: Hub,
    *,
    push: bool = True,
    pull: bool = True,
    push_batch: int = PUSH_BATCH,
    pull_batch: int = PULL_BATCH,
) -> SyncResult:
    """One sync with ``hub`` (see the module docstring). Raises :class:`store.hub.server.HubError`
    when the hub cannot be used; whatever was committed before stays (each step is whole)."""
    started = time.perf_counter()
    ensure_tables(conn)
    hub_id = hub.hub_id()
    result = SyncResult(hub.name, hub_id)
    with transaction(conn):
        conn.execute("INSERT OR IGNORE INTO hub_sync (hub, name) VALUES (?, ?)", (hub_id, hub.name))
        conn.execute(
            "UPDATE hub_sync SET pulled_id = 0, ordered = 1 WHERE hub = ? AND ordered = 0",
            (hub_id,),
        )
    problems = hub.register_suites(local_suites(conn))
    if problems:
        raise HubRefused("; ".join(problems) + " (nothing was pushed or pulled)")
    if push:
        _push(conn, hub, hub_id, push_batch, result)
    if pull:
        _pull(conn, hub, hub_id, pull_batch, result)
    with transaction(conn):
        result.pending = pending_count(conn, hub_id)
        if result.pending == 0:
            # Everything local is on the hub: fold the pulled ranges into the mark.
            conn.execute(
                "UPDATE hub_sync SET pushed_seq = (SELECT coalesce(max(seq), 0) FROM "
                "review_event) WHERE hub = ?",
                (hub_id,),
            )
            conn.execute("DELETE FROM hub_pulled WHERE hub = ?", (hub_id,))
        conn.execute(
            "UPDATE hub_sync SET synced_at = ?, name = ? WHERE hub = ?",
            (now_iso(), hub.name, hub_id),
        )
    result.new_conflicts = sorted(set(result.new_conflicts))
    if result.merged:
        result.conflicts = int(
            conn.execute("SELECT count(*) FROM decision WHERE status = 'conflict'").fetchone()[0]
        )
    result.quarantined = int(
        conn.execute("SELECT count(*) FROM hub_rejected WHERE hub = ?", (hub_id,)).fetchone()[0]
    )
    result.reports = sorted(set(result.reports))
    result.seconds = time.perf_counter() - started
    return result


def local_suites(conn: sqlite3.Connection) -> list[SuiteIdentity]:
    return [
        SuiteIdentity(*row)
        for row in conn.execute(
            "SELECT ext_id, name, frameworks, version, content_hash FROM suite ORDER BY ext_id"
        )
    ]


def _conflicted(conn: sqlite3.Connection, targets: Sequence[str]) -> set[str]:
    """Which of ``targets`` are subjects in conflict (asked of the few a batch touches: the
    whole decision table is large once a team has decided a run)."""
    found: set[str] = set()
    unique = sorted(set(targets))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        found.update(
            str(row[0])
            for row in conn.execute(
                f"""SELECT s.target FROM subject s JOIN decision d ON d.subject_id = s.id
                WHERE d.status = 'conflict' AND s.target IN ({",".join("?" * len(chunk))})""",
                chunk,
            )
        )
    return found


# -- push ----------------------------------------------------------------------------------------


_SELECT_UNPUSHED = f"""
    SELECT e.seq, {", ".join(f"e.{name}" for name in EVENT_FIELDS)}
    FROM review_event e
    WHERE e.seq > ?
      AND NOT EXISTS (SELECT 1 FROM hub_pulled p
                      WHERE p.hub = ? AND e.seq > p.lo AND e.seq <= p.hi)
    ORDER BY e.seq LIMIT ?
"""


def _push(conn: sqlite3.Connection, hub: Hub, hub_id: str, batch: int, result: SyncResult) -> None:
    suites = _ProposalSuites(conn)
    while True:
        pushed = int(
            conn.execute("SELECT pushed_seq FROM hub_sync WHERE hub = ?", (hub_id,)).fetchone()[0]
        )
        rows = conn.execute(_SELECT_UNPUSHED, (pushed, hub_id, batch)).fetchall()
        if not rows:
            return
        events = [dict(zip(EVENT_FIELDS, row[1:], strict=True)) for row in rows]
        outcome = hub.push([(suites.of(event), event) for event in events])
        result.pushed += outcome.added
        result.already_on_hub += outcome.already_there
        result.diverged.extend(outcome.diverged)
        mark = int(rows[-1][0])
        with transaction(conn):
            conn.execute(
                "UPDATE hub_sync SET pushed_seq = max(pushed_seq, ?) WHERE hub = ?", (mark, hub_id)
            )
            conn.execute("DELETE FROM hub_pulled WHERE hub = ? AND hi <= ?", (hub_id, mark))
        if len(rows) < batch:
            return


class _ProposalSuites:
    """The suite an event is about, for the hub's per-suite index: from its target, or for a
    proposal's events from the proposal it names."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.known: dict[str, str | None] = {}

    def of(self, event: dict[str, Any]) -> str | None:
        target = str(event["target"])
        if target.startswith("i:"):
            return None  # a claim of a name is about no suite
        if not target.startswith("p:"):
            return target[2:].partition("/")[0] or None
        if event["action"] == "propose":
            return proposal_suite(event["value"])
        if target not in self.known:
            row = self.conn.execute(
                "SELECT value FROM review_event WHERE target = ? AND action = 'propose' LIMIT 1",
                (target,),
            ).fetchone()
            self.known[target] = proposal_suite(row[0]) if row else None
        return self.known[target]


# -- pull ----------------------------------------------------------------------------------------


def _pull(conn: sqlite3.Connection, hub: Hub, hub_id: str, batch: int, result: SyncResult) -> None:
    dense_after = hub.dense_after()
    while True:
        after = int(
            conn.execute("SELECT pulled_id FROM hub_sync WHERE hub = ?", (hub_id,)).fetchone()[0]
        )
        rows = hub.pull(after, batch)
        if not rows:
            return
        in_order = contiguous(after, rows, dense_after)
        if in_order < len(rows):
            before = rows[in_order - 1].id if in_order else after
            result.gap = (before, rows[in_order].id)
        if in_order:
            result.pulled += in_order
            _merge_rows(conn, hub, hub_id, rows[:in_order], result)
        if result.gap is not None or len(rows) < batch:
            return


def gap_message(gap: tuple[int, int]) -> str:
    return (
        f"the hub's event ids jump from {gap[0]:,} to {gap[1]:,}: nothing after the jump was "
        'merged here (the hub\'s owner must look: see docs/teams.md, "A gap in the hub")'
    )


def contiguous(after: int, rows: Sequence[HubRow], dense_after: int) -> int:
    """How many of ``rows`` follow the cursor ``after`` without a jump in ids.

    The server numbers events densely in commit order, so a jump is never a transaction
    still committing: it is an event written past the server's numbering (its owner's
    doing). The cursor stops before it, so it can never move past events it did not read,
    and the events after the jump wait, since they may depend on what is missing (an undo
    after the decision it reverses). Ids up to ``dense_after`` (an upgraded hub's old
    numbering) may have gaps."""
    expected = after
    for position, row in enumerate(rows):
        if row.id != expected + 1 and row.id > dense_after:
            return position
        expected = row.id
    return len(rows)


def _parse(
    rows: Sequence[HubRow],
) -> tuple[list[tuple[int, LogEvent]], list[tuple[int, str | None, str]]]:
    events: list[tuple[int, LogEvent]] = []
    bad: list[tuple[int, str | None, str]] = []
    for row in rows:
        try:
            event = LogEvent.model_validate(normalized(dict(row.event)))
            check_event(event)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            bad.append((row.id, _text(row.event.get("uuid")), f"field {where!r}: {first['msg']}"))
            continue
        except ValueError as exc:
            bad.append((row.id, _text(row.event.get("uuid")), str(exc)))
            continue
        events.append((row.id, event))
    return events, bad


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _merge_rows(
    conn: sqlite3.Connection, hub: Hub, hub_id: str, rows: Sequence[HubRow], result: SyncResult
) -> None:
    """Merge one pulled batch with its cursor move, in one local transaction; an event the
    merge refuses is quarantined and the batch merged again without it."""
    events, rejected = _parse(rows)
    last = rows[-1].id
    subjects = [event.target for _, event in events if event.target.startswith("s:")]
    while True:
        try:
            with transaction(conn):
                before = _conflicted(conn, subjects)
                mark = _max_seq(conn)
                merged = merge_events(conn, events, f"hub {hub.name}")
                top = _max_seq(conn)
                if top > mark:
                    conn.execute("INSERT INTO hub_pulled VALUES (?, ?, ?)", (hub_id, mark, top))
                    result.reports.extend(_touched_reports(conn, mark, top))
                conn.executemany(
                    "INSERT OR IGNORE INTO hub_rejected VALUES (?, ?, ?, ?)",
                    [(hub_id, *bad) for bad in rejected],
                )
                conn.execute(
                    "UPDATE hub_sync SET pulled_id = max(pulled_id, ?) WHERE hub = ?",
                    (last, hub_id),
                )
        except InputError as exc:
            position = next(
                (i for i, (hub_event, _) in enumerate(events) if hub_event == exc.line), None
            )
            if position is None:
                raise
            hub_event, event = events.pop(position)
            rejected.append((hub_event, event.uuid, exc.message))
            continue
        result.merged += merged.added
        if merged.added:
            result.new_conflicts.extend(_conflicted(conn, subjects) - before)
        result.pending_subjects += merged.pending
        result.rejected.extend(rejected)
        return


def _max_seq(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(seq), 0) FROM review_event").fetchone()[0])


def _touched_reports(conn: sqlite3.Connection, lo: int, hi: int) -> Iterable[int]:
    """Reports whose review state the events in (lo, hi] change: their own report, or every
    report of a proposal's task."""
    for (report_id,) in conn.execute(
        """SELECT DISTINCT report_id FROM review_event
               WHERE seq > ? AND seq <= ? AND report_id IS NOT NULL""",
        (lo, hi),
    ):
        yield int(report_id)
    for (report_id,) in conn.execute(
        """SELECT DISTINCT r.id FROM review_event e
               JOIN proposal p ON 'p:' || p.uuid = e.target
               JOIN report r ON r.task_id = p.task_id
               WHERE e.seq > ? AND e.seq <= ? AND e.target LIKE 'p:%'""",
        (lo, hi),
    ):
        yield int(report_id)
