"""Subjects: what a verdict is about, shared by every judge run that judged it.

A subject is (report, kind, subject text) — the subject text names the criterion, claim,
claim × reference, keyword or key with the bundle's own ids — and its portable *target*
``s:<suite>/<report>/<kind>/<subject>`` is how review events name it in any database. Human
decisions belong to subjects, not to one run's judgment rows.

Which judgment of a subject *counts* (``judgment.current``) is decided among the active
(activated) runs by the database's run selection (``meta.run_selection``, ``gavel options
run_selection=…``):

``subject`` (the default)
    per subject: the most recently activated run that gave the subject a valid value; a run
    whose verdict on it errored never replaces another active run's valid one.
``report``
    per report and verdict kind: every verdict of the most recently activated run that judged
    that report for that kind, errored ones included, and no other run's; what a benchmark's
    own script computes from one run's output.

Claims are the exception that keeps runs whole in both: once an active run extracted its own
claims for a report, the claim-based verdicts of the kinds that run judged count only for its
claims, so two claim sets are never scored at once. Candidate runs (``active = 0``) never count
until activated.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from typing import Literal

from reviewer.keys import RUN_CLAIM_KEY
from store.sqlite.tx import transaction

SUBJECT_PREFIX = "s:"

RUN_SELECTION_KEY = "run_selection"
RunSelection = Literal["subject", "report"]
RUN_SELECTIONS: tuple[RunSelection, ...] = ("subject", "report")
"""How the verdict that counts is chosen among the active runs (the module docstring); the
first is the default."""


def run_selection(conn: sqlite3.Connection) -> RunSelection:
    """The database's run selection (``subject`` unless set otherwise)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (RUN_SELECTION_KEY,)).fetchone()
    return "report" if row is not None and row[0] == "report" else "subject"


def subject_target(suite: str, report: str, kind: str, subject: str) -> str:
    return f"{SUBJECT_PREFIX}{suite}/{report}/{kind}/{subject}"


def ensure_subjects(conn: sqlite3.Connection, first_judgment: int = 0) -> list[int]:
    """Create the subjects of judgments from ``first_judgment`` on and link them; returns the
    ids of subjects that did not exist before (events already waiting for them apply now)."""
    before = int(conn.execute("SELECT coalesce(max(id), 0) FROM subject").fetchone()[0])
    with transaction(conn):
        runs = [
            run
            for (run,) in conn.execute(
                "SELECT DISTINCT run_id FROM judgment WHERE id >= ? AND subject_id IS NULL",
                (first_judgment,),
            )
        ]
        if len(runs) == 1:
            # One run (an import, a judging run): its verdicts' subjects are distinct, and the
            # judgment table's unique index on (run, report, kind, subject) yields them in the
            # order GROUP BY would, without sorting millions of rows in memory first.
            conn.execute(
                """INSERT INTO subject (report_id, kind, key, target)
                   SELECT j.report_id, j.kind, j.subject,
                          's:' || s.ext_id || '/' || r.ext_id || '/' || j.kind || '/' || j.subject
                   FROM judgment j JOIN report r ON r.id = j.report_id
                   JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id
                   WHERE j.run_id = ? AND j.id >= ? AND j.subject_id IS NULL
                   ORDER BY j.report_id, j.kind, j.subject
                   ON CONFLICT DO NOTHING""",
                (runs[0], first_judgment),
            )
        elif runs:
            conn.execute(
                """INSERT INTO subject (report_id, kind, key, target)
                   SELECT j.report_id, j.kind, j.subject,
                          's:' || s.ext_id || '/' || r.ext_id || '/' || j.kind || '/' || j.subject
                   FROM judgment j JOIN report r ON r.id = j.report_id
                   JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id
                   WHERE j.id >= ? AND j.subject_id IS NULL
                   GROUP BY j.report_id, j.kind, j.subject
                   ON CONFLICT DO NOTHING""",
                (first_judgment,),
            )
        conn.execute(
            """UPDATE judgment SET subject_id = (
                   SELECT s.id FROM subject s WHERE s.report_id = judgment.report_id
                   AND s.kind = judgment.kind AND s.key = judgment.subject)
               WHERE id >= ? AND subject_id IS NULL""",
            (first_judgment,),
        )
    return [
        int(sid)
        for (sid,) in conn.execute("SELECT id FROM subject WHERE id > ? ORDER BY id", (before,))
    ]


def _ids_table(conn: sqlite3.Connection, name: str, ids: Iterable[int]) -> None:
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} (id INTEGER PRIMARY KEY)")
    conn.execute(f"DELETE FROM {name}")
    conn.executemany(f"INSERT OR IGNORE INTO {name} VALUES (?)", ((i,) for i in ids))


def refresh_current(conn: sqlite3.Connection, report_ids: Iterable[int] | None = None) -> None:
    """Recompute which judgment of each subject counts (see the module docstring), for the
    given reports or all of them."""
    with transaction(conn):
        if report_ids is None:
            scope = "1"
        else:
            _ids_table(conn, "_scope", report_ids)
            scope = "j.report_id IN (SELECT id FROM _scope)"
        _ids_table(conn, "_ineligible", _foreign_claim_verdicts(conn, scope))
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS _chosen (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM _chosen")
        chosen = _BY_REPORT if run_selection(conn) == "report" else _BY_SUBJECT
        conn.execute(chosen.format(scope=scope))
        conn.execute(
            f"""UPDATE judgment AS j SET current = (j.id IN (SELECT id FROM _chosen))
                WHERE {scope} AND j.current != (j.id IN (SELECT id FROM _chosen))"""
        )


_BY_SUBJECT = """INSERT INTO _chosen
    SELECT id FROM (
        SELECT j.id, row_number() OVER (
            PARTITION BY j.subject_id
            ORDER BY j.value IS NULL, r.active DESC, j.id DESC) AS rn
        FROM judgment j JOIN judge_run r ON r.id = j.run_id
        WHERE r.active > 0 AND {scope}
          AND j.id NOT IN (SELECT id FROM _ineligible))
    WHERE rn = 1"""
"""Per subject, the newest active run's valid verdict (an errored one only when no active run
has a valid one)."""

_BY_REPORT = """INSERT INTO _chosen
    SELECT j.id FROM judgment j
    JOIN (SELECT report_id, kind, run_id FROM (
            SELECT p.report_id, p.kind, p.run_id, row_number() OVER (
                PARTITION BY p.report_id, p.kind ORDER BY r.active DESC, p.run_id DESC) AS rn
            FROM (SELECT DISTINCT j.report_id, j.kind, j.run_id FROM judgment j
                  WHERE {scope} AND j.id NOT IN (SELECT id FROM _ineligible)) p
            JOIN judge_run r ON r.id = p.run_id
            WHERE r.active > 0)
          WHERE rn = 1) pick
      ON pick.report_id = j.report_id AND pick.kind = j.kind AND pick.run_id = j.run_id
    WHERE {scope} AND j.id NOT IN (SELECT id FROM _ineligible)"""
"""Per report and kind, every verdict of the newest active run that judged it, errors too."""


def _foreign_claim_verdicts(conn: sqlite3.Connection, scope: str) -> list[int]:
    """Judgments on claims that are not the working claims of their report for their kind:
    where an active run extracted claims for a report, the kinds it judged there count only
    on its own claims."""
    active = {
        (suite, ext): (rank, rid)
        for rid, suite, ext, rank in conn.execute(
            "SELECT id, suite_id, ext_id, active FROM judge_run WHERE active > 0"
        )
    }
    working: dict[int, tuple[int, int, str]] = {}
    for report_id, suite_id, run_ext in conn.execute(
        f"""SELECT DISTINCT c.report_id, y.suite_id, json_extract(c.metadata, '$.{RUN_CLAIM_KEY}')
            FROM claim c JOIN report r ON r.id = c.report_id
            JOIN system y ON y.id = r.system_id
            WHERE json_extract(c.metadata, '$.{RUN_CLAIM_KEY}') IS NOT NULL
              AND {scope.replace("j.report_id", "c.report_id")}"""
    ):
        found = active.get((suite_id, run_ext))
        if found is not None and (report_id not in working or found[0] > working[report_id][0]):
            working[report_id] = (found[0], found[1], run_ext)
    if not working:
        return []
    out: list[int] = []
    kinds: dict[int, set[str]] = defaultdict(set)
    for report_id, (_, run_row, _) in working.items():
        kinds[report_id].update(
            kind
            for (kind,) in conn.execute(
                "SELECT DISTINCT kind FROM judgment WHERE run_id = ? AND report_id = ? "
                "AND claim_id IS NOT NULL",
                (run_row, report_id),
            )
        )
    for report_id, (_, _, run_ext) in working.items():
        if not kinds[report_id]:
            continue
        marks = ",".join("?" * len(kinds[report_id]))
        out.extend(
            jid
            for (jid,) in conn.execute(
                f"""SELECT j.id FROM judgment j JOIN claim c ON c.id = j.claim_id
                WHERE j.report_id = ? AND j.kind IN ({marks})
                  AND coalesce(json_extract(c.metadata, '$.{RUN_CLAIM_KEY}'), '') != ?""",
                (report_id, *sorted(kinds[report_id]), run_ext),
            )
        )
    return out


FEW = 20
"""A table keyed by subject holds few subjects when the verdicts outnumber its rows this many
times over: then a query starts from its rows (each finds its verdict through the covering
``judgment_subject`` index) rather than scanning every verdict in force."""


def verdicts_of(
    conn: sqlite3.Connection, table: Literal["decision", "flag"], alias: str = "d"
) -> str:
    """``FROM`` clause joining ``table`` (``decision`` or ``flag``: rows keyed by subject) to
    the verdicts of its subjects as ``j``, in the order that reads least: SQLite has no
    statistics to choose by, and scanning every verdict for a few decisions reads far more
    than it needs."""
    rows = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    verdicts = conn.execute("SELECT coalesce(max(id), 0) FROM judgment").fetchone()[0]
    if rows * FEW < verdicts:
        return (
            f"{table} {alias} CROSS JOIN judgment j INDEXED BY judgment_subject "
            f"ON j.subject_id = {alias}.subject_id"
        )
    return f"{table} {alias} JOIN judgment j ON j.subject_id = {alias}.subject_id"
