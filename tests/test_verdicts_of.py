"""Queries over decisions and flags start from whichever side is smaller (store.reviewlog.subjects
.verdicts_of): both join orders give the same rows, and a few decisions among many verdicts
are read from the decisions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import store.reviewlog.subjects as subjects
from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.scores.counts import _decided
from store.views.screens import queue_rows


def _state(db: Path) -> tuple[object, object]:
    conn = connect(db)
    try:
        decided = _decided(conn, ("ins", "rat", "consistency", "claim"), "claim")
        queue = [
            (r.report_id, r.decided, r.differs, r.conflicts, r.flags) for r in queue_rows(conn)
        ]
        return (sorted(map(repr, decided)), queue)
    finally:
        conn.close()


def test_both_join_orders_give_the_same_rows(
    sample_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "g.db"
    shutil.copy(sample_db, db)
    conn = connect(db)
    log = ReviewLog(conn, "ana")
    for jid, value in conn.execute(
        "SELECT id, CASE value WHEN '1' THEN '0' ELSE '1' END FROM judgment "
        "WHERE kind = 'ins' AND current = 1 ORDER BY id LIMIT 12"
    ).fetchall():
        log.decide(jid, value, "wrong")
    assert subjects.verdicts_of(conn, "decision").startswith("decision d CROSS JOIN")
    conn.close()
    from_decisions = _state(db)
    monkeypatch.setattr(subjects, "FEW", 10**9)  # never few: scan the verdicts
    conn = connect(db)
    assert " CROSS JOIN " not in subjects.verdicts_of(conn, "decision")
    conn.close()
    from_verdicts = _state(db)
    assert from_decisions == from_verdicts
    assert from_decisions[0] and any(row[1] for row in from_decisions[1])  # type: ignore[union-attr]
