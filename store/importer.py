"""Bulk import of a checked bundle, in one transaction.

Ids are assigned here, in Python, so that every table is written with a single ``executemany``
and nothing is read back mid-import: that is what keeps the import within a small factor of a
bare ``executemany`` of the same rows (DESIGN.md §5). Re-importing the same content is a no-op;
importing different content under an existing suite id is refused, because inputs are immutable
and review events point at them.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from reviewer.errors import InputError
from reviewer.formats.checks import Resolved, check_bundle
from reviewer.models import Bundle
from store.tx import transaction


@dataclass(frozen=True, slots=True)
class ImportResult:
    suite_id: int
    suite: str
    created: bool
    counts: dict[str, int]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _next_id(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}").fetchone()[0])


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(slots=True)
class Rows:
    """Every row of one import, ready for executemany."""

    suite: tuple[Any, ...]
    tasks: list[tuple[Any, ...]]
    subtasks: list[tuple[Any, ...]]
    criteria: list[tuple[Any, ...]]
    systems: list[tuple[Any, ...]]
    reports: list[tuple[Any, ...]]
    references: list[tuple[Any, ...]]
    claims: list[tuple[Any, ...]]
    sources: list[tuple[Any, ...]]
    runs: list[tuple[Any, ...]]
    judgments: list[tuple[Any, ...]]


INSERTS: dict[str, str] = {
    "suite": "INSERT INTO suite VALUES (?,?,?,?,?,?,?,?,?)",
    "tasks": "INSERT INTO task VALUES (?,?,?,?,?,?,?,?,?)",
    "subtasks": "INSERT INTO subtask VALUES (?,?,?,?,?,?,?,?)",
    "criteria": "INSERT INTO criterion VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    "systems": "INSERT INTO system VALUES (?,?,?,?,?,?,?,?)",
    "reports": "INSERT INTO report VALUES (?,?,?,?,?,?,?,?)",
    "references": "INSERT INTO reference VALUES (?,?,?,?)",
    "claims": "INSERT INTO claim VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "sources": "INSERT INTO source VALUES (?,?,?,?,?,?,?,?)",
    "runs": "INSERT INTO judge_run VALUES (?,?,?,?,?,?,?,?,?)",
    "judgments": "INSERT INTO judgment VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
}


def build_rows(
    conn: sqlite3.Connection, bundle: Bundle, resolved: Resolved, content_hash: str
) -> Rows:
    """Turn a checked bundle into rows with fresh ids (reads only the current max ids)."""
    suite = bundle.suite
    suite_id = _next_id(conn, "suite")
    stamp = now_iso()
    suite_row = (
        suite_id, suite.id, suite.name, _dumps(suite.frameworks), suite.version, suite.source,
        suite.description, content_hash, stamp,
    )
    ids = {t: _next_id(conn, t) for t in (
        "task", "subtask", "criterion", "system", "report", "claim", "source", "judge_run",
        "judgment",
    )}

    task_rows: list[tuple[Any, ...]] = []
    subtask_rows: list[tuple[Any, ...]] = []
    criterion_rows: list[tuple[Any, ...]] = []
    task_ids: dict[str, int] = {}
    subtask_ids: dict[tuple[str, str], int] = {}
    criterion_ids: dict[tuple[str, str], int] = {}
    for task in bundle.tasks:
        tid = ids["task"]
        ids["task"] += 1
        task_ids[task.id] = tid
        task_rows.append((
            tid, suite_id, task.id, task.prompt, task.language, task.domain, task.category,
            task.task_type, _dumps(task.metadata),
        ))
        for ordinal, sub in enumerate(task.subtasks):
            sid = ids["subtask"]
            ids["subtask"] += 1
            subtask_ids[(task.id, sub.id)] = sid
            subtask_rows.append((
                sid, tid, sub.id, ordinal, sub.text, sub.importance, sub.group,
                _dumps(sub.constraint_types),
            ))
        for ordinal, crit in enumerate(task.criteria):
            cid = ids["criterion"]
            ids["criterion"] += 1
            criterion_ids[(task.id, crit.id)] = cid
            criterion_rows.append((
                cid, tid,
                subtask_ids[(task.id, crit.subtask)] if crit.subtask is not None else None,
                crit.id, ordinal, crit.framework, crit.dimension, crit.text, crit.explanation,
                crit.weight, crit.scale, _dumps(crit.metadata),
            ))

    system_rows: list[tuple[Any, ...]] = []
    system_ids: dict[str, int] = {}
    for system in bundle.systems:
        sid = ids["system"]
        ids["system"] += 1
        system_ids[system.id] = sid
        system_rows.append((
            sid, suite_id, system.id, system.name or system.id, system.family, system.version,
            system.collected_at, int(system.is_reference),
        ))

    report_rows: list[tuple[Any, ...]] = []
    reference_rows: list[tuple[Any, ...]] = []
    claim_rows: list[tuple[Any, ...]] = []
    report_ids: dict[str, int] = {}
    report_task: dict[str, str] = {}
    claim_ids: dict[tuple[str, str], int] = {}
    for report, refs, claims in zip(bundle.reports, resolved.references, resolved.claims,
                                    strict=True):
        rid = ids["report"]
        ids["report"] += 1
        report_ids[report.id] = rid
        report_task[report.id] = report.task
        report_rows.append((
            rid, task_ids[report.task], system_ids[report.system], report.id, report.markdown,
            report.cleaned, len(report.markdown.split()), _dumps(report.metadata),
        ))
        reference_rows.extend((rid, ref.index, ref.title, ref.url) for ref in refs)
        for ordinal, (claim, where) in enumerate(zip(report.claims, claims, strict=True)):
            kid = ids["claim"]
            ids["claim"] += 1
            claim_ids[(report.id, claim.id)] = kid
            span = where.span
            claim_rows.append((
                kid, rid, claim.id, ordinal,
                subtask_ids[(report.task, claim.subtask)] if claim.subtask is not None else None,
                criterion_ids[(report.task, claim.criterion)]
                if claim.criterion is not None else None,
                claim.fact, claim.extract or claim.fact,
                span[0] if span else None, span[1] if span else None,
                _dumps(list(where.citations)), claim.url, _dumps(claim.metadata),
            ))

    source_rows: list[tuple[Any, ...]] = []
    for source, digest in zip(bundle.sources, resolved.source_hashes, strict=True):
        source_rows.append((
            ids["source"], suite_id, source.url, source.title, source.fetched_at, source.text,
            digest, source.error,
        ))
        ids["source"] += 1

    run_rows: list[tuple[Any, ...]] = []
    run_ids: dict[str, int] = {}
    run_order: dict[str, tuple[str, int]] = {}
    for position, run in enumerate(bundle.runs):
        rid = ids["judge_run"]
        ids["judge_run"] += 1
        run_ids[run.id] = rid
        run_order[run.id] = (run.created_at, position)
        run_rows.append((
            rid, suite_id, run.id, run.model, run.prompt_version, _dumps(run.params),
            run.created_at or stamp, run.description, 1,
        ))

    # The current verdict of a (report, kind) comes from its newest run (DESIGN: runs never
    # overwrite each other; scores use the newest unless a run is deactivated).
    newest: dict[tuple[str, str], str] = {}
    for judgment in bundle.judgments:
        slot = (judgment.report, judgment.kind)
        best = newest.get(slot)
        if best is None or run_order[judgment.run] > run_order[best]:
            newest[slot] = judgment.run

    judgment_rows: list[tuple[Any, ...]] = []
    for judgment, value in zip(bundle.judgments, resolved.values, strict=True):
        task_ext = report_task[judgment.report]
        judgment_rows.append((
            ids["judgment"], run_ids[judgment.run], report_ids[judgment.report], judgment.kind,
            criterion_ids[(task_ext, judgment.criterion)]
            if judgment.criterion is not None else None,
            claim_ids[(judgment.report, judgment.claim)] if judgment.claim is not None else None,
            judgment.ref, judgment.key, judgment.subject(), value, judgment.explanation,
            judgment.evidence, judgment.raw, judgment.error, judgment.source_sha256,
            int(newest[(judgment.report, judgment.kind)] == judgment.run),
        ))
        ids["judgment"] += 1

    return Rows(
        suite_row, task_rows, subtask_rows, criterion_rows, system_rows, report_rows,
        reference_rows, claim_rows, source_rows, run_rows, judgment_rows,
    )


def write_rows(conn: sqlite3.Connection, rows: Rows) -> None:
    """Insert all rows and index the new text for search (caller holds the transaction)."""
    first_report = rows.reports[0][0] if rows.reports else None
    first_claim = rows.claims[0][0] if rows.claims else None
    first_source = rows.sources[0][0] if rows.sources else None
    conn.execute(INSERTS["suite"], rows.suite)
    for name in (
        "tasks", "subtasks", "criteria", "systems", "reports", "references", "claims",
        "sources", "runs", "judgments",
    ):
        batch: Sequence[tuple[Any, ...]] = getattr(rows, name)
        if batch:
            conn.executemany(INSERTS[name], batch)
    if first_report is not None:
        conn.execute(
            "INSERT INTO report_fts(rowid, markdown) SELECT id, markdown FROM report WHERE id >= ?",
            (first_report,),
        )
    if first_claim is not None:
        conn.execute(
            "INSERT INTO claim_fts(rowid, fact, extract) "
            "SELECT id, fact, extract FROM claim WHERE id >= ?",
            (first_claim,),
        )
    if first_source is not None:
        conn.execute(
            "INSERT INTO source_fts(rowid, title, text) "
            "SELECT id, title, text FROM source WHERE id >= ?",
            (first_source,),
        )


def import_bundle(
    conn: sqlite3.Connection, bundle: Bundle, content_hash: str, source_label: str = ""
) -> ImportResult:
    """Check, then write everything in one transaction; the score cache is rebuilt after."""
    existing = conn.execute(
        "SELECT id, content_hash FROM suite WHERE ext_id = ?", (bundle.suite.id,)
    ).fetchone()
    if existing is not None:
        if existing[1] == content_hash:
            return ImportResult(int(existing[0]), bundle.suite.id, False, {})
        raise InputError(
            source_label or bundle.suite.id,
            f"suite {bundle.suite.id!r} is already in this database with different content; "
            "inputs are immutable once reviewed: give the changed run a new suite id "
            "(or a new version in its id)",
            field="id",
        )
    resolved = check_bundle(bundle)
    with transaction(conn):
        rows = build_rows(conn, bundle, resolved, content_hash)
        write_rows(conn, rows)
    counts = {
        "tasks": len(rows.tasks), "subtasks": len(rows.subtasks), "criteria": len(rows.criteria),
        "systems": len(rows.systems), "reports": len(rows.reports), "claims": len(rows.claims),
        "sources": len(rows.sources), "runs": len(rows.runs), "judgments": len(rows.judgments),
    }
    return ImportResult(int(rows.suite[0]), bundle.suite.id, True, counts)


def refresh_current(conn: sqlite3.Connection, report_ids: Iterable[int] | None = None) -> None:
    """Recompute which run's judgments are current per (report, kind) after runs change."""
    where = ""
    params: list[int] = []
    if report_ids is not None:
        ids = sorted(set(report_ids))
        if not ids:
            return
        where = f"WHERE j.report_id IN ({','.join('?' * len(ids))})"
        params = ids
    rows = conn.execute(
        f"""SELECT j.report_id, j.kind, j.run_id, r.active, r.created_at
            FROM judgment j JOIN judge_run r ON r.id = j.run_id {where}
            GROUP BY j.report_id, j.kind, j.run_id""",
        params,
    ).fetchall()
    best: dict[tuple[int, str], tuple[str, int]] = {}
    for report_id, kind, run_id, active, created_at in rows:
        if not active:
            continue
        slot = (report_id, kind)
        if slot not in best or (created_at, run_id) > best[slot]:
            best[slot] = (created_at, run_id)
    by_report: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for (report_id, kind), (_, run_id) in best.items():
        by_report[report_id].append((kind, run_id))
    with transaction(conn):
        conn.execute(f"UPDATE judgment SET current = 0 {where.replace('j.', '')}", params)
        conn.executemany(
            "UPDATE judgment SET current = 1 WHERE report_id = ? AND kind = ? AND run_id = ?",
            [(rid, kind, run) for rid, pairs in by_report.items() for kind, run in pairs],
        )
