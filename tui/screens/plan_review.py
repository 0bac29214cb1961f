"""Plan mode: the report screen serving a review plan's subjects in the plan's order.

Each subject opens on its report with its verdict selected; deciding it moves on to the next
undecided subject of the plan (in another report if need be). ``n`` / ``p`` step through the
plan, ``]`` / ``[`` jump to the next / previous undecided subject. The bar on top shows the
plan's progress ("38/120 of plan p1") and, recomputed whenever the reviewer pauses, an estimate
with its interval and how many more reviews reach the target precision — so a team sees when it
can stop. Reviewing in order matters: the estimate treats the decided subjects as the plan's
sample, and skipping subjects because they look hard would bias it (skips are counted).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static

from store.backend.commands import DrawPlan, WriteResult
from store.plans.design import Plan, PlanItem, PlanSpec
from store.plans.estimates import DEFAULT_HALF_WIDTH, EstimateReport, MetricEstimate
from tui.messages import ReportLoaded
from tui.screens.report import ReportScreen

if TYPE_CHECKING:
    from store.reviewlog.events import Recorded

ESTIMATE_PAUSE = 1.5
"""Seconds without a decision before the plan bar's estimate is recomputed."""
DECIDING = ("confirm", "override", "adjudicate")
"""Actions that decide a subject (an undo of one undecides it; a conflict is checked when the
plan is reloaded after every write)."""


class PlanReviewScreen(ReportScreen):
    """``plan`` names the plan to review; None reviews the newest, or asks to draw one."""

    class PlanLoaded(Message):
        def __init__(self, plan: Plan | None, items: list[PlanItem]) -> None:
            super().__init__()
            self.plan = plan
            self.items = items

    class EstimateReady(Message):
        def __init__(self, line: Text) -> None:
            super().__init__()
            self.line = line

    def __init__(self, plan: str | None = None, half_width: float = DEFAULT_HALF_WIDTH) -> None:
        super().__init__([], 0)
        self.plan_name = plan
        self.plan: Plan | None = None
        self.items: list[PlanItem] = []
        self.half_width = half_width
        self.estimate_line = Text("estimating…", style="dim")
        self.estimates_shown = 0
        """How many estimates the bar has shown (tests wait on it)."""
        self._estimate_timer: Timer | None = None
        self._advance = False
        """Move to the first undecided subject when the plan next loads (a new batch)."""
        self._expected = 0
        """Subjects the plan holds once its new batch is committed (0: none awaited)."""

    def compose(self) -> ComposeResult:
        yield Static("loading the plan…", id="plan-bar")
        yield from super().compose()

    def on_mount(self) -> None:
        # The report screen's own mount handler runs after this one and asks for a report:
        # until the plan's subjects are loaded there is none (see load_report).
        self.load_plan()

    @property
    def report_id(self) -> int:
        return self.order[self.index] if self.order else -1

    def load_report(self, report_id: int) -> None:
        if self.items:
            super().load_report(report_id)

    # -- loading ---------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="plan-load", exit_on_error=False)
    def load_plan(self) -> None:
        from reviewer.assignment import mine_first
        from store.assignments.progress import my_status
        from store.plans.design import get_plan, has_plans, plan_items

        conn = self.gavel.backend.reader()
        if self.plan_name is None and not has_plans(conn):
            self.post_message(self.PlanLoaded(None, []))
            return
        plan = get_plan(conn, self.plan_name)
        items = plan_items(conn, plan.id)
        mine, done = my_status(conn, self.gavel.config.reviewer)
        if mine:  # the reviewer's own assignments first, each part in the plan's order;
            # theirs is decided when they decided it (on the overlap, not when another did)
            items = mine_first(
                [
                    replace(i, decided=i.subject_id in done) if i.subject_id in mine else i
                    for i in items
                ],
                lambda item: item.subject_id in mine,
            )
        self.post_message(self.PlanLoaded(plan, items))

    def _all_decided(self) -> None:
        """Every subject drawn is decided: an active plan draws its next batch; any other
        plan is complete."""
        if self.plan is not None and self.plan.active:
            self.next_batch()
        else:
            self.notify(f"plan {self.plan_name} is complete: see the estimates (E)", timeout=8)

    @work(thread=True, exclusive=True, group="plan-batch", exit_on_error=False)
    def next_batch(self) -> None:
        """An active plan whose drawn subjects are all decided: the writer draws its next
        batch from the error rates those decisions taught (none when every batch is drawn)."""
        added = self.gavel.backend.call(_extend(self.plan_name))
        self.app.call_from_thread(self._batch_drawn, added)

    def _batch_drawn(self, added: int) -> None:
        if not added:
            self.notify(f"plan {self.plan_name} is complete: see the estimates (E)", timeout=8)
            return
        self.notify(
            f"plan {self.plan_name}: {added} more subjects drawn where the decisions so far "
            "say the judge errs",
            timeout=6,
        )
        self._advance = True
        # The writer hands the result over before it commits: read until the batch shows.
        self._expected = len(self.items) + added
        self.load_plan()

    @on(PlanLoaded)
    def plan_loaded(self, message: PlanLoaded) -> None:
        if message.plan is None:
            self._ask_for_plan()
            return
        if len(message.items) < self._expected:
            self.set_timer(0.1, self.load_plan)  # the new batch is not committed yet
            return
        self._expected = 0
        if (
            self.plan is not None
            and message.plan.name == self.plan.name
            and len(message.items) < len(self.items)
        ):
            return  # a read from before the plan's next batch was drawn: its draws only grow
        first_load = self.plan is None
        self.plan = message.plan
        self.plan_name = message.plan.name
        self.items = message.items
        self.order = [item.report_id for item in self.items]
        if not self.items:
            self.notify("the plan has no subjects", severity="warning")
            return
        if first_load or self._advance:
            self._advance = False
            self.index = self._next_undecided(-1, 1)
            self.load_report(self.report_id)
            self.refresh_estimate()
        else:
            self._estimate_soon()
        self._bar()

    def _estimate_soon(self) -> None:
        """Recompute the estimate once the reviewer pauses: it is a long stretch of Python,
        which in a thread would slow every keypress of a fast review."""
        if self._estimate_timer is not None:
            self._estimate_timer.stop()
        self._estimate_timer = self.set_timer(ESTIMATE_PAUSE, self.refresh_estimate)

    def _ask_for_plan(self) -> None:
        from tui.screens.plan_dialog import NewPlanDialog

        def done(spec: PlanSpec | None) -> None:
            if spec is None:
                self.app.pop_screen()
                return
            self.query_one("#plan-bar", Static).update(Text("drawing the plan…"))
            self.submit(DrawPlan(spec))

        self.app.push_screen(NewPlanDialog(), done)

    @work(thread=True, exclusive=True, group="plan-estimate", exit_on_error=False)
    def refresh_estimate(self) -> None:
        from store.plans.estimates import estimate

        if self.plan is None:
            return
        report = estimate(
            self.gavel.backend.reader(), self.plan.name, half_width=self.half_width, ranks=False
        )
        self.post_message(self.EstimateReady(estimate_line(report, self.half_width)))

    @on(EstimateReady)
    def estimate_ready(self, message: EstimateReady) -> None:
        self.estimate_line = message.line
        self.estimates_shown += 1
        self._bar()

    def _bar(self) -> None:
        text = Text()
        if self.plan is None:
            self.query_one("#plan-bar", Static).update(Text("loading the plan…"))
            return
        decided = sum(1 for item in self.items if item.decided)
        text.append(f" PLAN {self.plan.name} ", "bold reverse")
        text.append(f" {decided}/{len(self.items)} of plan {self.plan.name}", "bold")
        skipped = self._skipped()
        if skipped:
            text.append(f" ({skipped} skipped: review in order)", "yellow")
        if self.items:
            item = self.items[self.index]
            text.append(
                f" · #{self.index + 1} {item.kind}" + (" (decided)" if item.decided else ""), "dim"
            )
        text.append("\n ")
        text.append_text(self.estimate_line)
        self.query_one("#plan-bar", Static).update(text)

    def _skipped(self) -> int:
        last = max((i for i, item in enumerate(self.items) if item.decided), default=-1)
        return sum(1 for item in self.items[: max(last, 0)] if not item.decided)

    @on(ReportLoaded)
    def select_item(self, message: ReportLoaded) -> None:
        # Runs before the report screen's own handler has drawn the list: select after it.
        self.call_after_refresh(self._select_current)

    def _select_current(self) -> None:
        from tui.widgets.judgments import JudgmentList

        if not self.items or self.view is None:
            return
        item = self.items[self.index]
        if item.judgment_id is not None and self.view.report_id == item.report_id:
            self.query_one(JudgmentList).select_id(item.judgment_id)
        self._bar()

    # -- moving through the plan ---------------------------------------------------------

    def _next_undecided(self, start: int, step: int) -> int:
        count = len(self.items)
        for offset in range(1, count + 1):
            position = (start + step * offset) % count
            if not self.items[position].decided:
                return position
        return max(0, min(start, count - 1))

    def _go(self, position: int) -> None:
        if not self.items:
            return
        before = self.report_id if self.order else None
        self.index = position
        if before == self.report_id and self.view is not None:
            self._select_current()
        else:
            self.load_report(self.report_id)

    def action_step_report(self, step: int) -> None:
        target = self.index + step
        if not 0 <= target < len(self.items):
            self.notify("the plan has no more subjects in this direction")
            return
        self._go(target)

    def action_next_undecided(self, step: int) -> None:
        if all(item.decided for item in self.items):
            self.notify(f"every subject of plan {self.plan_name} is decided")
            return
        self._go(self._next_undecided(self.index, step))

    def show_result(self, result: WriteResult) -> bool:
        if isinstance(result.command, DrawPlan):
            self._plan_drawn(result)
            return True
        handled = super().show_result(result)
        recorded = result.recorded
        if recorded is not None and recorded.judgment_id is not None and self.items:
            self._decided(recorded.judgment_id, recorded)
        return handled

    def _plan_drawn(self, result: WriteResult) -> None:
        """The plan asked for on opening: review it, or leave if it could not be drawn."""
        if result.error:
            self.notify(result.error, severity="error", timeout=8)
            self.app.pop_screen()
        elif isinstance(result.data, Plan):
            self.plan_name = result.data.name
            self.notify(result.note or f"plan {self.plan_name} drawn", timeout=6)
            self.load_plan()

    def _decided(self, judgment_id: int, recorded: Recorded) -> None:
        """A decision (or its undo) on a plan subject: mark it, and once the current subject
        is decided move on to the next undecided one, or say the plan is complete."""
        deciding = recorded.action in DECIDING or (
            recorded.action == "redo" and recorded.reverted in DECIDING
        )
        for position, item in enumerate(self.items):
            if item.judgment_id == judgment_id:
                self.items[position] = replace(item, decided=deciding)
        current = self.items[self.index]
        if current.judgment_id == judgment_id and current.decided:
            if all(item.decided for item in self.items):
                self._all_decided()
            else:
                self._go(self._next_undecided(self.index, 1))
        self._bar()
        self.load_plan()  # the decided marks as the database has them (undo, conflicts)


def _extend(name: str | None) -> Callable[[sqlite3.Connection], int]:
    """The writer's action drawing an active plan's next batch."""

    def run(conn: sqlite3.Connection) -> int:
        from store.plans.design import extend_active, get_plan

        return extend_active(conn, get_plan(conn, name))

    return run


def estimate_line(report: EstimateReport, half_width: float) -> Text:
    """The plan bar's estimate: the first additive metric over every system (else the first
    metric), its interval, the judge's value, and how many more reviews reach ±half_width."""
    from tui.render.estimates import fmt_interval

    rows = [r for r in report.rows if r.system_id is None]
    additive = [r for r in rows if r.additive]
    chosen = additive[0] if additive else (rows[0] if rows else None)
    line = Text()
    if chosen is None:
        line.append("no metric to estimate", "dim")
        return line
    line.append(f"{chosen.label} overall ", "bold")
    line.append(
        fmt_interval(chosen.corrected, chosen.lower, chosen.upper, chosen.digits, chosen.status)
        if chosen.corrected is not None
        else "— (" + "; ".join(chosen.notes) + ")"
    )
    line.append(
        f"  judge {chosen.judge:.{max(chosen.digits, 2)}f}" if chosen.judge is not None else "",
        "dim",
    )
    _reviews_needed(line, report, chosen, half_width)
    return line


def _reviews_needed(
    line: Text, report: EstimateReport, chosen: MetricEstimate, half_width: float
) -> None:
    """How many more reviews the chosen metric needs, and every system if that is more."""
    needed = [r.needed for r in report.rows if r.additive and r.needed is not None]
    if chosen.needed is not None:
        line.append(
            f"  ±{half_width:g}: "
            + ("reached" if chosen.needed == 0 else f"~{chosen.needed:,} more reviews"),
            "bold cyan",
        )
    elif chosen.corrected is not None:
        line.append("  ±: no spread seen yet", "dim")
    if needed and max(needed) > (chosen.needed or 0):
        line.append(f" (every system: ~{max(needed):,})", "dim")
