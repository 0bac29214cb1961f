"""Issue 14 on screen: suspicion order and flags, the grading context, the whole source page,
readable long reports (tables, Home/End, number precision), 80×24, and the smaller points.

Driven by Pilot on the bundled sample; each test asserts on the app's state and on the screen.
"""

from __future__ import annotations

import re
from pathlib import Path

from textual.binding import Binding
from textual.widgets import DataTable

from tests.tui_helpers import make_app, open_report, ready, screen_text, select_judgment, wait_for
from tui.numfmt import fmt_score, short_value
from tui.screens.report import ReportScreen
from tui.screens.source import SourceScreen, cited_passage
from tui.widgets.judgments import JudgmentList
from tui.widgets.report_text import ReportText, layout
from tui.widgets.text_view import TextView

SIZE = (170, 48)
SMALL = (80, 24)


def _report(app: object) -> ReportScreen:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, ReportScreen)
    return screen


def _detail(app: object) -> str:
    return _report(app).query_one(TextView).plain


# -- suspicion ----------------------------------------------------------------------------------


async def test_suspicion_order_filter_and_bracket_in_suspicion_order(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        await pilot.press("S")
        await pilot.pause()
        assert queue.filter.sort == "suspicion"
        weights = [r.suspicion for r in queue.shown]
        assert weights[0] > 0 and weights == sorted(weights, reverse=True)
        assert "order: suspicion" in screen_text(app)
        total = len(queue.shown)
        await pilot.press("w")  # only reports with flags
        await pilot.pause()
        assert 0 < len(queue.shown) < total and all(r.suspects for r in queue.shown)
        first = queue.shown[0].report
        await open_report(pilot, first)
        screen = _report(app)
        assert screen.suspicion_first
        assert screen.view is not None
        judgments = screen.query_one(JudgmentList)
        plain = next(j.id for j in screen.view.judgments if not j.suspicious)
        judgments.select_id(plain)  # from an unflagged verdict …
        undecided = [j for j in screen.view.judgments if not j.decided]
        strongest = max(j.suspicion for j in undecided)
        await pilot.press("right_square_bracket")
        chosen = next(j for j in screen.view.judgments if j.id == judgments.selected_id)
        assert chosen.suspicious and chosen.suspicion == strongest  # … to the strongest
        flagged = [j for j in undecided if j.suspicious]
        if len(flagged) > 1:  # then the next flagged one
            await pilot.press("right_square_bracket")
            following = next(j for j in screen.view.judgments if j.id == judgments.selected_id)
            assert following.suspicious and following.id != chosen.id
        assert "Why look twice" in _detail(app)
        await pilot.press("S")  # back to list order
        assert not screen.suspicion_first


async def test_a_contradiction_flag_says_why_in_the_detail_pane(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        judgment = await select_judgment(pilot, lambda j: j.kind == "claim" and j.suspicious)
        assert judgment is not None
        await pilot.pause()
        detail = _detail(app)
        assert "Why look twice" in detail and "contradiction:" in detail
        assert "one side is wrong" in detail
        assert "◆" in screen_text(app)  # the list marks it


# -- the grading context ------------------------------------------------------------------------


async def test_livedrbench_note_rules_and_tolerance_beside_the_verdict(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "peer-chorusalp-ibis-dr")
        await select_judgment(pilot, lambda j: j.kind == "cf1_key" and j.suspicious)
        await pilot.pause()
        detail = _detail(app)
        assert "Grading rules" in detail
        assert "Numeric tolerance" in detail and "within the 1% tolerance" in detail
        assert "tolerance:" in detail  # the flag's reason too


async def test_dr_bench_trusted_sources_and_the_near_match(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "08902-quill-dr")
        await select_judgment(pilot, lambda j: j.kind == "drb_trusted" and j.suspicious)
        await pilot.pause()
        detail = _detail(app)
        assert "Trusted sources of this task" in detail
        assert "Nearly matches" in detail and "tsl-2" in detail


async def test_the_whole_source_page_with_evidence_and_cited_passage(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t07-atlas-dr")
        judgment = await select_judgment(
            pilot, lambda j: j.kind == "consistency" and bool(j.evidence)
        )
        assert judgment is not None
        report = _report(app)
        assert report.view is not None
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, SourceScreen))
        await pilot.pause()
        source = app.screen
        assert isinstance(source, SourceScreen)
        page = report.view.sources[source.url].text
        widget = source.query_one(ReportText)
        assert widget._text == page  # every character, no "…"
        assert source.evidence is not None
        assert page[
            source.evidence[0] : source.evidence[1]
        ] == judgment.evidence.strip() or judgment.evidence.strip().startswith(
            page[source.evidence[0] : source.evidence[0] + 10]
        )
        assert any(s.kind == "match" and s.start == source.evidence[0] for s in widget.spans)
        assert "evidence" in screen_text(app)
        await pilot.press("end")
        await pilot.pause()
        assert widget.scroll_offset.y == widget.max_scroll_y
        await pilot.press("e")  # back to the evidence
        await pilot.pause()
        assert widget.line_of(source.evidence[0]) in range(
            widget.scroll_offset.y, widget.scroll_offset.y + widget.size.height
        )
        await pilot.press("escape")
        assert app.screen is report


def test_cited_passage_is_the_sentence_sharing_most_words_with_the_claim() -> None:
    page = (
        "The council met on Tuesday. Applications rose 14 percent to 31,260 this autumn. "
        "In-state applications rose 19 percent."
    )
    start, end = cited_passage(page, "First-year applications rose 19% to 31,260") or (0, 0)
    assert page[start:end] == "Applications rose 14 percent to 31,260 this autumn."
    assert cited_passage(page, "Weather was mild") is None


async def test_integrity_line_names_the_page_the_evidence_is_from(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        screen = _report(app)
        assert screen.view is not None
        view = screen.view
        judgment = await select_judgment(
            pilot,
            lambda j: (
                j.kind == "claim"
                and bool(j.evidence)
                and len(view.claims[j.claim_id].citations) > 1
            ),
        )
        assert judgment is not None
        await pilot.pause()
        detail = _detail(app)
        assert detail.count("the judge's evidence is from this page") == 1
        assert "not this page" in detail
        assert "the judge's evidence is not in the stored page" not in detail


# -- readable reports ---------------------------------------------------------------------------

TABLE = (
    "Intro line.\n| Bank | Rate |\n|---|---:|\n| Cobalt | 4.1% |\n| Juniper Savings | 3.9% |\nEnd."
)


def test_markdown_tables_are_laid_out_as_boxed_columns() -> None:
    lines, composed = layout(TABLE, 60)
    shown = [
        composed[i].plain(TABLE) if i in composed else TABLE[a:b] for i, (a, b) in enumerate(lines)
    ]
    assert shown[0] == "Intro line." and shown[-1] == "End."
    assert shown[1].startswith("┌") and shown[-2].startswith("└")
    row = next(s for s in shown if "Cobalt" in s)
    assert row.startswith("│ Cobalt") and row.rstrip().endswith("4.1% │")  # right-aligned
    assert not any(s.startswith("|") for s in shown)
    # Offsets still point into the original text: the row's range holds its cells.
    index = shown.index(row)
    a, b = lines[index]
    assert "Cobalt" in TABLE[a:b]


def test_a_table_too_wide_for_the_pane_becomes_records() -> None:
    wide = (
        "| "
        + " | ".join(f"Heading{i}" for i in range(6))
        + " |\n|"
        + "---|" * 6
        + "\n| "
        + " | ".join(f"value{i}" for i in range(6))
        + " |"
    )
    lines, composed = layout(wide, 30)
    shown = [composed[i].plain(wide) for i in range(len(lines)) if i in composed]
    assert "Heading0: value0" in shown and "Heading5: value5" in shown


async def test_end_and_home_reach_the_ends_of_a_40k_word_report_on_first_press(
    sample_db: Path,
) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        widget = _report(app).query_one(ReportText)
        words = " ".join(f"word{i}" for i in range(40_000))
        widget.set_document(words + "\nTHE LAST LINE", [])
        widget.focus()
        await pilot.pause()
        assert widget.max_scroll_y > 1000
        # On the press itself, not after an animation: a jump, so the first press is there.
        app.animation_level = "full"  # as in a real terminal
        await pilot.press("end")
        assert widget.scroll_offset.y == widget.max_scroll_y
        assert "THE LAST LINE" in widget.visible_text()
        await pilot.press("home")
        assert widget.scroll_offset.y == 0
        # The keys jump synchronously (Textual's own scroll_end animates for a second after a
        # refresh, and stopped short on a report this long in a real terminal).
        keys = {b.key: b.action for b in ReportText.BINDINGS if isinstance(b, Binding)}
        assert keys["end"] == "edge(1)" and keys["home"] == "edge(-1)"
        widget.action_edge(1)
        assert widget.scroll_offset.y == widget.max_scroll_y
        widget.action_edge(-1)
        assert widget.scroll_offset.y == 0


def test_numbers_at_a_sensible_precision() -> None:
    assert short_value("0.39290240811153354") == "0.3929"
    assert short_value("0.5") == "0.5" and short_value("correct") == "correct"
    assert short_value("12345.678901") == "1.235e+04" or short_value("12345.678901") == "1.235e+4"
    assert fmt_score(0.39290240811153354, 3) == "0.393" and fmt_score(3.0, 0) == "3"


async def test_a_race_value_is_shown_short_in_the_list_and_the_detail(
    sample_db: Path, anchors: Path
) -> None:
    """A stored RACE value (0.39290240811153354) reads 0.3929 in the list and the detail."""
    from reviewer.registry import format_reader
    from store.db.connection import connect
    from store.imports.loader import import_bundle
    from store.scores.cache import rebuild_scores

    root = anchors / "deep_research_bench"
    conn = connect(sample_db)
    import_bundle(conn, format_reader("deepresearch_bench")(root, None), "anchors", str(root))
    rebuild_scores(conn)
    conn.close()
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "claude-3-7-sonnet-latest:1")
        judgment = await select_judgment(pilot, lambda j: j.judge is not None and len(j.judge) > 8)
        assert judgment is not None and judgment.judge is not None
        await pilot.pause()
        assert short_value(judgment.judge) in _detail(app)
        assert judgment.judge not in _detail(app)
        assert judgment.judge not in screen_text(app)


# -- 80×24 --------------------------------------------------------------------------------------


async def test_at_80x24_the_queue_keeps_review_state_and_the_footer_help_and_quit(
    sample_db: Path,
) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await pilot.press("S", "w")  # order and filter stay in sight
        await pilot.pause()
        text = screen_text(app)
        assert "order: suspicion" in text and "suspicious  ·" in text
        head = next(line for line in text.splitlines() if "Task" in line and "System" in line)
        for column in ("Decided", "≠", "⚑"):
            assert column in head
        footer = text.splitlines()[-1]
        assert "?" in footer and " q " in f" {footer} "


async def test_at_80x24_the_judgment_list_keeps_the_subject_id(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-juniper")
        screen = _report(app)
        assert screen.view is not None
        text = screen_text(app)
        judgments = screen.query_one(JudgmentList)
        assert judgments.size.width < 58  # the compact row layout
        assert screen.query_one("#task-prompt").size.height == 1  # rows saved for the list
        assert re.search(r"ins +s1-ins ", text)  # rubric id before its value
        for claim in ("c1", "c2"):  # claim ids before theirs
            assert re.search(rf"claim +{claim} ", text)
        footer = text.splitlines()[-1]
        assert "?" in footer and "q" in footer


# -- the smaller points -------------------------------------------------------------------------


async def test_back_to_the_queue_after_n_keeps_the_report_left(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        app.report_shown_at = None
        await pilot.press("n")
        await wait_for(pilot, lambda: app.report_shown_at is not None)
        left = _report(app).view
        assert left is not None and left.report == "t01-kestrel"
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is app.queue_screen)
        await pilot.pause()
        table = app.queue_screen.query_one(DataTable)
        assert app.queue_screen.shown[table.cursor_row].report == "t01-kestrel"


async def test_the_impact_column_says_what_it_measures(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        text = screen_text(app)
        assert "Impact Δ" in text
        assert "Impact: the most one verdict flip moves" in text


async def test_the_detail_pane_shows_focus(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        detail = _report(app).query_one("#detail", TextView)
        before = detail.styles.border_top
        detail.focus()
        await pilot.pause()
        assert detail.has_focus
        assert detail.styles.border_top != before and detail.border_title == "detail"


async def test_adjudicating_a_subject_not_in_conflict_warns(sample_db: Path) -> None:
    app = make_app(sample_db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, "t01-atlas-dr")
        await select_judgment(pilot, lambda j: j.status != "conflict")
        await pilot.press("A")
        await pilot.pause()
        assert any("not in conflict" in str(n.message) for n in app._notifications)
