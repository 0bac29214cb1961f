"""The noise screen: repeated judge runs of the same reports side by side.

Per system and metric the mean, sd and range of its score over the runs (each run scored from
its own verdicts), per verdict kind and dimension how often two runs flip a subject's value
and Krippendorff's α with the runs as raters, and how stable the systems' order is (Kendall τ
between runs, how often adjacent systems swap): the tables ``gavel compare`` prints, from the
same rows (:mod:`tui.render.noise`). Opened from the runs screen on the suite of the run under
the cursor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.measure import Measurement
from rich.table import Table
from textual import work
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.widgets import Footer, Header, Static

from tui.keymap import bindings
from tui.render.noise import Rows, band_rows, group_rows, rank_rows
from tui.render.safe import SafeText as Text
from tui.screens.base import GavelScreen

if TYPE_CHECKING:
    from store.runs.compare import Noise


class NoiseScreen(GavelScreen):
    KEY_CONTEXT = "noise"
    BINDINGS = bindings(KEY_CONTEXT)

    def __init__(self, suite: str | None) -> None:
        super().__init__(id="noise")
        self.suite = suite
        self.noise: Noise | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("loading…", id="noise-status")
        with ScrollableContainer(id="noise-body"):
            yield Static("", id="noise-tables")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Noise band"
        self.sub_title = f"repeated judge runs of suite {self.suite or '—'}"
        self.load()

    @work(thread=True, exclusive=True, group="noise", exit_on_error=False)
    def load(self) -> None:
        from store.runs.compare import suite_noise

        conn = self.gavel.backend.reader()
        noise = suite_noise(conn, self.suite) if self.suite is not None else None
        self.app.call_from_thread(self.show, noise)

    def show(self, noise: Noise | None) -> None:
        self.noise = noise
        status = self.query_one("#noise-status", Static)
        tables = self.query_one("#noise-tables", Static)
        if noise is None:
            status.update(
                Text(
                    " fewer than two runs in this suite: attach another run of the same "
                    "reports with `gavel import --as-run NAME PATH`"
                )
            )
            tables.update("")
            return
        status.update(
            Text(
                f" {len(noise.runs)} runs · {noise.reports} reports compared · "
                f"{noise.std} sd over runs (run-to-run spread, not an interval)"
            )
        )
        parts = [
            _table("score band per system", band_rows(noise)),
            _table("run-to-run agreement (flip: two runs differ)", group_rows(noise)),
        ]
        ranks = rank_rows(noise)
        if ranks[1]:
            parts.append(_table("rank stability", ranks))
        # As wide as the widest table: a narrow terminal scrolls sideways rather than cutting
        # the figures short.
        console = self.app.console
        widest = max(Measurement.get(console, console.options, t).maximum for t in parts)
        tables.styles.width = widest
        tables.update(Group(*parts))

    def action_back(self) -> None:
        self.app.pop_screen()


def _table(title: str, rows: Rows) -> Table:
    columns, data = rows
    table = Table(
        title=title, title_justify="left", expand=False, pad_edge=False, box=box.SIMPLE_HEAD
    )
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i < 2 else "right", no_wrap=True)
    for row in data:
        table.add_row(*(Text(str(row[c])) for c in columns))
    return table
