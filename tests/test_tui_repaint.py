"""What a selection repaints on the report screen.

With ten browser sessions on two cores, every line a keypress repaints is paid for by every
other session's wait: moving between verdicts repaints the lines whose marks changed, not the
report, the list or the detail pane whole. And the lines kept drawn follow a change of theme.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.style import Style
from textual.app import App, ComposeResult
from textual.geometry import Region

from tests.tui_helpers import make_app, open_report, ready
from tui.widgets.judgments import JudgmentList
from tui.widgets.report_text import ReportText, Span
from tui.widgets.text_view import TextView

SIZE = (100, 30)
LINES = [f"line {i:03d} " + "word " * 8 for i in range(300)]
DOCUMENT = "\n".join(LINES)


def _at(line: int) -> tuple[int, int]:
    """Offsets of the first word of a line ("line")."""
    start = sum(len(text) + 1 for text in LINES[:line])
    return start, start + 4


def _claim(line: int, key: int) -> Span:
    return Span(*_at(line), "claim", key)


class Host(App[None]):
    CSS = """
    ReportText { height: 1fr; }
    TextView { height: 6; }
    ReportText > .report-text--claim { text-style: underline; }
    ReportText > .report-text--claim-selected { background: red; }
    ReportText > .report-text--evidence { background: green; }
    """

    def compose(self) -> ComposeResult:
        yield ReportText()
        yield TextView()


def _record_refreshes(widget: Any) -> list[tuple[Region, ...]]:
    """Every refresh the widget asks for, by its regions (none: the whole widget)."""
    calls: list[tuple[Region, ...]] = []
    original = widget.refresh

    def refresh(*regions: Region, **kwargs: Any) -> Any:
        calls.append(regions)
        return original(*regions, **kwargs)

    widget.refresh = refresh
    return calls


def _styles_at(widget: ReportText, line: int) -> list[Style]:
    """The styles of the segments drawing the first word of a display line on screen."""
    strip = widget.render_line(line - widget.scroll_offset.y)
    return [s.style for s in strip if s.text.strip() == "line" and s.style is not None]


def _has(styles: list[Style], part: Style) -> bool:
    return any(style + part == style for style in styles)


async def test_selecting_a_visible_claim_repaints_only_the_two_claims_lines() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        text = app.query_one(ReportText)
        text.set_document(DOCUMENT, [_claim(3, 1), _claim(7, 2), _claim(250, 3)])
        text.select_claim(1)
        await pilot.pause()
        selected = text.get_component_rich_style("report-text--claim-selected")
        assert _has(_styles_at(text, 3), selected)
        calls = _record_refreshes(text)

        text.select_claim(2)
        await pilot.pause()

        assert calls and all(regions for regions in calls), "a full repaint was asked for"
        rows = {y for regions in calls for region in regions for y in region.line_range}
        assert rows == {3, 7}
        assert text.scroll_offset.y == 0
        assert _has(_styles_at(text, 7), selected)
        assert not _has(_styles_at(text, 3), selected)


async def test_selecting_a_claim_out_of_view_scrolls_to_it() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        text = app.query_one(ReportText)
        text.set_document(DOCUMENT, [_claim(3, 1), _claim(250, 3)])
        await pilot.pause()
        text.select_claim(3)
        await pilot.pause()
        assert text.scroll_offset.y > 200
        assert "line 250" in text.visible_text()
        selected = text.get_component_rich_style("report-text--claim-selected")
        assert _has(_styles_at(text, 250), selected)


async def test_new_evidence_repaints_the_old_and_new_evidence_lines_only() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        text = app.query_one(ReportText)
        text.set_document(DOCUMENT, [_claim(3, 1)])
        text.set_evidence([Span(*_at(5), "evidence")])
        await pilot.pause()
        evidence = text.get_component_rich_style("report-text--evidence")
        assert _has(_styles_at(text, 5), evidence)
        calls = _record_refreshes(text)

        text.set_evidence([Span(*_at(9), "evidence")])
        await pilot.pause()

        assert calls and all(regions for regions in calls), "a full repaint was asked for"
        rows = {y for regions in calls for region in regions for y in region.line_range}
        assert rows == {5, 9}
        assert _has(_styles_at(text, 9), evidence)
        assert not _has(_styles_at(text, 5), evidence)
        # The evidence is drawn with the other marks, and listed with them.
        assert [s.kind for s in text.spans] == ["claim", "evidence"]
        calls.clear()
        text.set_evidence([Span(*_at(9), "evidence")])
        assert calls == []  # the same evidence again: nothing to repaint


async def test_lines_kept_drawn_follow_a_new_theme() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        text = app.query_one(ReportText)
        view = app.query_one(TextView)
        text.set_document(DOCUMENT, [])
        view.set_content("the detail pane")
        app.theme = "textual-dark"
        await pilot.pause()
        before = (text.render_line(0), view.render_line(0))
        app.theme = "textual-light"
        await pilot.pause()
        for widget, old in zip((text, view), before, strict=True):
            widget.render_lines(Region(0, 0, widget.size.width, 1))
            new = widget.render_line(0)
            background = widget.rich_style.bgcolor
            assert background is not None
            # The line's padding to the width carries the base style.
            padding = [s.style.bgcolor for s in new if s.style is not None and s.style.bgcolor]
            stale = [s.style.bgcolor for s in old if s.style is not None and s.style.bgcolor]
            assert padding and set(padding) == {background}
            assert stale and background not in stale


async def test_moving_the_cursor_repaints_two_rows_of_the_list(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        judgments = app.screen.query_one(JudgmentList)
        await pilot.pause()
        calls = _record_refreshes(judgments)
        before = judgments.cursor
        await pilot.press("j")
        await pilot.pause()
        assert judgments.cursor != before
        assert calls and all(regions for regions in calls), "the whole list was repainted"


async def test_the_same_detail_again_repaints_nothing_and_keeps_its_scroll() -> None:
    from rich.text import Text

    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(TextView)
        long = "\n".join(f"history line {i}" for i in range(40))
        view.set_content(Text(long))
        await pilot.pause()
        view.scroll_to(y=10, animate=False)
        await pilot.pause()
        calls = _record_refreshes(view)
        view.set_content(Text(long))
        assert calls == [] and view.scroll_offset.y == 10
        view.set_content(Text(long, style="bold"))  # drawn otherwise: shown from the top
        await pilot.pause()
        assert calls and view.scroll_offset.y == 0
        view.set_content(Text(long + "\none more"))
        await pilot.pause()
        assert "one more" in view.plain


async def test_the_same_document_again_keeps_where_the_reviewer_scrolled() -> None:
    """Another session's decision reloads the report: its text is the same, and the reader
    stays where they were (with the new marks); another document starts at its top."""
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        text = app.query_one(ReportText)
        text.set_document(DOCUMENT, [_claim(3, 1)])
        await pilot.pause()
        text.scroll_to(y=120, animate=False)
        await pilot.pause()
        text.set_document(DOCUMENT, [_claim(130, 2)])
        await pilot.pause()
        assert text.scroll_offset.y == 120
        assert [s.key for s in text.spans] == [2]
        text.set_document(DOCUMENT + "\nmore", [])
        await pilot.pause()
        assert text.scroll_offset.y == 0
