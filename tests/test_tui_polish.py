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


# -- 2. the rationale editor fits 80×24 and says where tab goes -----------------------------


@pytest.mark.parametrize("size", [SMALL, LARGE])
async def test_the_rationale_editor_fits_and_its_fields_are_in_sight(
    sample_db: Path, size: tuple[int, int]
) -> None:
    from textual.widgets import OptionList, TextArea

    from tui.screens.modals import RationaleEditor

    app = make_app(sample_db, require_rationale=True)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await open_report(pilot, "t04-juniper")
        await pilot.press("j")  # c1, a claim judged correct
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RationaleEditor))
        await pilot.pause()
        await pilot.press("x")  # the value; focus moves on to the reason list
        await pilot.pause()
        editor = app.screen
        assert isinstance(app.focused, OptionList) and app.focused.id == "editor-reason"
        text = screen_text(app)
        assert "Reason (judge-error" in text and "reason: " in text  # the hint says where
        await pilot.press("tab")
        await pilot.pause()
        assert isinstance(app.focused, TextArea)
        await pilot.press(*"page says 3.1")
        await pilot.pause()
        text = screen_text(app)
        assert "page says 3.1" in text  # what is typed is on screen
        assert "Rationale (required for an override)" in text
        assert "ctrl+s" in text  # and how to save it
        for widget in editor.query("#editor-value, #editor-reason, #editor-text"):
            region = widget.region
            assert region.height > 0 and region.bottom <= size[1], widget.id
        await pilot.press("tab")  # from the rationale, tab goes round to the value
        assert app.focused is not None and app.focused.id == "editor-value"
        await pilot.press("tab")
        await pilot.press(*"Dug")  # typing on the reason list goes to the rationale …
        await pilot.pause()
        assert isinstance(app.focused, TextArea) and app.focused.text.endswith("Dug")
        assert editor._value() == "incorrect"  # type: ignore[attr-defined]  # … never a value
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ReportScreen))


# -- 8. an override needs a rationale, in the workstation and in `gavel decide` alike -------


async def test_a_value_key_override_asks_for_a_rationale_by_default(sample_db: Path) -> None:
    from tests.tui_helpers import events
    from tui.app import GavelApp
    from tui.config import Config
    from tui.screens.modals import RationaleEditor

    assert Config(reviewer="ana").require_rationale  # on unless the file turns it off
    app = GavelApp(sample_db, Config(reviewer="ana"))
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t04-juniper")
        await pilot.press("j")  # c1, judged correct
        await pilot.press("x")  # an override …
        await wait_for(pilot, lambda: isinstance(app.screen, RationaleEditor))
        await pilot.press("ctrl+s")  # … without a rationale is refused
        await pilot.pause()
        assert isinstance(app.screen, RationaleEditor) and events(sample_db) == []
        await pilot.press(*"the page says otherwise")
        await stored(pilot, ("ctrl+s",))
        assert [(e[1], e[2], e[3]) for e in events(sample_db)] == [
            ("override", "incorrect", "the page says otherwise")
        ]
        await pilot.press("k", "k")  # s1-ins, judged 1: a confirmation by key needs nothing
        await stored(pilot, ("1",))
        assert events(sample_db)[-1][1:3] == ("confirm", "1")


def test_gavel_decide_follows_the_same_policy(
    sample_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from click.testing import CliRunner

    from tests.tui_helpers import events
    from tui.cli.group import gavel

    def decide(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(gavel, ["decide", *args, "--db", str(sample_db)])
        return result.exit_code, result.output

    conn = sqlite3.connect(sample_db)
    jid, judge = conn.execute(
        "SELECT id, value FROM judgment WHERE kind = 'claim' AND value = 'correct' LIMIT 1"
    ).fetchone()
    conn.close()
    config = tmp_path / "config.toml"
    monkeypatch.setenv("GAVEL_CONFIG", str(config))
    code, out = decide(str(jid), "incorrect")  # an override, no rationale: refused
    assert code == 2 and "require_rationale" in out and events(sample_db) == []
    code, out = decide(str(jid), judge)  # a confirmation needs none
    assert code == 0, out
    assert events(sample_db)[-1][1:4] == ("confirm", "correct", "")
    config.write_text("require_rationale = false\n")
    code, out = decide(str(jid), "incorrect")  # the policy turned off: stored
    assert code == 0, out
    assert events(sample_db)[-1][1:4] == ("override", "incorrect", "")


# -- 3. the runs screen keeps the cursor on the run acted on; retire says what changes -----


async def test_runs_screen_keeps_the_cursor_and_retire_names_what_changes(
    sample_db: Path,
) -> None:
    from tests.tui_helpers import screen_text
    from tui.screens.modals import ConfirmDialog
    from tui.screens.runs import RunsScreen

    app = make_app(sample_db)
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.query_one("#runs-table")
        await pilot.press("end")  # home and end move the row cursor
        assert table.cursor_row == len(screen.rows) - 1  # type: ignore[attr-defined]
        await pilot.press("home")
        assert table.cursor_row == 0  # type: ignore[attr-defined]
        await pilot.press("down", "down")
        run = screen.rows[2]["run"]

        def state() -> str:
            return str(next(r["state"] for r in screen.rows if r["run"] == run))

        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await pilot.pause()
        text = screen_text(app)
        assert f"Retire {run}" in text
        assert "subjects" in text and "recomputed" in text and "Undo" in text
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is screen and state() == "candidate")
        await pilot.pause()
        assert table.cursor_row == 2  # type: ignore[attr-defined]
        await pilot.press("a")  # activate it again: preview, then y
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), limit=30)
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is screen and state() == "active", limit=30)
        await pilot.pause()
        assert table.cursor_row == 2  # type: ignore[attr-defined]


# -- 4. n follows the current order of what is left ------------------------------------------


async def test_n_in_suspicion_order_opens_the_strongest_report_left(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        await pilot.press("S")
        await pilot.pause()
        flagged = [r.report for r in queue.shown if r.suspects]
        assert len(flagged) > 5
        middle = flagged[3]
        await open_report(pilot, middle)
        screen = _report(app)
        assert screen.view is not None
        judgments = screen.query_one(JudgmentList)
        for judgment in [j for j in screen.view.judgments if j.suspicious and not j.decided]:
            judgments.select_id(judgment.id)
            await pilot.pause()
            await stored(pilot, ("enter",))  # looked at: its suspicion no longer counts
        opened = []
        for _ in range(2):
            app.report_shown_at = None
            await pilot.press("n")
            await wait_for(pilot, lambda: app.report_shown_at is not None)
            await pilot.pause()
            # the strongest report left (impacts arriving may break ties either way)
            suspicion = {
                r.report: r.suspicion for r in queue.rows if r.suite == queue.rows[0].suite
            }
            left = [w for rep, w in suspicion.items() if rep not in (middle, *opened)]
            opened.append(screen.view.report)
            assert suspicion[opened[-1]] == max(left) > 0
        app.report_shown_at = None
        await pilot.press("p")  # p goes back the way n came
        await wait_for(pilot, lambda: app.report_shown_at is not None)
        await pilot.pause()
        assert screen.view.report == opened[0]


def test_step_target_in_a_fixed_order_steps_from_where_a_report_was() -> None:
    from tui.filters import step_target

    order, before = [1, 2, 4, 5], [1, 2, 3, 4, 5]  # 3 left the filter (it is done)
    assert step_target(order, before, 3, [3], 1, moving=False) == 4
    assert step_target(order, before, 3, [3], -1, moving=False) == 2
    assert step_target(order, before, 2, [2], 1, moving=False) == 4
    assert step_target(order, before, 5, [5], 1, moving=False) is None
    # moving: what is left, then back through the visits
    assert step_target([9, 7, 3, 5], before, 3, [3], 1, moving=True) == 9
    assert step_target([9, 7, 3, 5], before, 9, [3, 9], 1, moving=True) == 7
    assert step_target([9, 7, 3, 5], before, 9, [3, 9], -1, moving=True) == 3


# -- 5. a flag's reason follows a decision that changes its premise --------------------------


async def test_a_contradiction_flag_is_settled_or_restated_by_a_decision(sample_db: Path) -> None:
    from tests.tui_helpers import select_judgment
    from tui.detail import detail_text

    app = make_app(sample_db)
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t08-atlas-dr")
        screen = _report(app)
        assert screen.view is not None

        def pair() -> object:
            assert screen.view is not None
            return next(
                j
                for j in screen.view.judgments
                if j.claim_id is not None
                and screen.view.claims[j.claim_id].ext == "c12"
                and j.ref_idx == 6
            )

        def pair_detail() -> str:
            assert screen.view is not None
            return detail_text(screen.view, pair()).plain  # type: ignore[arg-type]

        assert pair().suspicious  # type: ignore[attr-defined]
        assert "the claim itself is judged unknown" in pair_detail()
        await select_judgment(
            pilot,
            lambda j: (
                j.claim_id is not None
                and j.ref_idx is None
                and j.judge == "unknown"
                and screen.view.claims[j.claim_id].ext == "c12"
            ),  # type: ignore[union-attr]
        )
        await stored(pilot, ("c",))  # c12 decided correct, as its support verdict implies
        assert not pair().suspicious  # type: ignore[attr-defined]
        text = pair_detail()
        assert "judged unknown" in text and "settled by a reviewer's decision" in text
        assert "Why look twice" not in text
        await pilot.press("k")
        await stored(pilot, ("x",))  # c12 decided incorrect: the pair still contradicts it
        assert pair().suspicious  # type: ignore[attr-defined]
        assert "the claim itself is judged incorrect" in pair_detail()
        assert "as a reviewer decided it" in pair_detail()
        # the same when the report is opened again
        await pilot.press("escape")
        await open_report(pilot, "t08-atlas-dr")
        screen = _report(app)
        assert pair().suspicious  # type: ignore[attr-defined]
        assert "as a reviewer decided it" in pair_detail()


# -- 6. order per run, S sets, home, the footer, the help border, level words ---------------


async def test_each_run_keeps_its_own_order_and_s_does_not_toggle(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        first = queue.filter.suite
        await pilot.press("S")
        assert queue.filter.sort == "suspicion"
        await pilot.press("b")  # the next run starts in its own (task) order
        assert queue.filter.suite != first and queue.filter.sort == "default"
        await pilot.press("S", "S")  # S twice: still suspicion order
        assert queue.filter.sort == "suspicion"
        while queue.filter.suite != first:
            await pilot.press("b")
        assert queue.filter.sort == "suspicion"  # the first run kept its own


async def test_home_and_end_move_the_queue_cursor(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        table = app.queue_screen.query_one("#queue-table")
        await pilot.press("end")
        assert table.cursor_row == len(app.queue_screen.shown) - 1  # type: ignore[attr-defined]
        await pilot.press("home")
        assert table.cursor_row == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", [SMALL, LARGE])
async def test_the_footer_never_runs_under_the_palette_key(
    sample_db: Path, size: tuple[int, int]
) -> None:
    from tests.tui_helpers import screen_text

    app = make_app(sample_db)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        footer = screen_text(app).splitlines()[-1]
        assert footer.rstrip().endswith("^p palette") and "paletted" not in footer
        assert footer.split("▏")[0].endswith(" ")  # no key runs into the palette's
        await open_report(pilot, "t04-juniper")
        footer = screen_text(app).splitlines()[-1]
        assert footer.rstrip().endswith("^p palette")
        assert footer.split("▏")[0].endswith(" ")
        assert "? Help" in footer and "q Queue" in footer


@pytest.mark.parametrize("size", [SMALL, LARGE])
async def test_the_help_overlay_fits_the_terminal(sample_db: Path, size: tuple[int, int]) -> None:
    from tui.screens.modals import HelpScreen

    app = make_app(sample_db)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        box = app.screen.query_one("#help").region
        assert box.x >= 0 and box.right <= size[0]


def test_level_flags_name_the_words_as_written(sample_db: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(sample_db)
    reasons = [r for (r,) in conn.execute("SELECT reason FROM suspicion WHERE rule = 'level'")]
    conn.close()
    quoted = [r for r in reasons if "uses the words of level" in r]
    assert quoted
    assert any("free, vaccine" in r for r in quoted)
    assert not any("fre," in r or "vaccin)" in r or "vaccin," in r for r in quoted)


# -- 7. reading what the judge said; S then enter; an empty filter says which -------------


def _with_reasoning(judgment: object) -> bool:
    return bool(
        getattr(judgment, "explanation", "")
        and getattr(judgment, "evidence", "")
        and getattr(judgment, "claim_id", None) is not None
    )


async def test_at_200x50_the_judges_explanation_and_evidence_are_in_sight(
    sample_db: Path,
) -> None:
    from tests.tui_helpers import screen_text, select_judgment

    app = make_app(sample_db)
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t07-kestrel")  # c14: a flag, a subtask, a claim, two runs
        screen = _report(app)
        await select_judgment(
            pilot,
            lambda j: (
                j.claim_id is not None
                and j.ref_idx is None
                and screen.view.claims[j.claim_id].ext == "c14"
            ),  # type: ignore[union-attr]
        )
        await pilot.pause()
        text = screen_text(app)
        assert "Judge's explanation" in text and "Judge's evidence" in text


async def test_at_80x24_the_explanation_is_one_key_away_and_the_key_is_shown(
    sample_db: Path,
) -> None:
    from tests.tui_helpers import screen_text, select_judgment
    from tui.widgets.text_view import TextView

    app = make_app(sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-kestrel")
        judgment = await select_judgment(pilot, _with_reasoning)
        footer = screen_text(app).splitlines()[-1]
        assert "d Detail ↓" in footer and "] Undecided" in footer and "r Rationale" in footer
        await pilot.press("d")  # one key, wherever focus is
        await pilot.pause()
        assert "Judge's explanation" in screen_text(app)
        assert _report(app).selected() == judgment  # d scrolls; it never moves the cursor
        detail = _report(app).query_one("#detail", TextView)
        while detail.scroll_y < detail.max_scroll_y:
            await pilot.press("d")
        await pilot.press("d")  # past the end: back to the top
        assert detail.scroll_y == 0


async def test_after_s_enter_opens_the_top_report(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        await pilot.press("down", "down", "down", "down")
        await pilot.press("S")
        await pilot.pause()
        app.report_shown_at = None
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.report_shown_at is not None)
        assert _report(app).view.report == queue.shown[0].report  # type: ignore[union-attr]


@pytest.mark.parametrize("size", [SMALL, LARGE])
async def test_an_empty_queue_names_the_filter_to_clear(
    sample_db: Path, size: tuple[int, int]
) -> None:
    from tests.tui_helpers import screen_text

    app = make_app(sample_db)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await pilot.press("x")  # judge ≠ human: nothing is decided yet
        await pilot.pause()
        assert app.queue_screen.shown == []
        text = " ".join(screen_text(app).split())
        assert "no report matches judge≠human (x)" in text and "esc" in text


async def test_the_runs_screen_modules_are_imported_once_the_queue_is_up(
    sample_db: Path,
) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: app.warmed)


# -- 9. words ----------------------------------------------------------------------------------


def test_the_words_say_which_mark_and_which_command(sample_db: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tui.cli.group import gavel
    from tui.cli.judge import framework_name

    def run(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(gavel, list(args))
        return result.exit_code, result.output

    code, out = run("review", "--help")
    flat = " ".join(out.split())
    assert "w shows only reports with suspicious (◆) verdicts" in flat
    assert "flagged (⚑) for discussion" in flat
    code, out = run("runs", "--help")
    assert "retire" in out
    code, out = run("runs", "retire", "cc-rule", "--db", str(sample_db))
    assert code == 0, out
    code, out = run("runs", "deactivate", "url-matcher-v1", "--db", str(sample_db))  # old name
    assert code == 0, out
    assert framework_name("dailyreport") == "cascade" and framework_name("race") == "race"
    code, out = run("plan", "show", "p9", "--db", str(sample_db))
    assert code != 0 and "no plan 'p9'" in out and "--plan" not in out


async def test_the_score_bar_says_why_a_raised_ins_lowered_factuality(sample_db: Path) -> None:
    from tests.tui_helpers import screen_text, select_judgment

    app = make_app(sample_db)
    async with app.run_test(size=LARGE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t04-juniper")
        screen = _report(app)
        from store.views.screens import subject_label

        await select_judgment(
            pilot,
            lambda j: subject_label(screen.view, j) == "s3-ins",  # type: ignore[arg-type]
        )
        await stored(pilot, ("1",))  # s3-ins 0.5 → 1: its subtask's claims are mostly wrong
        bar = screen_text(app).splitlines()[1:4]
        assert any("last: override" in line for line in bar), bar
        assert any(line.strip().startswith("why: Factuality") for line in bar), bar


@pytest.mark.parametrize("size", [SMALL, LARGE])
async def test_the_last_decision_line_is_in_sight_when_the_scores_wrap(
    sample_db: Path, size: tuple[int, int]
) -> None:
    from tests.tui_helpers import screen_text

    app = make_app(sample_db)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await pilot.press("j")
        await stored(pilot, ("x",))  # c1 overridden (the policy is off in make_app)
        await pilot.pause()
        top = screen_text(app).splitlines()[1:5]
        assert any(line.strip().startswith("last: override") for line in top), top
