"""The workstation's status line follows the hub: synced, N pending while it is away, synced
again when it is back, with decisions stored locally all along and other reviewers' decisions
arriving in the background. A fake hub (tests/memory_hub.py) stands in for the server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from reviewer.identity import Identity, new_secret
from store.sqlite.tx import now_iso
from tests.memory_hub import MemoryHub
from tests.tui_helpers import events, open_report, ready, screen_text, select_judgment, wait_for
from tui.app import GavelApp
from tui.config import Config

SIZE = (170, 48)


def notified(app: GavelApp, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)


def mode(app: GavelApp) -> str | None:
    return None if app.hub_state is None else app.hub_state.mode


async def test_the_status_line_shows_synced_pending_offline_and_back(sample_db: Path) -> None:
    hub = MemoryHub()
    app = GavelApp(
        sample_db,
        Config(reviewer="ana", sync_every=1, require_rationale=False),
        hub=lambda: hub,
    )
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: mode(app) == "synced")
        await pilot.pause()
        assert "⇅ hub synced" in screen_text(app)
        await open_report(pilot, "t01-atlas-dr")
        first = await select_judgment(
            pilot, lambda j: j.kind == "claim" and not j.decided and j.judge == "correct"
        )
        await pilot.press("x")  # stored here, then pushed at once
        await wait_for(pilot, lambda: len(hub.events) == 1)
        await wait_for(pilot, lambda: mode(app) == "synced")

        hub.online = False  # the hub goes away
        await select_judgment(
            pilot,
            lambda j: (
                j.kind == "claim" and not j.decided and j.judge == "correct" and j.id != first.id
            ),
        )
        await pilot.press("x")
        await wait_for(pilot, lambda: len(events(sample_db)) == 2)  # local first: stored
        await wait_for(
            pilot,
            lambda: (
                mode(app) == "offline" and app.hub_state is not None and app.hub_state.pending == 1
            ),
        )
        await pilot.pause()
        line = screen_text(app)
        assert "hub offline" in line and "1 pending" in line
        assert notified(app, "decisions are kept here")
        assert app.is_running and app.failures == []

        hub.online = True  # back: the pending event goes out
        await wait_for(pilot, lambda: mode(app) == "synced" and len(hub.events) == 2)
        assert notified(app, "hub back")
        await pilot.pause()
        assert "⇅ hub synced" in screen_text(app)

        # Another reviewer decides the first claim differently: it arrives as a conflict.
        conn = sqlite3.connect(sample_db)
        target, suite = conn.execute(
            "SELECT s.target, su.ext_id FROM judgment j JOIN subject s ON s.id = j.subject_id "
            "JOIN report r ON r.id = j.report_id JOIN system y ON y.id = r.system_id "
            "JOIN suite su ON su.id = y.suite_id WHERE j.id = ?",
            (first.id,),
        ).fetchone()
        conn.close()
        ben = Identity("ben", new_secret())
        event = {
            "uuid": "b" * 32,
            "target": target,
            "reviewer": "ben",
            "action": "confirm",
            "value": "correct",
            "rationale": "the page says so",
            "reason": None,
            "created_at": now_iso(),
            "supersedes": None,
            "run": None,
            "key": ben.public_key,
        }
        event["sig"] = ben.sign(event)
        hub.push([(suite, event)])
        await wait_for(pilot, lambda: notified(app, "1 new conflict from the hub"))
        assert len(events(sample_db)) == 3
        await pilot.press("escape")
        await pilot.pause()
        assert "⇅ hub synced" in screen_text(app)  # the queue's line is current too
        await wait_for(pilot, lambda: any(r.conflicts for r in app.queue_screen.rows))
    assert app.failures == []


async def test_without_a_hub_there_is_no_hub_line_and_no_syncing(sample_db: Path) -> None:
    app = GavelApp(sample_db, Config(reviewer="ana"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.hub_state is None and app.hub_syncer is None
        assert "hub" not in screen_text(app)
