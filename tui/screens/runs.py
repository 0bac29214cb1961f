"""The judge runs screen: every run with its agreement with the human labels, and activation.

A candidate counts only once activated here (or with ``gavel runs activate``): ``a`` first
shows what it would change — its agreement with the humans beside what counts now, its errors,
every headline score and rank before → after — and activates on ``y``. Both the preview and
the activation go through the single writer (the preview applies the activation inside a
transaction and rolls it back).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Header, Label, Static
from textual.worker import get_current_worker

from store.backend.commands import Activate, PreviewActivation, Retire, WriteResult
from tui.keymap import bindings
from tui.render.safe import SafeText as Text
from tui.screens.base import GavelScreen
from tui.screens.modals import ConfirmDialog
from tui.widgets.row_table import RowTable

if TYPE_CHECKING:
    from reviewer.judge_card.build import Card
    from store.runs.activation import ActivationPreview
    from store.views.queries import RetireEffect


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
        self.keep: str | None = None
        """The run the cursor stays on across a reload (the one just acted on)."""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="runs-status")
        yield RowTable(id="runs-table", cursor_type="row", zebra_stripes=True)
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
                    "suites": info.suites,
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
        before = self._selected()
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
        runs = [str(r["run"]) for r in self.rows]
        keep = self.keep or before
        if keep in runs:
            table.move_cursor(row=runs.index(keep))
        self.keep = None
        table.focus()
        candidates = sum(1 for r in self.rows if r["state"] == "candidate")
        self.query_one("#runs-status", Static).update(
            f"{len(self.rows)} runs, {candidates} candidate(s) · a activate (shows what it "
            "would change first) · c judge card · d retire · r reload"
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
        """Ask, naming the run and what retiring it changes (counted first, in a worker)."""
        run = self._selected()
        if run is not None:
            self._retire_effect(run)

    @work(thread=True, exclusive=True, group="runs-retire", exit_on_error=False)
    def _retire_effect(self, run: str) -> None:
        from store.views.queries import retire_effect

        effect = retire_effect(self.gavel.backend.reader(), run)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._ask_retire, effect)

    def _ask_retire(self, effect: RetireEffect) -> None:
        run = effect.run

        def done(yes: bool | None) -> None:
            if yes:
                self.keep = run
                self.gavel.backend.submit(Retire(run))

        self.app.push_screen(
            ConfirmDialog(f"Retire {run} ({effect.models})?", retire_text(effect), "retire"),
            done,
        )

    @work(thread=True, exclusive=True, group="runs-card", exit_on_error=False)
    def _with_card(self, seen: ActivationPreview) -> None:
        """The judge card goes into the activation question (read in a worker)."""
        from store.runs.card import run_card

        card = run_card(self.gavel.backend.reader(), seen.run)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._ask_activate, seen, card)

    def _ask_activate(self, seen: ActivationPreview, card: Card) -> None:
        from tui.render.activation import preview_renderables

        run = seen.run

        def done(yes: bool | None) -> None:
            if yes:
                self.gavel.backend.submit(Activate(run, confirmed=True))

        question = "Activate it anyway?" if seen.needs_confirmation else "Activate it?"
        self.app.push_screen(
            ConfirmDialog(
                f"Activate {run}?",
                Group(*preview_renderables(seen, card, compact=self.app.size.width < NARROW)),
                "activate",
                question=question,
            ),
            done,
        )

    def action_card(self) -> None:
        """The selected run's judge card (computed in a worker), in a scrollable view."""
        run = self._selected()
        if run is not None:
            self.notify(f"computing the judge card of {run}…", timeout=3)
            self._show_card(run)

    @work(thread=True, exclusive=True, group="runs-card", exit_on_error=False)
    def _show_card(self, run: str) -> None:
        from store.runs.card import run_card

        card = run_card(self.gavel.backend.reader(), run)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self.app.push_screen, CardView(card))

    def action_reload(self) -> None:
        self.load()

    def action_noise(self) -> None:
        """The noise band of the suite of the run under the cursor (every run of it)."""
        from tui.screens.noise import NoiseScreen

        run = self._selected()
        suites: list[str] = next((r["suites"] for r in self.rows if r["run"] == run), [])
        self.app.push_screen(NoiseScreen(suites[0] if suites else None))

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

            seen = result.data
            assert isinstance(seen, ActivationPreview)
            self._with_card(seen)
            return True
        if result.note is not None:
            self.notify(result.note, timeout=6)
            command = result.command
            if isinstance(command, Activate | Retire):
                self.keep = command.run
            self.load()
            self.gavel.refresh_everything()
        return True


def retire_text(effect: RetireEffect) -> Text:
    """What retiring a run changes, in the words of the dialog that asks."""
    text = Text()
    if not effect.active:
        text.append(f"{effect.run} is not active: retiring it changes nothing that counts.\n")
        return text
    text.append(f"{effect.run}", "bold")
    text.append(
        f" is the judge whose verdict counts on {effect.counting:,} subjects in "
        f"{effect.reports:,} reports. Retired, its verdicts stop counting:\n\n"
    )
    covered = effect.counting - effect.uncovered
    if covered:
        text.append(f"  · {covered:,} subjects fall back to another active run's verdict\n")
    if effect.uncovered:
        text.append(
            f"  · {effect.uncovered:,} subjects are left with no judge verdict (no other "
            "active run judged them)\n",
            "bold red",
        )
    text.append(
        f"  · the scores of those {effect.reports:,} reports are recomputed; human "
        "decisions stay as they are\n\n"
    )
    text.append(f"Undo: activate it again (a on this screen, or gavel runs activate {effect.run})")
    return text


NARROW = 140
"""Terminal columns below which a judge card is laid out compact."""


class CardView(ModalScreen[None]):
    """A judge card, whole and scrollable (``gavel runs card RUN`` shows the same)."""

    DEFAULT_CSS = """
    CardView #card {
        width: 100%;
        height: 100%;
        border: thick $accent;
        background: $surface;
        padding: 0 1;
    }
    CardView #card-body { height: 1fr; }
    """

    BINDINGS = [Binding("escape,q,c", "close", "Close", id="card.close")]

    def __init__(self, card: Card) -> None:
        super().__init__()
        self.card = card

    def compose(self) -> ComposeResult:
        from tui.widgets.text_view import TextView

        with Vertical(id="card"):
            yield Label(Text(f"Judge card of {self.card.run}", style="bold"))
            yield TextView(id="card-body")
            yield Static("escape close · gavel runs card RUN --format markdown", classes="hint")

    def on_mount(self) -> None:
        from tui.render.judge_card import card_renderables
        from tui.widgets.text_view import TextView

        view = self.query_one(TextView)
        view.set_content(Group(*card_renderables(self.card, compact=self.app.size.width < NARROW)))
        view.focus()

    def action_close(self) -> None:
        self.dismiss(None)
