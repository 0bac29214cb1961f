"""Drawing a review plan from the workstation: budget, design, strata and seed, as
``gavel plan new`` takes them. The plan itself is drawn by the single writer."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from store.plans.design import STRATA_KEYS, PlanSpec
from tui.keymap import bindings

DESIGNS = {
    "active": "active — drawn where the judge errs (flags, error rates learnt as you "
    "review), still a valid sample",
    "uniform": "uniform — a simple random sample of every undecided verdict",
    "stratified": "stratified — a share of the budget per stratum (below)",
    "weighted": "weighted by impact — more draws where a verdict can move a score "
    "(with a uniform floor)",
    "reports": "reports — whole reports by system (the budget counts reports): the only "
    "valid interval for UserPref and RACE",
}


class NewPlanDialog(ModalScreen[PlanSpec | None]):
    """Keys type text until the plan is saved (ctrl+s) or the dialog is cancelled (escape)."""

    BINDINGS = bindings("editor")

    def __init__(self, suite: str | None = None) -> None:
        super().__init__()
        self.suite = suite

    def compose(self) -> ComposeResult:
        with Vertical(id="editor"):
            yield Label(Text("Draw a review plan", style="bold"))
            yield Label("Budget (subjects to review)")
            yield Input("100", id="plan-budget", type="integer")
            yield Label("Design")
            yield OptionList(
                *(Option(text, id=name) for name, text in DESIGNS.items()), id="plan-design"
            )
            yield Label(f"Strata of a stratified plan ({', '.join(STRATA_KEYS)})")
            yield Input("system", id="plan-by")
            yield Label("Seed (empty: a fresh one, recorded with the plan)")
            yield Input("", id="plan-seed", type="integer")
            yield Static("ctrl+s draw · tab next field · escape cancel", id="editor-help")

    def on_mount(self) -> None:
        self.query_one("#plan-design", OptionList).highlighted = 0
        self.query_one("#plan-budget", Input).focus()

    def action_submit(self) -> None:
        budget = self.query_one("#plan-budget", Input).value.strip()
        seed = self.query_one("#plan-seed", Input).value.strip()
        option = self.query_one("#plan-design", OptionList).highlighted_option
        design = option.id if option is not None and option.id else "uniform"
        by = tuple(
            k.strip() for k in self.query_one("#plan-by", Input).value.split(",") if k.strip()
        )
        problem = _problem(budget, design, by)
        if problem is not None:
            self.notify(problem, severity="error")
            return
        self.dismiss(
            PlanSpec(
                budget=int(budget),
                design=design,  # type: ignore[arg-type]
                by=by if design == "stratified" else (),
                seed=int(seed) if seed.lstrip("-").isdigit() else None,
                suite=self.suite,
            )
        )

    def action_cancel(self) -> None:
        self.dismiss(None)


def _problem(budget: str, design: str, by: tuple[str, ...]) -> str | None:
    """What keeps the plan from being drawn: the budget, or a stratified plan's strata."""
    if not budget.isdigit() or int(budget) < 1:
        return "the budget is a whole number of subjects"
    if design == "stratified" and (not by or any(k not in STRATA_KEYS for k in by)):
        return f"strata: any of {', '.join(STRATA_KEYS)}"
    return None
