"""Blind review on the overlap, in every figure: until I decide one of my overlap subjects, my
queue row, its counts and the report's scores are as if my co-reviewer had not decided it; once
I decide, everything shows (store.assignments.blind, tui.blind)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from store.assignments.blind import blind_per_report, hidden_work
from store.assignments.hand_out import report_targets
from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.views.screens import QueueRow, queue_rows, report_scores
from tests.tui_helpers import make_app, open_report, ready, screen_text, stored, wait_for
from tui.blind import blinded_rows, blinded_scores

SUITE = "dailyreport-sample-2026-11"


def _report(conn: sqlite3.Connection) -> QueueRow:
    return [r for r in queue_rows(conn) if r.suite == SUITE][-1]


def _shared(conn: sqlite3.Connection, report_id: int) -> list[int]:
    """The report handed whole to ana and ben, every subject on the overlap: its verdicts."""
    from store.assignments.hand_out import hand_out

    hand_out(conn, ReviewLog(conn, "lead"), report_targets(conn, [report_id]), ["ana", "ben"], 1.0)
    return [
        int(j)
        for (j,) in conn.execute(
            "SELECT id FROM judgment WHERE report_id = ? AND current = 1 ORDER BY id", (report_id,)
        )
    ]


def _other_value(conn: sqlite3.Connection, jid: int) -> str:
    from reviewer.registry import get_kind

    kind, judge = conn.execute("SELECT kind, value FROM judgment WHERE id = ?", (jid,)).fetchone()
    scale = get_kind(kind).scale  # type: ignore[union-attr]
    return next(c.code for c in scale.choices if c.code != judge)


def _ben_overrules_everything(conn: sqlite3.Connection, judgments: list[int]) -> None:
    ben = ReviewLog(conn, "ben")
    for jid in judgments:
        ben.decide(jid, _other_value(conn, jid), "ben's reading")
    ben.flag(judgments[0], rationale="ben thinks the judge is wrong")
    _rescore(conn, judgments)


def _rescore(conn: sqlite3.Connection, judgments: list[int]) -> None:
    """The scores after decisions recorded through the log alone (as `gavel decide` does)."""
    from store.scores.cache import update_scores

    marks = ",".join("?" * len(judgments))
    found = conn.execute(
        f"SELECT DISTINCT report_id FROM judgment WHERE id IN ({marks})", judgments
    ).fetchall()
    update_scores(conn, [int(r) for (r,) in found])


def _as_seen_by(conn: sqlite3.Connection, reviewer: str, report_id: int) -> QueueRow:
    row = next(r for r in queue_rows(conn, [report_id]))
    blinded_rows([row], hidden_work(conn, reviewer, [report_id]))
    return row


def _figures(row: QueueRow) -> tuple[object, ...]:
    return (row.decided, row.differs, row.conflicts, row.flags, row.suspects, row.adjudicated)


def test_my_co_reviewer_s_decisions_stay_out_of_my_figures_until_i_decide(
    sample_db: Path,
) -> None:
    conn = connect(sample_db)
    report = _report(conn)
    rid = report.report_id
    judgments = _shared(conn, rid)
    before = _as_seen_by(conn, "ana", rid)
    scores_before = report_scores(conn, rid)
    _ben_overrules_everything(conn, judgments)
    everyone = next(r for r in queue_rows(conn, [rid]))
    # What is stored counts ben's decisions: they moved the counts and a headline score...
    assert everyone.decided == len(judgments) and everyone.differs == len(judgments)
    assert everyone.flags == 1 and everyone.adjudicated != before.adjudicated
    # ...but not for ana, who has decided none of her overlap subjects yet.
    mine = _as_seen_by(conn, "ana", rid)
    assert _figures(mine) == pytest.approx(_figures(before))
    hidden = hidden_work(conn, "ana")[rid]
    assert [s.adjudicated for s in blinded_scores(report_scores(conn, rid), hidden)] == (
        pytest.approx([s.adjudicated for s in scores_before])
    )
    # ben decided them all: nothing is hidden from him.
    assert hidden_work(conn, "ben") == {} and blind_per_report(conn, "ben") == {}
    assert _figures(_as_seen_by(conn, "ben", rid)) == _figures(everyone)

    # ana decides the first one: that subject shows (a conflict: ben read it otherwise), the
    # rest stay hidden.
    ana = ReviewLog(conn, "ana")
    ana.confirm(judgments[0])
    mine = _as_seen_by(conn, "ana", rid)
    assert (mine.decided, mine.conflicts, mine.differs, mine.flags) == (1, 1, 0, 1)
    for jid in judgments[1:]:
        ana.confirm(jid)
    _rescore(conn, judgments)
    # Everything decided: ana sees what everyone sees, the conflicts included.
    assert hidden_work(conn, "ana") == {}
    mine = _as_seen_by(conn, "ana", rid)
    assert _figures(mine) == _figures(next(r for r in queue_rows(conn, [rid])))
    assert mine.conflicts == len(judgments)


def test_only_overlap_subjects_i_have_not_decided_are_blind(sample_db: Path) -> None:
    from store.assignments.hand_out import Target, hand_out

    conn = connect(sample_db)
    rows = conn.execute(
        "SELECT s.target, s.report_id, s.id FROM subject s "
        "WHERE EXISTS (SELECT 1 FROM judgment j WHERE j.subject_id = s.id AND j.current = 1) "
        "ORDER BY s.id LIMIT 3"
    ).fetchall()
    log = ReviewLog(conn, "lead")
    hand_out(conn, log, [Target(rows[0][0], rows[0][1])], ["ana", "ben"], 1.0)
    hand_out(conn, log, [Target(rows[1][0], rows[1][1])], ["ana"], 0.0)  # ana's alone
    hand_out(conn, log, [Target(rows[2][0], rows[2][1])], ["ben", "cy"], 1.0)  # not ana's
    ben = ReviewLog(conn, "ben")
    cy = ReviewLog(conn, "cy")
    jid = {
        sid: int(
            conn.execute(
                "SELECT id FROM judgment WHERE subject_id = ? AND current = 1", (sid,)
            ).fetchone()[0]
        )
        for _, _, sid in rows
    }
    for _, _, sid in rows:
        ben.confirm(jid[sid])
    cy.confirm(jid[rows[2][2]])
    hidden = hidden_work(conn, "ana")
    assert {s for h in hidden.values() for s in h.subjects} == {rows[0][2]}
    assert hidden[rows[0][1]].decided == 1 and hidden[rows[0][1]].differs == 0
    assert hidden[rows[0][1]].adjudicated == {}  # a confirmation moves no score
    assert hidden_work(conn, "cy") == {}


async def test_the_queue_and_the_report_do_not_move_with_my_co_reviewer_s_decisions(
    sample_db: Path,
) -> None:
    from tui.screens.report import ReportScreen

    conn = connect(sample_db)
    report = _report(conn)
    judgments = _shared(conn, report.report_id)
    judge_scores = [(s.label, s.judge) for s in report_scores(conn, report.report_id)]
    _ben_overrules_everything(conn, judgments)
    conn.close()
    app = make_app(sample_db, reviewer="ana")
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        row = next(r for r in queue.rows if r.report_id == report.report_id)
        assert (row.decided, row.differs, row.flags) == (0, 0, 0)
        assert row.adjudicated == pytest.approx(row.judge)
        assert f"0/{report.total}" in screen_text(app)
        assert "ben" not in screen_text(app)
        await open_report(pilot, report.report)
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        await wait_for(pilot, lambda: screen.view is not None and bool(screen.scores))
        assert [(s.label, s.adjudicated) for s in screen.scores] == pytest.approx(judge_scores)
        assert "→" not in str(screen.query_one("#score-bar").render())
        assert "ben's reading" not in screen_text(app)
        assert screen.view is not None
        first = next(j for j in screen.view.judgments if j.id == judgments[0])
        assert not first.flagged and first.flag_note is None  # ben's flag is his
        # ana decides the first verdict: it shows ben's side now (a conflict); the scores
        # still leave out ben's decisions on the verdicts she has yet to decide.
        await stored(pilot, ("enter",))
        assert [(s.label, s.adjudicated) for s in screen.scores] == pytest.approx(judge_scores)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is queue)
        await wait_for(
            pilot,
            lambda: next(r for r in queue.rows if r.report_id == report.report_id).decided == 1,
        )
        row = next(r for r in queue.rows if r.report_id == report.report_id)
        assert (row.decided, row.conflicts, row.differs) == (1, 1, 0)


def _three_way(db: Path) -> tuple[list[int], dict[str, ReviewLog]]:
    """Four claims handed to ana, ben and cy (k = 3); ben and cy decide them all, one of them
    differently from each other (an open conflict), ana none."""
    from store.assignments.hand_out import Target, hand_out

    conn = connect(db)
    rows = conn.execute(
        "SELECT s.target, s.report_id, j.id FROM subject s JOIN judgment j "
        "ON j.subject_id = s.id AND j.current = 1 WHERE s.kind = 'claim' "
        "AND j.value = 'correct' ORDER BY s.id LIMIT 4"
    ).fetchall()
    targets = [Target(t, r) for t, r, _ in rows]
    hand_out(conn, ReviewLog(conn, "lead"), targets, ["ana", "ben", "cy"], 1.0, 3)
    logs = {name: ReviewLog(conn, name) for name in ("ana", "ben", "cy")}
    ids = [int(j) for _, _, j in rows]
    for jid in ids:
        logs["ben"].confirm(jid)
        logs["cy"].confirm(jid)
    logs["cy"].decide(ids[1], "incorrect", "cy: the page says 11")
    return ids, logs


def test_agreement_leaves_out_what_i_have_not_decided_on_my_overlap(sample_db: Path) -> None:
    from store.assignments.agreement import overlap_agreement
    from store.assignments.blind import hidden_subjects
    from store.views.agreement import agreement

    ids, logs = _three_way(sample_db)
    conn = logs["ana"].conn
    everyone = overlap_agreement(conn, n_resamples=20)
    assert (everyone.pending, everyone.open, len(everyone.open_targets)) == (4, 1, 1)
    assert everyone.kinds and agreement(conn, n_resamples=20).human_decisions
    hidden = hidden_subjects(conn, "ana")
    assert len(hidden) == 4
    mine = overlap_agreement(conn, n_resamples=20, hidden=hidden)
    assert (mine.pending, mine.open, mine.open_targets, mine.kinds) == (4, 0, (), ())
    shown = agreement(conn, n_resamples=20, hidden=hidden)
    assert shown.human_decisions == 0 and not shown.reviewers
    # ana decides the open one: it shows, ben and cy's disagreement included.
    logs["ana"].confirm(ids[1])
    mine = overlap_agreement(conn, n_resamples=20, hidden=hidden_subjects(conn, "ana"))
    assert (mine.open, len(mine.open_targets)) == (1, 1)


async def test_the_agreement_screen_names_no_open_conflict_i_have_not_decided(
    sample_db: Path,
) -> None:
    _three_way(sample_db)
    for reviewer, shows in (("ana", False), ("ben", True)):
        plain = await _agreement_text(make_app(sample_db, reviewer=reviewer))
        assert ("1 open" in plain) is shows
        assert ("open: s:" in plain) is shows
        assert shows or "the page says 11" not in plain


async def _agreement_text(app: Any) -> str:
    from tui.screens.agreement import AgreementScreen
    from tui.widgets.text_view import TextView

    async with app.run_test(size=(170, 48)) as pilot:
        await ready(pilot)
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, AgreementScreen))
        view = app.screen.query_one(TextView)
        await wait_for(pilot, lambda: "Overlap: 4 subjects" in view.plain, limit=60)
        return str(view.plain)


def test_a_trust_acceptance_my_co_reviewer_s_decision_took_away_still_counts_for_me(
    sample_db: Path,
) -> None:
    from store.trust.standing import accepted_per_report
    from tui.blind import blinded_accepted

    conn = connect(sample_db)
    rid = _report(conn).report_id
    judgments = _shared(conn, rid)
    conn.execute("PRAGMA foreign_keys = OFF")  # a stand-in rule: only its acceptances matter
    conn.executemany(
        "INSERT INTO trust_accepted (subject_id, rule_id, judgment_id, report_id, score) "
        "SELECT subject_id, 1, id, report_id, 0.9 FROM judgment WHERE id = ?",
        [(jid,) for jid in judgments[:3]],
    )
    conn.commit()
    assert accepted_per_report(conn, [rid]) == {rid: 3}
    _ben_overrules_everything(conn, judgments)
    assert accepted_per_report(conn, [rid]) == {rid: 0}
    hidden = hidden_work(conn, "ana", [rid])
    assert blinded_accepted(accepted_per_report(conn, [rid]), hidden) == {rid: 3}
    assert hidden[rid].accepted == set(judgments[:3])  # the report screen keeps their marks
    assert blinded_accepted(accepted_per_report(conn, [rid]), hidden_work(conn, "ben")) == {rid: 0}


def test_my_own_decision_counts_in_the_scores_my_co_reviewer_s_do_not(sample_db: Path) -> None:
    """A report where both moved values: it is scored again without the hidden ones."""
    conn = connect(sample_db)
    rid = _report(conn).report_id
    judgments = _shared(conn, rid)
    first = judgments[0]
    ReviewLog(conn, "ana").decide(first, _other_value(conn, first), "ana's reading")
    _rescore(conn, [first])
    mine_only = _as_seen_by(conn, "ana", rid)
    scores_mine_only = report_scores(conn, rid)
    assert mine_only.adjudicated != mine_only.judge  # ana's decision moved a score
    ben = ReviewLog(conn, "ben")
    for jid in judgments[1:]:
        ben.decide(jid, _other_value(conn, jid), "ben's reading")
    _rescore(conn, judgments)
    assert next(iter(queue_rows(conn, [rid]))).adjudicated != mine_only.adjudicated
    seen = _as_seen_by(conn, "ana", rid)
    assert _figures(seen) == pytest.approx(_figures(mine_only))
    hidden = hidden_work(conn, "ana", [rid])[rid]
    assert [s.adjudicated for s in blinded_scores(report_scores(conn, rid), hidden)] == (
        pytest.approx([s.adjudicated for s in scores_mine_only])
    )


def test_a_contradiction_flag_is_not_settled_by_a_decision_i_may_not_see(sample_db: Path) -> None:
    from store.assignments.hand_out import Target, hand_out
    from store.views.queries import resolve_report
    from store.views.screens import report_history, report_view
    from tui.blind import blinded, report_blind

    conn = connect(sample_db)
    rid = resolve_report(conn, "t08-atlas-dr")
    view = report_view(conn, rid)
    claim = next(
        j
        for j in view.judgments
        if j.claim_id is not None
        and j.ref_idx is None
        and j.judge == "unknown"
        and view.claims[j.claim_id].ext == "c12"
    )
    target = conn.execute("SELECT target FROM subject WHERE id = ?", (claim.subject_id,))
    hand_out(conn, ReviewLog(conn, "lead"), [Target(target.fetchone()[0], rid)], ["ana", "ben"], 1)
    ReviewLog(conn, "ben").decide(claim.id, "correct", "ben: supported")

    def pair_suspicious(reviewer: str | None) -> bool:
        view = report_view(conn, rid)
        if reviewer is not None:
            subjects, hidden = report_blind(conn, reviewer, rid)
            view, _ = blinded(view, report_history(conn, rid), subjects, hidden)
        return next(
            j
            for j in view.judgments
            if j.claim_id is not None and view.claims[j.claim_id].ext == "c12" and j.ref_idx == 6
        ).suspicious

    assert not pair_suspicious(None)  # ben's decision settled it, as everyone else sees it
    assert pair_suspicious("ana")  # not for ana, who has not decided c12 yet
    assert not pair_suspicious("ben")


def test_a_subject_taken_back_from_the_overlap_is_not_blind(sample_db: Path) -> None:
    """Work taken back is no longer the reviewer's, and no longer blind to them; the rest of
    the report stays blind."""
    from store.assignments.take_back import Scope, take_back

    conn = connect(sample_db)
    rid = _report(conn).report_id
    _shared(conn, rid)
    subjects = dict(
        conn.execute("SELECT target, id FROM subject WHERE report_id = ? ORDER BY id", (rid,))
    )
    every = blind_per_report(conn, "ana")[rid]
    first = sorted(subjects)[0]
    assert subjects[first] in every
    moved = take_back(conn, ReviewLog(conn, "lead"), "ana", scope=Scope(frozenset({first})))
    assert moved.moved == 1
    assert blind_per_report(conn, "ana")[rid] == every - {subjects[first]}
