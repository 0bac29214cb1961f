"""The queue: every report with judge → adjudicated headline scores and review progress."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import JustifyMethod
from rich.text import Text as RichText
from textual import on, work
from textual.app import ComposeResult
from textual.widgets import DataTable, Header, Static
from textual.worker import get_current_worker

from reviewer.assignment import mine_first
from reviewer.impact import Impact
from store.assignments.blind import Hidden, hidden_work
from store.assignments.progress import TeamProgress, Work, my_work, team_progress
from store.sqlite.fts import search_reports
from store.triage.impact import cached_impacts, missing_impacts
from store.trust.standing import accepted_per_report
from store.views.screens import Headline, Progress, QueueRow, headlines, progress, queue_rows
from tui.blind import blinded_accepted, blinded_rows
from tui.filters import MOVING_SORTS, QueueFilter, select
from tui.keymap import bindings, display_key, effective_keys, normalise_keymap
from tui.messages import ImpactsComputed, QueueLoaded, QueueRowsChanged, SearchDone
from tui.render.safe import SafeText as Text
from tui.screens.base import GavelScreen
from tui.screens.modals import Picker, SearchDialog
from tui.widgets.footer import GavelFooter
from tui.widgets.hub_status import HubStatus
from tui.widgets.queue_table import QueueTable, band_text

if TYPE_CHECKING:
    from store.runs.bands import NoiseBand

SUSPECT = "◆"
"""The mark of verdicts that suspicion flags point to (queue column, judgment list)."""
ACCEPTED = "⊙"
"""A verdict a trust rule accepted without review (the report screen marks it alike)."""


@lru_cache(maxsize=1 << 16)
def shared_text(text: str, style: str = "", justify: JustifyMethod | None = None) -> Text:
    """One ``Text`` per distinct cell. A large run's queue rows repeat the same few distinct
    cells (task ids, systems, counts, scores), and the table only reads its cells: shared,
    they take a small part of the memory separate objects would."""
    return Text(text, style=style, justify=justify)


@lru_cache(maxsize=1 << 16)
def score_cell(judge: float | None, adjudicated: float | None, digits: int) -> Text:
    def fmt(value: float | None) -> str:
        if value is None:
            return "n/a"
        return (
            str(round(value))
            if digits == 0 or (digits <= 2 and value.is_integer())
            else f"{value:.{digits}f}"
        )

    if judge == adjudicated or adjudicated is None:
        return shared_text(fmt(judge), justify="right")
    up = judge is None or (adjudicated is not None and adjudicated > judge)
    text = Text(justify="right")
    text.append(fmt(judge), "dim")
    text.append(" → ")
    text.append(fmt(adjudicated), "bold green" if up else "bold red")
    return text


FIRST_ROWS = 200
"""Rows drawn with the first frame of the queue (several screenfuls)."""
LATER_ROWS = 500
"""Rows added per frame after that."""
IMPACT_WIDTH = len("-99.99 / -99.99")
"""The impact column's width when its heading is narrower: every impact cell fits (see
:func:`_short`), so cells never need measuring as they arrive."""

IMPACT_DELAY = 0.5
"""Seconds after the queue opens before the impact process starts."""


class QueueScreen(GavelScreen):
    KEY_CONTEXT = "queue"
    BINDINGS = bindings(KEY_CONTEXT)

    def __init__(self) -> None:
        super().__init__(id="queue")
        self.rows: list[QueueRow] = []
        self.shown: list[QueueRow] = []
        self.filter = QueueFilter()
        self.impacts: dict[int, Impact] = {}
        self.impact_pending = 0
        self.heads: list[Headline] = []
        self.suites: list[str] = []
        self.summary = Progress(0, 0, 0, 0, 0, 0)
        self.loaded_in = 0.0
        self._generation = 0
        self.mine: dict[int, Work] = {}
        """The reviewer's assignments per report: those with work left come first."""
        self.team = TeamProgress(0, 0, 0, 0, 0, 0)
        self._stale: set[int] = set()
        """Reports whose rows were brought up to date for the report screen's n (see
        :meth:`current_order`) but not yet redrawn in the table."""
        self.bands: dict[str, dict[str, NoiseBand]] = {}
        """Per suite with repeated runs, each system's score band (:meth:`load_bands`)."""
        self.accepted: dict[int, int] = {}
        """Verdicts a trust rule accepted, standing, per report (store.trust.rules)."""
        self._elsewhere: set[int] = set()
        """Reports another session changed while this screen was hidden (rows not reread)."""
        self._suite_filters: dict[str | None, QueueFilter] = {}
        """Each benchmark run's own filters and order, kept while another is on show (b)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="queue-status")
        yield Static("", id="queue-band")
        yield QueueTable(id="queue-table", cursor_type="row", zebra_stripes=True)
        yield HubStatus()
        yield GavelFooter()

    def on_mount(self) -> None:
        self.query_one(DataTable).loading = True
        self.load()

    def on_screen_resume(self) -> None:
        dirty = self.gavel.backend.take_dirty() | self._stale | self._elsewhere
        self._stale, self._elsewhere = set(), set()
        if dirty and self.rows:
            self.reload_rows(sorted(dirty))
        self.show_report(self.gavel.last_report_id)

    def mark_stale(self, report_ids: Iterable[int]) -> None:
        """Rows another session changed while this screen is hidden: reloaded when it is
        shown again (see :meth:`on_screen_resume`)."""
        self._elsewhere.update(report_ids)

    def show_report(self, report_id: int | None) -> None:
        """Put the cursor on a report (the one the reviewer came back from, after n/p)."""
        table = self.query_one(DataTable)
        if report_id is not None and str(report_id) in table.rows:
            table.move_cursor(row=table.get_row_index(str(report_id)))

    # -- loading ---------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="queue-load", exit_on_error=False)
    def load(self) -> None:
        started = time.perf_counter()
        conn = self.gavel.backend.reader()
        rows, hidden = self._rows(conn)
        self.impacts = cached_impacts(conn)
        self._load_assignments(conn)
        self.accepted = blinded_accepted(accepted_per_report(conn), hidden)
        self.post_message(QueueLoaded(rows, progress(rows), time.perf_counter() - started))

    @work(thread=True, group="queue-rows", exit_on_error=False)
    def reload_rows(self, report_ids: list[int]) -> None:
        conn = self.gavel.backend.reader()
        rows, hidden = self._rows(conn, report_ids)
        self._load_assignments(conn)
        # Only these reports' decisions changed: only their acceptances can have.
        self.accepted = self.accepted | blinded_accepted(
            accepted_per_report(conn, report_ids), hidden
        )
        self.post_message(QueueRowsChanged(rows))

    def _rows(
        self, conn: sqlite3.Connection, report_ids: list[int] | None = None
    ) -> tuple[list[QueueRow], dict[int, Hidden]]:
        """The queue's rows as this reviewer may see them: what others decided on their blind
        overlap subjects is left out (tui.blind)."""
        rows = queue_rows(conn, report_ids)
        hidden = hidden_work(conn, self.gavel.config.reviewer, report_ids)
        blinded_rows(rows, hidden)
        return rows, hidden

    def _load_assignments(self, conn: sqlite3.Connection) -> None:
        """(In the loading thread, before its message is posted.)"""
        self.mine = my_work(conn, self.gavel.config.reviewer)
        self.team = team_progress(conn)

    @work(thread=True, exclusive=True, group="impact", exit_on_error=False)
    def fill_impacts(self) -> None:
        """Impact is costly (dozens of rescorings a report): fill it in batches, in order.

        The number crunching happens in the backend's worker process; this thread only waits,
        so the interface stays responsive however many reports there are.
        """
        conn = self.gavel.backend.reader()
        remaining = len(missing_impacts(conn))
        worker = get_current_worker()
        for batch in self.gavel.backend.impact_batches():
            if worker.is_cancelled:
                return
            stored = cached_impacts(conn, batch)
            remaining -= len(batch)
            self.post_message(ImpactsComputed(stored, max(0, remaining)))

    @on(QueueLoaded)
    def loaded(self, message: QueueLoaded) -> None:
        self.rows = message.rows
        self.summary = message.progress
        self.loaded_in = message.elapsed
        self.suites = list(dict.fromkeys(r.suite for r in self.rows))
        if len(self.suites) > 1 and self.filter.suite is None:
            self.filter = replace(self.filter, suite=self.suites[0])
        table = self.query_one(DataTable)
        table.loading = False
        self.redraw()
        table.focus()
        self.gavel.ready_at = time.perf_counter()
        if len(self.impacts) < len(self.rows):
            # The impact process takes a core for a while: let the first screen paint first.
            self.set_timer(IMPACT_DELAY, self.fill_impacts)
        if not self.gavel.warmed:
            self.set_timer(IMPACT_DELAY, self.gavel.warm_up)
        self.load_bands()

    @work(thread=True, exclusive=True, group="queue-bands", exit_on_error=False)
    def load_bands(self) -> None:
        """Each system's score band over repeated runs, after the rows: the stored ones while
        the runs are as they were, else computed (scoring every run of a suite that has two
        or more) and stored."""
        from store.runs.bands import bands_fingerprint, repeated_suites, store_bands, stored_bands

        conn = self.gavel.backend.reader()
        if not repeated_suites(conn):  # (no band anywhere: nothing to compute or import)
            self.app.call_from_thread(self.show_bands, {})
            return
        fingerprint = bands_fingerprint(conn)
        bands = stored_bands(conn, fingerprint)
        if bands is None:
            from store.runs.compare import system_bands

            bands = system_bands(conn)
            found = bands
            if found:  # (nothing to keep: no write, and nothing for other sessions to notice)
                self.gavel.backend.call(lambda c: store_bands(c, fingerprint, found))
        self.app.call_from_thread(self.show_bands, bands)

    def show_bands(self, bands: dict[str, dict[str, NoiseBand]]) -> None:
        self.bands = bands
        band = self.query_one("#queue-band", Static)
        # The benchmark run on show; all of them at once: the one that has bands, if one has.
        suite = self.filter.suite
        if suite is None and len(bands) == 1:
            suite = next(iter(bands))
        shown = bands.get(suite, {}) if suite is not None else {}
        band.update(band_text(shown, max(20, self.size.width - 2)))
        band.display = bool(shown)

    @on(QueueRowsChanged)
    def rows_changed(self, message: QueueRowsChanged) -> None:
        fresh = {r.report_id: r for r in message.rows}
        self.rows = [fresh.get(r.report_id, r) for r in self.rows]
        for rid in fresh:
            self.impacts.pop(rid, None)
        self.summary = progress(self.rows)
        if not self._patch(fresh):
            self.redraw()
        self.fill_impacts()

    def _patch(self, fresh: dict[int, QueueRow]) -> bool:
        """Bring the table up to date by changing only what a decision changed: the decided
        reports' cells, and rows that left the filter. False when the order moved (a
        redraw is needed). Re-adding every row after every decision would measure every
        cell of a large queue again."""
        self.filter = replace(self.filter, settled=self._settled())
        shown = select(self.rows, self.filter, self.impacts)
        table = self.query_one(DataTable)
        gone = _left_the_filter(
            [r.report_id for r in self.shown], [r.report_id for r in shown], table.row_count
        )
        if gone is None:
            return False
        self.shown = shown
        for rid in gone:
            if str(rid) in table.rows:
                table.remove_row(str(rid))
        for rid, row in fresh.items():
            if str(rid) in table.rows:
                self._update_row(table, str(rid), row)
        self._status()
        return True

    def _update_row(self, table: DataTable[Any], key: str, row: QueueRow) -> None:
        for (column, heading), cell in zip(table.columns.items(), self._cells(row), strict=True):
            # Measured only when it may widen its column: Textual re-measures the whole
            # column for a cell narrower than the widest.
            wider = not isinstance(cell, RichText) or cell.cell_len > heading.content_width
            table.update_cell(key, column, cell, update_width=wider)

    @on(ImpactsComputed)
    def impacts_done(self, message: ImpactsComputed) -> None:
        self.impacts.update(message.impacts)
        self.impact_pending = message.remaining
        table = self.query_one(DataTable)
        for rid, impact in message.impacts.items():
            key = str(rid)
            if key in table.rows:
                # The column's width is fixed (see _columns): a cell measured against the
                # others re-measures the whole column when it is narrower than the widest.
                table.update_cell(key, "impact", impact_cell(impact))
        self._status()

    # -- drawing ---------------------------------------------------------------------------

    def _columns(self, table: DataTable[Any]) -> None:
        """Review state first (on an 80-column terminal it is what stays on screen), then the
        scores; the impact column says what it measures in its heading."""
        table.clear(columns=True)
        table.add_column("Task", key="task")
        table.add_column("System", key="system")
        table.add_column("Decided", key="progress")
        table.add_column("≠", key="differs")
        table.add_column("⚑", key="flags")
        table.add_column(SUSPECT, key="suspects")
        for head in self.heads:
            table.add_column(head.label, key=f"{head.framework}.{head.metric}")
        table.add_column("Domain", key="domain")
        label = self._impact_label()
        table.add_column(label, key="impact", width=max(cell_len(label), IMPACT_WIDTH))

    def _impact_label(self) -> str:
        first = self.heads[0].label if self.heads else "score"
        return f"Impact Δ{first}/rest"

    def redraw(self, *, top: bool = False) -> None:
        """Draw the rows the filter selects, the cursor kept on its report — or, with ``top``
        (a new order), on the first row, the report enter opens."""
        table = self.query_one(DataTable)
        current = None if top else self.current_report_id()
        self.filter = replace(self.filter, settled=self._settled())
        self.shown = select(self.rows, self.filter, self.impacts)
        if self.mine and self.filter.sort in ("default", "impact", "suspicion"):
            self.shown = mine_first(self.shown, self._has_my_work)
        present = {fw for row in self._in_suite() for fw in row.frameworks}
        heads = [h for h in headlines() if h.framework in present]
        if heads != self.heads or not table.columns:
            self.heads = heads
            self._columns(table)
        table.clear()
        if top:
            table.move_cursor(row=0)
        self._generation += 1
        self._add_rows(self._generation, 0, FIRST_ROWS, current)
        self._status()

    def _add_rows(self, generation: int, start: int, count: int, current: int | None) -> None:
        """Add ``shown[start:start + count]`` to the table, then the rest after a refresh.

        A DailyReport-size queue is 2,550 rows: the first screenfuls are drawn at once and
        the rest follow in chunks between frames, so opening and filtering never freeze. A
        newer redraw (another filter) abandons the chunks still to come.
        """
        if generation != self._generation:
            return
        table = self.query_one(DataTable)
        for row in self.shown[start : start + count]:
            table.add_row(*self._cells(row), key=str(row.report_id))
        if (
            current is not None
            and str(current) in table.rows
            and table.get_row_index(str(current)) >= start
        ):
            table.move_cursor(row=table.get_row_index(str(current)))
        if start + count < len(self.shown):
            self.call_after_refresh(self._add_rows, generation, start + count, LATER_ROWS, current)

    def _cells(self, row: QueueRow) -> list[Any]:
        cells: list[Any] = [shared_text(row.task), shared_text(row.system)]
        cells.append(
            shared_text(
                f"{row.decided}/{row.total}",
                justify="right",
                style="green" if row.status == "done" else "",
            )
        )
        cells.append(
            shared_text(str(row.differs) if row.differs else "", justify="right", style="magenta")
        )
        marks = ("⚑" * min(row.flags, 1)) + ("⚠" if row.conflicts else "")
        cells.append(shared_text(marks, style="yellow"))
        cells.append(
            shared_text(
                str(row.suspects) if row.suspects else "", justify="right", style="bold yellow"
            )
        )
        for head in self.heads:
            name = f"{head.framework}.{head.metric}"
            if head.framework in row.frameworks:
                cells.append(
                    score_cell(row.judge.get(name), row.adjudicated.get(name), head.digits)
                )
            else:
                cells.append(shared_text(""))
        cells.append(shared_text(row.domain))
        cells.append(impact_cell(self.impacts.get(row.report_id)))
        return cells

    def _status(self) -> None:
        s = self.summary
        pct = 100 * s.decided / s.judgments if s.judgments else 0.0
        text = Text()
        text.append(f" {s.decided:,}/{s.judgments:,} judgments decided ({pct:.1f}%)", "bold")
        text.append(f" · {s.reports_done:,}/{s.reports:,} reports done")
        if s.conflicts:
            text.append(f" · {s.conflicts:,} conflicts", "bold red")
        if s.flags:
            text.append(f" · ⚑ {s.flags:,} flagged for discussion", "yellow")
        self._shown_part(text)
        if self.impact_pending:
            text.append(f" · impact: {self.impact_pending:,} to go", "dim")
        text.append("\n " + self.filter.describe(self._column_labels()), "cyan")
        if self.filter.sort != "impact":
            text.append(
                f"  ·  Impact: the most one verdict flip moves "
                f"{self.heads[0].label if self.heads else 'the first score'} / the "
                "other headline scores",
                "dim",
            )
        self.query_one("#queue-status", Static).update(text)
        self.sub_title = f"{self.gavel.backend.path.name} · reviewer {self.gavel.config.reviewer}"
        if self.team.pairs:
            self.sub_title += f" · {self.team.line()}"

    def _settled(self) -> frozenset[int]:
        """Reports whose undecided verdicts the trust rule accepted, every one."""
        return frozenset(
            r.report_id
            for r in self.rows
            if self.accepted.get(r.report_id, 0) >= r.total - r.decided > 0
        )

    def _accepted_text(self) -> Text:
        """How many verdicts a trust rule accepted, and how many reports hiding them hides."""
        accepted = sum(self.accepted.get(r.report_id, 0) for r in self._in_suite())
        if not accepted:
            return Text()
        hidden = sum(1 for r in self._in_suite() if r.report_id in self.filter.settled)
        text = Text(f" · {ACCEPTED} {accepted:,} accepted by rule", "cyan")
        if self.filter.hide_accepted:
            text.append(f" ({hidden:,} reports hidden)", "bold cyan")
        return text

    def _has_my_work(self, row: QueueRow) -> bool:
        work = self.mine.get(row.report_id)
        return work is not None and work.open > 0

    def _my_work_text(self) -> Text:
        """The reviewer's own assignments: what is left, and that they come first."""
        if not self.mine:
            return Text()
        done = sum(w.done for w in self.mine.values())
        total = sum(w.assigned for w in self.mine.values())
        reports = sum(1 for w in self.mine.values() if w.open)
        return Text(
            f" · yours {done:,}/{total:,}"
            + (f" ({reports:,} reports first)" if reports else " (all done)"),
            "bold magenta",
        )

    def _shown_part(self, text: Text) -> None:
        """The status line's part about the rows on show: their suspicious verdicts, how
        many, and when none is left, which filters hide them."""
        suspects = sum(r.suspects for r in self.shown)
        if suspects:
            text.append(f" · {SUSPECT} {suspects:,} suspicious", "bold yellow")
        text.append_text(self._my_work_text())
        text.append_text(self._accepted_text())
        text.append(f" · showing {len(self.shown):,}", "dim")
        if not self.shown and self.rows:
            text.append(f" · {self._what_hides_everything()}", "bold yellow")

    def _what_hides_everything(self) -> str:
        """Which filters are on (with their keys) when none of the run's reports is left."""
        keys = effective_keys(normalise_keymap(self.gavel.config.keys))
        named = [
            f"{label} ({display_key(keys[binding])})"
            for label, binding in self.filter.active()
            if binding in keys
        ]
        on = ", ".join(named) if named else "the filters"
        return f"no report matches {on}: press the key again, or esc clears every filter"

    def current_report_id(self) -> int | None:
        table = self.query_one(DataTable)
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return int(key) if key is not None else None

    def set_filter(self, flt: QueueFilter, *, top: bool = False) -> None:
        self.filter = flt
        self.redraw(top=top)
        if self.bands:
            self.show_bands(self.bands)

    # -- actions ---------------------------------------------------------------------------

    def action_open_report(self) -> None:
        rid = self.current_report_id()
        if rid is None:
            return
        self.open_in_order(rid)

    def open_in_order(self, report_id: int) -> None:
        """Open a report with n / p following this queue's order as it stands.

        Only while the queue is the screen shown: a second enter that reached the table
        before the first one's report came up (keys typed ahead, or a busy machine behind a
        browser) would push a second report screen, and two screens with one id end the
        session."""
        from tui.screens.report import ReportScreen

        if self.app.screen is not self:
            return
        order = [r.report_id for r in self.shown]
        if report_id not in order:
            order = [report_id]
        self.app.push_screen(
            ReportScreen(
                order,
                order.index(report_id),
                suspicion_first=self.filter.sort == "suspicion",
                queue_order=self.current_order,
                moving=self.filter.sort in MOVING_SORTS,
            )
        )

    def current_order(self) -> list[int]:
        """The queue's order now: the rows of reports decided since it was drawn are brought
        up to date first, this session's and other sessions' (the table itself is patched
        when the queue is back on screen)."""
        dirty = self.gavel.backend.take_dirty() | self._elsewhere
        self._elsewhere = set()
        if dirty:
            self._stale |= dirty
            rows, _ = self._rows(self.gavel.backend.reader(), sorted(dirty))
            fresh = {r.report_id: r for r in rows}
            self.rows = [fresh.get(r.report_id, r) for r in self.rows]
        return [r.report_id for r in select(self.rows, self.filter, self.impacts)]

    @on(DataTable.RowSelected)
    def row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_report()

    def action_toggle_filter(self, name: str) -> None:
        self.set_filter(self.filter.toggled(name))

    def action_cycle_suite(self) -> None:
        """Next benchmark run (suite); after the last, all suites at once."""
        if len(self.suites) < 2:
            self.notify("this database holds one benchmark run")
            return
        order: list[str | None] = [*self.suites, None]
        position = order.index(self.filter.suite) if self.filter.suite in order else -1
        suite = order[(position + 1) % len(order)]
        # Each run keeps its own filters and order: a suspicion order set on one run is not
        # carried into the next, where S would have turned it off.
        self._suite_filters[self.filter.suite] = self.filter
        self.set_filter(self._suite_filters.get(suite, QueueFilter(suite=suite)), top=True)

    def action_cycle_status(self) -> None:
        self.set_filter(self.filter.next_status())

    def action_clear_filters(self) -> None:
        self.set_filter(self.filter.cleared())

    def action_sort_impact(self) -> None:
        if self.filter.sort == "impact":
            self.set_filter(replace(self.filter, sort="default"), top=True)
        else:
            self.set_filter(replace(self.filter, sort="impact"), top=True)

    def action_sort_suspicion(self) -> None:
        """Reports with the most suspicious undecided verdicts first, the cursor on the top
        one. Not a toggle: pressing it again keeps the order (o picks another). Reports
        opened from this order step through their verdicts the same way (])."""
        if self.filter.sort == "suspicion":
            self.query_one(DataTable).move_cursor(row=0)
            self.notify("already in suspicion order (o picks another order)", timeout=3)
            return
        self.set_filter(replace(self.filter, sort="suspicion"), top=True)

    def action_sort_column(self) -> None:
        """Pick the column to order by; picking the current one again reverses the order."""
        labels = self._column_labels()
        # The one-glyph headings say what they count in the picker.
        spelled = {
            "differs": "≠ judge≠human",
            "flags": "⚑ flagged for discussion",
            "suspects": f"{SUSPECT} suspicious undecided verdicts",
        }
        labels = {key: spelled.get(key, label) for key, label in labels.items()}

        def done(column: str | None) -> None:
            if column is None:
                self.set_filter(replace(self.filter, sort="default", descending=False), top=True)
                return
            descending = self.filter.sort == column and not self.filter.descending
            self.set_filter(replace(self.filter, sort=column, descending=descending), top=True)

        current = self.filter.sort if self.filter.sort in labels else None
        self.app.push_screen(
            Picker(
                "Order by (the same column again reverses)",
                list(labels),
                current,
                labels=labels,
                clear="(default order)",
            ),
            done,
        )

    def _column_labels(self) -> dict[str, str]:
        """Column key -> heading, as the table shows it."""
        table = self.query_one(DataTable)
        return {str(key.value): str(column.label) for key, column in table.columns.items()}

    def _in_suite(self) -> list[QueueRow]:
        """The rows of the benchmark run on show: pickers offer only what can match."""
        return [r for r in self.rows if self.filter.suite is None or r.suite == self.filter.suite]

    def action_pick_system(self) -> None:
        systems = sorted({r.system for r in self._in_suite()})
        self.app.push_screen(
            Picker("Filter by system", systems, self.filter.system),
            lambda value: self.set_filter(replace(self.filter, system=value)),
        )

    def action_pick_domain(self) -> None:
        domains = sorted({r.domain for r in self._in_suite() if r.domain})
        self.app.push_screen(
            Picker("Filter by domain", domains, self.filter.domain),
            lambda value: self.set_filter(replace(self.filter, domain=value)),
        )

    def action_search(self) -> None:
        def done(query: str | None) -> None:
            if query is None:
                return
            if not query:
                self.set_filter(replace(self.filter, search="", matches=None))
            else:
                self.run_search(query)

        self.app.push_screen(
            SearchDialog("Search reports, claims and cited sources", self.filter.search), done
        )

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_search(self, query: str) -> None:
        found = search_reports(self.gavel.backend.reader(), query)
        self.post_message(SearchDone(query, found))

    @on(SearchDone)
    def search_done(self, message: SearchDone) -> None:
        self.set_filter(
            replace(self.filter, search=message.query, matches=frozenset(message.report_ids))
        )


def impact_cell(impact: Impact | None) -> Text:
    if impact is None:
        return shared_text("…", style="dim", justify="right")
    if impact.primary == 0 and impact.secondary == 0:
        return shared_text("0", style="dim", justify="right")
    return shared_text(
        f"{_short(impact.primary)} / {_short(impact.secondary)}",
        justify="right",
        style="bold" if impact.primary >= 1 else "",
    )


def _short(value: float) -> str:
    """A whole number as such (a level), anything else to two decimals: fits the column."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def _left_the_filter(before: list[int], after: list[int], row_count: int) -> list[int] | None:
    """The reports to remove from a table showing ``before`` so that it shows ``after``;
    None when that takes more than removing rows (the order moved, a row came in) or rows
    are still being added by index (removing would skip one)."""
    if before == after:
        return []
    kept = set(after)
    if row_count != len(before):
        return None
    if len(kept) == len(after) and [rid for rid in before if rid in kept] == after:
        return [rid for rid in before if rid not in kept]
    return None
