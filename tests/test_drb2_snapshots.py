"""DeepResearch Bench II on the report screen, on the bundled sample: a flagged rubric verdict
selected (its quoted evidence marked in the report, the blocked reference and why it is flagged
in the detail pane), at 80×24 and 200×50; and the evidence marks following the selection.
Update deliberately with ``--snapshot-update`` after a visual change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tui_helpers import make_app, open_report, ready, select_judgment, wait_for

REPORT = "harbor-dr:idx-1"


async def _flagged_verdict(pilot: Any) -> None:
    await ready(pilot)
    queue = pilot.app.queue_screen
    await wait_for(pilot, lambda: len(queue.impacts) >= len(queue.rows), limit=60)
    await open_report(pilot, REPORT)
    await select_judgment(pilot, lambda j: j.kind == "drb2_item" and j.suspicious)
    from tui.widgets.judgments import JudgmentList

    judgments = pilot.app.screen.query_one(JudgmentList)
    await wait_for(pilot, lambda: pilot.app.focused is judgments)
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_drb2_report_snapshot_at_size(
    snap_compare: Any, sample_db: Path, size: tuple[int, int]
) -> None:
    assert snap_compare(make_app(sample_db), terminal_size=size, run_before=_flagged_verdict)


async def test_the_selected_verdicts_evidence_is_marked_in_the_report(sample_db: Path) -> None:
    from tui.widgets.report_text import ReportText

    app = make_app(sample_db)
    async with app.run_test(size=(200, 50)) as pilot:
        await _flagged_verdict(pilot)
        text = app.screen.query_one(ReportText)
        marks = [s for s in text.spans if s.kind == "evidence"]
        assert len(marks) == 1
        marked = text._text[marks[0].start : marks[0].end]
        assert marked == "Construction cost £1.3 billion [3], well above the first estimate."
        from tui.widgets.text_view import TextView

        detail = app.screen.query_one("#detail", TextView).plain
        assert "Blocked reference" in detail and "The Kestrel Bay Barrage at Ten Years" in detail
        assert "cites the blocked reference [3]" in detail  # why it is flagged
        # The blocked reference, where the report names it: its title and URL in entry [3].
        blocked = [text._text[s.start : s.end] for s in text.spans if s.kind == "marked"]
        assert blocked == [
            "The Kestrel Bay Barrage at Ten Years",
            "https://journals.example/kbb-ten-years",
        ]
        # Another verdict: its evidence replaces the marks of the last one.
        await select_judgment(pilot, lambda j: j.evidence.startswith("Its installed"))
        marks = [s for s in text.spans if s.kind == "evidence"]
        assert [text._text[m.start : m.end] for m in marks] == [
            "Its installed capacity is 240 MW across 24 bulb turbines [1]."
        ]
