"""The full recompute counts in SQL what it can (store.scores.counts) and scores the rest from
rows: both ways give the same scores, and a plain run is not read row by row."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.formats.native import iter_records
from reviewer.frameworks.dailyreport import counted as counted_module
from reviewer.frameworks.dailyreport.scoring import CascadeFramework
from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from store.db.connection import connect
from store.imports.loader import import_records
from store.reviewlog.events import ReviewLog
from store.scores.cache import cached, compute_all, compute_rows, rebuild_scores
from tests.test_scores_property import (
    SLOW,
    Op,
    differences,
    ops,
    play_all,
    world,
)


@settings(max_examples=30, deadline=None, suppress_health_check=SLOW)
@given(data=st.data(), sequence=ops)
def test_counted_scores_equal_scores_from_rows(
    tmp_path: Path, data: st.DataObject, sequence: list[Op]
) -> None:
    conn = connect(data.draw(world(tmp_path)))
    play_all(
        conn, sequence, [ReviewLog(conn, "ana"), ReviewLog(conn, "ben"), ReviewLog(conn, "carl")]
    )
    assert differences(compute_all(conn), compute_rows(conn)) == []
    rebuild_scores(conn)
    assert differences(cached(conn), compute_rows(conn)) == []
    conn.close()


def test_a_plain_cascade_run_is_counted_not_read_row_by_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_synthetic(tmp_path / "run", SyntheticSpec(tasks=3, systems=2, subtasks=4, claims=6))
    conn = connect(tmp_path / "db.sqlite")
    suite, records = iter_records(tmp_path / "run")
    import_records(conn, suite, records, "test")
    rows = compute_rows(conn)
    log = ReviewLog(conn, "ana")
    jid = conn.execute(
        "SELECT id FROM judgment WHERE kind = 'ins' AND value != '0' ORDER BY id LIMIT 1"
    ).fetchone()[0]
    log.decide(jid, "0", "wrong")

    def refuse(*_: object) -> None:
        raise AssertionError("scored from rows")

    monkeypatch.setattr(CascadeFramework, "score_report", refuse)
    counted = compute_all(conn)
    assert counted.reports.keys() == rows.reports.keys()
    assert counted.reports != rows.reports  # the decision moved the adjudicated scores
    monkeypatch.undo()
    assert differences(counted, compute_rows(conn)) == []


def test_a_run_scored_in_slices_equals_scores_from_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A few cells a slice: the judge's counts and the decided reports' (their decisions'
    # moves kept in report order) are both cut into runs of reports.
    write_synthetic(tmp_path / "run", SyntheticSpec(tasks=4, systems=3, subtasks=4, claims=6))
    conn = connect(tmp_path / "db.sqlite")
    suite, records = iter_records(tmp_path / "run")
    import_records(conn, suite, records, "test")
    log = ReviewLog(conn, "ana")
    for jid, kind in conn.execute(
        "SELECT id, kind FROM judgment WHERE kind IN ('ins', 'claim') ORDER BY id DESC LIMIT 40"
    ).fetchall()[::3]:
        log.decide(jid, "0" if kind == "ins" else "incorrect", "wrong")
    monkeypatch.setattr(counted_module, "_CELLS", 8)
    assert differences(compute_all(conn), compute_rows(conn)) == []
