"""Each system's per-report scores as columns, stored beside the report rows.

Re-aggregating a system after a decision needs every report of that system. Read back as score
rows that is a row and a dict per report; read as one row of typed arrays it is one small
read, and a framework that aggregates from columns
(:class:`reviewer.framework.ColumnAggregation`) needs nothing more. The columns are derived like
the rows, written in the same transaction by :mod:`store.scores.cache`, and only ever an
accelerator: a missing or malformed blob is read from the rows instead.

The blob is plain numbers (no pickle, no marshal): a database from elsewhere cannot make its
reader run anything.
"""

from __future__ import annotations

import json
import math
import sqlite3
import struct
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from reviewer.framework import ReportScores, columns_of

_MAGIC = b"GVC1"
_HEAD = struct.Struct("<4sI")
_UPSERT = (
    "INSERT OR REPLACE INTO score_columns (system_id, framework, variant, data) VALUES (?,?,?,?)"
)


@dataclass(slots=True)
class SystemColumns:
    """One system's non-empty reports in id order, and the chosen metrics' values by column
    (NaN: the report has no value for it)."""

    ids: list[int]
    columns: dict[str, array[float]]
    """Typed arrays: written and read as bytes, summed in C."""

    @classmethod
    def of(cls, reports: Mapping[int, ReportScores], names: Iterable[str]) -> SystemColumns:
        ids = sorted(rid for rid, scores in reports.items() if scores)
        return cls(
            ids,
            {
                name: array("d", column)
                for name, column in columns_of([reports[rid] for rid in ids], names).items()
            },
        )

    @classmethod
    def merged(cls, slices: Sequence[SystemColumns]) -> SystemColumns:
        """Slices of one system's columns (disjoint reports, the same metrics) as one, in id
        order: concatenated when they come in order, as a full recompute's parts do."""
        if not slices:
            raise ValueError("no slices to merge: the metrics are unknown")
        if len(slices) == 1:
            return slices[0]
        ids = [rid for piece in slices for rid in piece.ids]
        names = list(slices[0].columns)
        columns = {name: array("d") for name in names}
        for piece in slices:
            for name in names:
                columns[name].extend(piece.columns[name])
        if any(b <= a for a, b in pairwise(ids)):
            order = sorted(range(len(ids)), key=ids.__getitem__)
            ids = [ids[i] for i in order]
            columns = {
                name: array("d", [column[i] for i in order]) for name, column in columns.items()
            }
        return cls(ids, columns)

    def put(self, rid: int, scores: ReportScores) -> None:
        """Replace report ``rid``'s values (insert it, or drop it when it has no scores)."""
        at = bisect_left(self.ids, rid)
        present = at < len(self.ids) and self.ids[at] == rid
        if not scores:
            if present:
                del self.ids[at]
                for column in self.columns.values():
                    del column[at]
            return
        if not present:
            self.ids.insert(at, rid)
        nan = math.nan
        for name, column in self.columns.items():
            value = scores.get(name)
            value = nan if value is None else value
            if present:
                column[at] = value
            else:
                column.insert(at, value)

    def encode(self) -> bytes:
        names = list(self.columns)
        header = json.dumps({"n": len(self.ids), "metrics": names}).encode()
        parts = [_HEAD.pack(_MAGIC, len(header)), header, _native(array("q", self.ids))]
        parts.extend(_native(self.columns[name]) for name in names)
        return b"".join(parts)

    @classmethod
    def decode(cls, data: bytes) -> SystemColumns | None:
        """The columns in ``data``, or None when it is not a well-formed blob of this kind."""
        try:
            magic, size = _HEAD.unpack_from(data)
            if magic != _MAGIC:
                return None
            header = json.loads(data[_HEAD.size : _HEAD.size + size])
            n, names = header["n"], header["metrics"]
            if not (
                isinstance(n, int)
                and n >= 0
                and isinstance(names, list)
                and all(isinstance(name, str) for name in names)
                and len(set(names)) == len(names)
            ):
                return None
            at = _HEAD.size + size
            if len(data) != at + 8 * n * (1 + len(names)):
                return None
            ids: list[int] = _read(array("q"), data, at, n).tolist()
            columns: dict[str, array[float]] = {}
            for name in names:
                at += 8 * n
                columns[name] = _read(array("d"), data, at, n)
        except (ValueError, KeyError, TypeError, RecursionError, struct.error):
            return None
        if any(b <= a for a, b in pairwise(ids)):
            return None
        return cls(ids, columns)


def _native(values: array[Any]) -> bytes:
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _read(into: array[Any], data: bytes, at: int, n: int) -> array[Any]:
    into.frombytes(data[at : at + 8 * n])
    if sys.byteorder != "little":
        into.byteswap()
    return into


def load_columns(
    conn: sqlite3.Connection, system_id: int, framework: str, variant: str
) -> SystemColumns | None:
    row = conn.execute(
        "SELECT data FROM score_columns WHERE system_id = ? AND framework = ? AND variant = ?",
        (system_id, framework, variant),
    ).fetchone()
    return SystemColumns.decode(row[0]) if row is not None else None


def store_columns(
    conn: sqlite3.Connection, system_id: int, framework: str, variant: str, columns: SystemColumns
) -> None:
    conn.execute(_UPSERT, (system_id, framework, variant, columns.encode()))
