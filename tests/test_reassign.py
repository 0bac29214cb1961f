"""Taking work back and moving it: a reviewer's undecided assignments released (``unassign``
events naming the assignments they end) or handed to others, decided ones kept; who holds what
is the same in every database with the same events, whatever order merges brought them in."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewer.assignment import Release, decode_release
from reviewer.errors import InputError
from reviewer.logfile import read_events
from store.assignments.hand_out import Target, hand_out, plan_targets, report_targets
from store.assignments.holding import held_targets
from store.assignments.progress import assignments, my_work, team_progress
from store.assignments.take_back import Scope, take_back
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.reviewlog.events import ReviewLog
from store.reviews.merge import merge_events, write_log
from store.scores.cache import rebuild_scores
from tests.builders import tiny_bundle
from tests.tui_helpers import make_app, ready, screen_text, wait_for
from tui.cli import main

SUITE = "dailyreport-sample-2026-11"


def _log(conn: sqlite3.Connection) -> str:
    out = io.StringIO()
    write_log(conn, out)
    return out.getvalue()


def _merge(conn: sqlite3.Connection, text: str) -> None:
    merge_events(conn, read_events(io.StringIO(text), "log.jsonl"), "log.jsonl")


def _who(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    return sorted((a.target, a.reviewer, a.k) for a in assignments(conn))


def _subjects(conn: sqlite3.Connection, n: int) -> list[Target]:
    return [
        Target(str(t), int(r))
        for t, r in conn.execute("SELECT target, report_id FROM subject ORDER BY id LIMIT ?", (n,))
    ]


def _decide(conn: sqlite3.Connection, reviewer: str, target: str) -> None:
    jid = conn.execute(
        "SELECT j.id FROM judgment j JOIN subject s ON s.id = j.subject_id "
        "WHERE s.target = ? AND j.current = 1",
        (target,),
    ).fetchone()[0]
    ReviewLog(conn, reviewer).confirm(int(jid))


def _mine(conn: sqlite3.Connection, reviewer: str) -> set[str]:
    return {a.target for a in assignments(conn, reviewer)}


# -- the store -----------------------------------------------------------------------------


def test_reassigning_moves_only_undecided_work_and_progress_follows(sample_db: Path) -> None:
    conn = connect(sample_db)
    lead = ReviewLog(conn, "lead")
    targets = _subjects(conn, 10)
    hand_out(conn, lead, targets, ["ana"], 0.0)
    decided = [t.target for t in targets[:3]]
    for target in decided:
        _decide(conn, "ana", target)
    before = team_progress(conn)
    moved = take_back(conn, lead, "ana", ["cy"])
    assert (moved.moved, moved.decided, moved.stuck) == (7, 3, 0)
    assert moved.per_reviewer == {"cy": 7}
    assert _mine(conn, "ana") == set(decided)  # her decisions keep their assignment
    assert _mine(conn, "cy") == {t.target for t in targets[3:]}
    assert sum(w.assigned for w in my_work(conn, "cy").values()) == 7
    assert sum(w.done for w in my_work(conn, "ana").values()) == 3
    after = team_progress(conn)
    assert (after.pairs, after.done) == (before.pairs, before.done) == (10, 3)
    # Signed events by whoever moved the work; one release per subject, one batch.
    rows = conn.execute(
        "SELECT reviewer, value, key, sig FROM review_event WHERE action = 'unassign'"
    ).fetchall()
    assert len(rows) == 7 and all(r[0] == "lead" and r[2] and r[3] for r in rows)
    assert {decode_release(r[1]).batch for r in rows} == {moved.batch}
    assert {decode_release(r[1]).giver for r in rows} == {"ana"}
    # Nothing is decided by moving work, and moving it again moves nothing.
    assert conn.execute("SELECT count(*) FROM decision").fetchone()[0] == 3
    again = take_back(conn, lead, "ana", ["cy"])
    assert (again.moved, again.decided) == (0, 3)


def test_a_whole_report_moves_whole_and_a_partly_decided_one_subject_by_subject(
    sample_db: Path,
) -> None:
    conn = connect(sample_db)
    lead = ReviewLog(conn, "lead")
    first, second = (int(r[0]) for r in conn.execute("SELECT id FROM report ORDER BY id LIMIT 2"))
    hand_out(conn, lead, report_targets(conn, [first, second]), ["ana"], 0.0)
    in_second = sorted(
        _mine(conn, "ana") - {a.target for a in assignments(conn) if a.report_id == first}
    )
    _decide(conn, "ana", in_second[0])
    moved = take_back(conn, lead, "ana", ["cy"])
    assert moved.decided == 1 and moved.moved == len(_mine(conn, "cy"))
    assert _mine(conn, "ana") == {in_second[0]}
    # The untouched report went as a report; of the other, each undecided subject alone.
    given = conn.execute(
        "SELECT target FROM review_event WHERE action = 'assign' AND "
        "json_extract(value, '$.to') = 'cy'"
    ).fetchall()
    report_given = [t for (t,) in given if t.startswith("r:")]
    assert len(report_given) == 1 and len(given) == 1 + len(in_second) - 1
    released = {
        t for (t,) in conn.execute("SELECT target FROM review_event WHERE action = 'unassign'")
    }
    assert report_given[0] in released and in_second[0] not in released
    assert set(in_second[1:]) <= released


def test_an_overlap_subject_never_goes_to_its_other_reviewer(sample_db: Path) -> None:
    conn = connect(sample_db)
    lead = ReviewLog(conn, "lead")
    targets = _subjects(conn, 6)
    hand_out(conn, lead, targets, ["ana", "ben"], 1.0, 2)  # all six to both
    # ben already holds every one of them: with ben alone named, nothing can move.
    stuck = take_back(conn, lead, "ana", ["ben"])
    assert (stuck.moved, stuck.stuck) == (0, 6)
    assert len(_mine(conn, "ana")) == 6
    # cy is free to take them, and keeps them on the overlap (k = 2) beside ben.
    moved = take_back(conn, lead, "ana", ["ben", "cy"])
    assert (moved.moved, moved.stuck, moved.per_reviewer) == (6, 0, {"ben": 0, "cy": 6})
    assert _mine(conn, "ana") == set()
    assert {a.k for a in assignments(conn, "cy")} == {2}
    assert team_progress(conn).overlap == 6


def test_receivers_share_the_work_and_a_plan_limits_what_moves(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan

    conn = connect(sample_db)
    lead = ReviewLog(conn, "lead")
    create_plan(conn, PlanSpec(12, seed=2, suite=SUITE), "lead")
    in_plan = {t.target for t in plan_targets(conn, "p1")}
    outside = [t for t in _subjects(conn, 400) if t.target not in in_plan][:5]
    hand_out(conn, lead, plan_targets(conn, "p1"), ["ana"], 0.0)
    hand_out(conn, lead, outside, ["ana"], 0.0)
    moved = take_back(conn, lead, "ana", ["cy", "dan"], Scope(subjects=frozenset(in_plan)))
    assert moved.moved == len(in_plan) and moved.per_reviewer == {"cy": 6, "dan": 6}
    assert _mine(conn, "ana") == {t.target for t in outside}
    # Whoever has the least open work gets the next: dan, who has decided his 6.
    for target in _mine(conn, "dan"):
        _decide(conn, "dan", target)
    again = take_back(conn, lead, "ana", ["cy", "dan"])
    assert again.per_reviewer == {"cy": 0, "dan": 5}


def test_taking_back_releases_work_that_can_then_be_handed_out_again(sample_db: Path) -> None:
    conn = connect(sample_db)
    lead = ReviewLog(conn, "lead")
    targets = _subjects(conn, 4)
    hand_out(conn, lead, targets, ["ana"], 0.0)
    _decide(conn, "ana", targets[0].target)
    released = take_back(conn, lead, "ana")
    assert (released.moved, released.decided, released.per_reviewer) == (3, 1, {})
    assert _mine(conn, "ana") == {targets[0].target}
    assert held_targets(conn) == {targets[0].target}
    assert team_progress(conn).pairs == 1
    again = hand_out(conn, lead, targets, ["ben"], 0.0)
    assert (again.targets, again.skipped) == (3, 1)


def test_bad_moves_are_refused(sample_db: Path) -> None:
    from reviewer.assignment import AssignmentError

    conn = connect(sample_db)
    lead = ReviewLog(conn, "lead")
    with pytest.raises(AssignmentError, match="their own work"):
        take_back(conn, lead, "ana", ["ana"])
    with pytest.raises(AssignmentError, match="control characters"):
        take_back(conn, lead, "ana", ["c\x1by"])
    with pytest.raises(AssignmentError, match="named twice"):
        take_back(conn, lead, "ana", ["cy", "cy"])


def test_a_release_value_round_trips_and_malformed_ones_are_refused() -> None:
    release = Release("ana", "b1", ("u" * 36, "a" * 36))
    assert decode_release(release.encode()) == Release("ana", "b1", ("a" * 36, "u" * 36))
    for bad in (
        None,
        "ana",
        '{"from": "ana", "batch": "b"}',
        '{"from": "ana", "batch": "b", "revokes": []}',
        '{"from": "ana", "batch": "b", "revokes": ["short"]}',
        '{"from": "a/na", "batch": "b", "revokes": ["' + "u" * 36 + '"]}',
        '{"from": "ana", "batch": 3, "revokes": ["' + "u" * 36 + '"]}',
    ):
        with pytest.raises(ValueError):
            decode_release(bad)


# -- merges --------------------------------------------------------------------------------


def test_moves_merge_in_either_order_and_forged_or_malformed_releases_are_refused(
    sample_db: Path, tmp_path: Path
) -> None:
    lead_db, ben_db = tmp_path / "lead.db", tmp_path / "ben.db"
    shutil.copy(sample_db, lead_db)
    shutil.copy(sample_db, ben_db)
    lead, ben = connect(lead_db), connect(ben_db)
    targets = _subjects(lead, 8)
    hand_out(lead, ReviewLog(lead, "lead"), targets, ["ana", "ben"], 0.5)
    _merge(ben, _log(lead))
    # Meanwhile, ben's lead hands out more to ana, unseen by the lead who moves ana's work.
    hand_out(ben, ReviewLog(ben, "lead2"), _subjects(ben, 12)[8:], ["ana"], 0.0)
    _decide(ben, "ana", targets[0].target)
    take_back(lead, ReviewLog(lead, "lead"), "ana", ["cy"])
    log_lead, log_ben = _log(lead), _log(ben)
    orders = []
    for first, second in ((log_lead, log_ben), (log_ben, log_lead)):
        path = tmp_path / f"{len(orders)}.db"
        shutil.copy(sample_db, path)
        conn = connect(path)
        _merge(conn, first)
        _merge(conn, second)
        _merge(conn, first)  # again: nothing changes
        orders.append(_who(conn))
    assert orders[0] == orders[1]
    merged = {(t, r) for t, r, _ in orders[0]}
    # The assignments the move never saw still stand; what it moved is cy's.
    assert all((t.target, "ana") in merged for t in _subjects(lead, 12)[8:])
    moved_to_cy = {t for t, r, _ in orders[0] if r == "cy"}
    assert moved_to_cy and not any((t, "ana") in merged for t in moved_to_cy)
    # A release that arrives before the assignment it ends still ends it.
    path = tmp_path / "late.db"
    shutil.copy(sample_db, path)
    late = connect(path)
    lines = log_lead.splitlines(keepends=True)
    releases = [line for line in lines if '"unassign"' in line]
    _merge(late, "".join(releases))
    _merge(late, log_lead)
    _merge(late, log_ben)
    assert _who(late) == orders[0]
    # An edited release no longer verifies; a malformed one is refused naming the shape.
    edited = dict(json.loads(releases[0]), value=Release("ben", "x", ("u" * 36,)).encode())
    with pytest.raises(InputError, match="signature"):
        _merge(connect(ben_db), json.dumps(edited) + "\n")
    malformed = dict(json.loads(releases[0]), uuid="0" * 36, value="ana")
    with pytest.raises(InputError, match="release"):
        _merge(connect(ben_db), json.dumps(malformed) + "\n")


def test_a_release_of_someone_else_s_assignment_ends_nothing(sample_db: Path) -> None:
    conn = connect(sample_db)
    lead = ReviewLog(conn, "lead")
    targets = _subjects(conn, 2)
    hand_out(conn, lead, targets, ["ana"], 0.0)
    uuid = conn.execute("SELECT uuid FROM review_event WHERE action = 'assign'").fetchone()[0]
    lead.unassign(targets[0].target, Release("ben", "b", (uuid,)).encode(), targets[0].report_id)
    assert _mine(conn, "ana") == {t.target for t in targets}


# -- order does not matter (property) --------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tiny") / "tiny.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "h")
    rebuild_scores(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


NAMES = ("ana", "ben", "cy")
Op = tuple[int, str, int, int, int]  # (database, action, reviewer, other reviewer, pick)
OPS = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.sampled_from(["assign", "assign", "report", "move", "take", "decide", "sync"]),
        st.integers(0, 2),
        st.integers(0, 2),
        st.integers(0, 1_000),
    ),
    min_size=1,
    max_size=12,
)


def _apply(conn: sqlite3.Connection, op: Op) -> None:
    _, action, who, other, pick = op
    lead = ReviewLog(conn, f"lead{op[0]}")
    subjects = _subjects(conn, 100)
    subject = subjects[pick % len(subjects)]
    if action == "assign":
        names = list(dict.fromkeys([NAMES[who], NAMES[other]]))
        hand_out(conn, lead, [subject], names, 1.0 if len(names) > 1 else 0.0)
    elif action == "report":
        hand_out(conn, lead, report_targets(conn, [subject.report_id]), [NAMES[who]], 0.0)
    elif action == "move" and who != other:
        take_back(conn, lead, NAMES[who], [NAMES[other]])
    elif action == "take":
        take_back(conn, lead, NAMES[who], scope=Scope(reports=frozenset({subject.report_id})))
    elif action == "decide":
        _decide(conn, NAMES[who], subject.target)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sequence=OPS)
def test_who_holds_what_does_not_depend_on_merge_order(tiny_db: Path, sequence: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)

        def copy(name: str) -> sqlite3.Connection:
            shutil.copy(tiny_db, folder / f"{name}.db")
            return connect(folder / f"{name}.db")

        a, b = copy("a"), copy("b")
        for op in sequence:
            if op[1] == "sync":
                source, target = (a, b) if op[0] == 0 else (b, a)
                _merge(target, _log(source))
            else:
                _apply(a if op[0] == 0 else b, op)
        log_a, log_b = _log(a), _log(b)
        ab, ba, twice = copy("ab"), copy("ba"), copy("twice")
        _merge(ab, log_a)
        _merge(ab, log_b)
        _merge(ba, log_b)
        _merge(ba, log_a)
        for text in (log_b, log_a, log_b, log_a):
            _merge(twice, text)
        _merge(a, log_b)
        _merge(b, log_a)
        expected = _who(ab)
        assert _who(ba) == expected
        assert _who(twice) == expected
        assert _who(a) == expected
        assert _who(b) == expected
        assert team_progress(ba) == team_progress(ab)
        for conn in (a, b, ab, ba, twice):
            conn.close()


# -- the command line ----------------------------------------------------------------------


def test_gavel_assign_reassigns_and_takes_back(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(sample_db)
    assert main(["plan", "new", "--db", db, "--budget", "20", "--suite", SUITE]) == 0
    base = ["assign", "--db", db, "--reviewer", "lead"]
    assert main([*base, "--plan", "p1", "--to", "ana,ben", "--overlap", "0.2"]) == 0
    conn = connect(sample_db)
    _decide(conn, "ana", sorted(a.target for a in assignments(conn, "ana") if a.k == 1)[0])
    conn.close()
    capsys.readouterr()
    assert main([*base, "--reassign", "ana", "--to", "cy", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["from"] == "ana" and out["kept_decided"] == 1
    assert out["moved"] == 11 and out["per_reviewer"] == {"cy": 11}
    assert out["could_not_move"] == 0
    assert main(["assign", "--db", db, "--format", "json"]) == 0
    shown = {r["reviewer"]: r for r in json.loads(capsys.readouterr().out)["reviewers"]}
    assert (shown["ana"]["assigned"], shown["ana"]["decided"]) == (1, 1)
    assert shown["cy"]["assigned"] == 11 and shown["cy"]["open"] == 11
    # ben holds his overlap subjects already: moving his work to cy leaves cy's overlap ones.
    assert main([*base, "--reassign", "ben", "--to", "cy", "--plan", "p1"]) == 0
    text = capsys.readouterr().out
    assert "moved 8 of ben's undecided subjects" in text
    assert "could not move 4 subjects: every reviewer named already holds them" in text
    assert main([*base, "--take-back", "cy", "--system", "nope"]) == 0
    assert "took back 0 of cy's undecided subjects" in capsys.readouterr().out
    assert main([*base, "--take-back", "cy"]) == 0
    assert "took back 19 of cy's undecided subjects" in capsys.readouterr().out
    assert main(["assign", "--db", db, "--format", "json"]) == 0
    shown = {r["reviewer"]: r for r in json.loads(capsys.readouterr().out)["reviewers"]}
    assert set(shown) == {"ana", "ben"} and shown["ben"]["assigned"] == 4
    for bad, says in (
        (["--reassign", "ana"], "needs --to"),
        (["--take-back", "ana", "--to", "cy"], "use --reassign"),
        (["--reassign", "ana", "--take-back", "ben", "--to", "cy"], "one of them"),
        (["--reassign", "ana", "--to", "ana"], "their own work"),
        (["--reassign", "ana", "--to", "c\x07y"], "control characters"),
        (["--take-back", "ana", "--plan", "nope"], "no plan named"),
    ):
        assert main([*base, *bad]) == 2
        assert says in capsys.readouterr().err


def test_gavel_assign_help_documents_reassigning(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["assign", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--reassign NAME" in text and "--take-back NAME" in text
    assert "Anyone who may assign may reassign" in text


# -- the workstation and the hub ------------------------------------------------------------


async def test_the_queue_and_header_follow_a_move(sample_db: Path) -> None:
    from store.views.screens import queue_rows

    conn = connect(sample_db)
    row = [r for r in queue_rows(conn) if r.suite == SUITE][-1]
    lead = ReviewLog(conn, "lead")
    hand_out(conn, lead, report_targets(conn, [row.report_id]), ["ana"], 0.0)
    take_back(conn, lead, "ana", ["cy"])
    total = team_progress(conn).pairs
    conn.close()
    app = make_app(sample_db, reviewer="cy")
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        queue = app.queue_screen
        await wait_for(pilot, lambda: bool(queue.shown) and queue.shown[0].report == row.report)
        assert f"yours 0/{total}" in screen_text(app)
        assert f"team 0/{total}" in queue.sub_title
    other = make_app(sample_db, reviewer="ana")
    async with other.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        assert "yours" not in screen_text(other)


def test_moves_travel_through_the_hub_and_an_older_hub_learns_them(
    sample_db_template: Path, tmp_path: Path, hub_url: str
) -> None:
    import psycopg

    from store.hub.server import _ACTIONS, HUB_SCHEMA, HubError, PgHub
    from store.hub.sync import sync

    older = ", ".join(f"'{a}'" for a in _ACTIONS if a != "unassign")
    with psycopg.connect(hub_url, autocommit=True) as pg:  # a hub from before releases
        pg.execute(
            f"ALTER TABLE {HUB_SCHEMA}.event DROP CONSTRAINT event_action_check, "
            f"ADD CONSTRAINT event_action_check CHECK (action IN ({older}))"
        )
    lead_db, ben_db = tmp_path / "lead.db", tmp_path / "ben.db"
    shutil.copy(sample_db_template, lead_db)
    shutil.copy(sample_db_template, ben_db)
    conn, other = connect(lead_db), connect(ben_db)
    hand_out(conn, ReviewLog(conn, "lead"), _subjects(conn, 8), ["ana", "ben"], 0.5)
    hub = PgHub(hub_url)
    sync(conn, hub)
    sync(other, hub)
    take_back(conn, ReviewLog(conn, "lead"), "ana", ["cy"])
    with pytest.raises(HubError):  # the older hub refuses the new action
        sync(conn, hub)
    hub.close()
    hub = PgHub(hub_url)
    hub.init()  # `gavel hub init` again: the hub learns it
    sync(conn, hub)
    sync(other, hub)
    hub.close()
    assert _who(other) == _who(conn)
    assert not _mine(other, "ana") and _mine(other, "cy")


def test_a_version_10_database_gains_the_releases_index(sample_db: Path) -> None:
    from store.db.schema import SCHEMA_VERSION

    conn = connect(sample_db)
    conn.execute("DROP INDEX review_event_released")
    conn.execute("PRAGMA user_version = 10")
    before = conn.execute("SELECT * FROM review_event").fetchall()
    conn.close()
    conn = connect(sample_db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 11
    assert conn.execute("SELECT * FROM review_event").fetchall() == before
    # Reading who holds what finds the releases without reading the whole log.
    plan = conn.execute(
        "EXPLAIN QUERY PLAN SELECT target, value FROM review_event WHERE action = 'unassign'"
    ).fetchall()
    assert any("review_event_released" in str(row[-1]) for row in plan)


def test_a_report_partly_taken_back_moves_no_subject_the_giver_no_longer_holds(
    sample_db: Path,
) -> None:
    conn = connect(sample_db)
    lead = ReviewLog(conn, "lead")
    report = int(conn.execute("SELECT min(id) FROM report").fetchone()[0])
    hand_out(conn, lead, report_targets(conn, [report]), ["ana"], 0.0)
    first_two = frozenset(sorted(_mine(conn, "ana"))[:2])
    taken = take_back(conn, lead, "ana", ["dan"], Scope(subjects=first_two))
    assert taken.moved == 2 and _mine(conn, "dan") == first_two
    rest = _mine(conn, "ana")
    assert rest.isdisjoint(first_two)
    moved = take_back(conn, lead, "ana", ["cy"])
    assert moved.moved == len(rest) and _mine(conn, "cy") == rest
    assert _mine(conn, "dan") == first_two and not _mine(conn, "ana")
