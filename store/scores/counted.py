"""A full recompute's counted reports: counted by SQL, scored from the counts, and written
as they come (each report's encoded row, :mod:`store.scores.report_rows`), with each system's
columns (:mod:`store.scores.columns`) kept for its aggregate.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reviewer.framework import BulkSpec, ReportScores, Variant, column_aggregating
from reviewer.inputs import CriterionIn, ReportCounts, SubtaskIn
from reviewer.registry import frameworks
from store.scores import report_rows as report_scores
from store.scores.columns import SystemColumns
from store.scores.counts import count_reports
from store.scores.inputs import ReportMeta, report_meta, task_structure

EncodedRow = tuple[int, str, str, str, bytes]
"""A ``report_score`` row: (report id, framework, variant, metrics, data)."""
Structure = tuple[
    Mapping[int, dict[str, Any]], Mapping[int, list[SubtaskIn]], Mapping[int, list[CriterionIn]]
]
"""Each task's metadata, subtasks and criteria (:func:`store.scores.inputs.task_structure`)."""
SystemKey = tuple[int, Variant]
"""(system id, variant)."""

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


def both_scored(
    spec: BulkSpec, judge: ReportCounts, adjudicated: ReportCounts, options: Mapping[str, str]
) -> tuple[ReportScores, ReportScores]:
    """A report's judge and adjudicated scores from its counts: the same object twice where
    no decision moved a count (:func:`store.scores.counts.count_reports` says so by identity)."""
    judge_scores = spec.score(judge, options)
    return judge_scores, (
        judge_scores if adjudicated is judge else spec.score(adjudicated, options)
    )


def encoded_rows(
    rid: int, name: str, judge: ReportScores, adjudicated: ReportScores
) -> list[EncodedRow]:
    """A report's rows (none for a variant without scores); an adjudicated variant that is the
    judge's own scores (the same object) reuses its encoding."""
    rows: list[EncodedRow] = []
    if judge:
        rows.append((rid, name, "judge", *report_scores.encode(judge)))
    if adjudicated:
        rows.append(
            (
                rid,
                name,
                "adjudicated",
                *(rows[-1][3:] if adjudicated is judge else report_scores.encode(adjudicated)),
            )
        )
    return rows


def score_part(
    conn: sqlite3.Connection,
    name: str,
    spec: BulkSpec,
    wanted: Mapping[int, ReportMeta],
    structure: Structure,
    options: Mapping[str, str],
    write: Callable[[list[EncodedRow]], None] | None = None,
) -> Part:
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
        part.columns = {
            key: SystemColumns.of(values, by_columns.aggregated)
            for key, values in by_system.items()
        }
    return part


@dataclass(slots=True)
class Counted:
    """One range of reports: the parts its frameworks counted, and the (report, framework)
    pairs left to score from their rows (frameworks without counts, reports counts cannot
    describe)."""

    parts: list[tuple[str, Part]]
    from_rows: dict[int, list[str]]


def bulk_spec(fw: object) -> BulkSpec | None:
    spec = getattr(fw, "bulk", None)
    return spec if isinstance(spec, BulkSpec) else None


def plan(
    metas: Mapping[int, ReportMeta], registry: Mapping[str, object]
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


def count_all(
    conn: sqlite3.Connection,
    options: Mapping[str, Mapping[str, str]],
    write: Callable[[list[EncodedRow]], None] | None = None,
) -> Counted:
    """Every report counted and scored where its frameworks allow it (:func:`score_part`)."""
    registry = frameworks()
    counted, from_rows = plan(report_meta(conn), registry)
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
