"""Snapshot tests (pytest-textual-snapshot) of the queue, the report screen and the help screen
on the sample data. Update deliberately with ``pytest tests/test_snapshots.py --snapshot-update``
after a visual change, and look at the report before committing it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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
        await _judgments_focused(pilot)

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_help_snapshot(snap_compare: Any, sample_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await _queue_settled(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


async def _judgments_focused(pilot: Any) -> None:
    """The list's selection is drawn in its focused colour: wait for focus, even under load."""
    from tui.widgets.judgments import JudgmentList

    judgments = pilot.app.screen.query_one(JudgmentList)
    await wait_for(pilot, lambda: pilot.app.focused is judgments)
    await pilot.pause()


async def _report(pilot: Any, report: str, kind: str | None = None) -> None:
    await _queue_settled(pilot)
    await open_report(pilot, report)
    if kind is not None:
        await select_judgment(pilot, lambda j: j.kind == kind)
    await _judgments_focused(pilot)


def test_dr3_report_snapshot(snap_compare: Any, sample_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await _report(pilot, "orion-dr:port-shore-power", "dr3_support")

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_dr_bench_report_snapshot(snap_compare: Any, sample_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await _report(pilot, "04901-quill-dr", "drb_keyword_hit")

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_livedrbench_report_snapshot(snap_compare: Any, sample_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await _report(pilot, "peer-chorusalp-heron-dr", "cf1_key")

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_deepresearch_bench_report_snapshot(
    snap_compare: Any, sample_db: Path, anchors: Path
) -> None:
    """RACE on the real DeepResearch Bench release in ../shared/anchors (its stored
    per-dimension scores)."""
    from reviewer.registry import format_reader
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores

    root = anchors / "deep_research_bench"
    conn = connect(sample_db)
    import_bundle(conn, format_reader("deepresearch_bench")(root, None), "anchors", str(root))
    rebuild_scores(conn)
    conn.close()

    async def run_before(pilot: Any) -> None:
        await _report(pilot, "claude-3-7-sonnet-latest:1", "race_stored")

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_rationale_editor_snapshot(snap_compare: Any, sample_db: Path) -> None:
    async def run_before(pilot: Any) -> None:
        await _report(pilot, "t02-kestrel", "claim")
        await pilot.press("r")
        await pilot.pause()

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_proposals_snapshot(
    snap_compare: Any, sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uuid

    import store.reviews.proposals
    from store.db.connection import connect
    from store.reviews.proposals import propose

    fixed = iter(uuid.UUID(int=n) for n in range(1000, 2000))  # ids shown on screen
    monkeypatch.setattr(store.reviews.proposals.uuidlib, "uuid4", lambda: next(fixed))

    conn = connect(sample_db)
    task, report = conn.execute(
        "SELECT r.task_id, r.id FROM report r WHERE r.ext_id = 't02-kestrel'"
    ).fetchone()
    propose(
        conn,
        "ana",
        task,
        report,
        "cascade",
        "new_claim",
        {"subtask": "s1", "fact": "The branch opened in 1998.", "extract": ""},
        None,
        "the report states it and no claim covers it",
    )
    propose(
        conn,
        "ben",
        task,
        None,
        "cascade",
        "new_rubric",
        {"subtask": "s2", "dimension": "ins", "text": "Gives the fee in euros."},
        None,
        "the task asks for euros",
    )
    conn.close()

    async def run_before(pilot: Any) -> None:
        await _queue_settled(pilot)
        await pilot.press("P")
        await pilot.pause(0.3)

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_agreement_snapshot(snap_compare: Any, sample_db: Path) -> None:
    """Judge vs human and reviewer vs reviewer, after two reviewers decided a few verdicts."""
    from store.db.connection import connect
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores

    conn = connect(sample_db)
    picks = conn.execute(
        "SELECT j.id, j.kind, j.value FROM judgment j JOIN report r ON r.id = j.report_id "
        "WHERE r.ext_id = 't01-atlas-dr' AND j.kind IN ('claim', 'ins') AND j.current = 1 "
        "ORDER BY j.id LIMIT 8"
    ).fetchall()
    flip = {
        "correct": "incorrect",
        "incorrect": "correct",
        "unknown": "correct",
        "1": "0.5",
        "0.5": "0",
        "0": "1",
    }
    for n, (jid, _, value) in enumerate(picks):
        ReviewLog(conn, "ana").decide(jid, flip[value] if n % 3 == 0 else value, "read it")
        if n < 4:
            ReviewLog(conn, "ben").decide(jid, value, "agree with the judge")
    rebuild_scores(conn)
    conn.close()

    async def run_before(pilot: Any) -> None:
        from tui.widgets.text_view import TextView

        await _queue_settled(pilot)
        await pilot.press("g")
        view = pilot.app.screen.query_one(TextView)
        await wait_for(pilot, lambda: "computing" not in view.plain, limit=60)
        await pilot.pause()

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


def test_estimates_snapshot(snap_compare: Any, sample_db: Path) -> None:
    """Plan p1 of the sample, 100 of its 120 subjects decided (every fourth overruled)."""
    from tests.test_tui_estimates import reviewed_plan

    reviewed_plan(sample_db)

    async def run_before(pilot: Any) -> None:
        await _queue_settled(pilot)
        await pilot.press("E")
        screen = pilot.app.screen
        await wait_for(pilot, lambda: getattr(screen, "computed", 0) >= 1, limit=60)
        await pilot.pause()

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)


# -- the layout at 80×24 and at 200×50 (issue 14) ---------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_queue_snapshot_at_size(snap_compare: Any, sample_db: Path, size: tuple[int, int]) -> None:
    """80 columns keep Task, System, Decided, ≠, ⚑ and ◆, and the footer keeps ? and q."""
    assert snap_compare(make_app(sample_db), terminal_size=size, run_before=_queue_settled)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_report_snapshot_at_size(snap_compare: Any, sample_db: Path, size: tuple[int, int]) -> None:
    """A flagged claim selected: the list keeps subject ids, the detail says why it is flagged."""

    async def run_before(pilot: Any) -> None:
        await _queue_settled(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await select_judgment(pilot, lambda j: j.kind == "claim" and j.suspicious)
        await _judgments_focused(pilot)

    assert snap_compare(make_app(sample_db), terminal_size=size, run_before=run_before)


def test_source_page_snapshot(snap_compare: Any, sample_db: Path) -> None:
    """The whole stored page behind a consistency verdict, the judge's evidence marked."""

    async def run_before(pilot: Any) -> None:
        await _queue_settled(pilot)
        await open_report(pilot, "t07-atlas-dr")
        await select_judgment(pilot, lambda j: j.kind == "consistency" and bool(j.evidence))
        await pilot.press("v")
        await pilot.pause(0.3)

    assert snap_compare(make_app(sample_db), terminal_size=SIZE, run_before=run_before)
