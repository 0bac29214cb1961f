"""Read models: the rows the command line and the screens show, one query each."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from reviewer.errors import InputError
from store.scores import report_rows as report_scores
from store.scores.inputs import EFFECTIVE_SQL


@dataclass(frozen=True, slots=True)
class ScoreRow:
    framework: str
    system: str
    task: str | None
    report: str | None
    metric: str
    judge: float | None
    adjudicated: float | None
    n: int

    @property
    def delta(self) -> float | None:
        if self.judge is None or self.adjudicated is None:
            return None
        return self.adjudicated - self.judge


def score_rows(
    conn: sqlite3.Connection,
    *,
    per: str = "system",
    framework: str | None = None,
    system: str | None = None,
    include_parts: bool = False,
) -> list[ScoreRow]:
    """Cached scores in both variants side by side, ordered for reading."""
    if per == "report":
        return _report_score_rows(conn, framework or None, system or None, include_parts)
    params: list[object] = []
    filters = ""
    if framework:
        filters += " AND j.framework = ?"
        params.append(framework)
    if system:
        filters += " AND (y.ext_id = ? OR y.name = ?)"
        params.extend([system, system])
    if not include_parts:
        filters += " AND substr(j.metric, 1, 1) != '_'"
    sql = f"""
        SELECT j.framework, y.ext_id, NULL, NULL, j.metric, j.value, a.value,
               coalesce(a.n, j.n)
        FROM score j
        JOIN system y ON j.scope = 'system:' || y.id
        LEFT JOIN score a ON a.scope = j.scope AND a.framework = j.framework
             AND a.metric = j.metric AND a.variant = 'adjudicated'
        WHERE j.variant = 'judge' {filters}
        ORDER BY j.framework, y.ext_id, j.metric"""
    return [ScoreRow(*row) for row in conn.execute(sql, params)]


def _report_score_rows(
    conn: sqlite3.Connection, framework: str | None, system: str | None, include_parts: bool
) -> list[ScoreRow]:
    """Per-report scores in both variants, ordered by framework, system, task and metric."""
    where = " WHERE y.ext_id = ? OR y.name = ?" if system else ""
    placed = {
        int(rid): (str(sys_ext), str(task), str(report))
        for rid, sys_ext, task, report in conn.execute(
            "SELECT r.id, y.ext_id, t.ext_id, r.ext_id FROM report r "
            "JOIN task t ON t.id = r.task_id JOIN system y ON y.id = r.system_id" + where,
            (system, system) if system else (),
        )
    }
    adjudicated = {
        (rid, fw): scores
        for rid, fw, _, scores in report_scores.read(
            conn, framework=framework, variant="adjudicated"
        )
    }
    out: list[ScoreRow] = []
    for rid, fw, _, scores in report_scores.read(conn, framework=framework, variant="judge"):
        where_from = placed.get(rid)
        if where_from is None:
            continue
        adj = adjudicated.get((rid, fw), {})
        for metric, value in scores.items():
            if include_parts or not metric.startswith("_"):
                after = adj.get(metric)
                out.append(
                    ScoreRow(fw, *where_from, metric, value, after, 0 if after is None else 1)
                )
    out.sort(key=lambda r: (r.framework, r.system, r.task or "", r.metric, r.report or ""))
    return out


@dataclass(frozen=True, slots=True)
class VerdictRow:
    id: int
    report: str
    task: str
    system: str
    kind: str
    subject: str
    judge_value: str | None
    value: str | None
    status: str | None
    reviewers: int
    run: str
    current: bool
    error: str | None
    suspicions: tuple[tuple[str, float, str], ...] = ()
    """The subject's suspicion flags as (rule, weight, reason), strongest first."""


VERDICT_SQL = f"""
    SELECT j.id, r.ext_id, t.ext_id, y.ext_id, j.kind,
           CASE WHEN j.claim_id IS NOT NULL AND j.key IS NOT NULL
                THEN k.ext_id || ' → ' || j.key
                ELSE coalesce(c.ext_id || coalesce(' @' || j.key, ''),
                              k.ext_id || coalesce(':' || j.ref_idx, ''), j.key, j.subject)
           END,
           j.value, {EFFECTIVE_SQL}, d.status, coalesce(d.reviewers, 0), jr.ext_id, j.current,
           j.error, j.subject_id
    FROM judgment j
    JOIN report r ON r.id = j.report_id
    JOIN task t ON t.id = r.task_id
    JOIN system y ON y.id = r.system_id
    JOIN judge_run jr ON jr.id = j.run_id
    LEFT JOIN criterion c ON c.id = j.criterion_id
    LEFT JOIN claim k ON k.id = j.claim_id
    LEFT JOIN decision d ON d.subject_id = j.subject_id
"""


def verdict_rows(
    conn: sqlite3.Connection,
    *,
    report: str | None = None,
    kind: str | None = None,
    undecided: bool = False,
    differs: bool = False,
    include_stale: bool = False,
    ids: Sequence[int] | None = None,
    suspicious: bool = False,
) -> list[VerdictRow]:
    """The judgments the filters keep, each with its subject's suspicion flags;
    ``suspicious`` keeps those with at least one flag (decided or not: a flag is about the
    judge's verdict, which a decision does not change)."""
    where, params = _verdict_filters(
        conn, report, kind, undecided, differs, include_stale, ids, suspicious
    )
    sql = VERDICT_SQL + " WHERE " + " AND ".join(where) + " ORDER BY j.id"
    rows = conn.execute(sql, params).fetchall()
    # Here, not at the top: `gavel decide` reads this module and needs no suspicion rules.
    from store.triage.suspicion import subject_suspicions

    flags = subject_suspicions(conn, [r[13] for r in rows])
    return [
        VerdictRow(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            r[8],
            r[9],
            r[10],
            bool(r[11]),
            r[12],
            tuple((f.rule, f.weight, f.reason) for f in flags.get(r[13], ())),
        )
        for r in rows
    ]


def _verdict_filters(
    conn: sqlite3.Connection,
    report: str | None,
    kind: str | None,
    undecided: bool,
    differs: bool,
    include_stale: bool,
    ids: Sequence[int] | None,
    suspicious: bool,
) -> tuple[list[str], list[object]]:
    """The WHERE terms and parameters of :func:`verdict_rows`' filters."""
    where = ["1"]
    params: list[object] = []
    if not include_stale:
        where.append("j.current = 1")
    if report:
        where.append("r.id = ?")
        params.append(resolve_report(conn, report))
    if kind:
        where.append("j.kind = ?")
        params.append(kind)
    if undecided:
        where.append("d.subject_id IS NULL")
    if differs:
        where.append(f"({EFFECTIVE_SQL}) IS NOT j.value")
    if ids is not None:
        where.append(f"j.id IN ({','.join('?' * len(ids))})")
        params.extend(ids)
    if suspicious:
        where.append("j.subject_id IN (SELECT subject_id FROM suspicion)")
    return where, params


def report_id_by_ext(conn: sqlite3.Connection, ext: str) -> int | None:
    """A report by ``SUITE/REPORT``, ``REPORT`` or row id; None when there is none. A bare id
    that several suites share is refused (:func:`resolve_report` says which)."""
    try:
        return resolve_report(conn, ext)
    except InputError as exc:
        if exc.field == "report" and exc.message.startswith("no report"):
            return None
        raise


def resolve_report(conn: sqlite3.Connection, name: str) -> int:
    """The report a person means by ``SUITE/REPORT``, by ``REPORT`` when one suite has it, or
    by its row id (as listed by ``gavel verdicts``).

    Report ids are the bundle's and two runs may both have ``t01-atlas-dr``: a bare id that
    several suites share is refused with every ``SUITE/REPORT`` it could mean, never quietly
    resolved to one of them.
    """
    suite, slash, report = name.rpartition("/")
    select = (
        "SELECT r.id, s.ext_id || '/' || r.ext_id FROM report r "
        "JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id "
    )
    if slash:
        rows = conn.execute(
            select + "WHERE s.ext_id = ? AND r.ext_id = ?", (suite, report)
        ).fetchall()
    else:
        rows = conn.execute(select + "WHERE r.ext_id = ? ORDER BY s.ext_id", (name,)).fetchall()
        if not rows and name.isdigit():
            rows = conn.execute(select + "WHERE r.id = ?", (int(name),)).fetchall()
    if not rows:
        raise InputError("command line", f"no report {name!r} in this database", field="report")
    if len(rows) > 1:
        raise InputError(
            "command line",
            f"report {name!r} is in {len(rows)} suites: name it "
            f"as {' or '.join(str(r[1]) for r in rows)}",
            field="report",
        )
    return int(rows[0][0])


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    out: dict[str, int] = {}
    for table in (
        "suite",
        "task",
        "system",
        "report",
        "claim",
        "source",
        "judge_run",
        "judgment",
        "review_event",
    ):
        out[table] = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    out["decided"] = int(conn.execute("SELECT count(*) FROM decision").fetchone()[0])
    return out


def report_ext_id(conn: sqlite3.Connection, report_id: int) -> str | None:
    row = conn.execute("SELECT ext_id FROM report WHERE id = ?", (report_id,)).fetchone()
    return None if row is None else str(row[0])


@dataclass(frozen=True, slots=True)
class RetireEffect:
    """What retiring a judge run would change, said before it is done."""

    run: str
    models: str
    active: bool
    counting: int
    """Subjects on which this run's verdict is the one that counts now."""
    reports: int
    """Reports those subjects are in (their scores are recomputed)."""
    uncovered: int
    """Of ``counting``, subjects no other active run gave a verdict on: left without one."""


def retire_effect(conn: sqlite3.Connection, run: str) -> RetireEffect:
    """The verdicts of ``run`` (an ext id, every suite that has it) that count now, and how
    many of their subjects another active run covers once it is retired."""
    models, active = conn.execute(
        "SELECT coalesce(group_concat(DISTINCT model), ''), coalesce(max(active), 0) "
        "FROM judge_run WHERE ext_id = ?",
        (run,),
    ).fetchone()
    counting, reports, uncovered = conn.execute(
        """SELECT count(*), count(DISTINCT j.report_id),
                  coalesce(sum(NOT EXISTS (
                      SELECT 1 FROM judgment o JOIN judge_run q ON q.id = o.run_id
                      WHERE o.subject_id = j.subject_id AND q.active = 1 AND q.ext_id != ?
                        AND o.value IS NOT NULL)), 0)
           FROM judgment j JOIN judge_run r ON r.id = j.run_id
           WHERE r.ext_id = ? AND j.current = 1""",
        (run, run),
    ).fetchone()
    return RetireEffect(run, models, bool(active), counting, reports, uncovered)
