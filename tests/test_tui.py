"""The workstation driven by Textual's Pilot on the bundled sample data.

Every test asserts on the stored review log (the database) and on what is on screen.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from tests.score_rows import all_scores
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
from tui.screens.modals import HelpScreen, NoteDialog, Picker, RatingDialog, RationaleEditor
from tui.screens.report import ReportScreen
from tui.widgets.judgments import JudgmentList
from tui.widgets.report_text import ReportText
from tui.widgets.text_view import TextView

SIZE = (170, 48)


def adjudicated(db: Path, report: str, metric: str) -> float | None:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute(
            f"SELECT s.value FROM {all_scores(conn)} s "
            "JOIN report r ON s.scope = 'report:' || r.id "
            "WHERE r.ext_id = ? AND s.metric = ? AND s.variant = 'adjudicated'",
            (report, metric),
        ).fetchone()
        return None if row is None else row[0]
    finally:
        conn.close()


async def test_queue_lists_every_report_with_progress(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        # One benchmark run at a time: the DailyReport sample first, 8 tasks × 3 systems.
        assert {r.suite for r in queue.shown} == {"dailyreport-sample-2026-11"}
        assert len(queue.shown) == 24
        text = screen_text(app)
        assert "judgments decided" in text
        assert "t01" in text and "atlas-dr" in text
        assert "UserPref" in text
        suites = list(dict.fromkeys(r.suite for r in queue.rows))
        for suite in [*suites[1:], None]:  # b cycles the runs, then all at once
            await pilot.press("b")
            assert queue.filter.suite == suite
        assert len(queue.shown) == len(queue.rows)


async def test_filters_system_status_and_judge_differs(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        total = len(queue.shown)
        await pilot.press("x")  # judge ≠ human: nothing decided yet
        assert queue.shown == []
        await pilot.press("x")
        assert len(queue.shown) == total
        await pilot.press("s")
        await pilot.pause()
        # Only the systems of the run on show: another run's system could never match.
        systems = sorted({r.system for r in queue.rows if r.suite == queue.filter.suite})
        assert isinstance(app.screen, Picker) and app.screen.choices == systems
        assert len({r.system for r in queue.rows}) > len(systems)
        await pilot.press(*["down"] * (systems.index("juniper") + 1), "enter")  # after (all)
        await pilot.pause()
        assert {r.system for r in queue.shown} == {"juniper"}
        assert "system=juniper" in screen_text(app)
        await pilot.press("escape")  # clear filters
        assert len(queue.shown) == total
        await pilot.press("f")  # status: new
        assert len(queue.shown) == total
        await pilot.press("f")  # status: in progress → none yet
        assert queue.shown == []


async def test_order_by_a_picked_column_and_reverse_it(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        for descending in (False, True):  # the same column again reverses
            await pilot.press("o")
            await wait_for(pilot, lambda: isinstance(app.screen, Picker))
            picker = app.screen
            assert isinstance(picker, Picker)
            # The current column is highlighted, so o, enter reverses the order.
            downs = 0 if descending else picker.choices.index("system") + 1
            await pilot.press(*["down"] * downs, "enter")
            await wait_for(pilot, lambda want=descending: queue.filter.descending == want)
            assert queue.filter.sort == "system"
            assert "order: System" in screen_text(app)  # the column as the table heads it
            shown = [r.system for r in queue.shown]
            assert shown == sorted(shown, reverse=descending) and len(set(shown)) > 1
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, Picker))
        await pilot.press("home", "enter")  # (default order)
        await wait_for(pilot, lambda: queue.filter.sort == "default")


async def test_full_text_search_over_reports_claims_and_sources(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        await pilot.press("slash")
        await pilot.pause()
        await pilot.press(*"congestion", "enter")
        await wait_for(pilot, lambda: queue.filter.search == "congestion")
        tasks = {r.task for r in queue.shown}
        assert tasks == {"t02"}
        assert "search “congestion”" in screen_text(app)


async def test_decide_by_key_stores_the_event_and_moves_the_scores(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        before = adjudicated(sample_db, "t01-atlas-dr", "Fac")
        # The sample judge wrongly called c7 incorrect (MISTAKES.md #1); the reviewer fixes it.
        claim = await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "incorrect")
        await stored(pilot, ("c",))
        log = events(sample_db)
        assert log[-1][:3] == ("ana", "override", "correct")
        assert log[-1][5] == claim.id
        after = adjudicated(sample_db, "t01-atlas-dr", "Fac")
        assert before is not None and after is not None and after > before
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        bar = str(screen.query_one("#score-bar").render())
        assert "→" in bar and "last: override" in bar
        row = next(j for j in screen.view.judgments if j.id == claim.id)  # type: ignore[union-attr]
        assert row.effective == "correct" and row.decided


async def test_enter_confirms_the_judge(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t02-kestrel")
        judgment = await select_judgment(pilot, lambda j: j.kind == "ins")
        await stored(pilot, ("enter",))
        assert events(sample_db)[-1][1:3] == ("confirm", judgment.judge)


async def test_undo_and_redo_survive_a_restart(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t04-kestrel")
        judgment = await select_judgment(pilot, lambda j: j.kind == "rat")
        await stored(pilot, ("0",))
    assert events(sample_db)[-1][1:3] == ("override", "0")

    again = make_app(sample_db)
    async with again.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t04-kestrel")
        await stored(pilot, ("z",))
        assert events(sample_db)[-1][1] == "undo"
        screen = again.screen
        assert isinstance(screen, ReportScreen) and screen.view is not None
        view = next(j for j in screen.view.judgments if j.id == judgment.id)
        assert view.effective == judgment.judge and not view.decided
        await stored(pilot, ("Z",))
        assert events(sample_db)[-1][1] == "redo"
        view = next(j for j in screen.view.judgments if j.id == judgment.id)
        assert view.effective == "0"


async def test_rationale_editor_swallows_review_keys_and_saves_with_ctrl_s(
    sample_db: Path,
) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t03-kestrel")
        judgment = await select_judgment(
            pilot, lambda j: j.kind == "consistency" and j.judge == "support"
        )
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RationaleEditor))
        typed = "79.4% not 82% ] x c z ? n"
        await pilot.press(
            *[
                {
                    " ": "space",
                    "%": "percent_sign",
                    ".": "full_stop",
                    "?": "question_mark",
                    "]": "right_square_bracket",
                }.get(ch, ch)
                for ch in typed
            ]
        )
        assert events(sample_db) == []  # nothing fired while typing
        assert isinstance(app.screen, RationaleEditor)
        editor = app.screen
        editor.query_one("#editor-value").highlighted = 1  # conflict  # type: ignore[attr-defined]
        editor.query_one("#editor-reason").highlighted = 1  # misread-rubric  # type: ignore[attr-defined]
        await stored(pilot, ("ctrl+s",))
        _, action, value, rationale, reason, jid, _ = events(sample_db)[-1]
        assert (action, value, jid) == ("override", "conflict", judgment.id)
        assert rationale == typed
        assert reason == "misread-rubric"


async def test_require_rationale_opens_the_editor_and_escape_stores_nothing(
    sample_db: Path,
) -> None:
    app = make_app(sample_db, require_rationale=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-kestrel")
        await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "correct")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, RationaleEditor))
        await pilot.press("ctrl+s")  # refused: no rationale given
        assert isinstance(app.screen, RationaleEditor)
        await pilot.press("escape")
        assert isinstance(app.screen, ReportScreen)
        assert events(sample_db) == []


async def test_next_undecided_skips_decided_judgments(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t05-juniper")
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        judgments = screen.query_one(JudgmentList)
        first = judgments.order[0]
        await stored(pilot, ("enter",))  # confirm the first; cursor moves on
        judgments.select_id(first)
        await pilot.press("right_square_bracket")
        assert judgments.selected_id == judgments.order[1]
        await pilot.press("left_square_bracket")  # backwards wraps past the decided one
        assert judgments.selected_id == judgments.order[-1]


async def test_rating_a_report(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t06-juniper")
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, RatingDialog))
        assert "computed UserPref" in screen_text(app)
        await stored(pilot, ("2",))
        assert events(sample_db)[-1][1:3] == ("rate", "2")
        conn = sqlite3.connect(sample_db)
        assert conn.execute("SELECT reviewer, value FROM report_rating").fetchall() == [
            ("ana", "2")
        ]
        await wait_for(pilot, lambda: "your rating 2" in screen_text(app))

        # Other frameworks have no overall 1–4 scale: the key explains instead of rating.
        dr3 = conn.execute(
            "SELECT r.ext_id FROM report r JOIN system y ON y.id = r.system_id "
            "JOIN suite s ON s.id = y.suite_id WHERE s.frameworks LIKE '%dr3%'"
        ).fetchone()[0]
        await pilot.press("escape")
        await open_report(pilot, dr3)
        await pilot.press("o")
        await pilot.pause()
        assert not isinstance(app.screen, RatingDialog)
        assert any("user-preference scale" in str(n.message) for n in app._notifications)


async def test_flag_and_next_previous_report(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await pilot.press("exclamation_mark")  # a flag says why
        await wait_for(pilot, lambda: isinstance(app.screen, NoteDialog))
        await pilot.press(*"ask ben")
        await stored(pilot, ("enter",))
        assert events(sample_db)[-1][1:4] == ("flag", "on", "ask ben")
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        app.report_shown_at = None
        await pilot.press("n")
        await wait_for(pilot, lambda: app.report_shown_at is not None)
        assert screen.view is not None and screen.view.report == "t01-kestrel"
        app.report_shown_at = None
        await pilot.press("p")
        await wait_for(pilot, lambda: app.report_shown_at is not None)
        assert screen.view.report == "t01-atlas-dr"
        await pilot.press("escape")
        assert app.screen is app.queue_screen


async def test_untrusted_text_is_shown_literally(sample_db: Path) -> None:
    # t02-juniper quotes a forum post containing markup and an injection attempt.
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t02-juniper")
        screen = app.screen
        assert isinstance(screen, ReportScreen) and screen.view is not None
        text = screen.query_one(ReportText)
        at = screen.view.markdown.index("[bold]FREE[/bold]")
        text.scroll_to_offset(at)
        await pilot.pause()
        assert "[bold]FREE[/bold]" in text.visible_text()
        assert "[bold]FREE[/bold]" in screen_text(app)
        assert "Ignore previous instructions" in screen_text(app)


async def test_control_sequences_and_markup_in_sources_are_inert(
    tmp_path: Path,
) -> None:
    from reviewer.models import Source
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores
    from tests.builders import TINY_MARKDOWN, tiny_bundle

    bundle = tiny_bundle()
    hostile = TINY_MARKDOWN.replace(
        "E-bikes made up", "\x1b[31mRED\x1b[0m [/x] [bold]E-bikes made up"
    )
    bundle.reports = [r.model_copy(update={"markdown": hostile}) for r in bundle.reports]
    bundle.sources = [
        Source(
            url="https://transit.example/map",
            title="[red]Map[/red]",
            text="The network has 310 stations \x07 [link=evil]click[/link].",
        )
    ]
    db = tmp_path / "hostile.db"
    conn = connect(db)
    import_bundle(conn, bundle, "h")
    rebuild_scores(conn)
    conn.close()
    app = make_app(db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t1-alpha")
        await select_judgment(pilot, lambda j: j.kind == "consistency")
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        shown = screen_text(app)
        assert "␛[31mRED␛[0m [/x] [bold]E-bikes" in shown
        assert "\x1b" not in shown
        detail = screen.query_one(TextView).plain
        assert "[red]Map[/red]" in detail
        assert "[link=evil]click[/link]" in detail
        assert "␇" in detail


async def test_help_lists_every_binding_with_its_id(sample_db: Path) -> None:
    from tui.keymap import KEYS

    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_text = str(app.screen.query_one("#help-text").render())
        for key_def in KEYS:
            if key_def.context in ("app", "report", "editor"):
                assert key_def.id in help_text, key_def.id
        await pilot.press("escape")
        assert isinstance(app.screen, ReportScreen)


async def test_remapped_key_works_and_collisions_are_reported(sample_db: Path) -> None:
    app = make_app(sample_db, keys={"verdict.incorrect": "w"})
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.keymap_problems == []
        await open_report(pilot, "t01-kestrel")
        await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "correct")
        await stored(pilot, ("w",))
        assert events(sample_db)[-1][1:3] == ("override", "incorrect")

    clash = make_app(sample_db, keys={"verdict.correct": "x", "no.such.binding": "q"})
    async with clash.run_test(size=SIZE) as pilot:
        await ready(pilot)
        problems = " | ".join(clash.keymap_problems)
        assert "'x' is bound to verdict.correct and verdict.incorrect" in problems
        assert "'no.such.binding' is not a binding id" in problems


async def test_blind_mode_hides_the_judge_until_decided(sample_db: Path) -> None:
    app = make_app(sample_db, blind=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-juniper")
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        assert "judge hidden" in screen_text(app)
        await pilot.press("enter")  # confirming is refused in blind mode
        await pilot.pause()
        assert events(sample_db) == []
        judgment = screen.selected()
        assert judgment is not None
        key = {"ternary": "1", "claim": "c", "consistency": "s"}[judgment.scale]
        await stored(pilot, (key,))
        assert events(sample_db)[-1][0] == "ana"


@pytest.mark.parametrize("report", ["t07-atlas-dr"])
async def test_detail_pane_shows_rubric_source_and_integrity(sample_db: Path, report: str) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, report)
        await select_judgment(pilot, lambda j: j.kind == "consistency")
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        detail = screen.query_one(TextView).plain
        assert "Subtask" in detail and "Claim" in detail and "Source [" in detail
        assert "page sha256" in detail or "integrity:" in detail


async def test_agreement_screen_shows_judge_vs_human_and_ratings(sample_db: Path) -> None:
    from tui.screens.agreement import AgreementScreen

    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "incorrect")
        await stored(pilot, ("c",))
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, RatingDialog))
        await stored(pilot, ("4",))
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, AgreementScreen))
        view = app.screen.query_one(TextView)
        await wait_for(pilot, lambda: "Judge vs human" in view.plain, limit=60)
        text = view.plain
        assert "judge × human" in text  # a confusion matrix
        assert "disagreements" in text and "t01-atlas-dr" in text
        assert "overall 1–4 ratings" in text
        await pilot.press("escape")
        assert isinstance(app.screen, ReportScreen)


async def test_propose_a_claim_and_accept_it(sample_db: Path) -> None:
    from tui.screens.modals import ProposeDialog
    from tui.screens.proposals import ProposalsScreen

    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        claim = await select_judgment(pilot, lambda j: j.kind == "claim")
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ProposeDialog))
        # The selected claim's text is offered; proposing it as new is a duplicate of it.
        await stored(pilot, ("ctrl+s",))
        conn = sqlite3.connect(sample_db)
        row = conn.execute("SELECT kind, reviewer, duplicate_of, payload FROM proposal").fetchone()
        assert row[0] == "new_claim" and row[1] == "ana"
        assert row[2] is not None  # flagged as a duplicate
        assert events(sample_db)[-1][1] == "propose"
        assert claim.claim_id is not None

        await pilot.press("escape")
        await pilot.press("P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalsScreen))
        screen = app.screen
        assert isinstance(screen, ProposalsScreen)
        await wait_for(pilot, lambda: len(screen.found) == 1)
        assert screen.found[0].status == "proposed"
        await stored(pilot, ("n",))  # reject it
        await wait_for(pilot, lambda: screen.found and screen.found[0].status == "rejected")
        assert events(sample_db)[-1][1] == "reject"


async def test_rejudge_keeps_the_new_run_beside_the_current_one(
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.loopback import FakeJudge, serving

    with serving(FakeJudge(ins_score=0.5)) as server:
        monkeypatch.setenv("GAVEL_API_KEY", "test-key-not-secret")
        monkeypatch.setenv("GAVEL_MODEL", "fake-judge")
        monkeypatch.setenv("GAVEL_BASE_URL", server.url + "/v1")
        app = make_app(sample_db)
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await open_report(pilot, "t06-kestrel")
            judgment = await select_judgment(pilot, lambda j: j.kind == "ins")
            screen = app.screen
            assert isinstance(screen, ReportScreen)
            await pilot.press("J")
            # The run's first commits may reload the report before its verdict is written:
            # wait for the reload that shows it, not for any reload.
            key = (judgment.kind, judgment.subject)
            await wait_for(pilot, lambda: len(screen.runs.get(key) or ()) == 2, limit=120)
            await pilot.pause()
            runs = screen.runs.get(key)
            assert runs is not None and len(runs) == 2
            new = next(r for r in runs if r.run.startswith("rejudge-"))
            assert new.value == "0.5" and not new.current  # beside, not instead
            assert not new.active  # a candidate until activated
            view = next(j for j in screen.view.judgments if j.id == judgment.id)  # type: ignore[union-attr]
            assert view.run == judgment.run  # the current verdict is kept
            screen.query_one(JudgmentList).select_id(judgment.id)
            await pilot.pause()
            assert "Every judge run on this subject" in screen.query_one(TextView).plain


def test_the_last_decision_delta_shows_levels_in_whole_steps() -> None:
    from store.views.screens import ScoreLine
    from tui.screens.report import _delta_text

    new = [
        ScoreLine("cascade", "UserPref", "UserPref", 2, 3.0, 1.0),
        ScoreLine("cascade", "Ins", "InstFollow", 3, 0.792, 0.708),
    ]
    text = _delta_text(
        {("cascade", "UserPref"): 3.0, ("cascade", "Ins"): 0.792}, new, "override", None
    ).plain
    assert "UserPref -2 " in text and "InstFollow -0.084" in text
    unchanged = _delta_text(
        {("cascade", "UserPref"): 1.0, ("cascade", "Ins"): 0.708}, new, "confirm", None
    ).plain
    assert unchanged == "confirm: no headline change"


async def test_blind_mode_with_required_rationale_asks_for_every_verdict(sample_db: Path) -> None:
    """Asking only when a key disagrees with the judge would reveal the hidden verdict."""
    from tui.screens.modals import RationaleEditor

    app = make_app(sample_db, blind=True, require_rationale=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-juniper")
        judgment = await select_judgment(pilot, lambda j: j.kind == "ins" and j.judge == "1")
        await pilot.press("1")  # agrees with the hidden judge
        await wait_for(pilot, lambda: isinstance(app.screen, RationaleEditor))
        editor = app.screen
        assert isinstance(editor, RationaleEditor)
        assert editor.judge_value is None  # nothing in the editor knows it
        await pilot.press("ctrl+s")  # no rationale: refused
        await pilot.pause()
        assert isinstance(app.screen, RationaleEditor) and events(sample_db) == []
        # Typing while the value list has focus lands in the rationale, not nowhere.
        editor.query_one("#editor-value").focus()
        await pilot.pause()
        await pilot.press(*"seen")
        await stored(pilot, ("ctrl+s",))
        last = events(sample_db)[-1]
        assert last[1:4] == ("confirm", "1", "seen") and last[5] == judgment.id


async def test_proposals_screen_help_and_accepting_a_flagged_duplicate(sample_db: Path) -> None:
    from tui.screens.modals import ProposeDialog
    from tui.screens.proposals import ProposalsScreen

    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await select_judgment(pilot, lambda j: j.kind == "claim")
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ProposeDialog))
        await stored(pilot, ("ctrl+s",))  # the claim itself: a duplicate
        await pilot.press("escape", "P")
        await wait_for(pilot, lambda: isinstance(app.screen, ProposalsScreen))
        screen = app.screen
        assert isinstance(screen, ProposalsScreen)
        await wait_for(pilot, lambda: len(screen.found) == 1)

        await pilot.press("question_mark")  # this screen's keys, not the queue's
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        help_text = str(app.screen.query_one("#help-text").render())
        assert "proposals.accept" in help_text and "proposals.force" in help_text
        assert "queue.open" not in help_text
        await pilot.press("escape")

        await pilot.press("y")  # refused: it duplicates an item
        await wait_for(
            pilot, lambda: any("Y accepts it anyway" in str(n.message) for n in app._notifications)
        )
        assert screen.found[0].status == "proposed"
        await stored(pilot, ("Y",))
        await wait_for(pilot, lambda: screen.found and screen.found[0].status == "accepted")
        assert events(sample_db)[-1][1] == "accept"


async def test_command_palette_runs_gavel_commands(sample_db: Path) -> None:
    from textual.command import CommandList, CommandPalette

    from tui.screens.agreement import AgreementScreen

    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        for query, reached in (
            ("judge ≠ human", lambda: queue.filter.differs),
            ("agreement statistics", lambda: isinstance(app.screen, AgreementScreen)),
        ):
            await pilot.press("ctrl+p")
            await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
            await pilot.press(*query)
            # The palette searches in a worker: enter once a match is listed.
            await wait_for(pilot, lambda: app.screen.query_one(CommandList).option_count > 0)
            await pilot.press("enter")
            await wait_for(pilot, reached)


async def test_a_long_queue_fills_in_chunks_and_keeps_the_cursor(
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tui.screens.queue as queue_module

    monkeypatch.setattr(queue_module, "FIRST_ROWS", 5)  # the sample is small: tiny chunks
    monkeypatch.setattr(queue_module, "LATER_ROWS", 7)
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        while queue.filter.suite is not None:  # b cycles the runs, then all
            await pilot.press("b")
        table = queue.query_one("#queue-table")
        assert isinstance(table, DataTable)
        await wait_for(pilot, lambda: table.row_count == len(queue.shown) > 12)
        keys = [str(r.report_id) for r in queue.shown]
        assert [k.value for k in table.rows] == keys  # every row, in order, once
        table.move_cursor(row=len(keys) - 2)  # a row of a later chunk
        chosen = queue.current_report_id()
        await pilot.press("u")  # a redraw from scratch
        await wait_for(pilot, lambda: queue.current_report_id() == chosen)


async def loaded_queue(pilot: Any, app: Any) -> tuple[Any, DataTable[Any]]:
    """The queue screen and its table, once every shown row is in the table."""
    await ready(pilot)
    queue = app.queue_screen
    table = queue.query_one("#queue-table")
    assert isinstance(table, DataTable)
    await wait_for(pilot, lambda: table.row_count == len(queue.shown) > 1)
    return queue, table


async def test_a_decision_patches_its_queue_row_in_place(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        queue, table = await loaded_queue(pilot, app)
        await pilot.press("f")  # status: new
        await wait_for(pilot, lambda: table.row_count == len(queue.shown) > 1)
        generation = queue._generation
        await open_report(pilot, "t01-atlas-dr")
        report_id = next(r.report_id for r in queue.rows if r.report == "t01-atlas-dr")
        await select_judgment(pilot, lambda j: j.kind == "claim")
        await stored(pilot, ("c",))
        await pilot.press("escape")
        # Back in the queue: the decided report is no longer new, so its row left the
        # filtered table; the others stayed in order; the table was not rebuilt (a redraw
        # would have moved the generation).
        await wait_for(pilot, lambda: app.screen is queue and str(report_id) not in table.rows)
        assert queue._generation == generation
        assert [k.value for k in table.rows] == [str(r.report_id) for r in queue.shown]
        assert report_id not in [r.report_id for r in queue.shown]
        await pilot.press("f", "f", "f")  # in progress, done, all
        await wait_for(
            pilot, lambda: queue.filter.status == "all" and table.row_count == len(queue.shown)
        )
        generation = queue._generation
        await open_report(pilot, "t01-atlas-dr")
        await select_judgment(pilot, lambda j: j.kind == "claim" and not j.decided)
        await stored(pilot, ("x",))
        await pilot.press("escape")

        def decided_cell() -> str:
            return str(table.get_cell(str(report_id), "progress"))

        # In the unfiltered queue the row keeps its place; its Decided cell moves, in place.
        await wait_for(pilot, lambda: decided_cell().startswith("2/"))
        row = next(r for r in queue.shown if r.report_id == report_id)
        assert decided_cell() == f"{row.decided}/{row.total}" and row.decided == 2
        assert queue._generation == generation
        assert [k.value for k in table.rows] == [str(r.report_id) for r in queue.shown]


async def test_arriving_impacts_are_not_measured_against_the_whole_column(
    sample_db: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Textual re-measures every cell of a column when an updated cell is narrower than the
    # widest; impacts arriving report by report made that quadratic (25,500 reports: a
    # core busy for many minutes). The impact column has a fixed width instead.
    import textual.widgets._data_table as data_table

    from reviewer.impact import Impact
    from tui.messages import ImpactsComputed

    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        queue, table = await loaded_queue(pilot, app)
        assert table.row_count > 10
        measured = 0
        real = data_table.measure

        def counting(*args: object, **kwargs: object) -> int:
            nonlocal measured
            measured += 1
            return real(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(data_table, "measure", counting)
        ids = [r.report_id for r in queue.shown]
        wide = {ids[0]: Impact(12.25, 10.5, None)}
        narrow = {rid: Impact(float(i % 2), 0.0, None) for i, rid in enumerate(ids[1:])}
        for batch in (wide, *({rid: impact} for rid, impact in narrow.items())):
            queue.post_message(ImpactsComputed(batch, 0))
            await pilot.pause()
        await wait_for(pilot, lambda: str(table.get_cell(str(ids[-1]), "impact")) != "…")
        await pilot.pause()
        assert measured < len(ids), measured  # not a column's worth per cell


async def test_equal_queue_cells_are_one_object(sample_db: Path) -> None:
    # 25,500 rows × 13 cells of separate Text objects were ~100 MB of the workstation.
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        queue, table = await loaded_queue(pilot, app)
        by_system: dict[str, list[str]] = {}
        for row in queue.shown:
            by_system.setdefault(row.system, []).append(str(row.report_id))
        keys = next(k for k in by_system.values() if len(k) > 1)
        first, second = (table.get_row(key) for key in keys[:2])
        assert str(first[1]) == str(second[1]) and first[1] is second[1]  # the system
        assert first[3] is second[3]  # no "≠" yet


async def test_a_row_that_newly_matches_the_filter_is_drawn(sample_db: Path) -> None:
    # Patching in place cannot add a row: a report that starts to match the filter (judge ≠
    # human after an override) takes a redraw, and the table ends equal to what is shown.
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        from dataclasses import replace

        queue, table = await loaded_queue(pilot, app)
        await open_report(pilot, "t01-atlas-dr")
        report_id = next(r.report_id for r in queue.rows if r.report == "t01-atlas-dr")
        queue.set_filter(replace(queue.filter, differs=True))  # judge ≠ human: none yet
        await wait_for(pilot, lambda: queue.shown == [] and table.row_count == 0)
        generation = queue._generation
        await select_judgment(pilot, lambda j: j.kind == "claim" and j.judge == "incorrect")
        await stored(pilot, ("c",))  # an override: now it differs
        await pilot.press("escape")
        await wait_for(pilot, lambda: [k.value for k in table.rows] == [str(report_id)])
        assert queue._generation > generation
        assert [r.report_id for r in queue.shown] == [report_id]


async def test_the_cursor_row_is_redrawn_in_the_colour_of_the_lists_focus(sample_db: Path) -> None:
    """The list caches its rendered rows; the cursor's colour depends on focus, so a row drawn
    before the list took (or lost) focus must not be reused after."""
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t03-kestrel")
        judgments = app.screen.query_one(JudgmentList)
        await wait_for(pilot, lambda: app.focused is judgments)
        y = judgments.cursor - judgments.scroll_offset.y

        def cursor_backgrounds() -> set[object]:
            return {s.style.bgcolor for s in judgments.render_line(y) if s.style is not None}

        focused = judgments.get_component_rich_style("judgment-list--cursor").bgcolor
        assert focused in cursor_backgrounds()
        app.screen.query_one("#detail").focus()
        await wait_for(pilot, lambda: not judgments.has_focus)
        blurred = judgments.get_component_rich_style("judgment-list--cursor").bgcolor
        assert blurred != focused
        assert blurred in cursor_backgrounds() and focused not in cursor_backgrounds()
        judgments.focus()
        await wait_for(pilot, lambda: judgments.has_focus)
        assert focused in cursor_backgrounds() and blurred not in cursor_backgrounds()
