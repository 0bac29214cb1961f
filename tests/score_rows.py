"""The score cache read as plain rows in tests: system aggregates live in ``score``, a report's
scores in one ``report_score`` row (store.report_scores), and a test's SQL reads both as one
table of (scope, framework, metric, variant, value, n) rows."""

from __future__ import annotations

import sqlite3

from store.report_scores import score_rows


def all_scores(conn: sqlite3.Connection) -> str:
    """Fill (again) a temporary table with the whole cache as it stands; its name, for SQL."""
    conn.execute("""CREATE TEMP TABLE IF NOT EXISTS all_scores (
        scope TEXT, framework TEXT, metric TEXT, variant TEXT, value REAL, n INTEGER)""")
    conn.execute("DELETE FROM temp.all_scores")
    conn.executemany("INSERT INTO temp.all_scores VALUES (?,?,?,?,?,?)",
                     [(scope, fw, metric, variant, value, n)
                      for scope, fw, variant, metric, value, n in score_rows(conn)])
    return "temp.all_scores"
