"""A full recompute counts what SQL can count and scores the rest from rows
(store.scores.counted): systems that mix the two come out as a recompute from every row would
write them, byte for byte, and a failure half-way keeps the old cache."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import store.scores.cache
import store.scores.counted as parts
from reviewer.formats.native import iter_records
from reviewer.frameworks.dailyreport.scoring import CascadeFramework
from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from store.db.connection import connect
from store.imports.loader import import_records
from store.reviewlog.events import ReviewLog
from store.scores.cache import cached, compute_rows, rebuild_scores
from store.scores.inputs import RUN_CLAIM_KEY
from tests.test_scores_property import differences, stale_columns


def report_ids(conn: sqlite3.Connection) -> list[int]:
    return [rid for (rid,) in conn.execute("SELECT id FROM report ORDER BY id")]


def cache_rows(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the score cache, byte for byte."""
    return {
        table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4").fetchall()
        for table in ("score", "report_score", "score_columns")
    }


@pytest.fixture
def mixed_run(tmp_path: Path) -> sqlite3.Connection:
    """A cascade run whose systems mix counted reports and reports scored from their rows
    (every fourth has a claim a judge run extracted), with decisions."""
    write_synthetic(tmp_path / "run", SyntheticSpec(tasks=6, systems=3, subtasks=4, claims=6))
    conn = connect(tmp_path / "db.sqlite")
    suite, records = iter_records(tmp_path / "run")
    import_records(conn, suite, records, "test")
    for rid in report_ids(conn)[::4]:
        conn.execute(
            "UPDATE claim SET metadata = ? WHERE id = (SELECT min(id) FROM claim "
            "WHERE report_id = ?)",
            (json.dumps({RUN_CLAIM_KEY: 1}), rid),
        )
    log = ReviewLog(conn, "ana")
    for (jid,) in conn.execute(
        "SELECT id FROM judgment WHERE kind = 'ins' ORDER BY id DESC LIMIT 3"
    ).fetchall():
        log.decide(jid, "0", "wrong")
    return conn


def test_systems_mixing_counted_and_row_scored_reports_equal_every_row_scored(
    mixed_run: sqlite3.Connection,
) -> None:
    conn = mixed_run
    uncounted: list[int] = []
    score_part = parts.score_part

    def spying(*args: object, **kwargs: object) -> parts.Part:
        part = score_part(*args, **kwargs)  # type: ignore[arg-type]
        uncounted.extend(part.uncounted)
        return part

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts, "score_part", spying)
        rebuild_scores(conn)
    assert set(uncounted) == set(report_ids(conn)[::4])
    assert differences(cached(conn), compute_rows(conn)) == []
    assert stale_columns(conn) == []


def test_a_counted_framework_that_aggregates_from_scores_comes_out_the_same(
    mixed_run: sqlite3.Connection,
) -> None:
    """The path for a framework counted by SQL but aggregated from report scores (no
    columns): no built-in framework takes it, so the cascade is made to."""
    conn = mixed_run
    rebuild_scores(conn)
    with_columns = cache_rows(conn)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CascadeFramework, "columns", None)
        rebuild_scores(conn)
        without = cache_rows(conn)
    assert without["score_columns"] == []
    assert without["score"] == with_columns["score"]
    assert without["report_score"] == with_columns["report_score"]
    assert differences(cached(conn), compute_rows(conn)) == []


def test_a_failure_half_way_keeps_the_old_scores(sample_db: Path) -> None:
    conn = connect(sample_db)
    before = cache_rows(conn)
    assert before["report_score"]

    def fails(*_: object) -> None:
        raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store.scores.cache._Systems, "add", fails)
        with pytest.raises(KeyboardInterrupt):
            rebuild_scores(conn)
    assert cache_rows(conn) == before
