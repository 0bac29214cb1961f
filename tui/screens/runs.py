"""The judge runs screen: every run with its agreement with the human labels, and activation.

A candidate counts only once activated here (or with ``gavel runs activate``): ``a`` first
shows what it would change — its agreement with the humans beside what counts now, its errors,
every headline score and rank before → after — and activates on ``y``. Both the preview and
the activation go through the single writer (the preview applies the activation inside a
transaction and rolls it back).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Static

from store.backend.commands import Activate, PreviewActivation, Retire, WriteResult
from tui.keymap import bindings
from tui.render.safe import SafeText as Text
from tui.screens.base import GavelScreen
from tui.screens.modals import ConfirmDialog


class RunsScreen(GavelScreen):
    KEY_CONTEXT = "runs"
    BINDINGS = bindings(KEY_CONTEXT)

    class Loaded(Message):
        def __init__(self, rows: list[dict[str, Any]]) -> None:
            super().__init__()
            self.rows = rows

    def __init__(self) -> None:
        super().__init__(id="runs")
        self.rows: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="runs-status")
        yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Judge runs"
        self.sub_title = "a candidate counts once activated · agreement with the human labels"
        table = self.query_one(DataTable)
        table.add_columns("run", "model", "state", "status", "reports", "errors", "against humans")
        table.loading = True
        self.load()

    @work(thread=True, exclusive=True, group="runs", exit_on_error=False)
    def load(self) -> None:
        from store.runs.activation import run_against_gold
        from store.runs.records import list_runs, mark_stale_runs

        # A run whose process died shows as interrupted, not as running forever.
        self.gavel.backend.call(lambda c: mark_stale_runs(c))
        conn = self.gavel.backend.reader()
        rows = []
        for info in list_runs(conn):
            gold = run_against_gold(conn, info.id)
            rows.append(
                {
                    "run": info.id,
                    "model": info.model,
                    "state": "active" if info.active else "candidate",
                    "status": info.usage.get("status", "imported"),
                    "reports": info.reports,
                    "errors": info.errors,
                    "gold": (
                        f"{gold.agreed}/{gold.n} ({gold.accuracy:.3f})"
                        if gold.n and gold.accuracy is not None
                        else "no decided subject"
                    ),
                }
            )
        self.post_message(self.Loaded(rows))

    @on(Loaded)
    def loaded(self, message: Loaded) -> None:
        self.rows = message.rows
        table = self.query_one(DataTable)
        table.loading = False
        table.clear()
        for row in self.rows:
            # Text, never str: a DataTable reads a str cell as markup.
            table.add_row(
                *(
                    Text(str(row[k]))
                    for k in ("run", "model", "state", "status", "reports", "errors", "gold")
                )
            )
        table.focus()
        candidates = sum(1 for r in self.rows if r["state"] == "candidate")
        self.query_one("#runs-status", Static).update(
            f"{len(self.rows)} runs, {candidates} candidate(s) · a activate (shows what it "
            "would change first) · d retire · r reload"
        )

    def _selected(self) -> str | None:
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row is None or table.cursor_row >= len(self.rows):
            return None
        return str(self.rows[table.cursor_row]["run"])

    def action_activate(self) -> None:
        run = self._selected()
        if run is not None:
            self.notify(f"computing what activating {run} would change…", timeout=3)
            self.gavel.backend.submit(PreviewActivation(run))

    def action_retire(self) -> None:
        run = self._selected()
        if run is None:
            return

        def done(yes: bool | None) -> None:
            if yes:
                self.gavel.backend.submit(Retire(run))

        self.app.push_screen(
            ConfirmDialog(
                f"Retire {run}?",
                "Its verdicts stop counting; subjects fall back to the other active runs.",
                "retire",
            ),
            done,
        )

    def action_reload(self) -> None:
        self.load()

    def action_back(self) -> None:
        self.app.pop_screen()

    def show_result(self, result: WriteResult) -> bool:
        if not isinstance(result.command, PreviewActivation | Activate | Retire):
            return False
        if result.error is not None:
            self.notify(result.error, severity="error", timeout=8)
            return True
        if result.data is not None:
            from store.runs.activation import ActivationPreview
            from tui.render.activation import preview_renderables

            seen = result.data
            assert isinstance(seen, ActivationPreview)
            run = seen.run

            def done(yes: bool | None) -> None:
                if yes:
                    self.gavel.backend.submit(Activate(run, confirmed=True))

            question = "Activate it anyway?" if seen.needs_confirmation else "Activate it?"
            self.app.push_screen(
                ConfirmDialog(
                    f"Activate {run}?",
                    Group(*preview_renderables(seen)),
                    "activate",
                    question=question,
                ),
                done,
            )
            return True
        if result.note is not None:
            self.notify(result.note, timeout=6)
            self.load()
            self.gavel.refresh_everything()
        return True
