"""Impact of the next decision per report, cached and invalidated as reviewers decide.

Computing impact rescored every report dozens of times, so it is not part of the score cache
rebuild: the workstation fills this table in a background worker and drops a report's row when a
decision changes it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from collections.abc import Iterable, Iterator, Sequence

from reviewer.impact import Impact, report_impact
from reviewer.registry import frameworks
from store.inputs import load_inputs, report_meta
from store.scores import load_options
from store.tx import transaction


def cached_impacts(conn: sqlite3.Connection, report_ids: Sequence[int] | None = None
                   ) -> dict[int, Impact]:
    where, params = "", list(report_ids or [])
    if report_ids is not None:
        where = f"WHERE report_id IN ({','.join('?' * len(params))})"
    return {
        rid: Impact(p, s, j)
        for rid, p, s, j in conn.execute(
            f"SELECT report_id, primary_delta, secondary_delta, judgment_id FROM impact {where}",
            params,
        )
    }


def missing_impacts(conn: sqlite3.Connection) -> list[int]:
    return [rid for (rid,) in conn.execute(
        "SELECT r.id FROM report r JOIN system y ON y.id = r.system_id "
        "WHERE y.is_reference = 0 AND r.id NOT IN (SELECT report_id FROM impact) ORDER BY r.id"
    )]


def compute_impacts(conn: sqlite3.Connection, report_ids: Sequence[int]) -> dict[int, Impact]:
    """Impact of each report under its first framework; stored and returned."""
    if not report_ids:
        return {}
    inputs = load_inputs(conn, report_ids)
    metas = report_meta(conn, report_ids)
    options = load_options(conn)
    registry = frameworks()
    out: dict[int, Impact] = {}
    for rid, report in inputs.items():
        best = Impact(0.0, 0.0, None)
        for name in metas[rid].frameworks:
            fw = registry.get(name)
            if fw is not None:
                impact = report_impact(fw, report, options[name])
                if impact.key() > best.key():
                    best = impact
        out[rid] = best
    with transaction(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO impact VALUES (?,?,?,?)",
            [(rid, i.primary, i.secondary, i.judgment_id) for rid, i in out.items()],
        )
    return out


def fill_missing(path: str, batch: int = 50) -> Iterator[list[int]]:
    """Compute every missing impact in batches; yields each committed batch's report ids.

    Run as ``python -m store.impact DB`` by the workstation: impact is pure Python number
    crunching, and in a thread it would hold the GIL against the UI thread, so it runs in a
    separate, lower-priority process that reports progress one line per batch.
    """
    from store.db import connect

    with contextlib.suppress(OSError):
        os.nice(5)
    conn = connect(path)
    try:
        missing = missing_impacts(conn)
        for start in range(0, len(missing), batch):
            ids = missing[start:start + batch]
            compute_impacts(conn, ids)
            yield ids
    finally:
        conn.close()


def invalidate(conn: sqlite3.Connection, report_ids: Iterable[int]) -> None:
    ids = list(report_ids)
    with transaction(conn):
        conn.executemany("DELETE FROM impact WHERE report_id = ?", [(i,) for i in ids])


if __name__ == "__main__":
    # Background work: the workstation that started this process keeps the CPU first.
    if hasattr(os, "nice"):
        os.nice(10)
    for done in fill_missing(sys.argv[1]):
        print(" ".join(map(str, done)), flush=True)
