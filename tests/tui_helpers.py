"""Helpers for driving the real workstation with Textual's Pilot."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tui.app import GavelApp
from tui.config import Config


def make_app(db: Path, reviewer: str = "ana", **config: Any) -> GavelApp:
    """The workstation on ``db``. Overrides by a value key are stored at once here
    (``require_rationale`` off, unless a test sets it): the tests of other behaviour press
    value keys to override; the rationale policy has tests of its own (test_tui_polish)."""
    config.setdefault("require_rationale", False)
    return GavelApp(db, Config(reviewer=reviewer, **config))


async def wait_for(pilot: Pilot[Any], condition: Callable[[], object], limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the workstation did not reach the expected state in time")
        await pilot.pause(0.02)


async def ready(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, GavelApp)
    await wait_for(pilot, lambda: app.ready_at is not None)
    await pilot.pause()


async def open_report(pilot: Pilot[Any], report: str) -> None:
    """Open a report by its id from the queue (moves the cursor there, presses enter)."""
    app = pilot.app
    assert isinstance(app, GavelApp)
    queue = app.queue_screen
    if report not in [r.report for r in queue.shown]:  # another benchmark run: show them all
        from dataclasses import replace

        queue.set_filter(replace(queue.filter, suite=None))
        await pilot.pause()
    ids = [r.report for r in queue.shown]
    index = ids.index(report)
    table = queue.query_one("#queue-table")
    table.move_cursor(row=index)  # type: ignore[attr-defined]
    app.report_shown_at = None
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.report_shown_at is not None)
    await pilot.pause()


async def stored(pilot: Pilot[Any], keys: tuple[str, ...]) -> None:
    """Press keys that write, and wait until the writer's result is on screen."""
    app = pilot.app
    assert isinstance(app, GavelApp)
    app.stored_at = None
    await pilot.press(*keys)
    await wait_for(pilot, lambda: app.stored_at is not None)
    await pilot.pause()


async def select_judgment(pilot: Pilot[Any], predicate: Callable[[Any], bool]) -> Any:
    """Move the judgment cursor to the first judgment matching ``predicate``."""
    from tui.screens.report import ReportScreen

    screen = pilot.app.screen
    assert isinstance(screen, ReportScreen)
    assert screen.view is not None
    from tui.widgets.judgments import JudgmentList

    judgments = screen.query_one(JudgmentList)
    for jid in judgments.order:
        view = next(j for j in screen.view.judgments if j.id == jid)
        if predicate(view):
            judgments.select_id(jid)
            await pilot.pause()
            return view
    raise AssertionError("no judgment matches")


def events(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT reviewer, action, value, rationale, reason, judgment_id, report_id "
            "FROM review_event ORDER BY seq"
        ).fetchall()
    finally:
        conn.close()


def screen_text(app: GavelApp) -> str:
    """Everything currently drawn on the top screen, as plain text lines."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)
