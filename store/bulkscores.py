"""Verdict counts for a full recompute, computed by SQL instead of read row by row.

A framework that declares a :class:`reviewer.framework.BulkSpec` is scored, in a full
recompute, from per-report counts: per verdict kind, subtask and value (one pass over the
covering ``judgment_scoring`` index, grouped in its order, so SQLite never sorts), per subtask
and value for the claim kind (the same pass, each verdict joined to its claim for the claim's
citations), and per report the extracted claims. The human decisions are applied afterwards as
differences (each decided verdict moves one count from its judge value to its decision's), so
the judge's values are read from the index alone. Every count is an integer: the exact
thresholds of a score see exactly what they would see in the rows.

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
from store.inputs import RUN_CLAIM_KEY, ReportMeta

CITED_SQL = "(c.citations != '[]' OR c.url IS NOT NULL)"
"""A claim cites a reference: a non-empty citation list or a url (``ClaimIn``'s test). A
citation list written otherwise than ``[]`` or ``[<number>…`` sends its report to be scored
from rows."""

Value = str | None
Hist = dict[Value, int]


def _bucket(value: Value, codes: frozenset[str]) -> Value:
    if value is None or value in codes:
        return value
    return OTHER


BITS = 12
"""Counts are packed into one integer sum, ``BITS`` bits per value code (five codes to a
64-bit integer): one aggregate per row instead of one per code, the difference between
counting slower and faster than a bare fetch. A group of 2**BITS verdicts or more is scored
from rows."""
_PER_SUM = 5


def _chunks(n: int) -> list[range]:
    return [range(i, min(i + _PER_SUM, n)) for i in range(0, n, _PER_SUM)] or [range(0)]


def _packed(column: str, n: int, when: str | None = None) -> str:
    """SQL summing, per code (bound as parameters in order), how many rows have it, packed."""
    out = []
    for chunk in _chunks(n):
        cases = " ".join(f"WHEN ? THEN {1 << (BITS * (i - chunk.start))}" for i in chunk)
        expr = f"CASE {column} {cases} ELSE 0 END" if cases else "0"
        out.append(f"sum(CASE WHEN {when} THEN {expr} ELSE 0 END)" if when else f"sum({expr})")
    return ", ".join(out)


_MASK = (1 << BITS) - 1


def _layout(codes: Sequence[str], start: int) -> tuple[tuple[int, int, str], ...]:
    """Where each code's count is in a row: (column, shift, code), the columns of
    :func:`_packed`'s sums starting at ``start``. Worked out once a query: unpacking is the
    inner loop of a full recompute (a row per report, kind and subtask)."""
    return tuple((start + c, BITS * (i - chunk.start), codes[i])
                 for c, chunk in enumerate(_chunks(len(codes))) for i in chunk)


def _histogram(row: Sequence[Any], layout: tuple[tuple[int, int, str], ...], total: int,
               valued: int | None) -> Hist:
    """Counts from SQL's packed sums (a sum over no matching row is NULL)."""
    hist: Hist = {}
    counted = 0
    for column, shift, code in layout:
        packed = row[column]
        if packed:
            n = (packed >> shift) & _MASK
            if n:
                hist[code] = n
                counted += n
    valued = valued or 0
    if valued != counted:
        hist[OTHER] = valued - counted
    if total != valued:
        hist[None] = total - valued
    return hist


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
    conn: sqlite3.Connection, spec: BulkSpec, metas: Mapping[int, ReportMeta],
    structure: tuple[Mapping[int, dict[str, Any]], Mapping[int, list[SubtaskIn]],
                     Mapping[int, list[CriterionIn]]],
) -> Iterator[tuple[int, ReportCounts | None, ReportCounts | None]]:
    """(report id, judge counts, adjudicated counts) for every report of ``metas``, in report
    order. The adjudicated counts are the judge counts themselves (the same object) where no
    decision moves them; (report id, None, None) where counts cannot describe the report."""
    codes = tuple(spec.codes)
    code_set = frozenset(codes)
    kinds = tuple(spec.kinds)
    task_meta, subtasks, criteria = structure
    sums = _packed("j.value", len(codes))
    claim_kind = spec.claim_kind
    claim_codes = tuple(spec.claim_codes)
    counted = (*kinds, *((claim_kind,) if claim_kind else ()))
    # One pass over the index, every kind at once; only a claim-kind verdict looks its claim
    # up (the join's condition on j.kind is tested before the lookup).
    cited_sums = ", " + _packed("j.value", len(claim_codes), CITED_SQL)
    verdicts = _Grouped(conn.execute(
        f"""SELECT j.report_id, j.kind, j.subtask_id, count(*), count(j.value), {sums},
                   sum({CITED_SQL}), sum({CITED_SQL} AND j.value IS NOT NULL) {cited_sums},
                   sum(j.kind = ?1 AND (
                       c.id IS NULL OR c.report_id != j.report_id
                       OR (c.citations != '[]' AND c.citations NOT GLOB '[[][0-9]*')
                       OR j.subtask_id IS NOT coalesce(c.subtask_id, (
                           SELECT k.subtask_id FROM criterion k WHERE k.id = c.criterion_id))))
            FROM judgment j INDEXED BY judgment_scoring
            LEFT JOIN claim c ON j.kind = ?1 AND c.id = j.claim_id
            WHERE j.current = 1 AND j.kind IN ({','.join('?' * len(counted))})
            GROUP BY j.report_id, j.kind, j.subtask_id
            ORDER BY j.report_id, j.kind, j.subtask_id""".replace(
            "?1", "?"),
        _params(claim_kind, codes, claim_codes, counted)) if counted else iter(()))
    claims = _Grouped(iter(()))
    if claim_kind is not None:
        claims = _Grouped(conn.execute(
            f"""SELECT report_id, count(*),
                       sum(metadata != '{{}}'
                           AND json_extract(metadata, '$.{RUN_CLAIM_KEY}') IS NOT NULL)
                FROM claim GROUP BY report_id ORDER BY report_id"""))
    deltas = _decided(conn, counted, claim_kind)
    ncodes = len(_chunks(len(codes)))
    layout = _layout(codes, 5)
    cited_layout = _layout(claim_codes, 7 + ncodes)
    big = 1 << BITS
    for rid in sorted(metas):
        meta = metas[rid]
        report = ReportInput(
            report_id=rid, task_id=meta.task_id, system_id=meta.system_id,
            task_metadata=task_meta.get(meta.task_id, {}), report_metadata=meta.metadata,
            subtasks=subtasks.get(meta.task_id, []), criteria=criteria.get(meta.task_id, []))
        judge = ReportCounts(report)
        judged = 0
        describable = True
        for row in verdicts.take(rid):
            kind, subtask, total, valued = row[1:5]
            if total >= big:
                describable = False     # too many verdicts in one group for packed counts
            hist = _histogram(row, layout, total, valued)
            if kind != claim_kind:
                judge.verdicts[(kind, subtask)] = hist
                continue
            if row[-1]:
                describable = False
            judged += total
            judge.claim_values[subtask] = hist
            judge.cited += row[5 + ncodes] or 0
            for value, n in _histogram(row, cited_layout, row[5 + ncodes] or 0,
                                       row[6 + ncodes]).items():
                judge.cited_values[value] = judge.cited_values.get(value, 0) + n
        if claim_kind is not None:
            extracted = claims.take(rid)
            judge.claims = extracted[0][1] if extracted else 0
            if not describable or judged != judge.claims or (extracted and extracted[0][2]):
                yield rid, None, None
                continue
        moves = deltas.get(rid)
        if not moves:
            yield rid, judge, judge
            continue
        adjudicated = ReportCounts(
            report, {key: dict(hist) for key, hist in judge.verdicts.items()}, judge.claims,
            judge.cited, {key: dict(hist) for key, hist in judge.claim_values.items()},
            dict(judge.cited_values))
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


def _params(claim_kind: str | None, codes: Sequence[str], claim_codes: Sequence[str],
            counted: Sequence[str]) -> tuple[str | None, ...]:
    """The query's parameters in order: ``?1`` stands for the claim kind wherever it is."""
    return (*codes, *claim_codes, claim_kind, claim_kind, *counted)


def _move(hist: Hist, old: Value, new: Value) -> None:
    left = hist.get(old, 0) - 1
    if left:
        hist[old] = left
    else:
        hist.pop(old, None)
    hist[new] = hist.get(new, 0) + 1


def _decided(conn: sqlite3.Connection, kinds: Sequence[str], claim_kind: str | None
             ) -> dict[int, list[_Delta]]:
    """Every verdict in force that a decision changes, by report: its judge value and the
    decision's (a decision in conflict changes nothing)."""
    out: dict[int, list[_Delta]] = defaultdict(list)
    if not kinds:
        return out
    for rid, kind, subtask, old, new, has_claim, cited in conn.execute(
        f"""SELECT j.report_id, j.kind, j.subtask_id, j.value, d.value, c.id IS NOT NULL,
                   coalesce({CITED_SQL}, 0)
            FROM decision d JOIN judgment j ON j.subject_id = d.subject_id
            LEFT JOIN claim c ON c.id = j.claim_id
            WHERE d.status != 'conflict' AND j.current = 1
              AND j.kind IN ({','.join('?' * len(kinds))})""", tuple(kinds)):
        if old == new or (kind == claim_kind and not has_claim):
            continue        # unchanged, or a claim verdict the counts leave out (no claim)
        out[rid].append(_Delta(kind, subtask, old, new, bool(cited)))
    return out
