"""Each report's cached scores, one row per (report, framework, variant).

A report has a dozen to thirty metrics. Stored a metric to a row, a full recompute wrote thirty
rows a report, and writing them cost more than reading every verdict the scores come from;
stored as one row of plain doubles it writes one a report and variant. The metric names are
the row's ``metrics`` (a JSON list, the same few lists over and over) and the values its
``data``: one little-endian double per name, NaN for a metric without a value (as SQLite
itself stores NaN: as NULL).

Derived like every score (:mod:`store.scores.cache` writes it; a full recompute rebuilds it). A row
that is not well formed (a database from elsewhere) reads as a report without scores, and the
blob is plain numbers: nothing in it is run or interpreted.
"""

from __future__ import annotations

import json
import math
import sqlite3
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

from reviewer.framework import ReportScores

_UPSERT = (
    "INSERT OR REPLACE INTO report_score (report_id, framework, variant, metrics, data) "
    "VALUES (?,?,?,?,?)"
)
_LITTLE = sys.byteorder == "little"
Row = tuple[int, str, str, ReportScores]
"""(report id, framework, variant, scores)."""
EncodedRow = tuple[int, str, str, str, bytes]
"""A row as stored: (report id, framework, variant, metrics, data)."""


@lru_cache(maxsize=256)
def metrics_text(names: tuple[str, ...]) -> str:
    """The ``metrics`` of a row with these metrics, in this order."""
    return json.dumps(list(names), ensure_ascii=False)


@lru_cache(maxsize=256)
def _names(text: str) -> tuple[str, ...] | None:
    """The metric names a ``metrics`` text holds, or None when it is not a list of distinct
    names (bounded: a database with a million distinct lists only costs misses)."""
    try:
        names = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if (
        not isinstance(names, list)
        or not all(isinstance(n, str) for n in names)
        or len(set(names)) != len(names)
    ):
        return None
    return tuple(names)


def encode(scores: ReportScores) -> tuple[str, bytes]:
    """A report's scores as the row's (metrics, data)."""
    nan = math.nan
    values = array("d", [nan if v is None else v for v in scores.values()])
    if not _LITTLE:
        values.byteswap()
    return metrics_text(tuple(scores)), values.tobytes()


def decode(metrics: str, data: bytes) -> ReportScores | None:
    """The scores of a row, or None when it is not well formed."""
    names = _names(metrics)
    if names is None or not isinstance(data, bytes) or len(data) != 8 * len(names):
        return None
    values = array("d")
    values.frombytes(data)
    if not _LITTLE:
        values.byteswap()
    return {
        name: None if value != value else value for name, value in zip(names, values, strict=True)
    }


@lru_cache(maxsize=1024)
def _offsets(
    metrics: str, wanted: tuple[str, ...]
) -> tuple[int, tuple[tuple[str, int], ...]] | None:
    """The blob's length for ``metrics``, and where each wanted metric it has lies in it."""
    names = _names(metrics)
    if names is None:
        return None
    at = {name: i for i, name in enumerate(names)}
    return 8 * len(names), tuple((name, 8 * at[name]) for name in wanted if name in at)


_DOUBLE = struct.Struct("<d")


def pick(metrics: str, data: bytes, wanted: tuple[str, ...]) -> dict[str, float | None]:
    """Only the ``wanted`` metrics of a row (those it has): what a reader of a few headline
    values needs, without building every report's whole dict."""
    layout = _offsets(metrics, wanted)
    if layout is None or not isinstance(data, bytes) or len(data) != layout[0]:
        return {}
    out: dict[str, float | None] = {}
    for name, at in layout[1]:
        value = _DOUBLE.unpack_from(data, at)[0]
        out[name] = None if value != value else value
    return out


def encoded_rows(
    rid: int, framework: str, judge: ReportScores, adjudicated: ReportScores
) -> list[EncodedRow]:
    """A report's rows in both variants (none for a variant without scores); an adjudicated
    variant that is the judge's own scores (the same object) reuses its encoding."""
    rows: list[EncodedRow] = []
    if judge:
        rows.append((rid, framework, "judge", *encode(judge)))
    if adjudicated:
        again = rows[-1][3:] if adjudicated is judge else encode(adjudicated)
        rows.append((rid, framework, "adjudicated", *again))
    return rows


def write(conn: sqlite3.Connection, rows: Iterable[Row]) -> None:
    """Store (or replace) each row's scores; a report without scores has no row."""
    put: list[tuple[int, str, str, str, bytes]] = []
    gone: list[tuple[int, str, str]] = []
    for rid, framework, variant, scores in rows:
        if scores:
            put.append((rid, framework, variant, *encode(scores)))
        else:
            gone.append((rid, framework, variant))
    if gone:
        conn.executemany(
            "DELETE FROM report_score WHERE report_id = ? AND framework = ? AND variant = ?", gone
        )
    if put:
        conn.executemany(_UPSERT, put)


def insert_encoded(conn: sqlite3.Connection, rows: Sequence[EncodedRow]) -> None:
    """Rows already encoded (a full recompute, into an emptied table)."""
    conn.executemany(_UPSERT, rows)


def read(
    conn: sqlite3.Connection,
    report_ids: Sequence[int] | None = None,
    *,
    framework: str | None = None,
    variant: str | None = None,
) -> Iterator[Row]:
    """Stored scores in report, framework, variant order: of the given reports (else all),
    of one framework and one variant if given. Malformed rows are skipped."""
    for rid, fw, var, metrics, data in _rows(conn, report_ids, framework, variant):
        scores = decode(metrics, data)
        if scores is not None:
            yield rid, fw, var, scores


def read_metrics(
    conn: sqlite3.Connection,
    wanted: Iterable[str],
    report_ids: Sequence[int] | None = None,
    *,
    framework: str | None = None,
    variant: str | None = None,
) -> Iterator[Row]:
    """As :func:`read`, each row cut to the ``wanted`` metrics it has."""
    names = tuple(sorted(set(wanted)))
    for rid, fw, var, metrics, data in _rows(conn, report_ids, framework, variant):
        yield rid, fw, var, pick(metrics, data, names)


_MANY = 10_000
"""More report ids than this are filtered in Python, not bound as SQL parameters."""


def _rows(
    conn: sqlite3.Connection,
    report_ids: Sequence[int] | None,
    framework: str | None,
    variant: str | None,
) -> Iterator[tuple[int, str, str, str, bytes]]:
    terms: list[str] = []
    params: list[object] = []
    keep: set[int] | None = None
    if report_ids is not None and len(report_ids) > _MANY:
        keep = set(report_ids)
    elif report_ids is not None:
        terms.append(f"report_id IN ({','.join('?' * len(report_ids))})")
        params.extend(report_ids)
    for column, value in (("framework", framework), ("variant", variant)):
        if value is not None:
            terms.append(f"{column} = ?")
            params.append(value)
    where = " WHERE " + " AND ".join(terms) if terms else ""
    rows = conn.execute(
        "SELECT report_id, framework, variant, metrics, data FROM report_score"
        f"{where} ORDER BY report_id, framework, variant",
        params,
    )
    if keep is None:
        yield from rows
    else:
        yield from (row for row in rows if row[0] in keep)


def system_reports(
    conn: sqlite3.Connection, system_id: int, framework: str, variant: str
) -> dict[int, ReportScores]:
    """One system's stored report scores, by report id (in id order)."""
    out: dict[int, ReportScores] = {}
    for rid, metrics, data in conn.execute(
        """SELECT s.report_id, s.metrics, s.data FROM report r
               JOIN report_score s ON s.report_id = r.id AND s.framework = ? AND s.variant = ?
               WHERE r.system_id = ? ORDER BY r.id""",
        (framework, variant, system_id),
    ):
        scores = decode(metrics, data)
        if scores is not None:
            out[rid] = scores
    return out


def has_any(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM report_score LIMIT 1").fetchone() is not None
