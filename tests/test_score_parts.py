"""A full recompute scores the upper range of reports in a forked child (store.score_parts):
the cache it writes is the one a single process writes, the child reads exactly the state the
rebuild's own connection reads, and a child that fails costs only time."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import store.score_parts as parts
import store.scores
from reviewer.formats.native import iter_records
from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
from store.db import connect
from store.forked import Forked
from store.importer import import_records
from store.inputs import RUN_CLAIM_KEY
from store.reviewlog import ReviewLog
from store.scores import cached, compute_rows, rebuild_scores
from store.tx import transaction
from tests.test_scores_property import (
    SLOW,
    Op,
    differences,
    ops,
    play_all,
    stale_columns,
    world,
)

Between = tuple[int, int] | None


@contextlib.contextmanager
def split_everywhere() -> Iterator[list[Between]]:
    """Every rebuild splits, whatever its size or the machine's cores; yields the ranges this
    process scored itself (a child's own calls land in the child's memory, not here)."""
    scored_here: list[Between] = []
    count_range = parts.count_range

    def recording(conn: sqlite3.Connection, between: Between, *args: object) -> parts.Counted:
        scored_here.append(between)
        return count_range(conn, between, *args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts, "PARALLEL_MIN", 1)
        patch.setattr(parts, "spare_core", lambda: True)
        patch.setattr(parts, "one_thread", lambda: True)   # whatever threads other tests left
        patch.setattr(parts, "count_range", recording)
        yield scored_here


def report_ids(conn: sqlite3.Connection) -> list[int]:
    return [rid for (rid,) in conn.execute("SELECT id FROM report ORDER BY id")]


def review(conn: sqlite3.Connection, sequence: list[Op]) -> None:
    play_all(conn, sequence, [ReviewLog(conn, "ana"), ReviewLog(conn, "ben")])


@settings(max_examples=25, deadline=None, suppress_health_check=SLOW)
@given(data=st.data(), sequence=ops)
def test_two_processes_write_the_cache_one_would(
    tmp_path: Path, data: st.DataObject, sequence: list[Op]
) -> None:
    conn = connect(data.draw(world(tmp_path)))
    review(conn, sequence)
    ids = report_ids(conn)
    with split_everywhere() as scored_here:
        assert rebuild_scores(conn) is True     # it says a child scored part of it
    cut = ids[int(len(ids) * parts.HEAD_SHARE)]
    # This process scored the lower range only: the upper one came back from the child.
    assert scored_here == [(ids[0], cut - 1)]
    assert differences(cached(conn), compute_rows(conn)) == []
    assert stale_columns(conn) == []
    conn.close()


def failing(*_: object) -> parts.Counted:
    raise RuntimeError("the child fails")


@pytest.mark.parametrize("how", ["raises", "no fork"])
def test_a_child_that_fails_costs_only_time(sample_db: Path, how: str) -> None:
    conn = connect(sample_db)
    review(conn, [("decide", 0, 0, 3, 1), ("adjudicate", 1, 0, 7, 0)])
    ids = report_ids(conn)
    with split_everywhere() as scored_here, pytest.MonkeyPatch.context() as patch:
        if how == "raises":
            patch.setattr(parts, "_count_elsewhere", failing)
        else:
            patch.setattr(parts, "forked", lambda _: None)
        assert rebuild_scores(conn) is False
    cut = ids[int(len(ids) * parts.HEAD_SHARE)]
    assert scored_here == ([(ids[0], cut - 1), (cut, ids[-1])] if how == "raises"
                           else [None])
    assert differences(cached(conn), compute_rows(conn)) == []
    assert stale_columns(conn) == []


def test_uncommitted_changes_are_never_left_to_a_child(sample_db: Path) -> None:
    """A rebuild inside a transaction that changed a verdict scores it here: a child's
    connection would read the state before the change."""
    conn = connect(sample_db)
    before = cached(conn)
    (jid,) = conn.execute("SELECT id FROM judgment WHERE kind = 'ins' AND value = '1' "
                          "ORDER BY report_id DESC LIMIT 1").fetchone()   # a child's
    with split_everywhere() as scored_here, transaction(conn):
        ReviewLog(conn, "ana").decide(jid, "0", "wrong")
        rebuild_scores(conn)
        assert differences(cached(conn), compute_rows(conn)) == []
    assert scored_here == [None]
    assert differences(cached(conn), before) != []      # the decision moved a score


@pytest.mark.parametrize("where", ["memory", "journal", "transaction", "one core", "wal"])
def test_a_child_reads_only_a_wal_file_with_nothing_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    monkeypatch.setattr(parts, "spare_core", lambda: where != "one core")
    monkeypatch.setattr(parts, "one_thread", lambda: True)
    path = tmp_path / "db.sqlite"
    conn = connect(":memory:" if where == "memory" else path)
    if where == "journal":
        conn.execute("PRAGMA journal_mode = DELETE")
    opened: Callable[[], contextlib.AbstractContextManager[object]] = (
        (lambda: transaction(conn)) if where == "transaction" else contextlib.nullcontext)
    with opened():
        shared = parts.shared_file(conn)
    assert shared == (str(path) if where == "wal" else None)


def test_a_rebuild_told_to_stay_on_one_core_scores_everything_here(sample_db: Path) -> None:
    conn = connect(sample_db)
    with split_everywhere() as scored_here:
        assert rebuild_scores(conn, second_core=False) is False
    assert scored_here == [None]
    assert differences(cached(conn), compute_rows(conn)) == []


def test_a_failure_here_stops_the_child_and_keeps_the_old_scores(sample_db: Path) -> None:
    conn = connect(sample_db)
    before = cached(conn)
    parent = os.getpid()

    def here_fails_child_hangs(*_: object) -> parts.Counted:
        if os.getpid() == parent:
            raise RuntimeError("this process's range fails")
        time.sleep(60)          # a child still at work when the rebuild gives up
        raise AssertionError("never reached")

    started = time.monotonic()
    with split_everywhere(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts, "count_range", here_fails_child_hangs)
        with pytest.raises(RuntimeError, match="range fails"):
            rebuild_scores(conn)
    assert multiprocessing.active_children() == []      # stopped, not left to finish
    assert time.monotonic() - started < 30
    assert differences(cached(conn), before) == []      # rolled back: the old cache stands


def test_no_child_is_forked_while_another_thread_runs(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Another thread could be inside SQLite, holding a process-wide mutex, at the fork."""
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not parts.one_thread()
    finally:
        release.set()
        other.join()
    monkeypatch.setattr(parts, "spare_core", lambda: True)
    monkeypatch.setattr(parts, "one_thread", lambda: False)
    assert parts.shared_file(connect(tmp_path / "db.sqlite")) is None


def test_a_stuck_child_is_stopped_and_its_range_scored_here(sample_db: Path) -> None:
    conn = connect(sample_db)
    review(conn, [("decide", 0, 0, 5, 1)])
    ids = report_ids(conn)
    parent = os.getpid()
    with split_everywhere() as scored_here, pytest.MonkeyPatch.context() as patch:
        count_range = parts.count_range

        def stuck_in_the_child(conn: sqlite3.Connection, between: Between,
                               *args: object) -> parts.Counted:
            if os.getpid() != parent:
                time.sleep(60)
            return count_range(conn, between, *args)  # type: ignore[arg-type]

        patch.setattr(parts, "count_range", stuck_in_the_child)
        patch.setattr(parts, "CHILD_GRACE", 0.5)
        started = time.monotonic()
        rebuild_scores(conn)
    assert time.monotonic() - started < 30
    cut = ids[int(len(ids) * parts.HEAD_SHARE)]
    assert scored_here == [(ids[0], cut - 1), (cut, ids[-1])]
    assert multiprocessing.active_children() == []
    assert differences(cached(conn), compute_rows(conn)) == []


def cache_rows(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the score cache, byte for byte."""
    return {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4").fetchall()
            for table in ("score", "report_score", "score_columns")}


@pytest.fixture
def mixed_run(tmp_path: Path) -> sqlite3.Connection:
    """A cascade run whose systems mix counted reports and reports scored from their rows
    (every fourth has a claim a judge run extracted), in both halves, with decisions."""
    write_synthetic(tmp_path / "run", SyntheticSpec(tasks=6, systems=3, subtasks=4, claims=6))
    conn = connect(tmp_path / "db.sqlite")
    suite, records = iter_records(tmp_path / "run")
    import_records(conn, suite, records, "test")
    for rid in report_ids(conn)[::4]:
        conn.execute("UPDATE claim SET metadata = ? WHERE id = (SELECT min(id) FROM claim "
                     "WHERE report_id = ?)", (json.dumps({RUN_CLAIM_KEY: 1}), rid))
    log = ReviewLog(conn, "ana")
    for (jid,) in conn.execute("SELECT id FROM judgment WHERE kind = 'ins' "
                               "ORDER BY id DESC LIMIT 3").fetchall():
        log.decide(jid, "0", "wrong")
    return conn


def test_systems_mixing_counted_and_row_scored_reports_come_out_byte_for_byte(
    mixed_run: sqlite3.Connection,
) -> None:
    conn = mixed_run
    rebuild_scores(conn, second_core=False)
    alone = cache_rows(conn)
    uncounted: list[int] = []
    score_part = parts.score_part

    def spying(*args: object, **kwargs: object) -> parts.Part:
        part = score_part(*args, **kwargs)  # type: ignore[arg-type]
        uncounted.extend(part.uncounted)
        return part

    ids = report_ids(conn)
    cut = ids[int(len(ids) * parts.HEAD_SHARE)]
    with split_everywhere() as scored_here, pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts, "score_part", spying)
        rebuild_scores(conn)
    assert scored_here == [(ids[0], cut - 1)]
    assert uncounted and all(rid < cut for rid in uncounted)    # this process's, here
    assert any(rid >= cut for rid in ids[::4])                  # and the child's, there
    assert cache_rows(conn) == alone
    assert differences(cached(conn), compute_rows(conn)) == []
    assert stale_columns(conn) == []


def test_a_counted_framework_that_aggregates_from_scores_comes_out_the_same(
    mixed_run: sqlite3.Connection,
) -> None:
    """The path for a framework counted by SQL but aggregated from report scores (no
    columns): no built-in framework takes it, so the cascade is made to."""
    conn = mixed_run
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts, "column_aggregating", lambda _: None)
        patch.setattr(store.scores, "column_aggregating", lambda _: None)
        rebuild_scores(conn, second_core=False)
        alone = cache_rows(conn)
        assert alone["score_columns"] == []
        with split_everywhere() as scored_here:
            rebuild_scores(conn)
        assert len(scored_here) == 1 and scored_here[0] is not None
        assert cache_rows(conn) == alone
    assert differences(cached(conn), compute_rows(conn)) == []


def test_a_failure_after_the_ranges_stops_the_child_before_the_rollback(
    sample_db: Path,
) -> None:
    conn = connect(sample_db)
    before = cache_rows(conn)
    parent = os.getpid()
    count_range = parts.count_range

    def child_dawdles(conn: sqlite3.Connection, between: Between,
                      *args: object) -> parts.Counted:
        if os.getpid() != parent:
            time.sleep(60)
        return count_range(conn, between, *args)  # type: ignore[arg-type]

    def fails(*_: object) -> None:
        assert multiprocessing.active_children() != []    # the child still runs here
        raise KeyboardInterrupt

    events: list[str] = []
    cancel = Forked.cancel

    def recorded_cancel(self: Forked[object]) -> None:
        events.append("child stopped")
        cancel(self)

    conn.set_trace_callback(events.append)
    with split_everywhere(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts, "count_range", child_dawdles)
        patch.setattr(store.scores._Systems, "add", fails)
        patch.setattr(Forked, "cancel", recorded_cancel)
        with pytest.raises(KeyboardInterrupt):
            rebuild_scores(conn)
    conn.set_trace_callback(None)
    assert events.index("child stopped") < events.index("ROLLBACK")
    assert multiprocessing.active_children() == []
    assert cache_rows(conn) == before
