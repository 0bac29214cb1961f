"""The workstation polish of a new user's trial (issue 33, items 1–9), driven by Pilot on the
bundled sample data, at 80×24 and 200×50 where the item is about layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui_helpers import make_app, open_report, ready, screen_text, stored, wait_for
from tui.screens.report import ReportScreen
from tui.widgets.judgments import JudgmentList

SMALL = (80, 24)
LARGE = (200, 50)


def _report(app: object) -> ReportScreen:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, ReportScreen)
    return screen


def _selected_label(screen: ReportScreen) -> str:
    from store.views.screens import subject_label

    judgment = screen.selected()
    assert judgment is not None and screen.view is not None
    return subject_label(screen.view, judgment)


# -- 1. ] visits the judgment the report opened on -----------------------------------------


@pytest.mark.parametrize("order", ["list", "suspicion"])
async def test_first_bracket_stops_on_the_first_judgment_it_opened_on(
    sample_db: Path, order: str
) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        if order == "suspicion":
            await pilot.press("S")
            await pilot.pause()
        await open_report(pilot, "t04-juniper")
        screen = _report(app)
        assert _selected_label(screen) == "s1-ins"  # the only ◆ verdict, row 1
        await pilot.press("right_square_bracket")
        assert _selected_label(screen) == "s1-ins"  # visited, not skipped
        await pilot.press("right_square_bracket")
        assert _selected_label(screen) != "s1-ins"  # then on
        seen = set()
        for _ in range(len(screen.query_one(JudgmentList).order)):
            seen.add(_selected_label(screen))
            await pilot.press("right_square_bracket")
        assert "s1-ins" in seen


async def test_after_n_the_first_bracket_counts_the_new_reports_first_row(
    sample_db: Path,
) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t04-kestrel")
        screen = _report(app)
        await pilot.press("j", "j")
        app.report_shown_at = None
        await pilot.press("n")
        await wait_for(pilot, lambda: app.report_shown_at is not None)
        await pilot.pause()
        assert screen.view is not None and screen.view.report == "t04-juniper"
        assert _selected_label(screen) == "s1-ins"
        await pilot.press("right_square_bracket")
        assert _selected_label(screen) == "s1-ins"
