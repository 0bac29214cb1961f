"""The agreement screen: judge vs human, reviewer vs reviewer, computed level vs ratings.

The same Rich tables as ``gavel agreement`` (built once, by ``tui.render.agreement``), computed
off the UI thread and shown in a scrollable view; confusion matrices are coloured (agreement
green, disagreement red).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import Footer, Header

from tui.keymap import bindings
from tui.render.safe import SafeText as Text
from tui.screens.base import GavelScreen
from tui.widgets.text_view import TextView


class AgreementScreen(GavelScreen):
    KEY_CONTEXT = "agreement"
    BINDINGS = bindings(KEY_CONTEXT)

    class Rendered(Message):
        def __init__(self, content: RenderableType) -> None:
            super().__init__()
            self.content = content

    def __init__(self) -> None:
        super().__init__(id="agreement")
        self.limit = 10

    def compose(self) -> ComposeResult:
        yield Header()
        yield TextView(id="agreement-view")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Agreement"
        self.sub_title = "judge vs human · reviewer vs reviewer · UserPref vs ratings"
        self.query_one(TextView).set_content(
            Text("computing… (bootstrap confidence intervals)", style="dim")
        )
        self.compute()

    @work(thread=True, exclusive=True, group="agreement", exit_on_error=False)
    def compute(self) -> None:
        from store.assignments.agreement import overlap_agreement
        from store.assignments.blind import hidden_subjects
        from store.views.agreement import agreement
        from tui.render.agreement import agreement_renderables
        from tui.render.overlap import overlap_renderables

        conn = self.gavel.backend.reader()
        # Decisions on this reviewer's blind overlap subjects stay out (tui.blind).
        hidden = hidden_subjects(conn, self.gavel.config.reviewer)
        report = agreement(conn, hidden=hidden)
        overlap = overlap_renderables(overlap_agreement(conn, hidden=hidden))
        if not (report.judge_human or report.reviewers or report.ratings or overlap):
            self.post_message(
                self.Rendered(
                    Text(
                        "No human decisions or ratings yet. Decide verdicts and rate reports "
                        "(o) on the report screen, or merge another reviewer's log with "
                        "`gavel merge`."
                    )
                )
            )
            return
        self.post_message(
            self.Rendered(Group(*agreement_renderables(report, self.limit), *overlap))
        )

    @on(Rendered)
    def rendered(self, message: Rendered) -> None:
        self.query_one(TextView).set_content(message.content)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_refresh(self) -> None:
        self.compute()

    def action_all_disagreements(self) -> None:
        self.limit = -1 if self.limit >= 0 else 10
        self.compute()
