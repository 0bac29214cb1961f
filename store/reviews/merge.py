"""Portable review logs: export one database's log as JSONL, merge another reviewer's log in.

Export writes every event, in log order, one :class:`reviewer.logfile.LogEvent` a line. Log
order is causal (an undo or redo always comes after the event it reverses, also after merges,
because a merge appends in the source's order), so the file re-merges anywhere; the same
database always gives the same bytes.

Merge is a union by event uuid, in one transaction:

1. every event whose uuid is already present is skipped — if its content differs, the log is
   corrupt and nothing is merged;
2. every new event is checked: its target fits its action, its value its subject's scale, its
   signature verifies (an event with a key and a bad signature is forged or edited), and an
   undo, redo or superseding event reverses only its own identity's events — any failure names
   the line and merges nothing;
3. an event about a subject or report this database does not have is kept *pending*: it
   applies as soon as the subject appears (a later import or judge run); a proposal of a task
   not here likewise waits for its task;
4. derived state is brought up to date: for a few new events (a hub sync's), only the
   subjects, reports and tasks they touch, as the writer does after a decision; for many, by a
   rebuild from the whole log (``rebuild_state``) and of every score. Both give the same state.

Because step 4 amounts to a recompute from the union and the decision rules never depend on log
position or on comparing two reviewers' clocks, merging A then B, B then A, or either twice
gives the same decisions and scores; nothing is ever deleted, so a merge never loses a
decision. Two reviewers who decided a subject differently leave it in conflict (see
:mod:`store.reviewlog.conflicts`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from reviewer.actions import DECISION_ACTIONS
from reviewer.errors import InputError
from reviewer.identity import label, verify
from reviewer.logfile import LogEvent, Target, check_event, event_line, normalized, read_events
from reviewer.registry import frameworks, get_kind
from reviewer.scales import ScaleError
from store.reviewlog.events import (
    apply_event,
    legacy_owner,
    may_reverse,
    note_identity,
    rebuild_state,
    refresh_target,
    report_rating,
    trusted_adjudicators,
)
from store.reviews.proposals import insert_proposal, rescore_task
from store.scores.cache import rebuild_scores, update_scores
from store.sqlite.tx import transaction
from store.sqlite.writelock import announced

_COLUMNS = (
    "uuid, target, reviewer, action, value, rationale, reason, created_at, supersedes, "
    "run, key, sig"
)
INCREMENTAL_LIMIT = 2_000
"""Up to this many new events a merge updates only what they touch (a hub sync brings a few at
a time, and a rebuild would also throw away the workstation's impact cache); above it, a
rebuild of everything is the cheaper way to the same state."""
SQLITE_MAGIC = b"SQLite format 3\x00"


# -- export ------------------------------------------------------------------------------------


_NAMES = [c.strip() for c in _COLUMNS.split(",")]


def log_events(conn: sqlite3.Connection) -> Iterator[LogEvent]:
    """Every event in log order, streamed from a cursor, exactly as stored: what was checked
    when it entered this database is not judged again on the way out (an older release let
    in names a merge now refuses; the export still carries them, and the merge that reads it
    says so)."""
    for row in conn.execute(f"SELECT {_COLUMNS} FROM review_event ORDER BY seq"):
        yield LogEvent.model_construct(**dict(zip(_NAMES, row, strict=True)))


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
    pending: int = 0
    """Added events about subjects, reports or tasks this database does not have yet: kept,
    and applied when they appear."""
    unsigned: int = 0
    """Added events without a signature (written before signing): they speak only for their
    name; they undo or supersede no signed event, and an unsigned adjudication does not rule
    over signed reviewers (it stands beside them as one more side)."""
    future: int = 0
    """Added events stamped more than a day ahead of this machine's clock (harmless: time
    stamps only order one reviewer's own events)."""
    proposals_added: int = 0
    reviewers: list[str] = field(default_factory=list)
    """Reviewers whose events were added."""
    adjudicators: list[str] = field(default_factory=list)
    """Identities (``name#key``) whose adjudications were added. An adjudication outranks
    reviewers and Gavel knows no roles, so a merge names who adjudicated: one by an identity
    nobody expected is for the team to look at (and answer with its own adjudication, which
    turns the subject into a conflict between adjudicators)."""
    unruled: list[str] = field(default_factory=list)
    """Of ``adjudicators``, those whose adjudications do not rule here (unsigned, or an
    identity this database does not hold as an adjudicator's): each stands as one more side,
    a conflict where it differs, until ``gavel identity trust`` says otherwise."""
    conflicts: int = 0
    """Subjects in conflict after the merge (listed by ``gavel conflicts``)."""


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
                self.reports[ext] = dict(
                    self.conn.execute(
                        "SELECT r.ext_id, r.id FROM report r JOIN system y ON y.id = r.system_id "
                        "WHERE y.suite_id = ?",
                        (sid,),
                    )
                )
                self.runs[ext] = dict(
                    self.conn.execute("SELECT ext_id, id FROM judge_run WHERE suite_id = ?", (sid,))
                )
                self.tasks[ext] = dict(
                    self.conn.execute("SELECT ext_id, id FROM task WHERE suite_id = ?", (sid,))
                )
        return self.suites[ext]

    def report(self, suite: str, report: str) -> int | None:
        if self.suite(suite) is None:
            return None
        return self.reports[suite].get(report)

    def subject(self, target: str) -> tuple[int, int] | None:
        """(subject id, report id) of a subject target, if this database has it."""
        row = self.conn.execute(
            "SELECT id, report_id FROM subject WHERE target = ?", (target,)
        ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

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
    merging = _Merging(conn, source, skip_unknown)
    result = merging.result
    with transaction(conn), announced(conn, f"merge {source}"):
        for line, event in events:
            merging.take(line, event)
        if result.added > INCREMENTAL_LIMIT:
            rebuild_state(conn)
            rebuild_scores(conn)
        elif result.added:
            _apply_added(conn, list(merging.added.values()), merging.touched)
    result.reviewers = sorted(merging.reviewers)
    result.adjudicators = sorted(label(*who) for who in merging.adjudicators)
    trusted = trusted_adjudicators(conn) if merging.adjudicators else frozenset()
    result.unruled = sorted(
        label(*who) for who in merging.adjudicators if who[1] is None or who not in trusted
    )
    result.conflicts = int(
        conn.execute("SELECT count(*) FROM decision WHERE status = 'conflict'").fetchone()[0]
    )
    return result


class _Merging:
    """One merge under way: the events added so far (in log order), those left out, the
    reports they touch, who wrote them, and the counts."""

    def __init__(self, conn: sqlite3.Connection, source: str, skip_unknown: bool) -> None:
        self.conn = conn
        self.source = source
        self.skip_unknown = skip_unknown
        self.result = MergeResult(source)
        self.resolver = _Resolver(conn)
        self.added: dict[str, LogEvent] = {}
        self.touched: set[int] = set()
        self.skipped: set[str] = set()
        self.reviewers: set[str] = set()
        self.adjudicators: set[tuple[str, str | None]] = set()
        self.horizon = (datetime.now(UTC) + timedelta(days=1)).isoformat()

    def take(self, line: int, event: LogEvent) -> None:
        """Add one event, unless it is here already (the same, else an error) or left out."""
        self.result.read += 1
        if self._already_here(line, event):
            self.result.already_present += 1
            return
        if event.uuid in self.added:
            raise InputError(
                self.source,
                f"event {event.uuid} appears twice in the log",
                line=line,
                field="uuid",
            )
        _check_author(self.conn, event, line, self.source, self.added)
        placed = self._place(line, event)
        if placed is None:
            return
        report_id, pending = placed
        if event.action == "propose" and not pending:
            _insert_proposal(self.conn, self.resolver, event, line, self.source)
            self.result.proposals_added += 1
        self.conn.execute(
            f"""INSERT INTO review_event ({_COLUMNS}, judgment_id, report_id)
                VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
            (*_row(event), None, report_id),
        )
        self._count(event, report_id, pending)

    def _already_here(self, line: int, event: LogEvent) -> bool:
        existing = self.conn.execute(
            f"SELECT {_COLUMNS} FROM review_event WHERE uuid = ?", (event.uuid,)
        ).fetchone()
        if existing is not None and tuple(existing) != _row(event):
            raise InputError(
                self.source,
                f"event {event.uuid} is already in this database "
                "with different content (a corrupted or edited log)",
                line=line,
                field="uuid",
            )
        return existing is not None

    def _place(self, line: int, event: LogEvent) -> tuple[int | None, bool] | None:
        """(local report, whether it waits for its subject); None when it is left out (with
        ``skip_unknown``: a target this database does not have)."""
        try:
            report_id, pending = _locate(
                self.conn, self.resolver, event, line, self.source, self.added, self.skipped
            )
        except _Unknown as exc:
            if not self.skip_unknown:
                raise InputError(self.source, str(exc), line=line, field="supersedes") from None
            self._skip(line, event, str(exc))
            return None
        if pending and self.skip_unknown:
            self._skip(line, event, "not in this database")
            return None
        return report_id, pending

    def _skip(self, line: int, event: LogEvent, why: str) -> None:
        self.result.skipped.append((line, event.target, why))
        self.skipped.add(event.uuid)

    def _count(self, event: LogEvent, report_id: int | None, pending: bool) -> None:
        self.added[event.uuid] = event
        if report_id is not None and event.target.startswith("s:"):
            self.touched.add(report_id)
        self.reviewers.add(event.reviewer)
        if event.action == "adjudicate":
            self.adjudicators.add((event.reviewer, event.key))
        result = self.result
        result.added += 1
        result.pending += pending
        result.unsigned += event.key is None
        result.future += event.created_at > self.horizon


def _apply_added(conn: sqlite3.Connection, events: list[LogEvent], reports: set[int]) -> None:
    """Derived state after appending ``events`` (in log order), for just what they touch:
    liveness event by event, then each target's decision, flag or ratings, then the scores of
    the reports decided on and of the tasks whose proposals were accepted or rejected — as the
    writer does for one decision, and equal to a rebuild (tests hold them to it). A name that
    becomes ambiguous (a second identity) changes how every decision shows its reviewers, so
    then the state is rebuilt whole."""
    ambiguous = False
    for event in events:
        apply_event(conn, event.uuid, event.action, event.supersedes)
        ambiguous |= note_identity(conn, event.reviewer, event.key) or event.action == "claim"
    if ambiguous:
        rebuild_state(conn)
    else:
        for target in dict.fromkeys(event.target for event in events):
            refresh_target(conn, target)
    tasks = _proposal_tasks(conn, events)
    rescored = {
        int(r[0])
        for task in tasks
        for r in conn.execute("SELECT id FROM report WHERE task_id = ?", (task,))
    }
    update_scores(conn, reports - rescored)
    for task in tasks:
        rescore_task(conn, task)


def _proposal_tasks(conn: sqlite3.Connection, events: list[LogEvent]) -> list[int]:
    """The tasks whose proposals ``events`` accept or reject."""
    decided = sorted({event.target[2:] for event in events if event.action in ("accept", "reject")})
    if not decided:
        return []
    return sorted(
        {
            int(row[0])
            for row in conn.execute(
                "SELECT DISTINCT task_id FROM proposal "
                f"WHERE uuid IN ({','.join('?' * len(decided))})",
                decided,
            )
        }
    )


def _row(event: LogEvent) -> tuple[Any, ...]:
    return (
        event.uuid,
        event.target,
        event.reviewer,
        event.action,
        event.value,
        event.rationale,
        event.reason,
        event.created_at,
        event.supersedes,
        event.run,
        event.key,
        event.sig,
    )


def _check_author(
    conn: sqlite3.Connection, event: LogEvent, line: int, source: str, added: dict[str, LogEvent]
) -> None:
    """The event speaks only for its author: a key's signature verifies, and what it undoes,
    redoes or supersedes is its own identity's."""
    if event.key is not None and not verify(event.model_dump()):
        raise InputError(
            source,
            f"event {event.uuid} by {event.reviewer!r}: its signature does "
            "not verify (a forged or edited event)",
            line=line,
            field="sig",
        )
    if event.key is None and event.sig is not None:
        raise InputError(source, "a signature without a key", line=line, field="key")
    if event.supersedes is not None:
        _check_reversal_author(conn, event, event.supersedes, line, source, added)


def _check_reversal_author(
    conn: sqlite3.Connection,
    event: LogEvent,
    supersedes: str,
    line: int,
    source: str,
    added: dict[str, LogEvent],
) -> None:
    """What an event undoes, redoes or supersedes is its own identity's, or its name's
    unsigned events once its key claimed them."""
    author = _author(conn, supersedes, added)
    if author is None:
        return
    owner = legacy_owner(conn, author[0]) if author[1] is None else None
    if may_reverse(event.reviewer, event.key, *author, owner):
        return
    verb = event.action if event.action in ("undo", "redo") else "supersede"
    if author[0] == event.reviewer and author[1] is None:
        raise InputError(
            source,
            f"event {event.uuid} by {label(event.reviewer, event.key)} would {verb} an "
            f"unsigned event of {author[0]!r} (written before signing), but that key has not "
            f"claimed the name's unsigned events: a log that merely says {author[0]!r} cannot "
            f"take them over (the reviewer runs `gavel identity claim {author[0]}` first)",
            line=line,
            field="supersedes",
        )
    raise InputError(
        source,
        f"event {event.uuid} by {label(event.reviewer, event.key)} "
        f"would {verb} an event by {label(*author)}: an event can only undo "
        "or supersede its own author's events",
        line=line,
        field="supersedes",
    )


def _author(
    conn: sqlite3.Connection, uuid: str, added: dict[str, LogEvent]
) -> tuple[str, str | None] | None:
    """(reviewer, key) of an event earlier in the log or in this database, if known."""
    previous = added.get(uuid)
    if previous is not None:
        return previous.reviewer, previous.key
    row = conn.execute("SELECT reviewer, key FROM review_event WHERE uuid = ?", (uuid,)).fetchone()
    return None if row is None else (str(row[0]), row[1])


def _locate(
    conn: sqlite3.Connection,
    resolver: _Resolver,
    event: LogEvent,
    line: int,
    source: str,
    added: dict[str, LogEvent],
    skipped: set[str],
) -> tuple[int | None, bool]:
    """Local report id (if any) and whether the event waits for its subject, after checking
    it fits this database."""
    try:
        target = check_event(event)
    except ValueError as exc:
        raise InputError(source, str(exc), line=line, field="target") from None
    if event.action in ("undo", "redo"):
        _check_reversal(conn, event, line, source, added, skipped)
    if target.type == "subject":
        return _locate_subject(resolver, event, target, line, source)
    if target.type == "report":
        return _locate_report(conn, resolver, event, target, line, source)
    # proposals: the propose event brings the proposal; the others need it (or its propose)
    if event.action == "propose":
        return None, not _proposal_task_known(resolver, event, line, source)
    proposal_uuid = target.parts[0]
    known = conn.execute("SELECT 1 FROM proposal WHERE uuid = ?", (proposal_uuid,)).fetchone()
    return None, known is None


def _check_reversal(
    conn: sqlite3.Connection,
    event: LogEvent,
    line: int,
    source: str,
    added: dict[str, LogEvent],
    skipped: set[str],
) -> None:
    """An undo or redo reverses an event on the same target, in this database or earlier in
    the log (one left out leaves it out too)."""
    assert event.supersedes is not None  # check_event guarantees it
    if event.supersedes in skipped:
        raise _Unknown(f"the event it reverses ({event.supersedes}) was left out")
    earlier = added.get(event.supersedes)
    reversed_target = earlier.target if earlier is not None else None
    if reversed_target is None:
        row = conn.execute(
            "SELECT target FROM review_event WHERE uuid = ?", (event.supersedes,)
        ).fetchone()
        reversed_target = None if row is None else str(row[0])
    if reversed_target is None:
        raise InputError(
            source,
            f"{event.action} names event {event.supersedes}, which is "
            "neither in this database nor earlier in the log",
            line=line,
            field="supersedes",
        )
    if reversed_target != event.target:
        raise InputError(
            source,
            f"{event.action} targets {event.target} but the event it "
            f"reverses targets {reversed_target}",
            line=line,
            field="target",
        )


def _locate_subject(
    resolver: _Resolver, event: LogEvent, target: Target, line: int, source: str
) -> tuple[int | None, bool]:
    """A decision's value is one of its kind's scale, a flag's on or off; the event waits
    when the subject is not here yet."""
    if event.action in DECISION_ACTIONS:
        kind = get_kind(target.parts[2])
        if kind is None:
            raise InputError(
                source, f"unknown verdict kind {target.parts[2]!r}", line=line, field="target"
            )
        _check_value(event, line, source, kind.scale.normalize)
    elif event.action == "flag" and event.value not in ("on", "off"):
        raise InputError(source, "a flag's value is 'on' or 'off'", line=line, field="value")
    found = resolver.subject(event.target)
    return (found[1], False) if found else (resolver.report(*target.parts[:2]), True)


def _locate_report(
    conn: sqlite3.Connection,
    resolver: _Resolver,
    event: LogEvent,
    target: Target,
    line: int,
    source: str,
) -> tuple[int | None, bool]:
    """A rating is a value of the report's rating scale (of any benchmark's while the report
    is not here yet); the event waits when the report is not here."""
    rated = resolver.report(*target.parts)
    if event.action == "rate":
        rating = report_rating(conn, rated) if rated is not None else None
        scales = (
            [rating.scale]
            if rating is not None
            else [fw.rating.scale for fw in frameworks().values() if fw.rating is not None]
        )
        if not scales:
            raise InputError(
                source,
                "a rating, but no benchmark here rates reports",
                line=line,
                field="action",
            )
        _check_value(event, line, source, _any_of(scales))
    return rated, rated is None


def _any_of(scales: list[Any]) -> Any:
    def normalize(value: object) -> str:
        for scale in scales:
            try:
                code: str = scale.normalize(value)
                return code
            except ScaleError:
                continue
        raise ScaleError(f"{value!r} is not a rating")

    return normalize


def _check_value(event: LogEvent, line: int, source: str, normalize: Any) -> None:
    try:
        ok = event.value is not None and normalize(event.value) == event.value
    except ScaleError:
        ok = False
    if not ok:
        raise InputError(
            source,
            f"value {event.value!r} is not a value of this judgment's scale (in its stored form)",
            line=line,
            field="value",
        )


def _proposal_spec(event: LogEvent, line: int, source: str) -> dict[str, Any]:
    try:
        spec = json.loads(event.value or "")
        missing = [k for k in ("task", "framework", "kind", "payload") if k not in spec]
        if missing:
            raise KeyError(missing[0])
    except (json.JSONDecodeError, KeyError, TypeError):
        raise InputError(
            source,
            "a propose event's value is the proposal as JSON (task, framework, kind, payload, …)",
            line=line,
            field="value",
        ) from None
    if not isinstance(spec, dict):
        raise InputError(
            source, "a propose event's value is a JSON object", line=line, field="value"
        )
    return spec


def _proposal_task_known(resolver: _Resolver, event: LogEvent, line: int, source: str) -> bool:
    spec = _proposal_spec(event, line, source)
    suite, _, task = str(spec["task"]).partition("/")
    return resolver.task(suite, task) is not None


def _insert_proposal(
    conn: sqlite3.Connection, resolver: _Resolver, event: LogEvent, line: int, source: str
) -> None:
    proposal_uuid = event.target[2:]
    if conn.execute("SELECT 1 FROM proposal WHERE uuid = ?", (proposal_uuid,)).fetchone():
        return
    spec = _proposal_spec(event, line, source)
    suite, _, task = str(spec["task"]).partition("/")
    task_id = resolver.task(suite, task)
    if task_id is None:
        return  # pending: materialize_proposals adds it
    report_id = None
    if spec.get("report"):
        rsuite, _, report = str(spec["report"]).partition("/")
        report_id = resolver.report(rsuite, report)
    suite_id = resolver.suite(suite)
    assert suite_id is not None
    insert_proposal(
        conn,
        proposal_uuid,
        spec,
        suite_id,
        task_id,
        report_id,
        event.reviewer,
        event.rationale,
        event.created_at,
    )


def materialize_proposals(conn: sqlite3.Connection) -> int:
    """Proposals merged before their task was imported, added now that it may be."""
    resolver = _Resolver(conn)
    made = 0
    for row in conn.execute(
        f"""SELECT {_COLUMNS} FROM review_event e WHERE e.action = 'propose'
            AND NOT EXISTS (SELECT 1 FROM proposal p WHERE 'p:' || p.uuid = e.target)
            ORDER BY e.seq"""
    ).fetchall():
        event = LogEvent.model_construct(**dict(zip(_NAMES, row, strict=True)))
        before = conn.execute("SELECT count(*) FROM proposal").fetchone()[0]
        _insert_proposal(conn, resolver, event, 0, "review log")
        made += conn.execute("SELECT count(*) FROM proposal").fetchone()[0] - before
    return made


# -- sources -----------------------------------------------------------------------------------


def database_events(path: Path) -> Iterator[tuple[int, LogEvent]]:
    """Events of another Gavel database, read-only, in its log order ("line" = position)."""
    other = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        try:
            present = {row[1] for row in other.execute("PRAGMA table_info(review_event)")}
            columns = [name if name in present else f"NULL AS {name}" for name in _NAMES]
            rows = other.execute(f"SELECT {', '.join(columns)} FROM review_event ORDER BY seq")
        except sqlite3.DatabaseError as exc:
            raise InputError(path, f"not a Gavel database ({exc})") from None
        for position, row in enumerate(rows, start=1):
            data = normalized(dict(zip(_NAMES, row, strict=True)))
            try:
                event = LogEvent.model_validate(data)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                field = ".".join(str(p) for p in first["loc"]) or None
                raise InputError(
                    path, f"event {data.get('uuid')}: {first['msg']}", line=position, field=field
                ) from None
            yield position, event
    finally:
        other.close()


def merge_path(conn: sqlite3.Connection, path: Path, *, skip_unknown: bool = False) -> MergeResult:
    """Merge a review log file (JSONL) or another Gavel database (told apart by content)."""
    if not path.is_file():
        raise InputError(path, "no such file")
    with path.open("rb") as probe:
        is_db = probe.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    if is_db:
        return merge_events(conn, database_events(path), str(path), skip_unknown=skip_unknown)
    with path.open(encoding="utf-8") as handle:
        try:
            return merge_events(
                conn, read_events(handle, str(path)), str(path), skip_unknown=skip_unknown
            )
        except UnicodeDecodeError as exc:
            raise InputError(path, f"not UTF-8 text ({exc.reason})") from None
