"""The score cache read as plain rows in tests: system aggregates live in ``score``, a report's
scores in one ``report_score`` row (store.scores.report_rows), and a test's SQL reads both as one
table of (scope, framework, metric, variant, value, n) rows."""

from __future__ import annotations

import sqlite3

from store.scores.report_rows import read


def all_scores(conn: sqlite3.Connection) -> str:
    """Fill (again) a temporary table with the whole cache as it stands; its name, for SQL."""
    conn.execute("""CREATE TEMP TABLE IF NOT EXISTS all_scores (
        scope TEXT, framework TEXT, metric TEXT, variant TEXT, value REAL, n INTEGER)""")
    conn.execute("DELETE FROM temp.all_scores")
    conn.executemany(
        "INSERT INTO temp.all_scores VALUES (?,?,?,?,?,?)",
        [
            (scope, fw, metric, variant, value, n)
            for scope, fw, variant, metric, value, n in score_rows(conn)
        ],
    )
    return "temp.all_scores"


def score_rows(conn: sqlite3.Connection) -> list[tuple[str, str, str, str, float | None, int]]:
    """The whole cache as (scope, framework, variant, metric, value, n) rows, sorted: system
    aggregates and every report's scores in one shape, for comparisons."""
    rows: list[tuple[str, str, str, str, float | None, int]] = [
        (str(s), str(f), str(v), str(m), value, int(n))
        for s, f, v, m, value, n in conn.execute(
            "SELECT scope, framework, variant, metric, value, n FROM score"
        )
    ]
    for rid, framework, variant, scores in read(conn):
        scope = f"report:{rid}"
        rows.extend(
            (scope, framework, variant, metric, value, 0 if value is None else 1)
            for metric, value in scores.items()
        )
    rows.sort(key=lambda r: r[:4])
    return rows
