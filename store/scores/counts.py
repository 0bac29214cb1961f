"""Verdict counts for a full recompute, computed by SQL instead of read row by row.

A framework that declares a :class:`reviewer.framework.BulkSpec` is scored, in a full
recompute, from per-report counts: per verdict kind, subtask and value (one pass over the
covering ``judgment_scoring`` index, grouped in its order, so SQLite never sorts), per subtask
and value for the claim kind (the same pass: a claim verdict carries whether its claim cites,
see :mod:`store.scores.claim_facts`), and per report the extracted claims. The human decisions are
applied afterwards as differences (each decided verdict moves one count from its judge value
to its decision's), so the judge's values are read from the index alone. Every count is an
integer: the exact thresholds of a score see exactly what they would see in the rows.

Counts describe a report only when each of its extracted claims has exactly one verdict of the
claim kind in force, filed under the claim's own subtask, and all its claims come from one
extraction; any other report is returned as None, for the caller to score from its rows.
Everything streams in report order: memory holds one report's counts at a time, besides the
decided verdicts.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any

from reviewer.framework import BulkSpec
from reviewer.inputs import OTHER, CriterionIn, ReportCounts, ReportInput, SubtaskIn
from store.reviewlog.subjects import verdicts_of
from store.scores.inputs import RUN_CLAIM_KEY, ReportMeta

Value = str | None
Hist = dict[Value, int]


def _bucket(value: Value, codes: frozenset[str]) -> Value:
    if value is None or value in codes:
        return value
    return OTHER


@dataclass(slots=True)
class _Delta:
    kind: str
    subtask: int | None
    old: Value
    new: Value
    cited: bool


class _Grouped:
    """Rows of a query ordered by report id, one report's group at a time."""

    def __init__(self, rows: Iterator[tuple[Any, ...]]) -> None:
        self._groups = groupby(rows, key=itemgetter(0))
        self._head: tuple[int, list[tuple[Any, ...]]] | None = None
        self._advance()

    def _advance(self) -> None:
        try:
            rid, rows = next(self._groups)
            self._head = (rid, list(rows))
        except StopIteration:
            self._head = None

    def take(self, rid: int) -> list[tuple[Any, ...]]:
        while self._head is not None and self._head[0] < rid:
            self._advance()
        if self._head is not None and self._head[0] == rid:
            rows = self._head[1]
            self._advance()
            return rows
        return []


def count_reports(
    conn: sqlite3.Connection,
    spec: BulkSpec,
    metas: Mapping[int, ReportMeta],
    structure: tuple[
        Mapping[int, dict[str, Any]], Mapping[int, list[SubtaskIn]], Mapping[int, list[CriterionIn]]
    ],
) -> Iterator[tuple[int, ReportCounts | None, ReportCounts | None]]:
    """(report id, judge counts, adjudicated counts) for every report of ``metas``, in report
    order. The adjudicated counts are the judge counts themselves (the same object) where no
    decision moves them; (report id, None, None) where counts cannot describe the report."""
    code_set = frozenset(spec.codes)
    claim_code_set = frozenset(spec.claim_codes)
    kinds = tuple(spec.kinds)
    task_meta, subtasks, criteria = structure
    claim_kind = spec.claim_kind
    counted = (*kinds, *((claim_kind,) if claim_kind else ()))
    # One pass over the covering index, every kind at once, grouped in the index's order (so
    # SQLite never sorts) down to the value: a claim verdict carries whether its claim cites
    # (store.scores.claim_facts), so nothing is looked up, and one count a group is the only
    # aggregate (each further one costs as much as the count itself).
    queries: list[tuple[str, tuple[Any, ...]]] = []
    if not metas:
        return
    span = (min(metas), max(metas))  # a caller may count a range of the reports
    if claim_kind is not None:
        # (The covering unique index on (report_id, ext_id): the wide rows are not read.)
        queries.append(
            (
                "SELECT report_id, count(*) FROM claim WHERE report_id BETWEEN ? AND ? "
                "GROUP BY report_id ORDER BY report_id",
                span,
            )
        )
    if counted:
        queries.append(
            (
                f"""SELECT report_id, kind, subtask_id, claim_cited, value, count(*)
                FROM judgment INDEXED BY judgment_scoring
                WHERE current = 1 AND report_id BETWEEN ? AND ?
                  AND kind IN ({",".join("?" * len(counted))})
                GROUP BY report_id, kind, subtask_id, claim_cited, value
                ORDER BY report_id, kind, subtask_id, claim_cited, value""",
                (*span, *counted),
            )
        )
    streams = [conn.execute(sql, params) for sql, params in queries]
    claims = _Grouped(iter(()))
    from_runs: set[int] = set()
    if claim_kind is not None:
        claims = _Grouped(streams.pop(0))
        # Claims a judge run extracted (a partial index holds the few with metadata).
        from_runs = {
            rid
            for (rid,) in conn.execute(
                f"""SELECT DISTINCT report_id FROM claim WHERE metadata != '{{}}'
                AND json_extract(metadata, '$.{RUN_CLAIM_KEY}') IS NOT NULL"""
            )
        }
    verdicts = _Grouped(streams.pop(0) if streams else iter(()))
    deltas = _decided(conn, counted, claim_kind)
    for rid in sorted(metas):
        meta = metas[rid]
        report = ReportInput(
            report_id=rid,
            task_id=meta.task_id,
            system_id=meta.system_id,
            task_metadata=task_meta.get(meta.task_id, {}),
            report_metadata=meta.metadata,
            subtasks=subtasks.get(meta.task_id, []),
            criteria=criteria.get(meta.task_id, []),
        )
        judge = ReportCounts(report)
        judged = 0
        describable = True
        kind_verdicts, claim_values, cited_values = (
            judge.verdicts,
            judge.claim_values,
            judge.cited_values,
        )
        for _, kind, subtask, cited, value, n in verdicts.take(rid):
            bucket = value if value is None or value in code_set else OTHER
            if kind != claim_kind:
                hist = kind_verdicts.get((kind, subtask))
                if hist is None:
                    hist = kind_verdicts[(kind, subtask)] = {}
                hist[bucket] = hist.get(bucket, 0) + n
                continue
            if cited is None or cited < 0:
                describable = False  # no claim, or one counts cannot describe
            judged += n
            hist = claim_values.get(subtask)
            if hist is None:
                hist = claim_values[subtask] = {}
            hist[bucket] = hist.get(bucket, 0) + n
            if cited == 1:
                judge.cited += n
                bucket = value if value is None or value in claim_code_set else OTHER
                cited_values[bucket] = cited_values.get(bucket, 0) + n
        if claim_kind is not None:
            extracted = claims.take(rid)
            judge.claims = extracted[0][1] if extracted else 0
            if not describable or judged != judge.claims or rid in from_runs:
                yield rid, None, None
                continue
        moves = deltas.get(rid)
        if not moves:
            yield rid, judge, judge
            continue
        adjudicated = ReportCounts(
            report,
            {key: dict(hist) for key, hist in judge.verdicts.items()},
            judge.claims,
            judge.cited,
            {key: dict(hist) for key, hist in judge.claim_values.items()},
            dict(judge.cited_values),
        )
        for move in moves:
            old, new = _bucket(move.old, code_set), _bucket(move.new, code_set)
            if old == new:
                continue
            if move.kind == claim_kind:
                hist = adjudicated.claim_values.setdefault(move.subtask, {})
                _move(hist, old, new)
                if move.cited:
                    _move(adjudicated.cited_values, old, new)
            else:
                _move(adjudicated.verdicts.setdefault((move.kind, move.subtask), {}), old, new)
        yield rid, judge, adjudicated


def _move(hist: Hist, old: Value, new: Value) -> None:
    left = hist.get(old, 0) - 1
    if left:
        hist[old] = left
    else:
        hist.pop(old, None)
    hist[new] = hist.get(new, 0) + 1


def _decided(
    conn: sqlite3.Connection, kinds: Sequence[str], claim_kind: str | None
) -> dict[int, list[_Delta]]:
    """Every verdict in force that a decision changes, by report: its judge value and the
    decision's (a decision in conflict changes nothing)."""
    out: dict[int, list[_Delta]] = defaultdict(list)
    if not kinds:
        return out
    for rid, kind, subtask, old, new, has_claim, cited in conn.execute(
        f"""SELECT j.report_id, j.kind, j.subtask_id, j.value, d.value,
                   j.claim_cited IS NOT NULL, coalesce(j.claim_cited = 1, 0)
            FROM {verdicts_of(conn, "decision")}
            WHERE d.status != 'conflict' AND j.current = 1
              AND j.kind IN ({",".join("?" * len(kinds))})""",
        tuple(kinds),
    ):
        if old == new or (kind == claim_kind and not has_claim):
            continue  # unchanged, or a claim verdict the counts leave out (no claim)
        out[rid].append(_Delta(kind, subtask, old, new, bool(cited)))
    return out
