"""The Estimates screen: per system, the judge's value, the value corrected by a review plan
with its interval, the judge's bias, the human-only estimate, the reviews used and the reviews
still needed for a target precision, and which adjacent ranks could swap.

The same Rich tables as ``gavel estimate`` (built once, by ``tui.render.estimates``), computed
off the UI thread. Drawing a plan goes through the single writer like every write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import Footer, Header

from store.backend.commands import DrawPlan, WriteResult
from store.plans.estimates import DEFAULT_HALF_WIDTH
from tui.keymap import bindings
from tui.screens.base import GavelScreen
from tui.widgets.text_view import TextView

if TYPE_CHECKING:
    from store.plans.design import PlanSpec

TARGETS = (0.05, 0.02, 0.01, 0.005)
"""Half-widths the target cycles through (w)."""


class EstimatesScreen(GavelScreen):
    KEY_CONTEXT = "estimates"
    BINDINGS = bindings(KEY_CONTEXT)

    class Rendered(Message):
        def __init__(
            self, content: RenderableType, plans: list[str], plan: str | None, suite: str | None
        ) -> None:
            super().__init__()
            self.content = content
            self.plans = plans
            self.plan = plan
            self.suite = suite

    def __init__(self, plan: str | None = None) -> None:
        super().__init__(id="estimates")
        self.plan = plan
        self.plans: list[str] = []
        self.suite: str | None = None
        self.half_width = DEFAULT_HALF_WIDTH
        self.anytime = False
        self.computed = 0
        """How many estimates this screen has shown (tests wait on it)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield TextView(id="estimates-view")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Estimates"
        self.sub_title = "judge scores corrected by a review plan (PPI++) · ranks that could swap"
        self.query_one(TextView).set_content(
            Text(
                "computing… (influences of the reviewed verdicts, 1,000 task resamples)",
                style="dim",
            )
        )
        self.compute()

    @work(thread=True, exclusive=True, group="estimates", exit_on_error=False)
    def compute(self) -> None:
        from store.plans.design import list_plans
        from store.plans.estimates import estimate
        from tui.render.estimates import estimate_renderables

        conn = self.gavel.backend.reader()
        report = estimate(conn, self.plan, half_width=self.half_width)
        parts = estimate_renderables(report, anytime=self.anytime, timing=False)
        parts.append(
            Text(
                "\nE estimates · p choose a plan · n draw a plan · L review it · "
                "w target ± · a anytime interval · r recompute",
                style="dim",
            )
        )
        plans = [p.name for p in list_plans(conn)]
        self.post_message(
            self.Rendered(
                Group(*parts), plans, report.plan.name if report.plan else None, report.suite
            )
        )

    @on(Rendered)
    def rendered(self, message: Rendered) -> None:
        self.plans = message.plans
        self.suite = message.suite
        if self.plan is None:
            self.plan = message.plan
        self.query_one(TextView).set_content(message.content)
        self.computed += 1

    def show_result(self, result: WriteResult) -> bool:
        if not isinstance(result.command, DrawPlan):
            return False
        if result.error:
            self.notify(result.error, severity="error", timeout=8)
            return True
        from store.plans.design import Plan

        if isinstance(result.data, Plan):
            self.plan = result.data.name
            self.notify(result.note or f"plan {self.plan} drawn", timeout=8)
            self.compute()
        return True

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_refresh(self) -> None:
        self.compute()

    def action_cycle_target(self) -> None:
        position = TARGETS.index(self.half_width) if self.half_width in TARGETS else 0
        self.half_width = TARGETS[(position + 1) % len(TARGETS)]
        self.notify(f"target half-width ±{self.half_width:g}")
        self.compute()

    def action_toggle_anytime(self) -> None:
        self.anytime = not self.anytime
        self.compute()

    def action_pick_plan(self) -> None:
        from tui.screens.modals import Picker

        if not self.plans:
            self.notify("no plan yet: press n to draw one", severity="warning")
            return

        def done(name: str | None) -> None:
            if name is not None and name != self.plan:
                self.plan = name
                self.compute()

        self.app.push_screen(
            Picker("Estimate with plan", self.plans, self.plan, clear="(the newest)"), done
        )

    def action_new_plan(self) -> None:
        from tui.screens.plan_dialog import NewPlanDialog

        def done(spec: PlanSpec | None) -> None:
            if spec is not None:
                self.notify("drawing the plan…")
                self.gavel.backend.submit(DrawPlan(spec))

        self.app.push_screen(NewPlanDialog(self.suite), done)

    def action_review(self) -> None:
        from tui.screens.plan_review import PlanReviewScreen

        if self.plan is None:
            self.notify("no plan yet: press n to draw one", severity="warning")
            return
        self.app.push_screen(PlanReviewScreen(self.plan))
