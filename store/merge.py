"""Portable review logs: export one database's log as JSONL, merge another reviewer's log in.

Export writes every event, in log order, one :class:`reviewer.logfile.LogEvent` a line. Log
order is causal (an undo or redo always comes after the event it reverses, also after merges,
because a merge appends in the source's order), so the file re-merges anywhere; the same
database always gives the same bytes.

Merge is a union by event uuid, in one transaction:

1. every event whose uuid is already present is skipped — if its content differs, the log is
   corrupt and nothing is merged;
2. each new event's target is resolved to this database's judgment, report or proposal. A
   target that does not exist here is an error naming the line (import the bundle it comes
   from first) — or, with ``skip_unknown``, the event is left out and listed in the result;
3. derived state is rebuilt from the whole log (``rebuild_state``) and every score recomputed
   (``rebuild_scores``).

Because step 3 recomputes from the union and the decision rules order events by time, never by
position in the log, merging A then B, B then A, or either twice gives the same decisions and
scores; nothing is ever deleted, so a merge never loses a decision. Two reviewers who decided a
judgment differently leave it in conflict (see :mod:`store.conflicts`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from reviewer.actions import DECISION_ACTIONS
from reviewer.errors import InputError
from reviewer.logfile import LogEvent, Target, check_event, event_line, read_events
from reviewer.registry import get_kind
from reviewer.scales import ScaleError
from store.proposals import insert_proposal
from store.reviewlog import rebuild_state, report_rating
from store.scores import rebuild_scores
from store.tx import transaction

_COLUMNS = "uuid, target, reviewer, action, value, rationale, reason, created_at, supersedes"
SQLITE_MAGIC = b"SQLite format 3\x00"


# -- export ------------------------------------------------------------------------------------


def log_events(conn: sqlite3.Connection) -> Iterator[LogEvent]:
    """Every event in log order, streamed from a cursor."""
    names = [c.strip() for c in _COLUMNS.split(",")]
    for row in conn.execute(f"SELECT {_COLUMNS} FROM review_event ORDER BY seq"):
        yield LogEvent.model_validate(dict(zip(names, row, strict=True)))


def write_log(conn: sqlite3.Connection, out: TextIO) -> int:
    """Write the log as JSONL; returns the number of events."""
    n = 0
    for event in log_events(conn):
        out.write(event_line(event))
        out.write("\n")
        n += 1
    return n


# -- merge -------------------------------------------------------------------------------------


@dataclass(slots=True)
class MergeResult:
    source: str
    read: int = 0
    added: int = 0
    already_present: int = 0
    skipped: list[tuple[int, str, str]] = field(default_factory=list)
    """(line, target, why) of events left out with ``skip_unknown``."""
    proposals_added: int = 0
    reviewers: list[str] = field(default_factory=list)
    """Reviewers whose events were added."""
    conflicts: int = 0
    """Judgments in conflict after the merge (listed by ``gavel conflicts``)."""


class _Resolver:
    """Target -> local ids, with small per-suite lookup tables loaded on first use."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.suites: dict[str, int | None] = {}
        self.reports: dict[str, dict[str, int]] = {}
        self.runs: dict[str, dict[str, int]] = {}
        self.tasks: dict[str, dict[str, int]] = {}

    def suite(self, ext: str) -> int | None:
        if ext not in self.suites:
            row = self.conn.execute("SELECT id FROM suite WHERE ext_id = ?", (ext,)).fetchone()
            self.suites[ext] = None if row is None else int(row[0])
            if row is not None:
                sid = int(row[0])
                self.reports[ext] = dict(self.conn.execute(
                    "SELECT r.ext_id, r.id FROM report r JOIN system y ON y.id = r.system_id "
                    "WHERE y.suite_id = ?", (sid,)))
                self.runs[ext] = dict(self.conn.execute(
                    "SELECT ext_id, id FROM judge_run WHERE suite_id = ?", (sid,)))
                self.tasks[ext] = dict(self.conn.execute(
                    "SELECT ext_id, id FROM task WHERE suite_id = ?", (sid,)))
        return self.suites[ext]

    def report(self, suite: str, report: str) -> int | None:
        if self.suite(suite) is None:
            return None
        return self.reports[suite].get(report)

    def judgment(self, target: Target) -> tuple[int, int, str] | None:
        """(judgment id, report id, kind) of a judgment target."""
        suite, report, run, kind, subject = target.parts
        report_id = self.report(suite, report)
        run_id = self.runs.get(suite, {}).get(run)
        if report_id is None or run_id is None:
            return None
        row = self.conn.execute(
            "SELECT id FROM judgment WHERE run_id = ? AND report_id = ? AND kind = ? "
            "AND subject = ?", (run_id, report_id, kind, subject),
        ).fetchone()
        return None if row is None else (int(row[0]), report_id, kind)

    def task(self, suite: str, task: str) -> int | None:
        if self.suite(suite) is None:
            return None
        return self.tasks[suite].get(task)


class _Unknown(Exception):
    """A target this database does not have (an error, or a skip with ``skip_unknown``)."""


def merge_events(
    conn: sqlite3.Connection,
    events: Iterable[tuple[int, LogEvent]],
    source: str,
    *,
    skip_unknown: bool = False,
) -> MergeResult:
    """Union ``events`` ((line, event) pairs, in the source's order) into the database."""
    result = MergeResult(source)
    resolver = _Resolver(conn)
    added_targets: dict[str, str] = {}
    skipped_uuids: set[str] = set()
    reviewers: set[str] = set()
    with transaction(conn):
        for line, event in events:
            result.read += 1
            existing = conn.execute(
                f"SELECT {_COLUMNS} FROM review_event WHERE uuid = ?", (event.uuid,)
            ).fetchone()
            if existing is not None:
                if tuple(existing) != _row(event):
                    raise InputError(source, f"event {event.uuid} is already in this database "
                                     "with different content (a corrupted or edited log)",
                                     line=line, field="uuid")
                result.already_present += 1
                continue
            try:
                judgment_id, report_id = _locate(conn, resolver, event, line, source,
                                                 added_targets, skipped_uuids)
            except _Unknown as exc:
                if not skip_unknown:
                    raise InputError(
                        source, f"{exc} in this database: import the bundle it comes from "
                        "first, or merge with --skip-unknown to leave such events out",
                        line=line, field="target") from None
                result.skipped.append((line, event.target, str(exc)))
                skipped_uuids.add(event.uuid)
                continue
            if event.action == "propose":
                _insert_proposal(conn, resolver, event, line, source)
                result.proposals_added += 1
            conn.execute(
                f"""INSERT INTO review_event ({_COLUMNS}, judgment_id, report_id)
                    VALUES (?,?,?,?,?,?,?,?,?,?,?)""",
                (*_row(event), judgment_id, report_id),
            )
            added_targets[event.uuid] = event.target
            reviewers.add(event.reviewer)
            result.added += 1
        if result.added:
            rebuild_state(conn)
            rebuild_scores(conn)
    result.reviewers = sorted(reviewers)
    result.conflicts = int(conn.execute(
        "SELECT count(*) FROM decision WHERE status = 'conflict'").fetchone()[0])
    return result


def _row(event: LogEvent) -> tuple[Any, ...]:
    return (event.uuid, event.target, event.reviewer, event.action, event.value,
            event.rationale, event.reason, event.created_at, event.supersedes)


def _locate(conn: sqlite3.Connection, resolver: _Resolver, event: LogEvent, line: int,
            source: str, added: dict[str, str],
            skipped: set[str]) -> tuple[int | None, int | None]:
    """Local (judgment id, report id) for an event, after checking it fits this database."""
    try:
        target = check_event(event)
    except ValueError as exc:
        raise InputError(source, str(exc), line=line, field="target") from None
    if event.action in ("undo", "redo"):
        assert event.supersedes is not None  # check_event guarantees it
        if event.supersedes in skipped:
            raise _Unknown(f"the event it reverses ({event.supersedes}) was left out")
        reversed_target = added.get(event.supersedes)
        if reversed_target is None:
            row = conn.execute("SELECT target FROM review_event WHERE uuid = ?",
                               (event.supersedes,)).fetchone()
            reversed_target = None if row is None else str(row[0])
        if reversed_target is None:
            raise InputError(source, f"{event.action} names event {event.supersedes}, which is "
                             "neither in this database nor earlier in the log",
                             line=line, field="supersedes")
        if reversed_target != event.target:
            raise InputError(source, f"{event.action} targets {event.target} but the event it "
                             f"reverses targets {reversed_target}", line=line, field="target")
    if target.type == "judgment":
        found = resolver.judgment(target)
        if found is None:
            raise _Unknown(f"judgment {event.target} does not exist")
        judgment_id, report_id, kind_name = found
        if event.action in DECISION_ACTIONS:
            kind = get_kind(kind_name)
            _check_value(event, line, source,
                         lambda v: kind.scale.normalize(v) if kind is not None else v)
        elif event.action == "flag" and event.value not in ("on", "off"):
            raise InputError(source, "a flag's value is 'on' or 'off'", line=line, field="value")
        return judgment_id, report_id
    if target.type == "report":
        rated = resolver.report(*target.parts)
        if rated is None:
            raise _Unknown(f"report {event.target} does not exist")
        if event.action == "rate":
            rating = report_rating(conn, rated)
            if rating is None:
                raise InputError(source, "a rating of a report whose benchmarks have none",
                                 line=line, field="action")
            _check_value(event, line, source, rating.scale.normalize)
        return None, rated
    # proposals: the propose event brings the proposal; the others need it to exist
    if event.action != "propose":
        row = conn.execute("SELECT 1 FROM proposal WHERE uuid = ?", target.parts).fetchone()
        if row is None:
            raise _Unknown(f"proposal {event.target} does not exist")
    return None, None


def _check_value(event: LogEvent, line: int, source: str, normalize: Any) -> None:
    try:
        ok = event.value is not None and normalize(event.value) == event.value
    except ScaleError:
        ok = False
    if not ok:
        raise InputError(source, f"value {event.value!r} is not a value of this judgment's "
                         "scale (in its stored form)", line=line, field="value")


def _insert_proposal(conn: sqlite3.Connection, resolver: _Resolver, event: LogEvent, line: int,
                     source: str) -> None:
    proposal_uuid = event.target[2:]
    if conn.execute("SELECT 1 FROM proposal WHERE uuid = ?", (proposal_uuid,)).fetchone():
        return
    try:
        spec = json.loads(event.value or "")
        suite, _, task = str(spec["task"]).partition("/")
        missing = [k for k in ("framework", "kind", "payload") if k not in spec]
        if missing:
            raise KeyError(missing[0])
    except (json.JSONDecodeError, KeyError, TypeError):
        raise InputError(source, "a propose event's value is the proposal as JSON (task, "
                         "framework, kind, payload, …)", line=line, field="value") from None
    task_id = resolver.task(suite, task)
    if task_id is None:
        raise _Unknown(f"task {spec['task']} of proposal {event.target} does not exist")
    report_id = None
    if spec.get("report"):
        rsuite, _, report = str(spec["report"]).partition("/")
        report_id = resolver.report(rsuite, report)
        if report_id is None:
            raise _Unknown(f"report {spec['report']} of proposal {event.target} does not exist")
    suite_id = resolver.suite(suite)
    assert suite_id is not None
    insert_proposal(conn, proposal_uuid, spec, suite_id, task_id, report_id, event.reviewer,
                    event.rationale, event.created_at)


# -- sources -----------------------------------------------------------------------------------


def database_events(path: Path) -> Iterator[tuple[int, LogEvent]]:
    """Events of another Gavel database, read-only, in its log order ("line" = position)."""
    other = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        names = [c.strip() for c in _COLUMNS.split(",")]
        try:
            rows = other.execute(f"SELECT {_COLUMNS} FROM review_event ORDER BY seq")
        except sqlite3.DatabaseError as exc:
            raise InputError(path, f"not a Gavel database ({exc})") from None
        for position, row in enumerate(rows, start=1):
            yield position, LogEvent.model_validate(dict(zip(names, row, strict=True)))
    finally:
        other.close()


def merge_path(conn: sqlite3.Connection, path: Path, *, skip_unknown: bool = False
               ) -> MergeResult:
    """Merge a review log file (JSONL) or another Gavel database (told apart by content)."""
    if not path.is_file():
        raise InputError(path, "no such file")
    with path.open("rb") as probe:
        is_db = probe.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    if is_db:
        return merge_events(conn, database_events(path), str(path), skip_unknown=skip_unknown)
    with path.open(encoding="utf-8") as handle:
        try:
            return merge_events(conn, read_events(handle, str(path)), str(path),
                                skip_unknown=skip_unknown)
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 text ({exc.reason})") from None
