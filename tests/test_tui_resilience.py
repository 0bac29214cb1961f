"""The workstation stays up when a background task fails, and a decision made while another
process holds the database's write lock waits in the queue instead of being lost."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.tui_helpers import events, make_app, open_report, ready, select_judgment, wait_for
from tui.app import GavelApp
from tui.config import Config
from tui.screens.modals import ConfirmDialog, RationaleEditor

SIZE = (170, 48)

HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
print("released", flush=True)
"""


LONG_WRITER = """
import sys
from store.db.connection import connect
from store.sqlite.tx import transaction
from store.sqlite.writelock import announced
conn = connect(sys.argv[1])
with transaction(conn), announced(conn, "import runs/big-run"):
    print("locked", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""
"""A long writer as Gavel's own import is one: it holds the lock and says so in a note."""


def notified(app: GavelApp, text: str) -> bool:
    return any(text in str(n.message) or text in str(n.title) for n in app._notifications)


async def test_a_locked_database_queues_the_decision_and_the_app_stays_up(sample_db: Path) -> None:
    app = GavelApp(sample_db, Config(reviewer="ana", require_rationale=False), busy_wait=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await select_judgment(
            pilot, lambda j: j.kind == "claim" and not j.decided and j.judge == "correct"
        )
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK, str(sample_db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
            before = len(events(sample_db))
            await pilot.press("x")
            await wait_for(pilot, lambda: notified(app, "Database busy"))
            await pilot.pause(0.5)  # several more attempts, still waiting
            assert app.is_running and app.return_code is None
            assert len(events(sample_db)) == before  # not stored yet, and not dropped
            assert holder.stdin is not None
            holder.stdin.write("\n")
            holder.stdin.flush()
            assert holder.stdout.readline().strip() == "released"
            await wait_for(pilot, lambda: len(events(sample_db)) == before + 1)
        finally:
            holder.kill()
            holder.wait()
        stored = events(sample_db)[-1]
        assert stored[:3] == ("ana", "override", "incorrect")
        await wait_for(pilot, lambda: notified(app, "stored"))
        assert app.failures == []


async def test_a_failing_worker_is_reported_and_the_app_stays_up(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.screens.report as report_screen

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(report_screen, "report_view", broken)
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.failures)
        assert "disk on fire" in app.failures[0]
        assert notified(app, "disk on fire")
        assert app.is_running and app.return_code is None
        await pilot.press("escape")  # back to the queue: still usable
        await pilot.press("j")
        assert app.is_running


async def test_a_change_seen_while_the_report_screen_is_taken_down_is_ignored(
    sample_db: Path,
) -> None:
    """Another process's commit can reach the app while it closes, after the report screen
    lost its widgets: refreshing it then is skipped, not an exception that ends the app."""
    from textual.css.query import NoMatches

    from tui.screens.report import ReportScreen
    from tui.widgets.judgments import JudgmentList

    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-kestrel")
        screen = app.screen
        assert isinstance(screen, ReportScreen) and screen.view is not None
        await screen.query_one(JudgmentList).remove()
        with pytest.raises(NoMatches):
            screen.query_one(JudgmentList)  # what the refresh used to ask for
        app.report_shown_at = None
        screen.refresh_from(frozenset({screen.view.report_id}), False)
        await pilot.pause()
        assert app.report_shown_at is None  # nothing reloaded
        assert app.is_running and not app.failures


def release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write("\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == "released"


async def test_a_rationale_typed_while_an_import_holds_the_lock_is_stored_with_it(
    sample_db: Path,
) -> None:
    """The screen names who holds the lock, keeps saying so, asks before a quit would drop
    the queued decision, and stores the decision with every typed word once the lock frees."""
    app = GavelApp(sample_db, Config(reviewer="ana", require_rationale=False), busy_wait=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t03-kestrel")
        judgment = await select_judgment(
            pilot, lambda j: j.kind == "consistency" and j.judge == "support"
        )
        holder = subprocess.Popen(
            [sys.executable, "-c", LONG_WRITER, str(sample_db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parent.parent,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
            before = len(events(sample_db))
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(app.screen, RationaleEditor))
            typed = "the page says 79 not 82"
            await pilot.press(*[{" ": "space"}.get(ch, ch) for ch in typed])
            editor = app.screen
            editor.query_one("#editor-value").highlighted = 1  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: notified(app, "Database busy"))
            # For whom: the holder's own note (what it does, its pid).
            assert notified(app, "import runs/big-run") and notified(app, f"pid {holder.pid}")
            await pilot.pause(0.5)
            assert app.is_running and len(events(sample_db)) == before
            await pilot.press("ctrl+q")  # quitting would drop it: asked first
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
            await pilot.press("n")
            assert app.is_running
            release(holder)
            await wait_for(pilot, lambda: len(events(sample_db)) == before + 1)
        finally:
            holder.kill()
            holder.wait()
        _, action, value, rationale, _, jid, _ = events(sample_db)[-1]
        assert (action, value, jid, rationale) == ("override", "conflict", judgment.id, typed)
        await wait_for(pilot, lambda: notified(app, "stored"))
        assert app.failures == []
