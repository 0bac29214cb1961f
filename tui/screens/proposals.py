"""Ground-truth proposals: every proposed expansion with its status; accept or reject by key."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from store.backend.commands import AcceptProposal, RejectProposal, WriteResult
from tui.keymap import bindings
from tui.render.safe import SafeText as Text
from tui.screens.base import GavelScreen

if TYPE_CHECKING:
    from store.reviews.proposals import Proposal

STATUS_STYLE = {
    "proposed": "yellow",
    "accepted": "green",
    "rejected": "red",
    "in conflict": "bold magenta",
}


class ProposalsScreen(GavelScreen):
    KEY_CONTEXT = "proposals"
    BINDINGS = bindings(KEY_CONTEXT)

    class Loaded(Message):
        def __init__(self, found: list[Proposal]) -> None:
            super().__init__()
            self.found = found

    def __init__(self) -> None:
        super().__init__(id="proposals")
        self.found: list[Proposal] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="proposals-status")
        yield DataTable(id="proposals-table", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Ground-truth proposals"
        table = self.query_one(DataTable)
        for label, key in (
            ("id", "id"),
            ("task", "task"),
            ("report", "report"),
            ("framework", "framework"),
            ("kind", "kind"),
            ("effect", "effect"),
            ("status", "status"),
            ("by", "by"),
            ("looks like", "dup"),
            ("proposal", "text"),
        ):
            table.add_column(label, key=key)
        self.action_reload()

    @work(thread=True, exclusive=True, group="proposals", exit_on_error=False)
    def action_reload(self) -> None:
        from store.reviews.proposals import proposals

        self.post_message(self.Loaded(list(proposals(self.gavel.backend.reader()))))

    @on(Loaded)
    def loaded(self, message: Loaded) -> None:
        from reviewer.proposals import payload_text

        self.found = message.found
        table = self.query_one(DataTable)
        current = table.cursor_row
        table.clear()
        for p in self.found:
            table.add_row(
                Text(p.uuid[:8]),
                Text(p.task),
                Text(p.report or "—"),
                Text(p.framework),
                Text(p.kind),
                Text(p.effect),
                Text(p.status, style=STATUS_STYLE.get(p.status, "")),
                Text(p.decided_by or p.reviewer),
                Text(
                    f"{p.duplicate_of} ({p.similarity:.2f})"
                    if p.duplicate_of and p.similarity
                    else ""
                ),
                Text(payload_text(p.framework, p.kind, p.payload)[:120]),
                key=p.uuid,
            )
        if self.found:
            table.move_cursor(row=min(max(current, 0), len(self.found) - 1))
        counts = {s: sum(1 for p in self.found if p.status == s) for s in STATUS_STYLE}
        self.query_one("#proposals-status", Static).update(
            Text(
                "  ".join(f"{n} {s}" for s, n in counts.items())
                + "   ·   y accept (Y even if a duplicate) · n reject"
                + " · new proposals: key a on the report screen"
            )
        )

    def action_decide(self, action: str) -> None:
        table = self.query_one(DataTable)
        if not self.found or table.cursor_row < 0:
            return
        proposal = self.found[table.cursor_row]
        self.gavel.backend.submit(
            RejectProposal(proposal.uuid)
            if action == "reject"
            else AcceptProposal(proposal.uuid, force=action == "force")
        )

    def show_result(self, result: WriteResult) -> bool:
        if result.error:
            hint = " (Y accepts it anyway)" if "force" in result.error else ""
            self.notify(result.error + hint, severity="error", timeout=8)
        elif result.note:
            self.notify(result.note)
        self.gavel.stored_at = time.perf_counter()
        self.action_reload()
        return True

    def action_back(self) -> None:
        self.app.pop_screen()
