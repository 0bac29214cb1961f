"""A full recompute's counted reports: counted by SQL (:mod:`store.scores.counts`), scored
from the counts every report at once (the framework's ``BulkSpec``), and written as they
come: each report's row is its slice of the score matrix (:mod:`store.scores.report_rows`),
and each system's columns (:mod:`store.scores.columns`) are slices of it too.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from reviewer.framework import (
    BulkSpec,
    ColumnAggregation,
    Framework,
    ReportScores,
    ScoreMatrix,
    Variant,
)
from reviewer.registry import frameworks
from store.scores import report_rows as report_scores
from store.scores.columns import SystemColumns
from store.scores.counts import count_run
from store.scores.inputs import ReportMeta, report_meta
from store.scores.report_rows import EncodedRow

SystemKey = tuple[int, Variant]
"""(system id, variant)."""

_FLUSH = 4_096
"""Rows written at a time."""


@dataclass(slots=True)
class Part:
    """One framework's counted reports, scored."""

    columns: dict[SystemKey, SystemColumns] = field(default_factory=dict)
    """Each system's columns, for a framework that aggregates from columns."""
    scores: dict[SystemKey, dict[int, ReportScores]] = field(default_factory=dict)
    """Each system's report scores, for a framework that does not."""
    uncounted: list[int] = field(default_factory=list)
    """Reports the counts cannot describe: the caller scores them from their rows."""


@dataclass(frozen=True, slots=True)
class Scored:
    """One framework's counted reports scored in both variants: ``judge`` has a row per
    report of ``ids``; ``adjudicated`` one per report a decision moves (``moved``: its
    position in ``ids`` -> its row), every other report's adjudicated scores being its
    judge scores."""

    ids: list[int]
    judge: ScoreMatrix
    adjudicated: ScoreMatrix
    moved: dict[int, int]
    uncounted: list[int]

    def both(self) -> Iterator[tuple[int, int, int | None]]:
        """(report id, its judge row, its adjudicated row or None: the judge's)."""
        moved = self.moved
        for i, rid in enumerate(self.ids):
            yield rid, i, moved.get(i)


def score_counted(
    conn: sqlite3.Connection,
    spec: BulkSpec,
    wanted: Mapping[int, ReportMeta],
    options: Mapping[str, str],
) -> Scored:
    """``wanted``'s reports counted and scored in both variants (the reports counts cannot
    describe are named in ``uncounted``)."""
    counted = count_run(conn, spec, wanted)
    judge = spec.score(counted.judge, options)
    adjudicated = spec.score(counted.adjudicated, options)
    if adjudicated.names != judge.names:
        raise ValueError("a BulkSpec's score must name the same metrics for any reports")
    moved = {int(i): k for k, i in enumerate(counted.moved.tolist())}
    return Scored(counted.judge.report_ids.tolist(), judge, adjudicated, moved, counted.uncounted)


def scored_reports(scored: Scored) -> Iterator[tuple[int, ReportScores, ReportScores]]:
    """(report id, judge scores, adjudicated scores) of every counted report, as dicts: the
    same dict twice where no decision moved a count."""
    for rid, i, k in scored.both():
        judge = scored.judge.row(i)
        yield rid, judge, judge if k is None else scored.adjudicated.row(k)


def _encoded(matrix: ScoreMatrix) -> list[tuple[str, bytes] | None]:
    """Each report's (metrics, data) from the matrix, byte for byte what
    :func:`store.scores.report_rows.encode` makes of its dict (None: no scores)."""
    out: list[tuple[str, bytes] | None] = [None] * len(matrix.layout)
    for layout, columns in enumerate(matrix.layouts):
        if not columns:
            continue
        rows = np.flatnonzero(matrix.layout == layout)
        chosen = np.array(columns, dtype=np.intp)
        block = np.ascontiguousarray(matrix.values[np.ix_(rows, chosen)], dtype="<f8")
        data = block.tobytes()
        width = 8 * len(columns)
        text = report_scores.metrics_text(tuple(matrix.names[c] for c in columns))
        for k, i in enumerate(rows.tolist()):
            out[i] = (text, data[k * width : (k + 1) * width])
    return out


def _rows(name: str, scored: Scored) -> list[EncodedRow]:
    """Every counted report's rows, in report order, encoded from the matrices."""
    judge = _encoded(scored.judge)
    adjudicated = _encoded(scored.adjudicated)
    rows: list[EncodedRow] = []
    for rid, i, k in scored.both():
        mine = judge[i]
        if mine is not None:
            rows.append((rid, name, "judge", *mine))
        theirs = mine if k is None else adjudicated[k]
        if theirs is not None:
            rows.append((rid, name, "adjudicated", *theirs))
    return rows


def _merged(scored: Scored) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The adjudicated variant of every report as one matrix (the judge's rows where no
    decision moved a count), and which reports have scores."""
    values = scored.judge.values
    present = _present(scored.judge)
    if scored.moved:
        at = np.fromiter(scored.moved, dtype=np.intp, count=len(scored.moved))
        rows = np.fromiter(scored.moved.values(), dtype=np.intp, count=len(scored.moved))
        values = values.copy()
        values[at] = scored.adjudicated.values[rows]
        present = present.copy()
        present[at] = _present(scored.adjudicated)[rows]
    return values, present


def _present(matrix: ScoreMatrix) -> npt.NDArray[np.bool_]:
    has = np.array([bool(columns) for columns in matrix.layouts], dtype=np.bool_)
    return has[matrix.layout] if len(has) else np.zeros(len(matrix.layout), dtype=np.bool_)


def _system_columns(
    scored: Scored,
    systems: npt.NDArray[np.int64],
    aggregation: ColumnAggregation,
) -> dict[SystemKey, SystemColumns]:
    """Each (system, variant)'s columns: slices of the score matrices."""
    names = scored.judge.names
    at = {name: i for i, name in enumerate(names)}
    ids = np.array(scored.ids, dtype=np.int64)
    out: dict[SystemKey, SystemColumns] = {}
    judge = (scored.judge.values, _present(scored.judge))
    variants: tuple[tuple[Variant, tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]], ...]
    variants = (("judge", judge), ("adjudicated", _merged(scored) if scored.moved else judge))
    for system in np.unique(systems).tolist():
        mine = systems == system
        for variant, (values, present) in variants:
            rows = np.flatnonzero(mine & present)
            block = values[rows]
            columns: dict[str, array[float]] = {}
            for name in aggregation.metrics:
                column = at.get(name)
                chosen = block[:, column] if column is not None else np.full(len(rows), np.nan)
                columns[name] = array("d", np.ascontiguousarray(chosen, dtype="<f8").tobytes())
            out[(system, variant)] = SystemColumns(ids[rows].tolist(), columns)
    return out


def score_part(
    conn: sqlite3.Connection,
    name: str,
    fw: Framework,
    wanted: Mapping[int, ReportMeta],
    options: Mapping[str, str],
    write: Callable[[list[EncodedRow]], None],
) -> Part:
    """``wanted``'s reports counted, scored in both variants and written; each system's
    columns (or report scores) kept for its aggregate."""
    spec = fw.bulk
    assert spec is not None
    scored = score_counted(conn, spec, wanted, options)
    rows = _rows(name, scored)
    for start in range(0, len(rows), _FLUSH):
        write(rows[start : start + _FLUSH])
    part = Part(uncounted=scored.uncounted)
    systems = np.array([wanted[rid].system_id for rid in scored.ids], dtype=np.int64)
    if fw.columns is not None:
        part.columns = _system_columns(scored, systems, fw.columns)
        return part
    by_system: dict[SystemKey, dict[int, ReportScores]] = defaultdict(dict)
    reports = zip(scored_reports(scored), systems.tolist(), strict=True)
    for (rid, judge, adjudicated), sid in reports:
        by_system[(sid, "judge")][rid] = judge
        by_system[(sid, "adjudicated")][rid] = adjudicated
    part.scores = dict(by_system)
    return part


@dataclass(slots=True)
class Counted:
    """The parts of the frameworks counted, and the (report, framework) pairs left to score
    from their rows (frameworks without counts, reports counts cannot describe)."""

    parts: list[tuple[str, Part]]
    from_rows: dict[int, list[str]]


def plan(
    metas: Mapping[int, ReportMeta], registry: Mapping[str, Framework]
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
            if fw.bulk is not None:
                counted[name][rid] = meta
            else:
                from_rows[rid].append(name)
    return counted, from_rows


def count_all(
    conn: sqlite3.Connection,
    options: Mapping[str, Mapping[str, str]],
    write: Callable[[list[EncodedRow]], None],
) -> Counted:
    """Every report counted, scored and written where its frameworks allow it
    (:func:`score_part`)."""
    registry = frameworks()
    counted, from_rows = plan(report_meta(conn), registry)
    parts: list[tuple[str, Part]] = []
    for name, wanted in counted.items():
        part = score_part(conn, name, registry[name], wanted, options[name], write)
        for rid in part.uncounted:
            from_rows[rid].append(name)
        parts.append((name, part))
    return Counted(parts, from_rows)
