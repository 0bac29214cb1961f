"""The judge card in the workstation (Pilot): ``R`` then ``c`` shows the selected run's card;
``a`` shows it inside the activation question."""

from __future__ import annotations

from pathlib import Path

from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from tests.tui_helpers import make_app, ready, wait_for
from tui.screens.modals import ConfirmDialog
from tui.screens.runs import CardView, RunsScreen


def _gold(db: Path) -> None:
    conn = connect(db)
    log = ReviewLog(conn, "ana")
    for jid, value in conn.execute(
        """SELECT j.id, j.value FROM judgment j JOIN judge_run r ON r.id = j.run_id
           WHERE r.ext_id = 'judge-sample-4o' AND j.kind = 'drb_grr' ORDER BY j.id LIMIT 30"""
    ).fetchall():
        log.decide(jid, value, "checked")
    conn.close()


async def test_c_shows_the_card_and_a_shows_it_before_activation(sample_db: Path) -> None:
    _gold(sample_db)
    app = make_app(sample_db)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and bool(app.screen.rows))
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        row = next(i for i, r in enumerate(screen.rows) if r["run"] == "judge-sample-4o")
        screen.query_one("#runs-table").move_cursor(row=row)  # type: ignore[attr-defined]
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CardView), limit=30)
        card_screen = app.screen
        assert isinstance(card_screen, CardView)
        assert card_screen.card.run == "judge-sample-4o" and card_screen.card.labels == 30
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), limit=30)
        dialog = app.screen
        assert isinstance(dialog, ConfirmDialog)
        from rich.console import Console

        console = Console(width=200, record=True)
        console.print(dialog.body)
        shown = console.export_text()
        assert "judge card of judge-sample-4o" in shown and "per kind and dimension" in shown
        await pilot.press("n")
