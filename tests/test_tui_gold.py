"""Decision entry that cannot destroy work, several processes on one database, and judge runs
validated before they count — driven through the real workstation."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from reviewer.frameworks.dailyreport.judge_pipeline import ReportOutcome
from reviewer.models import JudgeRun, Judgment
from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.runs.records import create_run, finish_run, write_outcome
from store.scores.cache import update_scores
from tests.tui_helpers import (
    events,
    make_app,
    open_report,
    ready,
    screen_text,
    select_judgment,
    stored,
    wait_for,
)
from tui.screens.modals import ConfirmDialog, RationaleEditor
from tui.screens.report import ReportScreen
from tui.screens.runs import RunsScreen
from tui.widgets.judgments import JudgmentList

SIZE = (170, 48)


def decision(db: Path, report: str, subject: str) -> tuple[str, str] | None:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute(
            """SELECT d.status, d.value FROM decision d JOIN subject s ON s.id = d.subject_id
               JOIN report r ON r.id = s.report_id WHERE r.ext_id = ? AND s.key = ?""",
            (report, subject),
        ).fetchone()
        return None if row is None else (row[0], row[1])
    finally:
        conn.close()


async def test_enter_never_replaces_an_override(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        claim = await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "correct")
        await stored(pilot, ("x",))  # override; the cursor moves on
        assert decision(sample_db, "t01-atlas-dr", claim.subject) == ("single", "incorrect")
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        screen.query_one(JudgmentList).select_id(claim.id)
        await pilot.pause()
        before = len(events(sample_db))
        await pilot.press("enter")  # walks on, stores nothing
        await wait_for(
            pilot, lambda: any("already decided" in str(n.message) for n in app._notifications)
        )
        app.backend.call(lambda _conn: None)  # what was submitted before it has been applied
        assert len(events(sample_db)) == before
        assert decision(sample_db, "t01-atlas-dr", claim.subject) == ("single", "incorrect")
        assert any("already decided" in str(n.message) for n in app._notifications)


async def test_the_editor_opens_on_the_value_and_takes_the_scale_keys(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t02-kestrel")
        claim = await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "correct")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RationaleEditor))
        editor = app.screen
        assert editor.focused is not None and editor.focused.id == "editor-value"
        await pilot.press("x")  # the list's own key: incorrect
        assert editor.focused is not None and editor.focused.id == "editor-reason"
        assert "other (see the rationale)" in screen_text(app)  # every reason is shown
        await pilot.press("tab")
        await pilot.press(*"wrong year")
        await stored(pilot, ("ctrl+s",))
        assert events(sample_db)[-1][1:4] == ("override", "incorrect", "wrong year")
        assert decision(sample_db, "t02-kestrel", claim.subject) == ("single", "incorrect")


async def test_undo_stays_in_its_report_and_the_queue_asks_first(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        claim = await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "correct")
        await stored(pilot, ("x",))
        app.report_shown_at = None
        await pilot.press("n")  # the next report: nothing of mine
        await wait_for(pilot, lambda: app.report_shown_at is not None)
        app.stored_at = None
        await pilot.press("z")
        await wait_for(
            pilot,
            lambda: any(
                "nothing of yours to undo in this report" in str(n.message)
                for n in app._notifications
            ),
        )
        assert decision(sample_db, "t01-atlas-dr", claim.subject) == ("single", "incorrect")
        await pilot.press("escape")
        await pilot.press("z")  # from the queue: which one, and ask
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        assert "t01-atlas-dr" in screen_text(app) and "override → incorrect" in screen_text(app)
        await pilot.press("y")
        await wait_for(pilot, lambda: decision(sample_db, "t01-atlas-dr", claim.subject) is None)


async def test_another_process_s_decisions_appear_and_a_second_opinion_is_a_conflict(
    sample_db: Path,
) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t03-kestrel")
        claim = await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "correct")
        other = connect(sample_db)  # ben, in another session
        recorded = ReviewLog(other, "ben").decide(claim.id, "incorrect", "the page says 12")
        update_scores(other, [recorded.report_id or 0])
        other.close()
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        await wait_for(
            pilot,
            lambda: (
                screen.view is not None
                and any(j.id == claim.id and j.status == "single" for j in screen.view.judgments)
            ),
            limit=5,
        )
        assert any("ben changed 1 decision" in str(n.message) for n in app._notifications)
        assert screen.query_one(JudgmentList).selected_id == claim.id  # selection kept
        await stored(pilot, ("c",))  # ana disagrees: a second opinion
        assert decision(sample_db, "t03-kestrel", claim.subject) == ("conflict", None)
        assert any("ben decided this differently" in str(n.message) for n in app._notifications)


def _candidate(db: Path) -> None:
    """A run judging every ins criterion of t01-atlas-dr 0: worse than the imported one."""
    conn = connect(db)
    report, suite = conn.execute(
        "SELECT r.id, y.suite_id FROM report r JOIN system y ON y.id = r.system_id "
        "WHERE r.ext_id = 't01-atlas-dr'"
    ).fetchone()
    criteria = [
        c
        for (c,) in conn.execute(
            "SELECT c.ext_id FROM criterion c JOIN report r ON r.task_id = c.task_id "
            "WHERE r.id = ? AND c.dimension = 'ins'",
            (report,),
        )
    ]
    rows = create_run(conn, [suite], JudgeRun(id="strict-judge", model="strict"))
    write_outcome(
        conn,
        rows[suite],
        report,
        ReportOutcome(
            "t01-atlas-dr",
            [
                Judgment(
                    run="strict-judge", report="t01-atlas-dr", kind="ins", criterion=c, value=0
                )
                for c in criteria
            ],
            [],
        ),
    )
    finish_run(conn, rows.values(), {"status": "complete"}, [report])
    first = conn.execute(
        "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id WHERE r.ext_id = "
        "'t01-atlas-dr' AND j.kind = 'ins' AND j.current = 1 ORDER BY j.id"
    ).fetchone()[0]
    ReviewLog(conn, "ana").decide(first, "1", "met")  # gold the run gets wrong
    conn.close()


async def test_a_candidate_run_is_activated_after_its_preview(sample_db: Path) -> None:
    _candidate(sample_db)
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and bool(app.screen.rows))
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        row = next(i for i, r in enumerate(screen.rows) if r["run"] == "strict-judge")
        assert screen.rows[row]["state"] == "candidate"
        assert screen.rows[row]["gold"].startswith("0/1")
        screen.query_one("#runs-table").move_cursor(row=row)  # type: ignore[attr-defined]
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), limit=20)
        text = screen_text(app)
        assert "needs a confirmation" in text and "0/1 agree" in text
        assert "atlas-dr" in text  # its Ins would fall
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: any("strict-judge activated" in str(n.message) for n in app._notifications),
            limit=20,
        )
        conn = sqlite3.connect(sample_db)
        assert (
            conn.execute("SELECT active FROM judge_run WHERE ext_id = 'strict-judge'").fetchone()[0]
            > 0
        )
        conn.close()
