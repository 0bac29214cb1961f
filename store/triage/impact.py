"""Impact of the next decision per report, cached and invalidated as reviewers decide.

Computing impact rescored every report dozens of times, so it is not part of the score cache
rebuild: the workstation fills this table in a background process
(:mod:`store.backend.impact_worker`) and drops a report's row when a
decision changes it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from reviewer.impact import Impact, report_impact
from reviewer.registry import frameworks
from store.scores.cache import load_options
from store.scores.inputs import load_inputs, report_meta
from store.sqlite.tx import transaction


def cached_impacts(
    conn: sqlite3.Connection, report_ids: Sequence[int] | None = None
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
    return [
        rid
        for (rid,) in conn.execute(
            "SELECT r.id FROM report r JOIN system y ON y.id = r.system_id "
            "WHERE y.is_reference = 0 AND r.id NOT IN (SELECT report_id FROM impact) ORDER BY r.id"
        )
    ]


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


def invalidate(conn: sqlite3.Connection, report_ids: Iterable[int]) -> None:
    ids = list(report_ids)
    with transaction(conn):
        conn.executemany("DELETE FROM impact WHERE report_id = ?", [(i,) for i in ids])
