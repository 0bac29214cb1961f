"""The append-only review log: decisions, undo/redo as events, effective verdicts, durability."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store.db.connection import connect
from store.reviewlog.events import ReviewError, ReviewLog, effective_value, rebuild_state

SUBJECT_OF = "(SELECT subject_id FROM judgment WHERE id = ?)"
"""SQL for the subject of a judgment id: decisions belong to subjects."""


def judgment_id(conn: sqlite3.Connection, report: str, subject: str) -> int:
    row = conn.execute(
        "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
        "WHERE r.ext_id = ? AND j.subject = ?",
        (report, subject),
    ).fetchone()
    assert row is not None
    return int(row[0])


def derived_state(conn: sqlite3.Connection) -> tuple[object, ...]:
    return (
        conn.execute("SELECT * FROM event_live ORDER BY uuid").fetchall(),
        conn.execute("SELECT * FROM decision ORDER BY subject_id").fetchall(),
        conn.execute("SELECT * FROM flag ORDER BY subject_id").fetchall(),
        conn.execute("SELECT * FROM report_rating ORDER BY report_id, reviewer").fetchall(),
    )


def test_override_then_confirm_semantics(tiny_db: sqlite3.Connection) -> None:
    jid = judgment_id(tiny_db, "t1-alpha", "k=c1")
    log = ReviewLog(tiny_db, "ana")
    recorded = log.decide(jid, "incorrect", "source says 4.1 million", "other")
    assert recorded.action == "override"
    assert effective_value(tiny_db, jid) == "incorrect"
    again = log.decide(jid, "correct", "re-read the source")
    assert again.action == "confirm"  # equal to the judge's value
    assert effective_value(tiny_db, jid) == "correct"
    event = tiny_db.execute(
        "SELECT rationale, reason, supersedes FROM review_event WHERE uuid = ?", (recorded.uuid,)
    ).fetchone()
    assert event == ("source says 4.1 million", "other", None)
    second = tiny_db.execute(
        "SELECT supersedes FROM review_event WHERE uuid = ?", (again.uuid,)
    ).fetchone()
    assert second == (recorded.uuid,)


def test_values_are_checked_against_the_scale(tiny_db: sqlite3.Connection) -> None:
    log = ReviewLog(tiny_db, "ana")
    claim = judgment_id(tiny_db, "t1-alpha", "k=c1")
    ins = judgment_id(tiny_db, "t1-alpha", "c=s1-ins")
    with pytest.raises(ReviewError, match="not one of"):
        log.decide(claim, "0.5", "x")
    with pytest.raises(ReviewError, match="unknown reason"):
        log.decide(ins, "0.5", "x", reason="because")
    assert log.decide(ins, 0.5, "partial").value == "0.5"
    with pytest.raises(ReviewError, match="no judgment"):
        log.decide(99999, "1", "x")
    with pytest.raises(ReviewError):
        ReviewLog(tiny_db, "  ")


def test_undo_redo_stack_semantics(tiny_db: sqlite3.Connection) -> None:
    log = ReviewLog(tiny_db, "ana")
    a = judgment_id(tiny_db, "t1-alpha", "k=c1")
    b = judgment_id(tiny_db, "t1-alpha", "k=c2")
    log.decide(a, "incorrect", "1")
    log.decide(b, "unknown", "2")
    log.decide(a, "unknown", "3")
    assert effective_value(tiny_db, a) == "unknown"
    undone = log.undo()
    assert undone is not None and undone.judgment_id == a and undone.reverted == "override"
    assert effective_value(tiny_db, a) == "incorrect"  # back to the earlier decision
    log.undo()
    assert effective_value(tiny_db, b) == "correct"  # back to the judge's value
    redone = log.redo()
    assert redone is not None and redone.judgment_id == b
    assert effective_value(tiny_db, b) == "unknown"
    # A new decision clears the redo stack.
    log.decide(b, "incorrect", "4")
    assert log.redo() is None
    assert log.undo() is not None and effective_value(tiny_db, b) == "unknown"
    assert log.undo() is not None and effective_value(tiny_db, b) == "correct"
    assert log.undo() is not None and effective_value(tiny_db, a) == "correct"
    assert log.undo() is None  # the third decision stays undone


def test_undo_is_per_reviewer(tiny_db: sqlite3.Connection) -> None:
    a = judgment_id(tiny_db, "t1-alpha", "k=c1")
    b = judgment_id(tiny_db, "t1-beta", "k=c1")
    ReviewLog(tiny_db, "ana").decide(a, "incorrect", "x")
    ReviewLog(tiny_db, "ben").decide(b, "correct", "y")
    undone = ReviewLog(tiny_db, "ana").undo()
    assert undone is not None and undone.judgment_id == a
    assert effective_value(tiny_db, b) == "correct"


def test_undo_history_survives_a_restart(tmp_path: Path) -> None:
    from store.imports.loader import import_bundle
    from tests.builders import tiny_bundle

    path = tmp_path / "g.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "h")
    jid = judgment_id(conn, "t1-alpha", "k=c1")
    ReviewLog(conn, "ana").decide(jid, "incorrect", "x")
    ReviewLog(conn, "ana").undo()
    conn.close()
    reopened = connect(path)
    assert effective_value(reopened, jid) == "correct"
    assert ReviewLog(reopened, "ana").redo() is not None
    assert effective_value(reopened, jid) == "incorrect"


def test_the_log_is_append_only(tiny_db: sqlite3.Connection) -> None:
    jid = judgment_id(tiny_db, "t1-alpha", "k=c1")
    ReviewLog(tiny_db, "ana").decide(jid, "incorrect", "x")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        tiny_db.execute("UPDATE review_event SET value = 'correct'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        tiny_db.execute("DELETE FROM review_event")


def test_decision_is_committed_before_returning(tmp_path: Path) -> None:
    from store.imports.loader import import_bundle
    from tests.builders import tiny_bundle

    path = tmp_path / "g.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "h")
    jid = judgment_id(conn, "t1-alpha", "k=c1")
    ReviewLog(conn, "ana").decide(jid, "incorrect", "x")
    assert not conn.in_transaction
    other = sqlite3.connect(path)  # another process's view
    assert other.execute("SELECT count(*) FROM review_event").fetchone()[0] == 1
    other.close()


def test_two_reviewers_disagreeing_is_a_conflict_until_adjudicated(
    tiny_db: sqlite3.Connection,
) -> None:
    jid = judgment_id(tiny_db, "t1-alpha", "k=c1")
    ReviewLog(tiny_db, "ana").decide(jid, "incorrect", "x")
    status = tiny_db.execute("SELECT status FROM decision WHERE subject_id = " + SUBJECT_OF, (jid,))
    assert status.fetchone() == ("single",)
    ReviewLog(tiny_db, "ben").decide(jid, "unknown", "y")
    row = tiny_db.execute(
        "SELECT status, value FROM decision WHERE subject_id = " + SUBJECT_OF, (jid,)
    )
    assert row.fetchone() == ("conflict", None)
    assert effective_value(tiny_db, jid) == "correct"  # the judge's value, never last-write
    ReviewLog(tiny_db, "cat").decide(jid, "unknown", "z", adjudicate=True)
    row = tiny_db.execute(
        "SELECT status, value, reviewers FROM decision WHERE subject_id = " + SUBJECT_OF, (jid,)
    )
    assert row.fetchone() == ("adjudicated", "unknown", 3)
    ReviewLog(tiny_db, "ana").decide(jid, "unknown", "agree now")
    assert effective_value(tiny_db, jid) == "unknown"


def test_flags_and_ratings(tiny_db: sqlite3.Connection) -> None:
    jid = judgment_id(tiny_db, "t1-alpha", "k=c1")
    report = tiny_db.execute("SELECT id FROM report WHERE ext_id = 't1-alpha'").fetchone()[0]
    log = ReviewLog(tiny_db, "ana")
    log.flag(jid)
    log.rate(report, 3)
    log.rate(report, "4")
    assert tiny_db.execute("SELECT count(*) FROM flag").fetchone()[0] == 1
    assert tiny_db.execute("SELECT value FROM report_rating").fetchall() == [("4",)]
    with pytest.raises(ReviewError):
        log.rate(report, 5)
    log.undo()
    assert tiny_db.execute("SELECT value FROM report_rating").fetchall() == [("3",)]
    log.flag(jid, on=False)
    assert tiny_db.execute("SELECT count(*) FROM flag").fetchone()[0] == 0


def test_rebuild_from_the_log_equals_the_incremental_state(tiny_db: sqlite3.Connection) -> None:
    log = ReviewLog(tiny_db, "ana")
    ids = [judgment_id(tiny_db, "t1-alpha", s) for s in ("k=c1", "k=c2", "c=s1-ins")]
    report = tiny_db.execute("SELECT id FROM report WHERE ext_id = 't1-alpha'").fetchone()[0]
    log.decide(ids[0], "incorrect", "a")
    log.decide(ids[1], "unknown", "b")
    log.flag(ids[2])
    log.rate(report, 2)
    log.undo()
    log.undo()
    log.redo()
    ReviewLog(tiny_db, "ben").decide(ids[0], "unknown", "c")
    log.decide(ids[2], 0.5, "d")
    before = derived_state(tiny_db)
    rebuild_state(tiny_db)
    assert derived_state(tiny_db) == before
