"""The workstation's database access: a read connection per thread and one writer thread.

SQLite connections are owned by the thread that opened them. Screens load views in thread
workers, each with its own read connection (``Backend.reader``). Every write — a decision, an
undo, a rating — goes through one long-lived writer worker that owns the only write connection,
so writes are applied in keypress order and the UI thread never waits on a commit; the writer
posts a typed message back once the transaction is committed and the scores are updated.
"""

from __future__ import annotations

import queue
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from reviewer.errors import InputError
from store.db.connection import connect
from store.sqlite.tx import transaction
from store.sqlite.writelock import describe_holder, is_busy
from store.views.screens import (
    History,
    JudgmentView,
    Rank,
    ScoreLine,
    judgment_history,
    judgment_views,
    report_primary,
    report_scores,
    system_rank,
)

if TYPE_CHECKING:
    from store.reviewlog.events import Recorded, ReviewLog

WriteKind = Literal[
    "decide",
    "confirm",
    "flag",
    "rate",
    "undo",
    "redo",
    "propose",
    "accept",
    "reject",
    "preview_activation",
    "activate",
    "deactivate",
    "call",
    "new_plan",
]


T = TypeVar("T")

RUN_COMMANDS = frozenset({"preview_activation", "activate", "deactivate"})


@dataclass(frozen=True, slots=True)
class WriteCommand:
    kind: WriteKind
    judgment_id: int | None = None
    report_id: int | None = None
    value: object = None
    rationale: str = ""
    reason: str | None = None
    flag_on: bool = True
    adjudicate: bool = False
    force: bool = False
    """Accept a flagged duplicate proposal; activate a run whose preview asks to confirm."""
    guard: bool = False
    """A confirmation that must not replace this reviewer's own decision (the enter key)."""
    issued_at: float = field(default_factory=time.perf_counter)


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What the writer committed, with everything the screen needs to redraw."""

    command: WriteCommand
    recorded: Recorded | None
    error: str | None
    judgments: dict[int, JudgmentView]
    history: dict[int, History]
    scores: list[ScoreLine]
    rank: Rank | None
    stored_at: float
    note: str | None = None
    """For proposals: what was recorded, and the nearest existing item if it looks alike."""
    waiting: float | None = None
    """Set on an interim result: the command is still queued behind another process's write
    lock, this many seconds so far (``note`` then says who holds it)."""
    data: object = None
    """What a command that reads rather than decides returns (an activation preview)."""


def _failed(
    command: WriteCommand, error: str | None, *, waiting: float | None = None
) -> WriteResult:
    return WriteResult(command, None, error, {}, {}, [], None, time.perf_counter(), waiting=waiting)


class Backend:
    def __init__(self, path: Path, reviewer: str, *, busy_wait: float = 2.0) -> None:
        self.path = path
        self.reviewer = reviewer
        self.busy_wait = busy_wait
        """Seconds one write attempt waits on another process's lock before the writer says
        it is waiting (it then tries again: the command is never dropped)."""
        self._local = threading.local()
        self._stopping = threading.Event()
        self._commands: queue.Queue[WriteCommand | None] = queue.Queue()
        self.dirty_reports: set[int] = set()
        self.own_events: set[str] = set()
        """Uuids of the events this workstation wrote (the change watcher skips them)."""
        self._dirty_lock = threading.Lock()
        self._impact: subprocess.Popen[str] | None = None

    def impact_batches(self) -> Iterator[list[int]]:
        """Run the impact process and yield the report ids of each batch it has committed.

        Blocks the calling (worker) thread on the child's output, never the UI thread.
        """
        self._impact = subprocess.Popen(
            [sys.executable, "-m", "store.backend.impact_worker", str(self.path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert self._impact.stdout is not None
        for line in self._impact.stdout:
            ids = [int(x) for x in line.split()]
            if ids:
                yield ids
        self._impact.wait()

    def shutdown(self) -> None:
        self.stop()
        if self._impact is not None and self._impact.poll() is None:
            self._impact.terminate()

    def reader(self) -> sqlite3.Connection:
        """This thread's own connection (opened on first use, closed with the thread)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path)
            self._local.conn = conn
        return conn

    # -- writing ---------------------------------------------------------------------------

    def submit(self, command: WriteCommand) -> None:
        self._commands.put(command)

    def stop(self) -> None:
        self._stopping.set()
        self._commands.put(None)

    def call(self, action: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``action`` on the writer's connection, in its turn, and wait for its result.

        For writers other than a keypress — a judge run started from the workstation hands
        this in as its ``write`` — so that every write still goes through the one writer.
        """
        future: Future[T] = Future()
        self.submit(WriteCommand("call", value=(action, future)))
        while True:
            try:
                return future.result(timeout=0.2)
            except FutureTimeout:
                if self._stopping.is_set() and not future.done():
                    raise RuntimeError("the workstation is closing: not written") from None

    def is_own(self, event_uuid: str) -> bool:
        with self._dirty_lock:
            return event_uuid in self.own_events

    def take_dirty(self) -> set[int]:
        with self._dirty_lock:
            dirty, self.dirty_reports = self.dirty_reports, set()
        return dirty

    def writer_loop(self, deliver: Callable[[WriteResult], object]) -> None:
        """Run in a thread worker: apply commands in order until ``stop``."""
        # Imported here, in the writer's thread: pydantic and the scorers are not needed to
        # draw the first screen.
        from store.reviewlog.events import ReviewLog
        from store.scores.cache import SystemScoreCache, update_scores

        conn = connect(self.path)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_wait * 1000)}")
        log = ReviewLog(conn, self.reviewer)
        self._update_scores = update_scores
        self._score_cache = SystemScoreCache()
        try:
            while True:
                command = self._commands.get()
                if command is None:
                    return
                deliver(self._apply_until_stored(conn, log, command, deliver))
        finally:
            conn.close()

    def _apply_until_stored(
        self,
        conn: sqlite3.Connection,
        log: ReviewLog,
        command: WriteCommand,
        deliver: Callable[[WriteResult], object],
    ) -> WriteResult:
        """Apply one command; while another process holds the write lock, keep it (and every
        command behind it, in order) and say so, rather than drop it."""
        waited = 0.0
        while True:
            try:
                if command.kind in RUN_COMMANDS:  # they manage their own transactions
                    return self._apply(conn, log, command)
                with transaction(conn):
                    before = conn.execute(
                        "SELECT coalesce(max(seq), 0) FROM review_event"
                    ).fetchone()[0]
                    result = self._apply(conn, log, command)
                    mine = [
                        u
                        for (u,) in conn.execute(
                            "SELECT uuid FROM review_event WHERE seq > ?", (before,)
                        )
                    ]
                    with self._dirty_lock:  # before the commit: the watcher never
                        self.own_events.update(mine)  # sees them as another's
                return result
            except sqlite3.OperationalError as exc:
                # Nothing was stored, so the cache may hold scores that never were: it would
                # write them to the stored score columns on the next decision.
                self._score_cache.clear()
                if not is_busy(exc) or self._stopping.is_set():
                    return _failed(command, f"not stored: {exc}")
                waited += self.busy_wait
                deliver(
                    replace(_failed(command, None, waiting=waited), note=describe_holder(self.path))
                )
            except sqlite3.Error as exc:
                self._score_cache.clear()
                return _failed(command, f"not stored: {exc}")

    def _apply(
        self,
        conn: sqlite3.Connection,
        log: ReviewLog,
        command: WriteCommand,
    ) -> WriteResult:
        from store.reviewlog.events import ReviewError

        if command.kind in RUN_COMMANDS:
            return self._runs(conn, command)
        if command.kind == "call":
            return self._call(conn, command)
        if command.kind == "new_plan":
            from store.plans.design import new_plan_result

            return replace(
                _failed(command, None), **new_plan_result(conn, self.reviewer, command.value)
            )
        if command.kind in ("propose", "accept", "reject"):
            # Accepting or rejecting rescores a task on this connection, past the cache.
            self._score_cache.clear()
            try:
                with transaction(conn):
                    note, task_reports = _proposal(conn, log.reviewer, command)
            except ReviewError as exc:
                return _failed(command, str(exc))
            with self._dirty_lock:
                self.dirty_reports.update(task_reports)
            scores = report_scores(conn, command.report_id) if command.report_id else []
            return WriteResult(command, None, None, {}, {}, scores, None, time.perf_counter(), note)
        try:
            # The event and the scores it changes commit together: a crash between them
            # cannot leave stale scores, and a busy database leaves neither written.
            with transaction(conn):
                recorded = _write(log, command)
                if recorded is not None and recorded.report_id is not None:
                    self._update_scores(conn, [recorded.report_id], cache=self._score_cache)
        except ReviewError as exc:
            return _failed(command, str(exc))
        except sqlite3.Error:
            self._score_cache.clear()  # it may hold a rolled-back system's scores
            raise
        if recorded is None or recorded.report_id is None:
            return WriteResult(command, recorded, None, {}, {}, [], None, time.perf_counter())
        report_id = recorded.report_id
        with self._dirty_lock:
            self.dirty_reports.add(report_id)
        ids = [recorded.judgment_id] if recorded.judgment_id is not None else []
        scores = report_scores(conn, report_id)
        rank = None
        system = conn.execute("SELECT system_id FROM report WHERE id = ?", (report_id,)).fetchone()
        target = report_primary(conn, report_id)
        if system is not None and target is not None:
            rank = system_rank(conn, int(system[0]), *target)
        return WriteResult(
            command,
            recorded,
            None,
            judgment_views(conn, ids),
            judgment_history(conn, ids),
            scores,
            rank,
            time.perf_counter(),
        )

    def _call(self, conn: sqlite3.Connection, command: WriteCommand) -> WriteResult:
        action: Callable[[sqlite3.Connection], object]
        future: Future[object]
        action, future = command.value  # type: ignore[misc]
        self._score_cache.clear()  # the action may rescore past the cache
        try:
            result = action(conn)
        except sqlite3.OperationalError as exc:
            if is_busy(exc) and not self._stopping.is_set():
                raise  # the retry loop runs it again once the lock frees
            future.set_exception(exc)
        except Exception as exc:
            future.set_exception(exc)
        else:
            future.set_result(result)
        return _failed(command, None)

    def _runs(self, conn: sqlite3.Connection, command: WriteCommand) -> WriteResult:
        """Judge-run activation goes through the single writer too: even the preview takes
        the write lock (it applies the activation and rolls it back)."""
        from store.runs.activation import NeedsConfirmation, activate, preview
        from store.runs.records import set_active

        run = str(command.value)
        self._score_cache.clear()
        try:
            if command.kind == "preview_activation":
                return replace(_failed(command, None), data=preview(conn, run))
            if command.kind == "activate":
                touched = activate(conn, run, confirmed=command.force)
            else:
                touched = set_active(conn, run, False)
        except NeedsConfirmation as exc:
            return replace(_failed(command, None), data=exc.preview)
        except InputError as exc:
            return _failed(command, str(exc))
        with self._dirty_lock:
            self.dirty_reports.update(touched)
        verb = "activated" if command.kind == "activate" else "retired"
        return replace(
            _failed(command, None), note=f"run {run} {verb}: {len(touched)} reports rescored"
        )


def _proposal(
    conn: sqlite3.Connection, reviewer: str, command: WriteCommand
) -> tuple[str, list[int]]:
    """Propose, accept or reject a ground-truth expansion; returns a note and the reports whose
    scores an accept or reject changed (every report of the task)."""
    from store.reviews import proposals
    from store.reviews.proposal_drafts import draft

    if command.kind == "propose":
        assert command.report_id is not None and isinstance(command.value, tuple)
        kind, text = command.value
        made = draft(conn, command.report_id, command.judgment_id, kind, text)
        proposed = proposals.propose(
            conn,
            reviewer,
            made.task_id,
            made.report_id,
            made.framework,
            made.kind,
            made.payload,
            made.span,
            command.rationale,
            made.target,
        )
        note = f"proposed {made.kind} {proposed.proposal.uuid[:8]} ({made.framework})"
        if proposed.nearest is not None and proposed.nearest.is_duplicate:
            note += (
                f"; it looks like {proposed.nearest.ref} (similarity "
                f"{proposed.nearest.score:.2f}): {proposed.nearest.text[:80]!r}"
            )
        return note, []
    assert isinstance(command.value, str)
    decided = (
        proposals.accept(conn, reviewer, command.value, command.rationale, force=command.force)
        if command.kind == "accept"
        else proposals.reject(conn, reviewer, command.value, command.rationale)
    )
    task_reports = [
        r for (r,) in conn.execute("SELECT id FROM report WHERE task_id = ?", (decided.task_id,))
    ]
    return f"{decided.status} proposal {decided.uuid[:8]}; the task is rescored", task_reports


def _write(log: ReviewLog, command: WriteCommand) -> Recorded | None:
    if command.kind == "undo":
        return log.undo(command.report_id)
    if command.kind == "redo":
        return log.redo(command.report_id)
    if command.kind == "rate":
        assert command.report_id is not None
        return log.rate(command.report_id, command.value, command.rationale)
    assert command.judgment_id is not None
    if command.kind == "confirm":
        return log.confirm(command.judgment_id, command.rationale, only_if_undecided=command.guard)
    if command.kind == "flag":
        return log.flag(command.judgment_id, command.flag_on, command.rationale)
    return log.decide(
        command.judgment_id,
        command.value,
        command.rationale,
        command.reason,
        adjudicate=command.adjudicate,
    )
