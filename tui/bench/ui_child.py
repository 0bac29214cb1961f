"""Workstation timings for `gavel bench`, run in a fresh interpreter per sample.

``python -m tui.bench.ui_child gavel DB`` starts the real workstation headless on DB, waits for the
queue, then times report switches, the 40,000-word report and keypress → stored decision →
score on screen. ``bare`` starts the baseline: a plain Textual app with one DataTable of the
same rows. Prints one JSON line; the parent measures the process's wall time.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult
from textual.widgets import DataTable

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from tui.app import GavelApp


class BareApp(App[None]):
    """The baseline: one DataTable of the queue's rows, nothing else."""

    def __init__(self, db: Path) -> None:
        super().__init__()
        self.db = db
        self.ready_at: float | None = None

    def compose(self) -> ComposeResult:
        yield DataTable()

    def on_mount(self) -> None:
        from store.db.connection import connect
        from store.scores.report_rows import read_metrics

        conn = connect(self.db)
        heads = ("UserPref", "Ins", "Fac", "Rat")
        values: dict[int, dict[str, float | None]] = {}
        for rid, _, _, scores in read_metrics(conn, heads, variant="adjudicated"):
            values.setdefault(rid, {}).update(scores)
        rows = [
            (task, system, domain, *(values.get(rid, {}).get(h) for h in heads))
            for rid, task, system, domain in conn.execute(
                """SELECT r.id, t.ext_id, y.ext_id, t.domain FROM report r
                       JOIN task t ON t.id = r.task_id JOIN system y ON y.id = r.system_id
                       ORDER BY r.id"""
            )
        ]
        table = self.query_one(DataTable)
        table.add_columns("Task", "System", "Domain", "UserPref", "Ins", "Fac", "Rat")
        for row in rows:
            table.add_row(*(str(v) for v in row))
        self.ready_at = time.perf_counter()


_FRAMES: list[float] = []


def _record_frames() -> None:
    """Note when each screen update finishes, so a figure ends when the user could see it
    (the pilot's own pauses are not part of the figure)."""
    from textual._compositor import Compositor

    original = Compositor.render_update

    def render_update(self: Compositor, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        _FRAMES.append(time.perf_counter())
        return result

    Compositor.render_update = render_update  # type: ignore[method-assign]


def _first_frame_after(moment: float) -> float:
    return next(t for t in _FRAMES if t >= moment)


async def _wait(condition: Any, pilot: Any, limit: float = 60.0) -> None:
    deadline = time.perf_counter() + limit
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the workstation did not get there in time")
        await pilot.pause(0.005)


def _painted_wall(ready_at: float) -> float:
    """Wall-clock time of the first frame painted once the app had its rows: start-up ends
    when the user sees the screen, in both apps alike."""
    return time.time() - (time.perf_counter() - _first_frame_after(ready_at))


async def bare(db: Path) -> dict[str, float]:
    _record_frames()
    app = BareApp(db)
    async with app.run_test(size=(160, 45)) as pilot:
        await _wait(lambda: app.ready_at is not None, pilot)
        await pilot.pause()
        assert app.ready_at is not None
        return {"ready_wall": _painted_wall(app.ready_at)}


async def gavel(db: Path) -> dict[str, Any]:
    from tui.app import GavelApp
    from tui.config import Config

    _record_frames()
    # Overrides without a rationale: the figure is keypress to score, not typing.
    app = GavelApp(db, Config(reviewer="bench", require_rationale=False))
    out: dict[str, Any] = {}
    async with app.run_test(size=(160, 45)) as pilot:
        await _wait(lambda: app.ready_at is not None, pilot)
        await pilot.pause()
        assert app.ready_at is not None
        out["ready_wall"] = _painted_wall(app.ready_at)
        # The second row; the first is the 40,000-word report.
        await _open_and_time(app, pilot, ("down", "enter"))
        longs = []
        for _ in range(3):
            longs.append(await _open_and_time(app, pilot, ("p",)))  # the 40,000-word report
            await _open_and_time(app, pilot, ("n",))
        out["long_report"] = statistics.median(longs)
        out["long_report_all"] = longs
        switches = [await _open_and_time(app, pilot, ("n",)) for _ in range(10)]
        out["switch"] = statistics.median(switches)
        out["switch_all"] = switches
        keypress: list[float] = []
        for i in range(12):
            await _select_claim(app, pilot)
            keypress.append(await _decide_and_time(app, pilot, "x" if i % 2 == 0 else "c"))
            await pilot.press("k")  # back onto the claim just decided
        out["keypress"] = statistics.median(keypress)
        out["keypress_all"] = keypress
        from tui.bench.run import peak_rss_mb

        out["rss"] = peak_rss_mb()
    return out


async def _open_and_time(app: GavelApp, pilot: Pilot[None], keys: tuple[str, ...]) -> float:
    """Press keys that open a report; the seconds until its first frame is painted."""
    before = time.perf_counter()
    app.report_shown_at = None
    await pilot.press(*keys)
    await _wait(lambda: app.report_shown_at is not None, pilot)
    await pilot.pause()
    assert app.report_shown_at is not None
    return _first_frame_after(app.report_shown_at) - before


async def _select_claim(app: GavelApp, pilot: Pilot[None]) -> None:
    """Move down to the next claim verdict, into the next report where this one has none
    below the cursor."""
    from tui.screens.report import ReportScreen

    screen = app.screen
    assert isinstance(screen, ReportScreen)
    judgment = screen.selected()
    for _ in range(2_000):
        if judgment is not None and judgment.kind == "claim":
            return
        await pilot.press("j")
        moved = screen.selected()
        if moved is None or judgment is None or moved.id == judgment.id:
            # The last row of a report without a claim below it: pressing j again would
            # never get there.
            await _open_and_time(app, pilot, ("n",))
            screen = app.screen
            assert isinstance(screen, ReportScreen)
            moved = screen.selected()
        judgment = moved
    raise RuntimeError("no claim verdict found to decide")


async def _decide_and_time(app: GavelApp, pilot: Pilot[None], key: str) -> float:
    """Press a verdict key; the seconds until the frame showing the stored decision."""
    app.stored_at = None
    before = time.perf_counter()
    await pilot.press(key)
    await _wait(lambda: app.stored_at is not None, pilot)
    await pilot.pause()
    assert app.stored_at is not None
    return _first_frame_after(app.stored_at) - before


def main() -> None:
    mode, db = sys.argv[1], Path(sys.argv[2])
    result = asyncio.run(bare(db) if mode == "bare" else gavel(db))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
