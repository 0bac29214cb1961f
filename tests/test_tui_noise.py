"""The workstation's view of repeated judge runs: the queue's score band and the noise screen
(N on the runs screen), on the tickr excerpt with two more runs attached."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from store.db.connection import connect
from store.imports.from_path import attach_path, import_path
from store.runs.bands import bands_fingerprint, stored_bands
from tests.test_repeated_runs import EXCERPT, FMT, SUITE, SYSTEM, noisy_judgements
from tests.tui_helpers import make_app, ready, screen_text, wait_for
from tui.screens.noise import NoiseScreen
from tui.screens.runs import RunsScreen


@pytest.fixture
def repeats_db(tmp_path: Path) -> Path:
    db = tmp_path / "repeats.db"
    conn = connect(db)
    import_path(conn, EXCERPT / f"{SYSTEM}.jsonl", FMT, SUITE)
    for k in (2, 3):
        path = noisy_judgements(EXCERPT / f"{SYSTEM}.jsonl", tmp_path / f"run{k}", seed=k)
        attach_path(conn, path, f"run{k}", FMT, SUITE)
    conn.close()
    return db


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_queue_shows_each_systems_score_with_its_band(
    repeats_db: Path, size: tuple[int, int]
) -> None:
    app = make_app(repeats_db)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        band = queue.query_one("#queue-band", Static)
        await wait_for(pilot, lambda: bool(queue.bands))
        await pilot.pause()
        assert band.display
        (system_band,) = queue.bands[SUITE].values()
        assert system_band.band.n == 3 and system_band.metric == "overall"
        text = screen_text(app)
        expected = f"{system_band.band.mean:.3f} ±{system_band.band.sd:.3f}"
        assert "band over 3 runs, overall:" in text
        assert f"{SYSTEM} {expected}" in text
        # Readable at 80 columns: the band is one line and the table still shows its rows.
        line = next(row for row in text.splitlines() if "band over" in row)
        assert len(line.rstrip()) <= size[0]
        assert "gpt5-tickr-0917" in text.split("band over", 1)[1]
        # Stored (by the writer, in its turn) for the next start, for as long as the runs
        # stay as they are.
        conn = connect(repeats_db)
        await wait_for(pilot, lambda: stored_bands(conn, bands_fingerprint(conn)) is not None)
        assert stored_bands(conn, bands_fingerprint(conn)) == queue.bands
        conn.close()


async def test_no_band_without_repeated_runs(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        await pilot.pause(0.3)
        # The DailyReport sample, on show first, has one run.
        assert SUITE not in queue.bands
        assert not queue.query_one("#queue-band", Static).display
        assert "band over" not in screen_text(app)


async def test_noise_screen_from_the_runs_screen(repeats_db: Path) -> None:
    app = make_app(repeats_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and bool(app.screen.rows))
        await pilot.press("N")
        await wait_for(pilot, lambda: isinstance(app.screen, NoiseScreen))
        screen = app.screen
        assert isinstance(screen, NoiseScreen)
        await wait_for(pilot, lambda: screen.noise is not None)
        await pilot.pause()
        text = screen_text(app)
        assert "3 runs · 2 reports compared" in text
        assert "score band per system" in text and "overall" in text
        assert "flip rate" in text and "race_target/insight" in text
        noise = screen.noise
        assert noise is not None and noise.runs == [f"{SYSTEM}:race_judgements", "run2", "run3"]
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen))


async def test_noise_screen_says_when_a_suite_has_one_run(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        app.push_screen(NoiseScreen("dailyreport-sample-2026-11"))
        await wait_for(pilot, lambda: isinstance(app.screen, NoiseScreen))
        await pilot.pause(0.5)
        assert "fewer than two runs" in screen_text(app)


async def test_without_repeated_runs_the_queue_computes_no_band(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every session's queue asks for the bands when it opens: where no suite has two runs
    there is none to compute, and the computing module (with the judge pipeline it brings)
    is not needed at all."""
    import store.runs.compare
    from tui.screens.queue import QueueScreen

    calls: list[object] = []
    monkeypatch.setattr(store.runs.compare, "system_bands", lambda conn: calls.append(conn) or {})
    shown: list[object] = []
    original = QueueScreen.show_bands

    def show_bands(screen: QueueScreen, bands: dict[str, dict[str, object]]) -> None:
        shown.append(bands)
        original(screen, bands)  # type: ignore[arg-type]

    monkeypatch.setattr(QueueScreen, "show_bands", show_bands)
    single = tmp_path / "single.db"
    import_path(connect(single), EXCERPT / f"{SYSTEM}.jsonl", FMT, SUITE)  # one run
    app = make_app(single)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: bool(shown))
    assert shown == [{}] and calls == [] and not app.failures
    assert stored_bands(connect(single), bands_fingerprint(connect(single))) is None
