"""Verdict counts for a full recompute, computed by SQL instead of read row by row.

A framework that declares a :class:`reviewer.framework.BulkSpec` is scored, in a full
recompute, from counts: per report, verdict kind, subtask, whether a claim verdict's claim
cites (see :mod:`store.scores.claim_facts`) and value, in one pass over the covering
``judgment_scoring`` index, grouped in its order so SQLite never sorts. SQL names each group
by small integers (its kind's and value's positions in the spec), so the groups arrive as
plain integer rows and become columns (:class:`reviewer.inputs.CountedReports`) without a
Python object per group. The human decisions are applied afterwards as differences (each
decided verdict moves one count from its judge value to its decision's), so the judge's
values are read from the index alone. Every count is an integer: the exact thresholds of a
score see exactly what they would see in the rows.

Counts describe a report only when each of its extracted claims has exactly one verdict of the
claim kind in force, filed under the claim's own subtask, and all its claims come from one
extraction; any other report is left to be scored from its rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from reviewer.framework import BulkSpec
from reviewer.inputs import CountedReports, TaskShapes, VerdictCounts
from store.reviewlog.subjects import verdicts_of
from store.scores.inputs import RUN_CLAIM_KEY, ReportMeta

Ints = npt.NDArray[np.int64]
Int32s = npt.NDArray[np.int32]

_CITED = 3
"""Claim citation states a group is named by: 0 uncited, 1 cited, 2 undescribed (no claim, or
one the counts cannot describe: ``claim_cited`` NULL or -1)."""
_UNDESCRIBED = 2
_BATCH = 65_536
"""Groups read from SQLite at a time."""


@dataclass(frozen=True, slots=True)
class CountedRun:
    """One framework's reports as counts: ``judge`` holds every report counts describe, in
    both variants where no decision moves a count; ``adjudicated`` those a decision moves
    (``moved``: their positions in ``judge``), with the decisions applied. ``uncounted`` are
    the reports to score from their rows."""

    judge: CountedReports
    adjudicated: CountedReports
    moved: Ints
    uncounted: list[int]


@dataclass(frozen=True, slots=True)
class _Coding:
    """How SQL names a group: ``((kind · 3 + cited) · values + value) · 2 + no subtask``."""

    kinds: tuple[str, ...]
    codes: tuple[str, ...]

    @property
    def values(self) -> int:
        return len(self.codes) + 2

    def kind_sql(self) -> str:
        whens = " ".join(f"WHEN ? THEN {i}" for i in range(len(self.kinds)))
        return f"CASE kind {whens} END"

    def value_sql(self) -> str:
        whens = " ".join(f"WHEN value = ? THEN {i}" for i in range(len(self.codes)))
        other, none = len(self.codes), len(self.codes) + 1
        return f"CASE WHEN value IS NULL THEN {none} {whens} ELSE {other} END"

    def group_sql(self) -> tuple[str, tuple[str, ...]]:
        cited = f"CASE claim_cited WHEN 0 THEN 0 WHEN 1 THEN 1 ELSE {_UNDESCRIBED} END"
        sql = (
            f"((({self.kind_sql()}) * {_CITED} + {cited}) * {self.values} "
            f"+ {self.value_sql()}) * 2 + (subtask_id IS NULL)"
        )
        return sql, (*self.kinds, *self.codes)

    def value_of(self, value: str | None) -> int:
        if value is None:
            return len(self.codes) + 1
        return self.codes.index(value) if value in self.codes else len(self.codes)


def count_run(
    conn: sqlite3.Connection, spec: BulkSpec, metas: Mapping[int, ReportMeta]
) -> CountedRun:
    """Every report of ``metas`` counted (the ones counts describe) and the rest named."""
    coding = _Coding((*spec.kinds, *((spec.claim_kind,) if spec.claim_kind else ())), spec.codes)
    ids = np.array(sorted(metas), dtype=np.int64)
    task_ids, report_task = np.unique(
        np.array([metas[rid].task_id for rid in ids.tolist()], dtype=np.int64),
        return_inverse=True,
    )
    report_task = report_task.astype(np.int64).reshape(-1)
    shapes, lookup = _task_shapes(conn, task_ids)
    verdicts = _verdicts(conn, coding, ids, report_task, shapes, lookup)
    claims = np.zeros(len(ids), dtype=np.int64)
    describable = np.ones(len(ids), dtype=np.bool_)
    if spec.claim_kind is not None:
        claims = _claims(conn, ids)
        describable = _describable(conn, coding, ids, claims, verdicts)
    table = CountedReports(
        coding.kinds,
        coding.codes,
        ids,
        report_task,
        [metas[rid].metadata for rid in ids.tolist()],
        claims,
        shapes,
        verdicts,
    )
    uncounted = ids[~describable].tolist()
    table = table.subset(describable)
    moves = _moves(conn, coding, spec.claim_kind, table, lookup)
    moved = np.unique(moves.report)
    chosen = np.zeros(len(table.report_ids), dtype=np.bool_)
    chosen[moved] = True
    adjudicated = _with(table.subset(chosen), moves, np.cumsum(chosen) - 1)
    return CountedRun(table, adjudicated, moved.astype(np.int64), uncounted)


def _task_shapes(conn: sqlite3.Connection, task_ids: Ints) -> tuple[TaskShapes, tuple[Ints, Ints]]:
    """The tasks' subtasks (in task order, then their own) and criteria counted by subtask
    and dimension; and, for lookups, every subtask id in ascending order with its index."""
    at = {tid: i for i, tid in enumerate(task_ids.tolist())}
    ids: list[int] = []
    task: list[int] = []
    importance: list[str] = []
    group: list[str | None] = []
    for sid, tid, imp, grp in conn.execute(
        "SELECT id, task_id, importance, grp FROM subtask ORDER BY task_id, ordinal"
    ):
        t = at.get(tid)
        if t is not None:
            ids.append(sid)
            task.append(t)
            importance.append(imp)
            group.append(grp)
    subtask_task = np.array(task, dtype=np.int64)
    order = np.argsort(np.array(ids, dtype=np.int64), kind="stable")
    sorted_ids = np.array(ids, dtype=np.int64)[order]
    index = {sid: i for i, sid in enumerate(ids)}
    crit_subtask: list[int] = []
    crit_dimension: list[str] = []
    crit_count: list[int] = []
    # Criteria filed under a subtask of their own task: those a report of it reads.
    for tid, sid, dimension, n in conn.execute(
        "SELECT task_id, subtask_id, dimension, count(*) FROM criterion "
        "WHERE subtask_id IS NOT NULL GROUP BY task_id, subtask_id, dimension"
    ):
        s = index.get(sid)
        if s is not None and at.get(tid) == task[s]:
            crit_subtask.append(s)
            crit_dimension.append(dimension)
            crit_count.append(n)
    shapes = TaskShapes(
        subtask_task,
        importance,
        group,
        np.array(crit_subtask, dtype=np.int64),
        crit_dimension,
        np.array(crit_count, dtype=np.int64),
    )
    return shapes, (sorted_ids, order.astype(np.int64))


def _verdicts(
    conn: sqlite3.Connection,
    coding: _Coding,
    ids: Ints,
    report_task: Ints,
    shapes: TaskShapes,
    at: tuple[Ints, Ints],
) -> VerdictCounts:
    """One grouped pass over the covering index, every kind at once, in the index's order
    down to the value (one count a group is the only aggregate: each further one costs as
    much as the count itself); the group's name is computed once per group."""
    empty = np.zeros(0, dtype=np.int32)
    if not len(ids) or not coding.kinds:
        return VerdictCounts(empty, empty, empty, empty, empty, empty)
    group, params = coding.group_sql()
    cursor = conn.execute(
        f"""SELECT report_id, ifnull(subtask_id, 0), {group}, count(*)
            FROM judgment INDEXED BY judgment_scoring
            WHERE current = 1 AND report_id BETWEEN ? AND ?
              AND kind IN ({",".join("?" * len(coding.kinds))})
            GROUP BY report_id, kind, subtask_id, claim_cited, value
            ORDER BY report_id, kind, subtask_id, claim_cited, value""",
        (*params, int(ids[0]), int(ids[-1]), *coding.kinds),
    )
    parts = [_decoded(np.zeros((0, 4), dtype=np.int64), coding, ids, report_task, shapes, at)]
    while rows := cursor.fetchmany(_BATCH):
        batch = np.fromiter(chain.from_iterable(rows), np.int64, 4 * len(rows)).reshape(-1, 4)
        parts.append(_decoded(batch, coding, ids, report_task, shapes, at))
    return VerdictCounts(*(np.concatenate(column) for column in zip(*parts, strict=True)))


def _decoded(
    batch: Ints,
    coding: _Coding,
    ids: Ints,
    report_task: Ints,
    shapes: TaskShapes,
    at: tuple[Ints, Ints],
) -> tuple[Int32s, ...]:
    """Rows of (report id, subtask id, group name, count) as the columns of
    :class:`VerdictCounts` (narrow integers: memory holds a run's groups)."""
    report = np.searchsorted(ids, batch[:, 0])
    known = report < len(ids)
    known[known] = ids[report[known]] == batch[known, 0]  # (a report of another framework)
    batch, report = batch[known], report[known]
    code, no_subtask = np.divmod(batch[:, 2], 2)
    code, value = np.divmod(code, coding.values)
    kind, cited = np.divmod(code, _CITED)
    subtask = _subtask_index(batch[:, 1], no_subtask == 1, *at)
    # A verdict under a subtask of another task counts for no subtask of its report.
    subtask[(subtask >= 0) & (shapes.task[np.maximum(subtask, 0)] != report_task[report])] = -1
    columns = (report, kind, subtask, cited, value, batch[:, 3])
    return tuple(column.astype(np.int32) for column in columns)


def _integers(cursor: sqlite3.Cursor, width: int) -> npt.NDArray[np.int64]:
    """A query's rows of ``width`` integers as an (n, width) array: read flat (far cheaper
    than letting numpy inspect each tuple), a batch at a time (memory holds one batch of
    tuples, not the run's)."""
    parts = [np.zeros(0, dtype=np.int64)]
    while rows := cursor.fetchmany(_BATCH):
        parts.append(np.fromiter(chain.from_iterable(rows), np.int64, width * len(rows)))
    return np.concatenate(parts).reshape(-1, width)


def _subtask_index(sid: Ints, none: npt.NDArray[np.bool_], ids: Ints, at: Ints) -> Ints:
    """Each subtask id's index into the task shapes, -1 for none or one not among them."""
    if not len(ids):
        return np.full(len(sid), -1, dtype=np.int64)
    found = np.minimum(np.searchsorted(ids, sid), len(ids) - 1)
    hit = (ids[found] == sid) & ~none
    return np.where(hit, at[found], -1).astype(np.int64)


def _claims(conn: sqlite3.Connection, ids: Ints) -> Ints:
    """Each report's extracted claims (the covering unique index on (report_id, ext_id): the
    wide rows are not read)."""
    counts = np.zeros(len(ids), dtype=np.int64)
    if not len(ids):
        return counts
    cursor = conn.execute(
        "SELECT report_id, count(*) FROM claim WHERE report_id BETWEEN ? AND ? GROUP BY report_id",
        (int(ids[0]), int(ids[-1])),
    )
    found = _integers(cursor, 2)
    at = np.searchsorted(ids, found[:, 0])
    keep = at < len(ids)
    keep[keep] = ids[at[keep]] == found[keep, 0]
    counts[at[keep]] = found[keep, 1]
    return counts


def _describable(
    conn: sqlite3.Connection, coding: _Coding, ids: Ints, claims: Ints, verdicts: VerdictCounts
) -> npt.NDArray[np.bool_]:
    """Reports whose every extracted claim has its one verdict, filed under its own subtask,
    from one extraction (a judge run's claims: a partial index holds the few with metadata)."""
    claim = verdicts.kind == len(coding.kinds) - 1
    size = len(ids)
    judged = np.bincount(verdicts.report[claim], weights=verdicts.count[claim], minlength=size)
    undescribed = claim & (verdicts.cited == _UNDESCRIBED)
    bad = np.bincount(verdicts.report[undescribed], minlength=size) > 0
    from_runs = np.array(
        [
            rid
            for (rid,) in conn.execute(
                f"""SELECT DISTINCT report_id FROM claim WHERE metadata != '{{}}'
                AND json_extract(metadata, '$.{RUN_CLAIM_KEY}') IS NOT NULL"""
            )
        ],
        dtype=np.int64,
    )
    every: npt.NDArray[np.bool_] = ~bad & (judged.astype(np.int64) == claims)
    return every & ~np.isin(ids, from_runs)


def _with(table: CountedReports, moves: VerdictCounts, position: Ints) -> CountedReports:
    """The counts with the decisions' moves added (``position``: where each report of the
    moves is in ``table``)."""
    moved = VerdictCounts(position[moves.report].astype(np.int32), *_columns(moves)[1:])
    pairs = zip(_columns(table.verdicts), _columns(moved), strict=True)
    joined = [np.concatenate(pair) for pair in pairs]
    order = np.argsort(joined[0], kind="stable")  # (rows stay in report order)
    return replace(table, verdicts=VerdictCounts(*(column[order] for column in joined)))


def _columns(v: VerdictCounts) -> tuple[Int32s, ...]:
    return v.report, v.kind, v.subtask, v.cited, v.value, v.count


def _moves(
    conn: sqlite3.Connection,
    coding: _Coding,
    claim_kind: str | None,
    table: CountedReports,
    at: tuple[Ints, Ints],
) -> VerdictCounts:
    """Every verdict in force of ``table``'s reports that a decision moves to another value:
    a -1 at its judge value and a +1 at the decision's (a decision in conflict moves none)."""
    rows: list[tuple[int, int, int, int, int, int]] = []
    position = {rid: i for i, rid in enumerate(table.report_ids.tolist())}
    kinds = coding.kinds
    for rid, kind, subtask, old, new, cited in _decided(conn, kinds, claim_kind):
        r = position.get(rid)
        if r is None:
            continue
        before, after = coding.value_of(old), coding.value_of(new)
        if before == after:
            continue
        k = kinds.index(kind)
        s = -1 if subtask is None else subtask
        rows.append((r, k, s, cited, before, -1))
        rows.append((r, k, s, cited, after, 1))
    found = np.array(rows, dtype=np.int64).reshape(-1, 6)
    report = found[:, 0]
    sid = found[:, 2]
    subtask = _subtask_index(sid, sid < 0, *at)
    foreign = (subtask >= 0) & (
        table.tasks.task[np.maximum(subtask, 0)] != table.report_task[report]
    )
    columns = (report, found[:, 1], np.where(foreign, -1, subtask), *found[:, 3:].T)
    return VerdictCounts(*(column.astype(np.int32) for column in columns))


def _decided(
    conn: sqlite3.Connection, kinds: Sequence[str], claim_kind: str | None
) -> list[tuple[Any, ...]]:
    """Every verdict in force that a decision changes: (report, kind, subtask, judge value,
    decision's value, whether its claim cites). A claim verdict without a claim is left out,
    as the counts leave it out."""
    if not kinds:
        return []
    return [
        (*row[:5], row[6])
        for row in conn.execute(
            f"""SELECT j.report_id, j.kind, j.subtask_id, j.value, d.value,
                       j.claim_cited IS NOT NULL, coalesce(j.claim_cited = 1, 0)
                FROM {verdicts_of(conn, "decision")}
                WHERE d.status != 'conflict' AND j.current = 1
                  AND j.kind IN ({",".join("?" * len(kinds))})""",
            tuple(kinds),
        )
        if row[3] != row[4] and (row[1] != claim_kind or row[5])
    ]
