"""Trust rules on screen: verdicts accepted by the rule marked ⊙ on the report screen (not as
the judge's alone, not as a human's), and the queue toggle that hides the reports left with
nothing but accepted verdicts. Driven by Pilot on the bundled sample."""

from __future__ import annotations

from pathlib import Path

from tests.test_trust_store import _conn, _plan, _review_plan
from tests.tui_helpers import (
    make_app,
    open_report,
    ready,
    screen_text,
    select_judgment,
    stored,
    wait_for,
)
from tui.screens.report import ReportScreen
from tui.widgets.judgments import ACCEPTED, JudgmentList, status_glyph
from tui.widgets.text_view import TextView

SIZE = (170, 48)
SMALL = (80, 24)


def _applied(path: Path) -> int:
    """Review a uniform plan, apply the rule; the number of verdicts it accepted."""
    from store.trust.rules import apply_rule, calibrate_plan

    conn = _conn(path)
    name = _plan(conn)
    _review_plan(conn, name)
    rule = apply_rule(conn, calibrate_plan(conn, 0.1, 0.1, name), "ana")
    conn.close()
    return rule.accepted


async def test_the_queue_hides_reports_left_with_accepted_verdicts_only(sample_db: Path) -> None:
    assert _applied(sample_db) > 0
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        total = len(queue.shown)
        assert sum(queue.accepted.values()) > 0
        assert "accepted by rule" in screen_text(app)
        settled = queue.filter.settled
        assert settled  # some reports have nothing but accepted verdicts left
        for row in queue.rows:
            if row.report_id in settled:
                assert queue.accepted[row.report_id] == row.total - row.decided
        await pilot.press("T")
        await pilot.pause()
        assert queue.filter.hide_accepted
        assert len(queue.shown) == total - len(settled)
        assert not {r.report_id for r in queue.shown} & settled
        text = screen_text(app)
        assert f"({len(settled):,} reports hidden)" in text and "accepted hidden" in text
        await pilot.press("T")
        await pilot.pause()
        assert len(queue.shown) == total


async def test_without_a_rule_the_toggle_hides_nothing(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        total = len(queue.shown)
        assert not queue.accepted and "accepted by rule" not in screen_text(app)
        await pilot.press("T")
        await pilot.pause()
        assert queue.filter.hide_accepted and len(queue.shown) == total


async def test_the_report_screen_marks_accepted_verdicts_until_a_human_decides(
    sample_db: Path,
) -> None:
    _applied(sample_db)
    conn = _conn(sample_db)
    report, judgment = conn.execute(
        """SELECT r.ext_id, t.judgment_id FROM trust_accepted t JOIN report r
           ON r.id = t.report_id ORDER BY t.judgment_id LIMIT 1"""
    ).fetchone()
    conn.close()
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        row = next(r for r in queue.rows if r.report == report)
        before = queue.accepted[row.report_id]
        await open_report(pilot, report)
        screen = app.screen
        assert isinstance(screen, ReportScreen) and screen.view is not None
        judgments = screen.query_one(JudgmentList)
        assert judgment in judgments.accepted
        await select_judgment(pilot, lambda j: j.id == judgment)
        view = next(j for j in screen.view.judgments if j.id == judgment)
        assert status_glyph(view, accepted=True)[0] == ACCEPTED
        assert status_glyph(view)[0] != ACCEPTED  # the judge's alone looks different
        detail = screen.query_one(TextView).plain
        assert "accepted by rule t1" in detail and "not a human label" in detail
        assert ACCEPTED in screen_text(app)
        await stored(pilot, ("enter",))  # a human confirms: the decision replaces it
        decided = next(j for j in screen.view.judgments if j.id == judgment)
        assert decided.decided
        assert status_glyph(decided, accepted=True)[0] != ACCEPTED
        screen._detail()
        assert "accepted by rule" not in screen.query_one(TextView).plain
        await pilot.press("q")  # back to the queue: the report's count follows the decision
        await wait_for(pilot, lambda: queue.accepted[row.report_id] == before - 1)
