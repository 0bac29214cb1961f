"""The Estimates screen and plan mode, driven by Textual's Pilot on the sample data: a plan is
drawn from the workstation, its subjects are served in order with the plan's progress and a
running estimate, and the Estimates screen shows corrected values, intervals and ranks."""

from __future__ import annotations

from pathlib import Path

from tests.tui_helpers import make_app, ready, screen_text, stored, wait_for
from tui.screens.estimates import EstimatesScreen
from tui.screens.plan_dialog import NewPlanDialog
from tui.screens.plan_review import PlanReviewScreen
from tui.widgets.judgments import JudgmentList
from tui.widgets.text_view import TextView

SIZE = (170, 48)


def _choose_design(dialog: object, design: str) -> None:
    from textual.widgets import OptionList

    from tui.screens.plan_dialog import DESIGNS

    assert isinstance(dialog, NewPlanDialog)
    dialog.query_one("#plan-design", OptionList).highlighted = list(DESIGNS).index(design)


SUITE = "dailyreport-sample-2026-11"


def reviewed_plan(db: Path, budget: int = 120, decide: int = 100, seed: int = 1) -> None:
    """Plan p1 with its first ``decide`` subjects decided (every fourth overruled)."""
    from reviewer.registry import get_kind
    from store.db.connection import connect
    from store.plans.design import PlanSpec, create_plan, plan_items
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores

    conn = connect(db)
    plan = create_plan(conn, PlanSpec(budget, seed=seed, suite=SUITE), "ana")
    log = ReviewLog(conn, "ana")
    for n, item in enumerate(plan_items(conn, plan.id)[:decide]):
        judge = conn.execute(
            "SELECT value FROM judgment WHERE id = ?", (item.judgment_id,)
        ).fetchone()[0]
        scale = get_kind(item.kind).scale  # type: ignore[union-attr]
        value = (
            judge
            if judge is not None and n % 4
            else next(c.code for c in scale.choices if c.code != judge)
        )
        assert item.judgment_id is not None
        log.decide(item.judgment_id, value, "pilot")
    rebuild_scores(conn)
    conn.close()


async def test_the_estimates_screen_shows_corrected_scores_and_ranks(sample_db: Path) -> None:
    reviewed_plan(sample_db)
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("E")
        screen = app.screen
        assert isinstance(screen, EstimatesScreen)
        await wait_for(pilot, lambda: screen.computed >= 1, limit=60)
        text = screen.query_one(TextView).plain
        assert "100/120 of plan p1" in text
        assert "corrected [CI]" in text and "bias (judge − corr.)" in text
        assert "adjacent ranks (cascade.Fac)" in text and "corrected" in text
        assert "first-order" in text  # UserPref says what it is
        await pilot.press("w")  # target ±0.02 → ±0.01
        await wait_for(pilot, lambda: screen.computed >= 2, limit=60)
        assert "more for ±0.01" in screen.query_one(TextView).plain
        await pilot.press("a")  # the anytime interval beside it
        await wait_for(pilot, lambda: screen.computed >= 3, limit=60)
        assert "anytime ±" in screen.query_one(TextView).plain
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.queue_screen


async def test_a_plan_is_drawn_and_reviewed_in_order(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("L")  # no plan yet: draw one
        await wait_for(pilot, lambda: isinstance(app.screen, NewPlanDialog))
        budget = app.screen.query_one("#plan-budget")
        budget.value = "25"  # type: ignore[attr-defined]
        app.screen.query_one("#plan-seed").value = "4"  # type: ignore[attr-defined]
        _choose_design(app.screen, "uniform")
        await pilot.press("ctrl+s")
        screen = app.screen
        assert isinstance(screen, PlanReviewScreen)
        await wait_for(pilot, lambda: screen.view is not None and bool(screen.items), limit=60)
        await wait_for(pilot, lambda: screen.estimates_shown >= 1, limit=60)
        assert screen.plan is not None and screen.plan.name == "p1"
        assert screen.plan.budget == 25 and screen.plan.seed == 4
        assert "0/25 of plan p1" in screen_text(app)
        first = screen.items[0]
        assert screen.index == 0 and screen.report_id == first.report_id
        await wait_for(
            pilot, lambda: screen.query_one(JudgmentList).selected_id == first.judgment_id
        )
        judgment = screen.selected()
        assert judgment is not None and judgment.judge is not None
        from reviewer.registry import get_scale

        key = next(c.key for c in get_scale(judgment.scale).choices if c.code == judgment.judge)
        await stored(pilot, (key,))
        await wait_for(pilot, lambda: screen.items[0].decided and screen.index == 1)
        await wait_for(pilot, lambda: "1/25 of plan p1" in screen_text(app))
        second = screen.items[1]
        await wait_for(
            pilot, lambda: screen.query_one(JudgmentList).selected_id == second.judgment_id
        )
        await pilot.press("p")  # back to the previous subject
        await wait_for(pilot, lambda: screen.index == 0)
        await pilot.press("right_square_bracket")  # next undecided: the second
        await wait_for(pilot, lambda: screen.index == 1)


async def test_from_the_estimates_screen_a_new_plan_and_its_review(sample_db: Path) -> None:
    reviewed_plan(sample_db, budget=40, decide=10)
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("E")
        screen = app.screen
        assert isinstance(screen, EstimatesScreen)
        await wait_for(pilot, lambda: screen.computed >= 1, limit=60)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, NewPlanDialog))
        app.screen.query_one("#plan-seed").value = "9"  # type: ignore[attr-defined]
        _choose_design(app.screen, "uniform")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: screen.plan == "p2" and screen.computed >= 2, limit=60)
        assert "0/100 of plan p2" in screen.query_one(TextView).plain
        await pilot.press("L")
        review = app.screen
        assert isinstance(review, PlanReviewScreen)
        await wait_for(pilot, lambda: review.plan is not None and review.view is not None, limit=60)
        assert review.plan is not None and review.plan.name == "p2"


async def test_plan_mode_walks_an_active_plan_by_default_batch_after_batch(
    sample_db: Path,
) -> None:
    """The dialog's default design is active: its first batch is served, and once every
    subject of it is decided the next batch is drawn where those decisions say the judge
    errs, and served in turn."""
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("L")
        await wait_for(pilot, lambda: isinstance(app.screen, NewPlanDialog))
        app.screen.query_one("#plan-budget").value = "30"  # type: ignore[attr-defined]
        app.screen.query_one("#plan-seed").value = "3"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        screen = app.screen
        assert isinstance(screen, PlanReviewScreen)
        await wait_for(pilot, lambda: screen.view is not None and bool(screen.items), limit=60)
        assert screen.plan is not None and screen.plan.active and screen.plan.budget == 30
        first_batch = len(screen.items)
        assert 0 < first_batch < 30
        from reviewer.registry import get_scale

        for _ in range(first_batch):
            current = screen.items[screen.index]
            await wait_for(
                pilot, lambda c=current: screen.query_one(JudgmentList).selected_id == c.judgment_id
            )
            judgment = screen.selected()
            assert judgment is not None and judgment.judge is not None
            scale = get_scale(judgment.scale)
            key = next(c.key for c in scale.choices if c.code == judgment.judge)
            await stored(pilot, (key,))
            await wait_for(
                pilot,
                lambda c=current: any(
                    i.decided for i in screen.items if i.judgment_id == c.judgment_id
                ),
            )
        await wait_for(pilot, lambda: len(screen.items) > first_batch, limit=60)
        assert not screen.items[screen.index].decided  # served: the new batch's first
        assert screen.index >= first_batch


async def test_a_report_plan_from_the_estimates_screen_gives_userpref_an_interval(
    sample_db: Path,
) -> None:
    """`n` on the Estimates screen, design "reports", four reports: once every subject of
    them is decided, UserPref's rows show an interval and no longer the subject plan's
    "not estimable from this sample"."""
    reviewed_plan(sample_db, budget=40, decide=10)
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("E")
        screen = app.screen
        assert isinstance(screen, EstimatesScreen)
        await wait_for(pilot, lambda: screen.computed >= 1, limit=60)
        assert "not estimable from this sample" in screen.query_one(TextView).plain
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, NewPlanDialog))
        app.screen.query_one("#plan-budget").value = "6"  # type: ignore[attr-defined]
        app.screen.query_one("#plan-seed").value = "2"  # type: ignore[attr-defined]
        _choose_design(app.screen, "reports")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: screen.plan == "p2" and screen.computed >= 2, limit=60)
        assert "reports (whole reports, by system)" in screen.query_one(TextView).plain
        from store.db.connection import connect
        from store.plans.design import get_plan
        from store.plans.simulated import review_plan

        conn = connect(sample_db)
        plan = get_plan(conn, "p2")
        assert plan.reports
        review_plan(conn, plan, None, 100_000, overrule_every=4)
        conn.close()
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.computed >= 3, limit=60)
        text = screen.query_one(TextView).plain
        assert "not estimable from this sample" not in text
        assert "draws whole reports" in text
