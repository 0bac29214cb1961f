"""Other sessions' decisions while a report is on screen: a session pays for what it shows.

With a team deciding at once (`gavel serve`), every session hears of every commit; a change
to a report nobody here is looking at must neither flash a notice over the report being
reviewed nor redraw the hidden queue, and the queue must still show it when it comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.scores.cache import update_scores
from tests.tui_helpers import make_app, open_report, ready, wait_for
from tui.screens.report import ReportScreen

SIZE = (170, 48)


def _decide_elsewhere(db: Path, report: str) -> None:
    """ben, in another process, overrules one claim verdict of ``report``."""
    other = connect(db)
    (judgment,) = other.execute(
        "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
        "WHERE r.ext_id = ? AND j.kind = 'claim' AND j.value = 'correct' AND j.current = 1 "
        "ORDER BY j.id LIMIT 1",
        (report,),
    ).fetchone()
    recorded = ReviewLog(other, "ben").decide(judgment, "incorrect", "the page says otherwise")
    update_scores(other, [recorded.report_id or 0])
    other.close()


async def test_a_change_to_another_report_is_quiet_until_the_queue_shows_it(
    sample_db: Path,
) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        before = {r.report: r.decided for r in queue.rows}
        await open_report(pilot, "t03-kestrel")
        assert isinstance(app.screen, ReportScreen)
        _decide_elsewhere(sample_db, "t05-juniper")
        # The watcher has noticed once the hidden queue holds the change as stale.
        await wait_for(pilot, lambda: bool(queue._elsewhere))
        await pilot.pause(0.3)
        assert not any("another session" in str(n.message) for n in app._notifications)
        assert {r.report: r.decided for r in queue.rows} == before  # not reread while hidden
        await pilot.press("escape")  # back to the queue: the changed row is read again
        await wait_for(
            pilot,
            lambda: (
                {r.report: r.decided for r in queue.rows}.get("t05-juniper")
                == before["t05-juniper"] + 1
            ),
        )


async def test_a_change_to_the_report_on_screen_still_says_so(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t03-kestrel")
        _decide_elsewhere(sample_db, "t03-kestrel")
        await wait_for(
            pilot,
            lambda: any("ben changed 1 decision" in str(n.message) for n in app._notifications),
        )


async def test_a_reload_for_another_session_keeps_the_row_chosen_while_it_loaded(
    sample_db: Path,
) -> None:
    """Another session's change reloads the report on screen; a key pressed while that
    reload ran (] moving to the next undecided verdict) chose a row, and the reload must
    land on that row, not on the one selected when it started: enter would otherwise act
    on the old row ('already decided' where the reviewer chose an undecided one)."""
    from tui.widgets.judgments import JudgmentList

    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t03-kestrel")
        screen = app.screen
        assert isinstance(screen, ReportScreen) and screen.view is not None
        judgments = screen.query_one(JudgmentList)
        before = judgments.selected_id
        app.report_shown_at = None
        screen.refresh_from(frozenset({screen.view.report_id}), False)  # the reload starts
        judgments.action_cursor_down()  # a key while it runs
        chosen = judgments.selected_id
        assert chosen != before
        await wait_for(pilot, lambda: app.report_shown_at is not None)  # the reload landed
        await pilot.pause()
        assert judgments.selected_id == chosen


def _share_with_ben(db: Path, report: str) -> list[int]:
    """``report`` handed whole to ana and ben, on the overlap: its claim verdicts."""
    from store.assignments.hand_out import hand_out, report_targets

    conn = connect(db)
    (rid,) = conn.execute("SELECT id FROM report WHERE ext_id = ?", (report,)).fetchone()
    hand_out(conn, ReviewLog(conn, "lead"), report_targets(conn, [rid]), ["ana", "ben"], 1.0)
    claims = [
        int(j)
        for (j,) in conn.execute(
            "SELECT id FROM judgment WHERE report_id = ? AND kind = 'claim' AND current = 1 "
            "AND value = 'correct' ORDER BY id",
            (rid,),
        )
    ]
    conn.close()
    return claims


def _ben_overrules(db: Path, judgment: int) -> None:
    other = connect(db)
    recorded = ReviewLog(other, "ben").decide(judgment, "incorrect", "the page says otherwise")
    update_scores(other, [recorded.report_id or 0])
    other.close()


async def test_a_co_reviewer_s_blind_decision_neither_reloads_nor_tells(sample_db: Path) -> None:
    """On the blind overlap ben's decision is hidden from ana until she decides the subject:
    her report is not reloaded for it (nothing would show) and no notice says that ben is at
    work on it. Once she decided a subject, ben's decision on it shows: reload and notice."""
    claims = _share_with_ben(sample_db, "t03-kestrel")
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t03-kestrel")
        screen = app.screen
        assert isinstance(screen, ReportScreen) and screen.view is not None
        queue = app.queue_screen
        app.report_shown_at = None
        _ben_overrules(sample_db, claims[0])
        await wait_for(pilot, lambda: bool(queue._elsewhere))  # the watcher saw it
        await pilot.pause(0.3)
        assert app.report_shown_at is None  # not reloaded
        assert not any("another session" in str(n.message) for n in app._notifications)

        ReviewLog(connect(sample_db), "ana").confirm(claims[1])  # ana decides her own
        screen.refresh_from(frozenset({screen.view.report_id}), False)
        await wait_for(pilot, lambda: app.report_shown_at is not None)
        app.report_shown_at = None
        _ben_overrules(sample_db, claims[1])  # no longer blind to ana: a conflict shows
        await wait_for(
            pilot,
            lambda: any(
                "ben" in str(n.message) and "another session" in str(n.message)
                for n in app._notifications
            ),
        )
        await wait_for(pilot, lambda: app.report_shown_at is not None)


def test_the_watcher_names_the_subjects_another_session_changed(sample_db: Path) -> None:
    from store.sqlite.changes import ChangeWatcher

    mine = connect(sample_db)
    watcher = ChangeWatcher(mine, lambda uuid: False)
    other = connect(sample_db)
    (judgment, report, subject) = other.execute(
        "SELECT id, report_id, subject_id FROM judgment WHERE current = 1 ORDER BY id LIMIT 1"
    ).fetchone()
    ReviewLog(other, "ben").confirm(judgment)
    ReviewLog(other, "ben").rate(report, "3")
    change = watcher.poll()
    assert change is not None and change.reports == {report}
    assert change.touched == {(report, subject), (report, None)}


async def test_a_served_session_imports_nothing_ahead_of_need(sample_db: Path) -> None:
    """Each browser session is its own process: the judge runs screen's imports (the judge's
    HTTP client) would cost every reviewer's session their memory for a screen a browser
    reviewer seldom opens. The terminal workstation still prepares them."""
    from tests.tui_helpers import make_app as terminal_app
    from tui.app import GavelApp
    from tui.config import Config

    served = GavelApp(sample_db, Config(reviewer="ana"), prewarm=False)
    async with served.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.pause(1.0)  # past the moment the terminal workstation warms up
        assert not served.warmed
    app = terminal_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: app.warmed)


def test_gavel_serve_starts_sessions_that_do_not_prewarm(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.cli.workstation as workstation
    from tui.cli import main

    seen: list[tuple[object, ...]] = []
    monkeypatch.setattr(workstation, "open_workstation", lambda *a, **k: seen.append((*a, k)) or 0)
    monkeypatch.setattr("tui.serve.server.exit_with_parent", lambda: None)
    assert main(["serve", "session", "--db", str(sample_db), "--reviewer", "ana"]) == 0
    assert seen and seen[0][-1] == {"served": True}


async def test_a_real_session_settles_its_heap_once_its_first_screen_is_up(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full garbage collection walks every tracked object: the session's startup heap (the
    modules, the queue) is frozen once the queue is up, so later collections walk only what
    came after. Tests' apps do not freeze (it would pin the test process's garbage)."""
    import gc

    import tui.app
    import tui.launch
    from tui.app import GavelApp
    from tui.config import Config

    made: list[dict[str, object]] = []

    class Recorder:
        def __init__(self, *args: object, **kwargs: object) -> None:
            made.append(kwargs)

        def run(self) -> None:
            return None

    monkeypatch.setattr(tui.app, "GavelApp", Recorder)
    assert tui.launch.run_app(sample_db, Config(reviewer="ana")) == 0
    assert made and made[0]["settle_heap"] is True
    monkeypatch.undo()

    monkeypatch.setattr(tui.app, "SETTLE_DELAY", 0.05)
    freezes: list[int] = []
    freeze = gc.freeze
    monkeypatch.setattr(gc, "freeze", lambda: (freezes.append(1), freeze())[-1])
    app = GavelApp(sample_db, Config(reviewer="ana"), settle_heap=True, prewarm=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await wait_for(pilot, lambda: gc.get_freeze_count() > 0)
            app.queue_screen.load()  # the queue loaded again later: frozen once only
            await ready(pilot)
            await pilot.pause(0.3)
            assert freezes == [1]
    finally:
        gc.unfreeze()
    monkeypatch.undo()
    plain = make_app(sample_db)
    async with plain.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.pause(1.5)
        assert gc.get_freeze_count() == 0
