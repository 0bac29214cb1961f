"""Snapshot tests (pytest-textual-snapshot) of the queue, the report screen and the help screen
on the sample data. Update deliberately with ``pytest tests/test_snapshots.py --snapshot-update``
after a visual change, and look at the report before committing it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui_helpers import make_app, open_report, ready, select_judgment, wait_for

SIZE = (170, 48)


async def _queue_settled(pilot: Any) -> None:
    await ready(pilot)
    queue = pilot.app.queue_screen
    # Impact is filled in by a background process: wait for all of it, so the picture is stable.
    await wait_for(pilot, lambda: len(queue.impacts) >= len(queue.rows), limit=60)
    await pilot.pause()


def test_queue_snapshot(snap_compare: Any, sample_db: Path) -> None:
    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=_queue_settled)


def test_report_snapshot(snap_compare: Any, sample_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await _queue_settled(pilot)
        await open_report(pilot, "t03-kestrel")
        await select_judgment(pilot, lambda j: j.kind == "consistency" and j.judge == "support")
        await pilot.pause()

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_help_snapshot(snap_compare: Any, sample_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await _queue_settled(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)
