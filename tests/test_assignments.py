"""Assignment: work dealt to named reviewers with an overlap, as signed review events that
travel through merges like decisions; each reviewer's queue and plan mode serve their own work
first, and the header shows the team's progress."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from reviewer.assignment import Assignment, AssignmentError, deal, decode, mine_first
from reviewer.errors import InputError
from reviewer.logfile import read_events
from store.assignments.hand_out import hand_out, plan_targets, report_targets
from store.assignments.progress import assignments, my_subjects, my_work, team_progress
from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.reviews.merge import merge_events, merge_path, write_log
from tests.tui_helpers import make_app, ready, screen_text, wait_for
from tui.cli import main

SUITE = "dailyreport-sample-2026-11"

# -- dealing (pure) ------------------------------------------------------------------------


def test_the_overlap_share_goes_to_k_different_reviewers_and_loads_balance() -> None:
    targets = [f"s:x/r{i}/claim/c" for i in range(100)]
    dealt = deal(targets, ["ana", "ben", "cy"], overlap=0.2, k=2, seed=3)
    assert list(dealt) == targets
    sizes = Counter(len(names) for names in dealt.values())
    assert sizes == {1: 80, 2: 20}
    assert all(len(set(names)) == len(names) for names in dealt.values())
    load = Counter(name for names in dealt.values() for name in names)
    assert max(load.values()) - min(load.values()) <= 1
    assert deal(targets, ["ana", "ben", "cy"], 0.2, 2, seed=3) == dealt
    # The overlap is drawn from the whole order, not its front.
    shared = [i for i, t in enumerate(targets) if len(dealt[t]) == 2]
    assert max(shared) >= 50


def test_each_reviewer_s_share_is_spread_along_the_order() -> None:
    targets = [f"t{i}" for i in range(30)]
    dealt = deal(targets, ["ana", "ben", "cy"], overlap=0.0)
    for start in range(0, 30, 3):  # every three targets, one each
        assert {dealt[t][0] for t in targets[start : start + 3]} == {"ana", "ben", "cy"}


def test_a_positive_share_of_few_targets_still_overlaps_one() -> None:
    assert Counter(len(v) for v in deal(["a", "b", "c"], ["x", "y"], 0.01).values())[2] == 1


@pytest.mark.parametrize(
    ("reviewers", "overlap", "k", "says"),
    [
        ([], 0.0, 2, "at least one"),
        (["ana", "ana"], 0.0, 2, "twice"),
        (["ana", "ben"], 0.5, 3, "k between 2"),
        (["ana", "ben"], 1.5, 2, "between 0 and 1"),
        (["an\x1b[2Ja"], 0.0, 2, "control characters"),
        (["ana\u200b"], 0.0, 2, "hidden"),
        (["a/b"], 0.0, 2, "may not contain"),
        (["  "], 0.0, 2, "required"),
    ],
)
def test_bad_deals_are_refused(reviewers: list[str], overlap: float, k: int, says: str) -> None:
    with pytest.raises(AssignmentError, match=says):
        deal(["t"], reviewers, overlap, k)


def test_an_assignment_value_round_trips_and_malformed_ones_are_refused() -> None:
    value = Assignment("ana", "b1", 2)
    assert decode(value.encode()) == value and value.overlap
    for bad in (
        None,
        "ana",
        "[]",
        '{"to": "ana"}',
        '{"to": "a\\u001b", "batch": "b", "k": 1}',
        '{"to": "ana", "batch": "b", "k": 0}',
        '{"to": "ana", "batch": "b", "k": true}',
    ):
        with pytest.raises(ValueError):
            decode(bad)


def test_mine_first_is_a_stable_partition() -> None:
    assert mine_first([5, 1, 4, 2, 3], lambda n: n % 2 == 0) == [4, 2, 5, 1, 3]


# -- the store -----------------------------------------------------------------------------


def _subjects(conn: sqlite3.Connection, n: int) -> list[tuple[str, int]]:
    return [
        (str(t), int(r))
        for t, r in conn.execute(
            "SELECT s.target, s.report_id FROM subject s ORDER BY s.id LIMIT ?", (n,)
        )
    ]


def _jid(conn: sqlite3.Connection, target: str) -> int:
    return int(
        conn.execute(
            "SELECT j.id FROM judgment j JOIN subject s ON s.id = j.subject_id "
            "WHERE s.target = ? AND j.current = 1",
            (target,),
        ).fetchone()[0]
    )


def _other_value(conn: sqlite3.Connection, jid: int) -> str:
    from reviewer.registry import get_kind

    kind, judge = conn.execute("SELECT kind, value FROM judgment WHERE id = ?", (jid,)).fetchone()
    scale = get_kind(kind).scale  # type: ignore[union-attr]
    return next(c.code for c in scale.choices if c.code != judge)


def test_handing_out_writes_signed_events_once(sample_db: Path) -> None:
    from store.assignments.hand_out import Target

    conn = connect(sample_db)
    targets = [Target(t, r) for t, r in _subjects(conn, 20)]
    done = hand_out(conn, ReviewLog(conn, "lead"), targets, ["ana", "ben"], 0.25, 2, seed=1)
    assert (done.targets, done.overlap, done.skipped) == (20, 5, 0)
    assert done.per_reviewer == {"ana": 13, "ben": 12} or done.per_reviewer == {
        "ana": 12,
        "ben": 13,
    }
    rows = conn.execute(
        "SELECT reviewer, value, key, sig FROM review_event WHERE action = 'assign'"
    ).fetchall()
    assert len(rows) == 25 and all(r[0] == "lead" and r[2] and r[3] for r in rows)
    assert {decode(r[1]).batch for r in rows} == {done.batch}
    # Handing the same targets out again changes nothing.
    again = hand_out(conn, ReviewLog(conn, "lead"), targets, ["ana", "ben"], 0.25, 2)
    assert (again.targets, again.skipped) == (0, 20)
    assert conn.execute("SELECT count(*) FROM review_event").fetchone()[0] == 25
    # Nothing is decided by an assignment.
    assert conn.execute("SELECT count(*) FROM decision").fetchone()[0] == 0


def test_progress_counts_each_reviewer_s_own_decisions_and_overlap_disagreements(
    sample_db: Path,
) -> None:
    from store.assignments.hand_out import Target

    conn = connect(sample_db)
    targets = [Target(t, r) for t, r in _subjects(conn, 4)]
    hand_out(conn, ReviewLog(conn, "lead"), targets, ["ana", "ben"], 1.0, 2)
    assert team_progress(conn).line() == "team 0/8 · overlap 0/4"
    first, second = targets[0].target, targets[1].target
    ana, ben = ReviewLog(conn, "ana"), ReviewLog(conn, "ben")
    ana.confirm(_jid(conn, first))
    ben.confirm(_jid(conn, first))  # agree
    ana.confirm(_jid(conn, second))
    ben.decide(_jid(conn, second), _other_value(conn, _jid(conn, second)), "no")  # disagree
    team = team_progress(conn)
    assert (team.pairs, team.done, team.overlap, team.overlap_done) == (8, 4, 4, 2)
    assert team.disagreements == 1 and team.adjudicated == 0
    assert team.line() == "team 4/8 · overlap 2/4, 1 to adjudicate"
    ReviewLog(conn, "lead").decide(
        _jid(conn, second), _other_value(conn, _jid(conn, second)), "agreed", adjudicate=True
    )
    team = team_progress(conn)
    assert team.disagreements == 0 and team.adjudicated == 1
    work = my_work(conn, "ana")
    assert sum(w.assigned for w in work.values()) == 4
    assert sum(w.done for w in work.values()) == 2
    assert my_work(conn, "nobody") == {}
    # ana's undo takes her decision back out of her progress.
    ana.undo()
    assert sum(w.done for w in my_work(conn, "ana").values()) == 1


def test_a_whole_report_assigns_every_verdict_in_it(sample_db: Path) -> None:
    conn = connect(sample_db)
    report = int(conn.execute("SELECT min(id) FROM report").fetchone()[0])
    hand_out(conn, ReviewLog(conn, "lead"), report_targets(conn, [report]), ["ana"], 0.0)
    verdicts = conn.execute(
        "SELECT count(DISTINCT subject_id) FROM judgment WHERE report_id = ? AND current = 1",
        (report,),
    ).fetchone()[0]
    assert my_work(conn, "ana")[report].assigned == verdicts > 0


def test_assignments_travel_through_a_merge_and_forged_ones_do_not(
    sample_db: Path, tmp_path: Path
) -> None:
    from store.assignments.hand_out import Target

    other = tmp_path / "other.db"
    shutil.copy(sample_db, other)
    conn = connect(sample_db)
    hand_out(
        conn,
        ReviewLog(conn, "lead"),
        [Target(t, r) for t, r in _subjects(conn, 6)],
        ["ana", "ben"],
        0.5,
    )
    buffer = io.StringIO()
    write_log(conn, buffer)
    target = connect(other)
    merge_path(target, sample_db)
    assert sorted(map(repr, assignments(target))) == sorted(map(repr, assignments(conn)))
    assert team_progress(target) == team_progress(conn)
    # Merging twice changes nothing.
    merge_path(target, sample_db)
    assert len(assignments(target)) == len(assignments(conn))
    # An assignment whose value was edited no longer verifies; a malformed one is refused.
    third = tmp_path / "third.db"
    shutil.copy(sample_db.with_name("other.db"), third)
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    edited = dict(lines[0], value=Assignment("mallory", "x", 1).encode())
    with pytest.raises(InputError):
        merge_events(connect(third), read_events(io.StringIO(json.dumps(edited) + "\n"), "x"), "x")
    malformed = dict(lines[0], uuid="0" * 36, value="ana")
    with pytest.raises(InputError, match="assignment"):
        merge_events(
            connect(third), read_events(io.StringIO(json.dumps(malformed) + "\n"), "x"), "x"
        )


def test_a_version_6_log_gains_assignments_without_changing_an_event(tmp_path: Path) -> None:
    from store.db.schema import MIGRATIONS, SCHEMA_VERSION
    from store.sqlite.tx import transaction

    path = tmp_path / "v6.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:6]:
        with transaction(conn):
            if callable(step):
                step(conn)
            else:
                for statement in step:
                    conn.execute(statement)
    conn.execute("PRAGMA user_version = 6")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO review_event (uuid, target, reviewer, action, rationale, created_at) "
            "VALUES ('u1', 'r:a/b', 'x', 'assign', '', '2026-01-01T00:00:00+00:00')"
        )
    conn.execute(
        "INSERT INTO review_event (uuid, target, reviewer, action, value, rationale, created_at)"
        " VALUES ('u0', 's:a/b/c/d', 'x', 'confirm', '1', '', '2026-01-01T00:00:00+00:00')"
    )
    before = conn.execute("SELECT * FROM review_event").fetchall()
    conn.close()
    conn = connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 11
    assert conn.execute("SELECT * FROM review_event").fetchall() == before
    conn.execute(
        "INSERT INTO review_event (uuid, target, reviewer, action, rationale, created_at) "
        "VALUES ('u1', 'r:a/b', 'x', 'assign', '', '2026-01-01T00:00:00+00:00')"
    )
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM review_event")


# -- the command line ----------------------------------------------------------------------


def test_gavel_assign_hands_out_a_plan_and_shows_progress(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(sample_db)
    assert main(["plan", "new", "--db", db, "--budget", "20", "--suite", SUITE]) == 0
    capsys.readouterr()
    code = main(
        [
            "assign",
            "--db",
            db,
            "--reviewer",
            "lead",
            "--plan",
            "p1",
            "--to",
            "ana,ben",
            "--overlap",
            "0.2",
            "--format",
            "json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["targets"] == 20 and out["overlap"] == 4 and out["skipped"] == 0
    assert out["per_reviewer"] == {"ana": 12, "ben": 12}
    assert main(["assign", "--db", db, "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["team"]["assigned"] == 24 and shown["team"]["overlap"] == 4
    assert [r["reviewer"] for r in shown["reviewers"]] == ["ana", "ben"]
    assert main(["assign", "--db", db, "--plan", "nope", "--to", "ana"]) == 2
    assert "no plan named" in capsys.readouterr().err
    assert main(["assign", "--db", db, "--plan", "p1", "--to", "an\x07a"]) == 2
    assert "control characters" in capsys.readouterr().err


# -- the workstation -----------------------------------------------------------------------


async def test_the_queue_serves_my_assignments_first_and_the_header_the_team(
    sample_db: Path,
) -> None:
    from store.views.screens import queue_rows

    conn = connect(sample_db)
    row = [r for r in queue_rows(conn) if r.suite == SUITE][-1]
    last = (row.report_id, row.report)
    hand_out(conn, ReviewLog(conn, "lead"), report_targets(conn, [last[0]]), ["ana"], 0.0)
    conn.close()
    app = make_app(sample_db, reviewer="ana")
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        await wait_for(pilot, lambda: queue.shown and queue.shown[0].report == last[1])
        text = screen_text(app)
        assert "yours 0/" in text and "(1 reports first)" in text
        assert "team 0/" in queue.sub_title
    other = make_app(sample_db, reviewer="ben")
    async with other.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        assert other.queue_screen.shown[0].report != last[1]
        assert "yours" not in screen_text(other)


async def test_plan_mode_serves_my_subjects_first(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan, plan_items
    from tui.screens.plan_review import PlanReviewScreen

    conn = connect(sample_db)
    plan = create_plan(conn, PlanSpec(12, seed=2, suite=SUITE), "lead")
    items = plan_items(conn, plan.id)
    hand_out(conn, ReviewLog(conn, "lead"), plan_targets(conn, "p1"), ["ana", "ben"], 0.0)
    mine = my_subjects(conn, "ana")
    conn.close()
    assert 0 < len(mine) < len(items)
    app = make_app(sample_db, reviewer="ana")
    async with app.run_test(size=(170, 48)) as pilot:
        await ready(pilot)
        await pilot.press("L")
        screen = app.screen
        assert isinstance(screen, PlanReviewScreen)
        await wait_for(pilot, lambda: bool(screen.items))
        served = [item.subject_id for item in screen.items]
        assert set(served[: len(mine)]) == mine
        expected = [i.subject_id for i in items if i.subject_id in mine]
        assert served[: len(mine)] == expected  # in the plan's order
        assert screen.items[screen.index].subject_id in mine


def test_assignments_travel_through_the_hub_and_an_older_hub_learns_them(
    sample_db_template: Path, tmp_path: Path, hub_url: str
) -> None:
    import psycopg

    from store.assignments.hand_out import Target
    from store.hub.server import _ACTIONS, HUB_SCHEMA, HubError, PgHub
    from store.hub.sync import sync

    older = ", ".join(f"'{a}'" for a in _ACTIONS if a != "assign")
    with psycopg.connect(hub_url, autocommit=True) as pg:  # a hub from before assignments
        pg.execute(
            f"ALTER TABLE {HUB_SCHEMA}.event DROP CONSTRAINT event_action_check, "
            f"ADD CONSTRAINT event_action_check CHECK (action IN ({older}))"
        )
    lead, ben = tmp_path / "lead.db", tmp_path / "ben.db"
    shutil.copy(sample_db_template, lead)
    shutil.copy(sample_db_template, ben)
    conn, other = connect(lead), connect(ben)
    hand_out(
        conn,
        ReviewLog(conn, "lead"),
        [Target(t, r) for t, r in _subjects(conn, 8)],
        ["ana", "ben"],
        0.5,
    )
    hub = PgHub(hub_url)
    with pytest.raises(HubError):  # the older hub refuses the new action
        sync(conn, hub)
    hub.close()
    hub = PgHub(hub_url)
    hub.init()  # `gavel hub init` again: the hub learns the action
    sync(conn, hub)
    sync(other, hub)
    hub.close()
    assert sorted(map(repr, assignments(other))) == sorted(map(repr, assignments(conn)))
    assert team_progress(other).overlap == 4


async def test_on_the_overlap_plan_mode_and_the_report_stay_blind_to_the_other_reviewer(
    sample_db: Path,
) -> None:
    from store.plans.design import PlanSpec, create_plan, plan_items
    from tui.screens.plan_review import PlanReviewScreen

    conn = connect(sample_db)
    plan = create_plan(conn, PlanSpec(4, seed=2, suite=SUITE), "lead")
    first = plan_items(conn, plan.id)[0]
    assert first.judgment_id is not None
    hand_out(conn, ReviewLog(conn, "lead"), plan_targets(conn, "p1"), ["ana", "ben"], 1.0)
    other = _other_value(conn, first.judgment_id)
    ReviewLog(conn, "ana").decide(first.judgment_id, other, "ana's reading")
    conn.close()
    app = make_app(sample_db, reviewer="ben")
    async with app.run_test(size=(170, 48)) as pilot:
        await ready(pilot)
        await pilot.press("L")
        screen = app.screen
        assert isinstance(screen, PlanReviewScreen)
        await wait_for(pilot, lambda: bool(screen.items) and screen.view is not None)
        # ana decided the first subject; it is still ben's to decide, and he is served it.
        assert screen.index == 0 and not screen.items[0].decided
        await wait_for(
            pilot, lambda: screen.view is not None and screen.view.report_id == first.report_id
        )
        assert screen.view is not None
        shown = next(j for j in screen.view.judgments if j.id == first.judgment_id)
        assert not shown.decided and shown.effective == shown.judge != other
        # ana's value is nowhere on ben's screen until he decides.
        assert "ana's reading" not in screen_text(app)


def test_blind_subjects_are_my_undecided_overlap_subjects(sample_db: Path) -> None:
    from store.assignments.hand_out import Target
    from store.assignments.progress import blind_subjects, my_status

    conn = connect(sample_db)
    rows = _subjects(conn, 3)
    log = ReviewLog(conn, "lead")
    hand_out(conn, log, [Target(*rows[0]), Target(*rows[1])], ["ana", "ben"], 1.0)
    hand_out(conn, log, [Target(*rows[2])], ["ana"], 0.0)
    subject = {
        t: int(conn.execute("SELECT id FROM subject WHERE target = ?", (t,)).fetchone()[0])
        for t, _ in rows
    }
    assert blind_subjects(conn, "ana") == {subject[rows[0][0]], subject[rows[1][0]]}
    ReviewLog(conn, "ana").confirm(_jid(conn, rows[0][0]))
    assert blind_subjects(conn, "ana") == {subject[rows[1][0]]}
    assert blind_subjects(conn, "ben") == {subject[rows[0][0]], subject[rows[1][0]]}
    assert blind_subjects(conn, "ana", report_id=-1) == set()
    assert my_status(conn, "ana") == (set(subject.values()), {subject[rows[0][0]]})
