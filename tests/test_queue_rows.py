"""The queue's rows of a few reports (what a decision changed) are exactly those reports' rows
of the whole queue: every column, progress, flags, ratings and suspicion included."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.scores.cache import update_scores
from store.views.screens import queue_rows


def test_the_rows_of_a_few_reports_equal_theirs_in_the_whole_queue(sample_db: Path) -> None:
    conn = connect(sample_db)
    log = ReviewLog(conn, "ana")
    picks = conn.execute(
        """SELECT j.id, j.report_id, j.kind FROM judgment j WHERE j.current = 1
           AND j.value IS NOT NULL AND j.kind IN ('claim', 'ins') ORDER BY j.id LIMIT 40"""
    ).fetchall()
    touched = set()
    for i, (jid, rid, kind) in enumerate(picks[::8]):
        log.decide(jid, "correct" if kind == "claim" else "0", "checked")
        if i % 2:
            log.flag(jid, rationale="look again")
        touched.add(rid)
    first = picks[0][1]
    log.rate(first, "2", "reads fine")
    update_scores(conn, sorted(touched))
    every = {row.report_id: row for row in queue_rows(conn)}
    decided = [rid for rid in every if every[rid].decided]
    assert decided and any(every[rid].flags for rid in decided) and every[first].rated
    some = sorted({*decided, *list(every)[:3]})
    assert queue_rows(conn, some) == [every[rid] for rid in every if rid in some]
    assert queue_rows(conn, []) == []


def test_many_reports_are_read_with_the_rest(
    sample_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import store.views.screens as views

    monkeypatch.setattr(views, "_FEW_REPORTS", 2)
    conn = connect(sample_db)
    every = queue_rows(conn)
    some = [row.report_id for row in every[1:6]]
    assert queue_rows(conn, some) == every[1:6]
