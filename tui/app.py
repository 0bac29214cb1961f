"""The Gavel review workstation (Textual app)."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import App
from textual.command import Hit, Hits, Provider
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState

from reviewer.textsafety import visible
from store.backend.commands import Redo, Undo, WriteCommand, WriteResult
from store.backend.workstation import Backend
from tui.config import Config
from tui.hub_sync import HubState, HubSynced, HubSyncer, what_changed
from tui.keymap import bindings, normalise_keymap, problems
from tui.messages import DatabaseChanged, DecisionStored
from tui.screens.modals import ConfirmDialog, HelpScreen
from tui.screens.queue import QueueScreen

if TYPE_CHECKING:
    from store.hub.server import Hub
    from store.reviewlog.events import Undoable
    from store.sqlite.changes import Change

WATCH_EVERY = 0.5
"""Seconds between looks at the database for other processes' commits."""
WAIT_REMINDER = 10.0
"""Seconds between reminders that a decision still waits for another process's lock."""
SETTLE_DELAY = 1.0
"""Seconds after the queue is up before the heap is settled (:meth:`GavelApp._settle`):
after the first screen has been painted, not in its way."""


class GavelCommands(Provider):
    """Command palette: jump to a report, filter, sort, rebuild."""

    def _commands(self) -> Iterator[tuple[str, str, object]]:
        app = self.app
        assert isinstance(app, GavelApp)
        queue = app.queue_screen
        yield (
            "Sort queue by impact",
            "order reports by how far one flip moves them",
            queue.action_sort_impact,
        )
        yield (
            "Sort queue by suspicion",
            "reports whose verdicts the flags point to first",
            queue.action_sort_suspicion,
        )
        yield "Clear queue filters", "show every report", queue.action_clear_filters
        for name, what in (
            ("differs", "reports with judge ≠ human"),
            ("undecided", "reports with undecided judgments"),
            ("conflicts", "reports with conflicts"),
            ("flagged", "reports flagged (⚑) for discussion"),
            ("suspicious", "reports with suspicious (◆) undecided verdicts"),
            ("hide_accepted", "hide reports left with verdicts a trust rule accepted (⊙)"),
        ):
            yield f"Filter: {what}", "toggle", partial(queue.action_toggle_filter, name)
        yield "Order queue by a column", "pick the column", queue.action_sort_column
        yield "Next benchmark run", "switch the queue to the next run", queue.action_cycle_suite
        yield (
            "Undo my last decision",
            "persistent undo",
            partial(app.backend.submit, Undo()),
        )
        yield (
            "Redo my last undone decision",
            "persistent redo",
            partial(app.backend.submit, Redo()),
        )
        yield (
            "Agreement statistics",
            "judge vs human, reviewers, UserPref vs ratings",
            app.action_agreement,
        )
        yield "Ground-truth proposals", "accept or reject proposals", app.action_proposals
        yield (
            "Estimates",
            "judge scores corrected by a review plan, ranks that could swap",
            app.action_estimates,
        )
        yield "Review a plan", "serve a review plan's subjects in order", app.action_plan_review
        yield "Search reports, claims and sources", "full-text search", queue.action_search
        yield "Show key bindings", "help", app.action_help
        for row in queue.rows:
            yield (
                f"Open report {row.report}",
                f"{row.task} · {row.system} · {row.domain}",
                partial(app.open_report, row.report_id),
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)  # type: ignore[arg-type]


class GavelApp(App[None]):
    CSS_PATH = "gavel.tcss"
    TITLE = "Gavel"
    BINDINGS = bindings("app")
    COMMANDS = App.COMMANDS | {GavelCommands}

    def __init__(
        self,
        db_path: Path,
        config: Config,
        *,
        busy_wait: float = 2.0,
        hub: Callable[[], Hub] | None = None,
        prewarm: bool = True,
        settle_heap: bool = False,
    ) -> None:
        super().__init__()
        self.config = config
        self.settle_heap = settle_heap
        """Once the first screen is up, take what is loaded out of the garbage collector's
        walks (:meth:`_settle`); a real session does (:func:`tui.launch.run_app`), an app
        in a test process does not (it would pin every later test's garbage)."""
        self._settled = False
        self.prewarm = prewarm
        """Import the judge runs screen's modules once the queue is up (:meth:`warm_up`); a
        served session does not: its memory counts once per reviewer, and a browser
        reviewer seldom opens that screen."""
        self.backend = Backend(db_path, config.reviewer, busy_wait=busy_wait)
        self.queue_screen = QueueScreen()
        self.started_at = time.perf_counter()
        self.ready_at: float | None = None
        self.report_shown_at: float | None = None
        self.last_report_id: int | None = None
        self.stored_at: float | None = None
        self.last_result: WriteResult | None = None
        self.keymap_problems = problems(config.keys)
        self.warmed = False
        """The judge runs screen's modules are imported (:meth:`warm_up`)."""
        self.failures: list[str] = []
        """Background failures shown to the user this session (tests read it)."""
        self._closing = False
        self._waiting: WriteCommand | None = None
        self._waiting_told = 0.0
        self._waiting_for = ""
        self._stop_watching = threading.Event()
        self.hub_state: HubState | None = None
        """The review hub's state for the status line (None: no hub configured)."""
        self.hub_syncer: HubSyncer | None = None
        self._hub = hub
        """Makes the hub to sync with (tests hand in a fake; default: the config's URL)."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification, from every screen, as plain text with control, bidirectional
        and zero-width characters made visible: messages carry report ids, reviewer names and
        errors from the data, which must never be read as markup or reach the terminal raw.
        (``markup`` is accepted and ignored.)"""
        super().notify(
            visible(message), title=visible(title), severity=severity, timeout=timeout, markup=False
        )

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header: task, system and report names come from the data (see notify)."""
        return super().format_title(
            visible(title, keep_newlines=False), visible(sub_title, keep_newlines=False)
        )

    def on_mount(self) -> None:
        self.set_keymap(normalise_keymap(self.config.keys))
        self._start_writer()
        self.run_worker(
            self._watch, thread=True, group="watch", name="database watcher", exit_on_error=False
        )
        self._start_hub_sync()
        self.push_screen(self.queue_screen)
        for problem in self.keymap_problems:
            self.notify(problem, title="Key bindings", severity="error", timeout=15)

    def _start_writer(self) -> None:
        self.run_worker(
            self._writer, thread=True, group="writer", name="writer", exit_on_error=False
        )

    def _start_hub_sync(self) -> None:
        """Sync with the configured hub in a thread worker, never on the UI thread."""
        from tui.hub_sync import pg_hub_factory, starting_state

        url = self.config.hub
        if url is None and self._hub is None:
            return
        make = self._hub or pg_hub_factory(url or "")
        self.hub_state = starting_state(url)
        self.hub_syncer = HubSyncer(self.backend.path, make, self.config.sync_every)
        self.run_worker(
            partial(self.hub_syncer.run, self.post_message),
            thread=True,
            group="hub",
            name="hub sync",
            exit_on_error=False,
        )

    @on(HubSynced)
    def hub_synced(self, message: HubSynced) -> None:
        """Put a sync's outcome on screen: every status line, the notifications it deserves,
        and the queue rows of reports whose decisions came in."""
        from tui.screens.report import ReportScreen
        from tui.widgets.hub_status import HubStatus

        previous, self.hub_state = self.hub_state, message.state
        for screen in self.screen_stack:
            for widget in screen.query(HubStatus):
                widget.show_state(message.state)
        for text, severity in what_changed(previous, message):
            self.notify(text, title="Review hub", severity=severity, timeout=8)
        result = message.result
        if result is None or not result.reports:
            return
        if self.queue_screen.rows:
            self.queue_screen.reload_rows(result.reports)
        screen = self.screen
        if isinstance(screen, ReportScreen) and screen.report_id in result.reports:
            self.notify(
                "decisions on this report came in from the hub: reopen it (escape, "
                "enter) to see them",
                title="Review hub",
                timeout=8,
            )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.worker_failed(event.worker)

    def worker_failed(self, worker: Worker[object]) -> None:
        """The one error path of every background task: say what failed and carry on.

        A failed load leaves its screen as it was; the writer is started again, and the
        commands queued behind the one that failed are kept.
        """
        error = worker.error
        what = worker.name or worker.group
        self.failures.append(f"{what}: {error!r}")
        self.notify(
            f"{what} failed: {error}", title="Background task failed", severity="error", timeout=12
        )
        if worker.group == "writer" and not self._closing:
            self._start_writer()

    def _watch(self) -> None:
        """Notice other processes' commits within a second (its own connection, its thread)."""
        from store.db.connection import connect
        from store.sqlite.changes import ChangeWatcher

        conn = connect(self.backend.path)
        try:
            watcher = ChangeWatcher(conn, self.backend.is_own)
            while not self._stop_watching.wait(WATCH_EVERY):
                change = watcher.poll()
                if change is not None:
                    self.post_message(DatabaseChanged(change))
        finally:
            conn.close()

    @on(DatabaseChanged)
    def database_changed(self, message: DatabaseChanged) -> None:
        """Bring what is on screen up to date with other sessions' commits.

        With many reviewers at once, every session hears of every decision: the queue behind
        a report is only marked stale (it reloads those rows when shown again), and a
        notice is shown only where the change is on screen, so a busy team costs each
        session what it shows, not what everybody does."""
        from tui.screens.report import ReportScreen

        change = message.change
        on_queue = self.screen is self.queue_screen
        showing = [s for s in self.screen_stack if isinstance(s, ReportScreen) and s.sees(change)]
        shown = on_queue or bool(showing)
        self._tell_of(change, shown)
        if change.structural:
            self.queue_screen.load()
        elif change.reports and on_queue:
            self.queue_screen.reload_rows(sorted(change.reports))
        elif change.reports:
            self.queue_screen.mark_stale(change.reports)
        for screen in showing:
            screen.refresh_from(change.reports, change.structural)

    def _tell_of(self, change: Change, shown: bool) -> None:
        """The notice for another session's change: decisions only where they are on
        screen; anything structural always (everything is reloaded)."""
        if change.events and shown:
            who = ", ".join(change.reviewers)
            self.notify(
                f"{who} changed {change.events} decision(s) in another session; refreshed",
                timeout=5,
            )
        elif change.structural:
            self.notify(
                "the database changed in another session (a suite, a judge run or a "
                "proposal); refreshed",
                timeout=5,
            )

    def _writer(self) -> None:
        self.backend.writer_loop(lambda result: self.post_message(DecisionStored(result)))

    @on(DecisionStored)
    def forward_decision(self, message: DecisionStored) -> None:
        # The writer posts to the app; the topmost screen that uses results redraws from it
        # (a modal on top, such as the rationale editor just closing, does not).
        from tui.screens.base import GavelScreen

        result = message.result
        if result.waiting is not None:
            self._tell_waiting(result, result.waiting)
            return
        if self.hub_syncer is not None and result.error is None:
            self.hub_syncer.poke()  # local first; the hub hears of it next
        if self._waiting is result.command:
            self._waiting = None
            if result.error is None:
                self.notify(f"{result.command.label} stored", timeout=3)

        for screen in reversed(self.screen_stack):
            if isinstance(screen, GavelScreen) and screen.show_result(message.result):
                return
        if message.result.error:
            self.notify(message.result.error, severity="error")

    def _tell_waiting(self, result: WriteResult, waiting: float) -> None:
        """Said when the wait starts and again every WAIT_REMINDER seconds, so the screen
        keeps saying that (and for whom) a decision waits, however long it takes."""
        first = self._waiting is not result.command
        if not first and waiting - self._waiting_told < WAIT_REMINDER:
            return
        self._waiting = result.command
        self._waiting_told = waiting
        self._waiting_for = result.note or "held by another process"
        still = "" if first else f" (still waiting, {waiting:.0f} s)"
        self.notify(
            f"the database is {self._waiting_for}: your "
            f"{result.command.label} is queued and will be stored when it "
            f"finishes (nothing is lost){still}",
            title="Database busy",
            severity="warning",
            timeout=WAIT_REMINDER,
        )

    def action_help(self) -> None:
        from tui.screens.base import GavelScreen

        screen = self.screen
        context = screen.KEY_CONTEXT if isinstance(screen, GavelScreen) else "queue"
        if not isinstance(screen, HelpScreen):
            self.push_screen(HelpScreen(context, normalise_keymap(self.config.keys)))

    def warm_up(self) -> None:
        """Once the queue is up: settle the heap (a real session, :meth:`_settle`), and
        import in a thread what the judge runs screen (R) needs: its store module brings the
        judge's HTTP client with it, which made R slow to open the first time."""
        if self.settle_heap and not self._settled:
            self._settled = True
            self.set_timer(SETTLE_DELAY, self._settle)
        if not self.prewarm:
            return
        self.run_worker(self._warm, thread=True, group="warm", name="warm-up", exit_on_error=False)

    def _settle(self) -> None:
        """What the session loaded to show its first screen (the modules, the queue's rows
        and cells) lives as long as the session; a full collection walks every object the
        collector tracks, and with a DailyReport-size queue that walk was a pause landing
        on the reviewer's keypresses. Collect once, then freeze what is left (gc.freeze):
        later collections walk only what the session makes afterwards."""
        gc.collect()
        gc.freeze()

    def _warm(self) -> None:
        import store.runs.activation
        import store.runs.records  # noqa: F401

        self.warmed = True

    def action_runs(self) -> None:
        from tui.screens.runs import RunsScreen

        if not isinstance(self.screen, RunsScreen):
            self.push_screen(RunsScreen())

    def refresh_everything(self) -> None:
        """After a change that moves scores everywhere (a run activated or retired)."""
        self.queue_screen.load()
        from tui.screens.report import ReportScreen

        for screen in self.screen_stack:
            if isinstance(screen, ReportScreen):
                screen.refresh_from(frozenset(), True)

    def action_undo_anywhere(self) -> None:
        """Undo from the queue: say which report and decision it would reverse, and ask."""
        self._find_undoable()

    @work(thread=True, exclusive=True, group="undo", exit_on_error=False)
    def _find_undoable(self) -> None:
        from store.reviewlog.events import latest_undoable
        from store.reviewlog.identity import existing_identity

        # Reading makes no key: without one there is nothing of this installation's to undo.
        mine = existing_identity(self.config.reviewer)
        key = None if mine is None else mine.public_key
        found = latest_undoable(self.backend.reader(), self.config.reviewer, key)
        self.call_from_thread(self._ask_undo, found)

    def _ask_undo(self, found: Undoable | None) -> None:
        if found is None:
            self.notify("nothing of yours to undo", severity="warning")
            return
        what = f"your {found.action}" + (f" → {found.value}" if found.value else "")

        def done(yes: bool | None) -> None:
            if yes:
                self.backend.submit(Undo(found.report_id))

        self.push_screen(
            ConfirmDialog(f"Undo {what}?", f"on {found.subject} in report {found.report}", "undo"),
            done,
        )

    def action_proposals(self) -> None:
        from tui.screens.proposals import ProposalsScreen

        if not isinstance(self.screen, ProposalsScreen):
            self.push_screen(ProposalsScreen())

    def action_estimates(self) -> None:
        from tui.screens.estimates import EstimatesScreen

        if not isinstance(self.screen, EstimatesScreen):
            self.push_screen(EstimatesScreen())

    def action_plan_review(self) -> None:
        from tui.screens.plan_review import PlanReviewScreen

        if not isinstance(self.screen, PlanReviewScreen):
            self.push_screen(PlanReviewScreen())

    def action_agreement(self) -> None:
        from tui.screens.agreement import AgreementScreen

        if not isinstance(self.screen, AgreementScreen):
            self.push_screen(AgreementScreen())

    def open_report(self, report_id: int) -> None:
        self.queue_screen.open_in_order(report_id)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.MouseDown) and _removed_under(self, event.x, event.y):
            return  # see _removed_under
        await super().on_event(event)

    async def action_quit(self) -> None:
        if self._waiting is None:
            self.exit()
            return

        # Quitting stops the writer: a decision still waiting for the lock would be lost.
        def done(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(
            ConfirmDialog(
                "Quit and lose a queued decision?",
                f"your {self._waiting.label} waits for the database ({self._waiting_for}); it is "
                "stored as soon as the lock frees if you stay",
                "quit anyway",
            ),
            done,
        )

    def on_unmount(self) -> None:
        self._closing = True
        self._stop_watching.set()
        if self.hub_syncer is not None:
            self.hub_syncer.stop()
        # Unblock the writer so its thread ends (commands already queued are applied first) and
        # stop the impact process.
        self.backend.shutdown()


def _removed_under(app: App[None], x: int, y: int) -> bool:
    """Whether a click lands on a widget already taken out of the screen (a refresh replaced
    it) that the screen's map still places there, as it does until the next layout on a busy
    machine. Textual's text selection takes such a widget's parent, which is gone, and the
    exception ends the session ('Session ended' in a browser); a click on what is no longer
    there is dropped instead."""
    from textual.screen import Screen

    if app.mouse_captured is not None:
        return False
    widget, offset = app.screen.get_widget_and_offset_at(x, y)
    return (
        widget is not None
        and offset is not None
        and not isinstance(widget, Screen)
        and widget.parent is None
    )
