"""A full recompute's counted reports, scored in parts: the upper part on the second core.

Counting and scoring every report of a 25,500-report run from SQL's counts is 3.5 s of one
core, most of it SQLite stepping and Python building counts, neither of which a thread can
share (every fetched row takes the GIL back). So a forked child with its own read-only
connection counts and scores the upper range of report ids while this process does the lower,
and sends back only what the rebuild keeps: each report's encoded row
(:mod:`store.report_scores`) and each system's column slice (:mod:`store.score_columns`), plain
numbers and a few shared strings. The two parts take 2.0 s side by side.

The child reads what this process reads only under two conditions, which :func:`shared_file`
and the rebuild's own transaction establish: this connection held nothing uncommitted when the
rebuild began (a child cannot see another connection's pending changes), and it holds the
write lock for the whole rebuild (so nobody commits in between, and a reader of the WAL sees
exactly the state this connection started from). Anything else, or a child that fails in any
way, and the part is scored here: correctness never depends on the child.

One more invariant: SQLite keeps its record of the POSIX locks this process holds per process,
and the child inherits the parent's. Its new connection to the same file finds the parent's
read lock recorded as its own and takes none of its own with the kernel: the child's reading
is protected by the parent's locks alone. So the parent keeps its transaction open until the
child is collected or stopped (:func:`counted_ranges` does, whatever happens), never the other
way round.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from reviewer.framework import BulkSpec, ReportScores, Variant, column_aggregating
from reviewer.inputs import CriterionIn, ReportCounts, SubtaskIn
from reviewer.registry import frameworks
from store import report_scores
from store.bulkscores import count_reports
from store.forked import forked, spare_core
from store.inputs import ReportMeta, report_meta, task_structure
from store.score_columns import SystemColumns

EncodedRow = tuple[int, str, str, str, bytes]
"""A ``report_score`` row: (report id, framework, variant, metrics, data)."""
Structure = tuple[Mapping[int, dict[str, Any]], Mapping[int, list[SubtaskIn]],
                  Mapping[int, list[CriterionIn]]]
"""Each task's metadata, subtasks and criteria (:func:`store.inputs.task_structure`)."""
SystemKey = tuple[int, Variant]
"""(system id, variant)."""

PARALLEL_MIN = 1_000
"""Reports below which a child is not worth its fork (about 13 ms of scoring per 100)."""
HEAD_SHARE = 0.5
"""The share of the reports this process scores itself. It also writes its rows as it goes,
but the child reads its own metadata and starts with a cold cache: at half each, the two
finish within about 10 ms of each other at 2,550 reports."""
CHILD_GRACE = 10.0
"""Seconds, at least, this process waits for a child once its own range is done (three times
its own range's time when that is longer) before it stops the child and scores the child's
range itself."""
_FLUSH = 4_096
"""Rows this process writes at a time: memory holds one batch of rows, not the run's."""


@dataclass(slots=True)
class Part:
    """One framework's counted reports of one range, scored."""

    rows: list[EncodedRow] = field(default_factory=list)
    """Encoded rows not yet written (a child's part: all of them)."""
    columns: dict[SystemKey, SystemColumns] = field(default_factory=dict)
    """Each system's column slice, for a framework that aggregates from columns."""
    scores: dict[SystemKey, dict[int, ReportScores]] = field(default_factory=dict)
    """Each system's report scores, for a framework that does not."""
    uncounted: list[int] = field(default_factory=list)
    """Reports the counts cannot describe: the caller scores them from their rows."""


def shared_file(conn: sqlite3.Connection) -> str | None:
    """The database file a child may read this connection's state from, or None: only when
    this connection holds nothing uncommitted, the database is a file in WAL mode (a reader
    sees the last commit while a writer writes), a second core is there to use, and this
    process runs one thread. (The child opens SQLite: had another thread been inside SQLite at
    the fork, holding one of its process-wide mutexes, the child would wait on it forever.)
    Called before the rebuild's transaction begins."""
    if conn.in_transaction or not spare_core() or not one_thread():
        return None
    (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
    if str(mode).lower() != "wal":
        return None
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return str(file) or None
    return None


def one_thread() -> bool:
    """Whether this process runs no thread but this one (Python's threads: SQLite is only
    ever called from them)."""
    return threading.active_count() == 1


def both_scored(spec: BulkSpec, judge: ReportCounts, adjudicated: ReportCounts,
                options: Mapping[str, str]) -> tuple[ReportScores, ReportScores]:
    """A report's judge and adjudicated scores from its counts: the same object twice where
    no decision moved a count (:func:`store.bulkscores.count_reports` says so by identity)."""
    judge_scores = spec.score(judge, options)
    return judge_scores, (judge_scores if adjudicated is judge
                          else spec.score(adjudicated, options))


def encoded_rows(rid: int, name: str, judge: ReportScores, adjudicated: ReportScores
                 ) -> list[EncodedRow]:
    """A report's rows (none for a variant without scores); an adjudicated variant that is the
    judge's own scores (the same object) reuses its encoding."""
    rows: list[EncodedRow] = []
    if judge:
        rows.append((rid, name, "judge", *report_scores.encode(judge)))
    if adjudicated:
        rows.append((rid, name, "adjudicated",
                     *(rows[-1][3:] if adjudicated is judge
                       else report_scores.encode(adjudicated))))
    return rows


def score_part(conn: sqlite3.Connection, name: str, spec: BulkSpec,
               wanted: Mapping[int, ReportMeta], structure: Structure,
               options: Mapping[str, str],
               write: Callable[[list[EncodedRow]], None] | None = None) -> Part:
    """``wanted``'s reports counted and scored in both variants. With ``write`` the rows go
    out in batches as they are made (``Part.rows`` is left with none); without, they stay in
    the part (a child's, sent back whole)."""
    part = Part()
    by_system: dict[SystemKey, dict[int, ReportScores]] = defaultdict(dict)
    rows = part.rows
    for rid, judge, adjudicated in count_reports(conn, spec, wanted, structure):
        if judge is None or adjudicated is None:
            part.uncounted.append(rid)
            continue
        sid = wanted[rid].system_id
        judge_scores, adjudicated_scores = both_scored(spec, judge, adjudicated, options)
        by_system[(sid, "judge")][rid] = judge_scores
        by_system[(sid, "adjudicated")][rid] = adjudicated_scores
        rows.extend(encoded_rows(rid, name, judge_scores, adjudicated_scores))
        if write is not None and len(rows) >= _FLUSH:
            write(rows)
            rows.clear()
    if write is not None:
        write(rows)
        rows.clear()
    by_columns = column_aggregating(frameworks()[name])
    if by_columns is None:
        part.scores = dict(by_system)
    else:
        part.columns = {key: SystemColumns.of(values, by_columns.aggregated)
                        for key, values in by_system.items()}
    return part


@dataclass(slots=True)
class Counted:
    """One range of reports: the parts its frameworks counted, and the (report, framework)
    pairs left to score from their rows (frameworks without counts, reports counts cannot
    describe)."""

    parts: list[tuple[str, Part]]
    from_rows: dict[int, list[str]]
    by_child: bool = False
    """Whether a forked child scored this range."""


def bulk_spec(fw: object) -> BulkSpec | None:
    spec = getattr(fw, "bulk", None)
    return spec if isinstance(spec, BulkSpec) else None


def plan(metas: Mapping[int, ReportMeta], registry: Mapping[str, object]
         ) -> tuple[dict[str, dict[int, ReportMeta]], dict[int, list[str]]]:
    """Which (report, framework) pairs are counted by SQL (by framework) and which are scored
    from their rows (by report)."""
    from_rows: dict[int, list[str]] = defaultdict(list)
    counted: dict[str, dict[int, ReportMeta]] = defaultdict(dict)
    for rid, meta in metas.items():
        for name in meta.frameworks:
            fw = registry.get(name)
            if fw is None:
                continue
            if bulk_spec(fw) is not None:
                counted[name][rid] = meta
            else:
                from_rows[rid].append(name)
    return counted, from_rows


def count_range(conn: sqlite3.Connection, between: tuple[int, int] | None,
                options: Mapping[str, Mapping[str, str]],
                write: Callable[[list[EncodedRow]], None] | None = None) -> Counted:
    """The reports with ids ``between`` two bounds (all if None), counted and scored where
    their frameworks allow it (:func:`score_part`)."""
    registry = frameworks()
    counted, from_rows = plan(report_meta(conn, between=between), registry)
    structure = task_structure(conn) if counted else ({}, {}, {})
    parts: list[tuple[str, Part]] = []
    for name, wanted in counted.items():
        spec = bulk_spec(registry[name])
        assert spec is not None
        part = score_part(conn, name, spec, wanted, structure, options[name], write)
        for rid in part.uncounted:
            from_rows[rid].append(name)
        parts.append((name, part))
    return Counted(parts, from_rows)


def counted_ranges(conn: sqlite3.Connection, options: Mapping[str, Mapping[str, str]],
                   write: Callable[[list[EncodedRow]], None], *, shared: str | None,
                   meanwhile: Callable[[], None] = lambda: None
                   ) -> Generator[Counted, None, None]:
    """Every report counted and scored (:func:`count_range`), in ranges of ascending ids: the
    upper range by a forked child reading ``shared`` (:func:`shared_file`) when there is one
    and enough reports, everything here otherwise. This process writes its own rows as they
    come; a child's come back in its :class:`Counted`.

    ``meanwhile`` is the caller's work that reads nothing the ranges read (clearing the old
    scores): done once the child runs, before this process scores its own range.
    """
    # The reports scored (a reference system's are not), so the halves are even; read only
    # when a child may take one.
    ids = [] if shared is None else [rid for (rid,) in conn.execute(
        "SELECT r.id FROM report r JOIN system y ON y.id = r.system_id "
        "WHERE y.is_reference = 0 ORDER BY r.id")]
    child = None
    cut = ids[int(len(ids) * HEAD_SHARE)] if ids else 0
    collected = False
    try:
        if shared is not None and len(ids) >= PARALLEL_MIN:
            child = forked(partial(_count_elsewhere, shared, (cut, ids[-1]), options))
        meanwhile()
        if child is None:
            yield count_range(conn, None, options, write)
            return
        started = time.perf_counter()
        yield count_range(conn, (ids[0], cut - 1), options, write)
        # Half the work takes the child about as long as it took here: one far later is stuck,
        # and is stopped rather than waited for while this process holds the write lock.
        elsewhere = child.result(timeout=max(CHILD_GRACE, 3 * (time.perf_counter() - started)))
        collected = True
        if isinstance(elsewhere, Counted):
            elsewhere.by_child = True
            yield elsewhere
        else:
            yield count_range(conn, (cut, ids[-1]), options, write)
    finally:
        if child is not None and not collected:    # something failed here, or the caller
            child.cancel()                          # stopped


def _count_elsewhere(path: str, between: tuple[int, int],
                     options: Mapping[str, Mapping[str, str]]) -> Counted:
    """A child's range, over its own read-only connection, in one read transaction."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True,
                           isolation_level=None)
    try:
        conn.execute("PRAGMA cache_size = -65536")
        conn.execute("BEGIN")
        return count_range(conn, between, options)
    finally:
        conn.close()
