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
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, assert_never

from reviewer.errors import InputError
from store.backend.commands import (
    AcceptProposal,
    Activate,
    Adjudicate,
    Call,
    Confirm,
    Decide,
    DrawPlan,
    Flag,
    LogCommand,
    PreviewActivation,
    ProposalCommand,
    Propose,
    Rate,
    Redo,
    RejectProposal,
    Retire,
    RunCommand,
    Undo,
    WriteCommand,
    WriteResult,
)
from store.db.connection import connect
from store.sqlite.tx import transaction
from store.sqlite.writelock import describe_holder, is_busy
from store.views.screens import (
    judgment_history,
    judgment_views,
    report_primary,
    report_scores,
    system_rank,
)

if TYPE_CHECKING:
    from store.reviewlog.events import Recorded, ReviewLog

T = TypeVar("T")


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
        """Queue ``command`` for the writer; anything that is not a write command is refused
        here, in the caller's thread, rather than reaching the writer."""
        if not isinstance(command, WriteCommand):
            raise TypeError(f"not a write command: {command!r}")
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

        def run(conn: sqlite3.Connection) -> None:
            future.set_result(action(conn))

        self.submit(Call(run, future.set_exception))
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

    def _mark_dirty(self, report_ids: Iterable[int]) -> None:
        with self._dirty_lock:
            self.dirty_reports.update(report_ids)

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
                return self._apply(conn, log, command)
            except sqlite3.OperationalError as exc:
                # Nothing was stored, so the cache may hold scores that never were: it would
                # write them to the stored score columns on the next decision.
                self._score_cache.clear()
                if not is_busy(exc) or self._stopping.is_set():
                    return WriteResult(command, error=f"not stored: {exc}")
                waited += self.busy_wait
                deliver(WriteResult(command, waiting=waited, note=describe_holder(self.path)))
            except sqlite3.Error as exc:
                self._score_cache.clear()
                return WriteResult(command, error=f"not stored: {exc}")

    def _apply(
        self, conn: sqlite3.Connection, log: ReviewLog, command: WriteCommand
    ) -> WriteResult:
        """Judge-run commands manage their own transactions; every other command runs in one
        that also notes the events it wrote as this workstation's own."""
        match command:
            case PreviewActivation() | Activate() | Retire():
                return self._runs(conn, command)
            case _:
                with transaction(conn):
                    before = conn.execute(
                        "SELECT coalesce(max(seq), 0) FROM review_event"
                    ).fetchone()[0]
                    result = self._apply_in_transaction(conn, log, command)
                    mine = [
                        u
                        for (u,) in conn.execute(
                            "SELECT uuid FROM review_event WHERE seq > ?", (before,)
                        )
                    ]
                    with self._dirty_lock:  # before the commit: the watcher never
                        self.own_events.update(mine)  # sees them as another's
                return result

    def _apply_in_transaction(
        self,
        conn: sqlite3.Connection,
        log: ReviewLog,
        command: LogCommand | ProposalCommand | DrawPlan | Call,
    ) -> WriteResult:
        match command:
            case Decide() | Adjudicate() | Confirm() | Flag() | Rate() | Undo() | Redo():
                return self._decision(conn, log, command)
            case Propose() | AcceptProposal() | RejectProposal():
                return self._proposal(conn, log, command)
            case DrawPlan():
                return self._draw_plan(conn, command)
            case Call():
                return self._call(conn, command)
            case _:
                assert_never(command)

    def _decision(
        self, conn: sqlite3.Connection, log: ReviewLog, command: LogCommand
    ) -> WriteResult:
        """Record one decision and update the scores it moves, then read back what the screen
        redraws: the judgment, its history, the report's scores and the system's rank."""
        from store.reviewlog.events import ReviewError

        try:
            # The event and the scores it changes commit together: a crash between them
            # cannot leave stale scores, and a busy database leaves neither written.
            with transaction(conn):
                recorded = _record(log, command)
                if recorded is not None and recorded.report_id is not None:
                    self._update_scores(conn, [recorded.report_id], cache=self._score_cache)
        except ReviewError as exc:
            return WriteResult(command, error=str(exc))
        except sqlite3.Error:
            self._score_cache.clear()  # it may hold a rolled-back system's scores
            raise
        if recorded is None or recorded.report_id is None:
            return WriteResult(command, recorded)
        self._mark_dirty([recorded.report_id])
        return _redraw(conn, command, recorded, recorded.report_id)

    def _proposal(
        self, conn: sqlite3.Connection, log: ReviewLog, command: ProposalCommand
    ) -> WriteResult:
        from store.reviewlog.events import ReviewError

        # Accepting or rejecting rescores a task on this connection, past the cache.
        self._score_cache.clear()
        task_reports: list[int] = []
        try:
            with transaction(conn):
                if isinstance(command, Propose):
                    note = _propose(conn, log.reviewer, command)
                else:
                    note, task_reports = _decide_proposal(conn, log.reviewer, command)
        except ReviewError as exc:
            return WriteResult(command, error=str(exc))
        self._mark_dirty(task_reports)
        scores = report_scores(conn, command.report_id) if isinstance(command, Propose) else []
        return WriteResult(command, scores=scores, note=note)

    def _draw_plan(self, conn: sqlite3.Connection, command: DrawPlan) -> WriteResult:
        from store.plans.design import create_plan

        try:
            made = create_plan(conn, command.spec, self.reviewer)
        except InputError as exc:
            return WriteResult(command, error=f"no plan drawn: {exc.message}")
        note = made.summary() + (f" ({made.note})" if made.note else "")
        return WriteResult(command, data=made, note=note)

    def _call(self, conn: sqlite3.Connection, command: Call) -> WriteResult:
        self._score_cache.clear()  # the action may rescore past the cache
        try:
            command.run(conn)
        except sqlite3.OperationalError as exc:
            if is_busy(exc) and not self._stopping.is_set():
                raise  # the retry loop runs it again once the lock frees
            command.fail(exc)
        except Exception as exc:
            command.fail(exc)
        return WriteResult(command)

    def _runs(self, conn: sqlite3.Connection, command: RunCommand) -> WriteResult:
        """Judge-run activation goes through the single writer too: even the preview takes
        the write lock (it applies the activation and rolls it back)."""
        from store.runs.activation import NeedsConfirmation, activate, preview
        from store.runs.records import set_active

        self._score_cache.clear()
        try:
            match command:
                case PreviewActivation():
                    return WriteResult(command, data=preview(conn, command.run))
                case Activate():
                    touched = activate(conn, command.run, confirmed=command.confirmed)
                    verb = "activated"
                case Retire():
                    touched = set_active(conn, command.run, False)
                    verb = "retired"
                case _:
                    assert_never(command)
        except NeedsConfirmation as exc:
            return WriteResult(command, data=exc.preview)
        except InputError as exc:
            return WriteResult(command, error=str(exc))
        self._mark_dirty(touched)
        return WriteResult(
            command, note=f"run {command.run} {verb}: {len(touched)} reports rescored"
        )


def _record(log: ReviewLog, command: LogCommand) -> Recorded | None:
    """Write the review-log event of a decision, stamped when the reviewer acted; None
    where undo or redo found nothing."""
    with log.stamped(command.at):
        return _write_event(log, command)


def _write_event(log: ReviewLog, command: LogCommand) -> Recorded | None:
    match command:
        case Decide():
            return log.decide(command.judgment_id, command.value, command.rationale, command.reason)
        case Adjudicate():
            return log.decide(
                command.judgment_id,
                command.value,
                command.rationale,
                command.reason,
                adjudicate=True,
            )
        case Confirm():
            return log.confirm(
                command.judgment_id, command.rationale, only_if_undecided=command.only_if_undecided
            )
        case Flag():
            return log.flag(command.judgment_id, command.on, command.note)
        case Rate():
            return log.rate(command.report_id, command.value, command.rationale)
        case Undo():
            return log.undo(command.report_id)
        case Redo():
            return log.redo(command.report_id)
        case _:
            assert_never(command)


def _redraw(
    conn: sqlite3.Connection, command: LogCommand, recorded: Recorded, report_id: int
) -> WriteResult:
    """The result of a stored decision: everything its report screen redraws."""
    ids = [recorded.judgment_id] if recorded.judgment_id is not None else []
    rank = None
    system = conn.execute("SELECT system_id FROM report WHERE id = ?", (report_id,)).fetchone()
    target = report_primary(conn, report_id)
    if system is not None and target is not None:
        rank = system_rank(conn, int(system[0]), *target)
    return WriteResult(
        command,
        recorded,
        judgments=judgment_views(conn, ids),
        history=judgment_history(conn, ids),
        scores=report_scores(conn, report_id),
        rank=rank,
    )


def _propose(conn: sqlite3.Connection, reviewer: str, command: Propose) -> str:
    """Record a ground-truth expansion drafted from a report; the note names the nearest
    existing item when it looks alike."""
    from store.reviews import proposals
    from store.reviews.proposal_drafts import draft

    made = draft(conn, command.report_id, command.judgment_id, command.kind, command.text)
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
    return note


def _decide_proposal(
    conn: sqlite3.Connection, reviewer: str, command: AcceptProposal | RejectProposal
) -> tuple[str, list[int]]:
    """Accept or reject a proposal; returns a note and the reports whose scores that changed
    (every report of the task)."""
    from store.reviews import proposals

    match command:
        case AcceptProposal():
            decided = proposals.accept(
                conn, reviewer, command.uuid, command.rationale, force=command.force
            )
        case RejectProposal():
            decided = proposals.reject(conn, reviewer, command.uuid, command.rationale)
        case _:
            assert_never(command)
    task_reports = [
        r for (r,) in conn.execute("SELECT id FROM report WHERE task_id = ?", (decided.task_id,))
    ]
    return f"{decided.status} proposal {decided.uuid[:8]}; the task is rescored", task_reports
