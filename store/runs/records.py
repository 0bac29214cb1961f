"""Judge runs made by Gavel itself: what to judge, writing results, the cache, fetched pages,
listing and (de)activating runs, and scoring one run on its own for comparisons.

A run never overwrites another: each ``gavel judge`` adds a ``judge_run`` row (one per suite it
touches, all with the same external id) and its judgments. A run Gavel makes is a *candidate*:
nothing it says counts until someone activates it, having seen its agreement with the human
labels; which run's judgment of a subject counts is then the ``current`` flag, recomputed per
subject by :func:`store.reviewlog.subjects.refresh_current` among the active runs. Each report's
results are written in one transaction, so a run stopped half-way (ctrl+c, a crash) leaves every
report it finished complete and none half-written. Claims a run extracts join the report's claims
with fresh ids (``jc1``, ``jc2``, … never reusing one) and name their run in ``metadata``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from reviewer.errors import InputError
from reviewer.framework import Aggregate, ReportScores, Variant
from reviewer.inputs import ReportInput, VerdictIn
from reviewer.judge.cache import CachedReply
from reviewer.judge.fetch import Page, now_iso
from reviewer.judge.pipeline import JudgeJob, ReportOutcome, clip
from reviewer.models import (
    RUN_CLAIM_KEY,
    Claim,
    Criterion,
    JudgeRun,
    Judgment,
    Reference,
    Report,
    Source,
    Subtask,
    Task,
    subject_of,
)
from reviewer.registry import frameworks, get_kind
from store.reviewlog.events import refresh_subjects
from store.reviewlog.subjects import (
    RUN_SELECTION_KEY,
    RUN_SELECTIONS,
    ensure_subjects,
    refresh_current,
)
from store.scores.cache import load_options, rebuild_scores, update_scores
from store.scores.claim_facts import claim_cited, verdict_cited
from store.scores.inputs import ReportMeta, load_inputs, report_meta
from store.sqlite.tx import transaction
from store.triage.suspicion import refresh_suspicion
from store.views.queries import resolve_report

RAW_LIMIT = 20_000
"""Characters of a raw reply kept with a judgment (a batched reply is split per item anyway)."""


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _in(ids: Sequence[int]) -> str:
    return ",".join("?" * len(ids))


# -- what to judge ------------------------------------------------------------------------------


def select_reports(
    conn: sqlite3.Connection,
    *,
    reports: Sequence[str] = (),
    systems: Sequence[str] = (),
    tasks: Sequence[str] = (),
    framework: str = "cascade",
    limit: int | None = None,
) -> list[int]:
    """Report ids of suites scored by ``framework``, filtered by report (``SUITE/REPORT``, or
    ``REPORT`` when one suite has it), system and task (ext id, or a system's name), in import
    order. A name that matches nothing, or a report id several suites share, is an error."""
    where = [
        "y.is_reference = 0",
        "EXISTS (SELECT 1 FROM json_each(s.frameworks) f WHERE f.value = ?)",
    ]
    params: list[object] = [framework]
    if reports:
        ids = [resolve_report(conn, name) for name in reports]
        where.append(f"r.id IN ({','.join('?' * len(ids))})")
        params.extend(ids)
    for values, clause, label in (
        (systems, "(y.ext_id IN ({q}) OR y.name IN ({q}))", "system"),
        (tasks, "t.ext_id IN ({q})", "task"),
    ):
        if not values:
            continue
        q = ",".join("?" * len(values))
        where.append(clause.format(q=q))
        params.extend(list(values) * clause.count("{q}"))
        _check_known(conn, label, values)
    sql = f"""SELECT r.id FROM report r JOIN task t ON t.id = r.task_id
              JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id
              WHERE {" AND ".join(where)} ORDER BY r.id"""
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [int(rid) for (rid,) in conn.execute(sql, params)]


def _check_known(conn: sqlite3.Connection, label: str, values: Sequence[str]) -> None:
    table, extra = {"system": ("system", "OR name = ?"), "task": ("task", "")}[label]
    for value in values:
        args = (value, value) if extra else (value,)
        if (
            conn.execute(f"SELECT 1 FROM {table} WHERE ext_id = ? {extra} LIMIT 1", args).fetchone()
            is None
        ):
            raise InputError(
                "command line", f"no {label} {value!r} in this database", field=f"--{label}"
            )


@dataclass(frozen=True, slots=True)
class LoadedJob:
    report_id: int
    suite_id: int
    job: JudgeJob


def load_jobs(
    conn: sqlite3.Connection,
    report_ids: Sequence[int],
    *,
    reference: bool = False,
    sources: bool = False,
) -> list[LoadedJob]:
    """The pipeline's view of each report: its task as a bundle record, its text, references
    and working claims; with ``reference``, the task's reference-system report beside it
    (RACE); with ``sources``, the suite's stored sources without their text (DR3-Eval).

    The working claims are those of the newest active run that extracted claims for the report,
    else the claims the report was imported with.
    """
    ids = sorted(set(report_ids))
    if not ids:
        return []
    reports, rows = _reports(conn, ids)
    tasks = _load_tasks(conn, sorted({row[2] for row in rows}))
    taken: dict[int, set[str]] = defaultdict(set)
    for rid, ext in conn.execute(
        f"SELECT report_id, ext_id FROM claim WHERE report_id IN ({_in(ids)})", ids
    ):
        taken[rid].add(ext)
    references: dict[tuple[int, int], Report] = {}
    if reference:
        refs = {
            (int(sid), int(tid)): int(rid)
            for rid, sid, tid in conn.execute(
                f"""SELECT r.id, y.suite_id, r.task_id FROM report r
                JOIN system y ON y.id = r.system_id
                WHERE y.is_reference = 1 AND r.task_id IN
                    (SELECT task_id FROM report WHERE id IN ({_in(ids)}))""",
                ids,
            )
        }
        if refs:
            built, _ = _reports(conn, sorted(set(refs.values())))
            references = {key: built[rid] for key, rid in refs.items() if rid in built}
    stored: dict[int, tuple[Source, ...]] = {}
    if sources:
        for suite_id in sorted({row[5] for row in rows}):
            stored[suite_id] = tuple(
                Source(url=url, title=title, metadata=json.loads(metadata), error=error)
                for url, title, metadata, error in conn.execute(
                    "SELECT url, title, metadata, error FROM source WHERE suite_id = ? ORDER BY id",
                    (suite_id,),
                )
            )
    out = []
    for rid, _ext, task_id, _task_ext, _system_ext, suite_id, *_rest in rows:
        task = tasks[task_id][0]
        out.append(
            LoadedJob(
                rid,
                suite_id,
                JudgeJob(
                    task,
                    reports[rid],
                    frozenset(taken[rid]),
                    reference=references.get((suite_id, task_id)),
                    sources=stored.get(suite_id, ()),
                ),
            )
        )
    return out


def _reports(
    conn: sqlite3.Connection, ids: Sequence[int]
) -> tuple[dict[int, Report], list[tuple[Any, ...]]]:
    rows = conn.execute(
        f"""SELECT r.id, r.ext_id, r.task_id, t.ext_id, y.ext_id, y.suite_id, r.markdown,
                   r.cleaned, r.metadata
            FROM report r JOIN task t ON t.id = r.task_id JOIN system y ON y.id = r.system_id
            WHERE r.id IN ({_in(ids)}) ORDER BY r.id""",
        ids,
    ).fetchall()
    refs: dict[int, list[Reference]] = defaultdict(list)
    for rid, idx, title, url in conn.execute(
        f"SELECT report_id, idx, title, url FROM reference WHERE report_id IN ({_in(ids)}) "
        "ORDER BY report_id, idx",
        ids,
    ):
        refs[rid].append(Reference(index=idx, title=title, url=url))
    claims = _working_claims(conn, ids)
    names = _claim_names(conn, sorted({row[2] for row in rows}))
    out: dict[int, Report] = {}
    for rid, ext, task_id, task_ext, system_ext, _suite, markdown, cleaned, metadata in rows:
        sub_ext, crit_ext = names.get(task_id, ({}, {}))
        out[rid] = Report(
            id=ext,
            task=task_ext,
            system=system_ext,
            markdown=markdown,
            cleaned=cleaned,
            references=refs.get(rid, []),
            metadata=json.loads(metadata),
            claims=[_claim(row, sub_ext, crit_ext) for row in claims.get(rid, [])],
        )
    return out, rows


def _claim_names(
    conn: sqlite3.Connection, task_ids: Sequence[int]
) -> dict[int, tuple[dict[int, str], dict[int, str]]]:
    """task -> (subtask row -> ext id, criterion row -> ext id)."""
    out: dict[int, tuple[dict[int, str], dict[int, str]]] = defaultdict(lambda: ({}, {}))
    if not task_ids:
        return out
    for sid, tid, ext in conn.execute(
        f"SELECT id, task_id, ext_id FROM subtask WHERE task_id IN ({_in(task_ids)})", task_ids
    ):
        out[tid][0][sid] = ext
    for cid, tid, ext in conn.execute(
        f"SELECT id, task_id, ext_id FROM criterion WHERE task_id IN ({_in(task_ids)})", task_ids
    ):
        out[tid][1][cid] = ext
    return out


def _load_tasks(
    conn: sqlite3.Connection, task_ids: Sequence[int]
) -> dict[int, tuple[Task, dict[int, str], dict[int, str]]]:
    subtasks: dict[int, list[Subtask]] = defaultdict(list)
    sub_ext: dict[int, str] = {}
    for sid, tid, ext, text, importance, grp, types in conn.execute(
        f"SELECT id, task_id, ext_id, text, importance, grp, constraint_types FROM subtask "
        f"WHERE task_id IN ({_in(task_ids)}) ORDER BY task_id, ordinal",
        task_ids,
    ):
        sub_ext[sid] = ext
        subtasks[tid].append(
            Subtask(
                id=ext,
                text=text,
                importance=importance,
                group=grp,
                constraint_types=json.loads(types),
            )
        )
    criteria: dict[int, list[Criterion]] = defaultdict(list)
    crit_ext: dict[int, str] = {}
    for (
        cid,
        tid,
        subtask_id,
        ext,
        framework,
        dimension,
        text,
        explanation,
        weight,
        scale,
        metadata,
    ) in conn.execute(
        f"""SELECT id, task_id, subtask_id, ext_id, framework, dimension, text, explanation,
                   weight, scale, metadata FROM criterion WHERE task_id IN ({_in(task_ids)})
            ORDER BY task_id, ordinal""",
        task_ids,
    ):
        crit_ext[cid] = ext
        criteria[tid].append(
            Criterion(
                id=ext,
                subtask=sub_ext.get(subtask_id) if subtask_id else None,
                framework=framework,
                dimension=dimension,
                text=text,
                explanation=explanation,
                weight=weight,
                scale=scale,
                metadata=json.loads(metadata),
            )
        )
    out: dict[int, tuple[Task, dict[int, str], dict[int, str]]] = {}
    for tid, ext, prompt, language, domain, category, task_type, metadata in conn.execute(
        f"""SELECT id, ext_id, prompt, language, domain, category, task_type, metadata
            FROM task WHERE id IN ({_in(task_ids)})""",
        task_ids,
    ):
        task = Task(
            id=ext,
            prompt=prompt,
            language=language,
            domain=domain,
            category=category,
            task_type=task_type,
            metadata=json.loads(metadata),
            subtasks=subtasks.get(tid, []),
            criteria=criteria.get(tid, []),
        )
        out[tid] = (task, sub_ext, crit_ext)
    return out


_ClaimRow = tuple[Any, ...]


def _working_claims(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[_ClaimRow]]:
    active = {
        (suite, ext): rank
        for suite, ext, rank in conn.execute(
            "SELECT suite_id, ext_id, active FROM judge_run WHERE active > 0"
        )
    }
    by_report: dict[int, dict[str | None, list[_ClaimRow]]] = defaultdict(lambda: defaultdict(list))
    # A claim's subtask is its own or, when it names only its criterion, the criterion's
    # (rows imported before claims were placed through their criterion have only the latter).
    for row in conn.execute(
        f"""SELECT c.report_id, c.ext_id, coalesce(c.subtask_id, k.subtask_id), c.criterion_id,
                   c.fact, c.extract, c.span_start, c.span_end, c.citations, c.url, c.metadata,
                   y.suite_id, json_extract(c.metadata, '$.{RUN_CLAIM_KEY}')
            FROM claim c JOIN report r ON r.id = c.report_id JOIN system y ON y.id = r.system_id
            LEFT JOIN criterion k ON k.id = c.criterion_id
            WHERE c.report_id IN ({_in(ids)}) ORDER BY c.report_id, c.ordinal""",
        ids,
    ):
        by_report[row[0]][row[12]].append(row)
    out: dict[int, list[_ClaimRow]] = {}
    for rid, groups in by_report.items():
        runs = [
            (active[(rows[0][11], run)], run)
            for run, rows in groups.items()
            if run is not None and (rows[0][11], run) in active
        ]
        chosen = max(runs)[1] if runs else None
        out[rid] = groups.get(chosen, [])
    return out


def _claim(row: _ClaimRow, sub_ext: Mapping[int, str], crit_ext: Mapping[int, str]) -> Claim:
    (
        _,
        ext,
        subtask_id,
        criterion_id,
        fact,
        extract,
        start,
        end,
        citations,
        url,
        metadata,
        *_rest,
    ) = row
    return Claim(
        id=ext,
        subtask=sub_ext.get(subtask_id) if subtask_id else None,
        criterion=crit_ext.get(criterion_id) if criterion_id else None,
        fact=fact,
        extract=extract,
        span=(start, end) if start is not None else None,
        citations=json.loads(citations),
        url=url,
        metadata=json.loads(metadata),
    )


def stored_pages(conn: sqlite3.Connection, suite_ids: Iterable[int]) -> dict[str, Page]:
    """Pages already in the database, for judging without fetching (``--sources stored``).

    Per URL: the newest successful ``gavel fetch``/``gavel judge`` fetch, else the page the
    bundle shipped in ``source``, else the newest failed fetch (its error is the fact to use).
    """
    ids = sorted(set(suite_ids))
    if not ids:
        return {}
    good: dict[str, Page] = {}
    bad: dict[str, Page] = {}
    for url, final, fetched, status, ctype, title, text, sha, error in conn.execute(
        f"""SELECT url, final_url, fetched_at, status, content_type, title, text, sha256, error
            FROM page_fetch WHERE suite_id IN ({_in(ids)}) ORDER BY fetched_at, id""",
        ids,
    ):
        page = Page(
            url=url,
            text=text,
            sha256=sha,
            error=error,
            title=title,
            final_url=final,
            status=status,
            content_type=ctype,
            fetched_at=fetched,
        )
        (bad if error else good)[url] = page
    out: dict[str, Page] = dict(bad)
    for url, title, fetched, text, sha, error in conn.execute(
        f"SELECT url, title, fetched_at, text, sha256, error FROM source "
        f"WHERE suite_id IN ({_in(ids)})",
        ids,
    ):
        out[url] = Page(
            url=url, text=text, sha256=sha, error=error, title=title, fetched_at=fetched
        )
    out.update(good)
    return out


def suite_of_reports(conn: sqlite3.Connection, report_ids: Sequence[int]) -> dict[int, int]:
    ids = sorted(set(report_ids))
    if not ids:
        return {}
    return {
        rid: sid
        for rid, sid in conn.execute(
            f"SELECT r.id, y.suite_id FROM report r JOIN system y ON y.id = r.system_id "
            f"WHERE r.id IN ({_in(ids)})",
            ids,
        )
    }


def cited_urls(conn: sqlite3.Connection, report_ids: Sequence[int]) -> list[tuple[int, str]]:
    """(suite id, URL) of every reference of the reports, each once."""
    ids = sorted(set(report_ids))
    if not ids:
        return []
    return [
        (sid, url)
        for sid, url in conn.execute(
            f"""SELECT DISTINCT y.suite_id, rf.url FROM reference rf
            JOIN report r ON r.id = rf.report_id JOIN system y ON y.id = r.system_id
            WHERE rf.report_id IN ({_in(ids)}) AND rf.url IS NOT NULL AND rf.url != ''
            ORDER BY y.suite_id, rf.url""",
            ids,
        )
    ]


# -- the response cache -------------------------------------------------------------------------


class SqliteJudgeCache:
    """:class:`reviewer.judge.cache.JudgeCache` on the ``judge_cache`` table."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def get(self, key: str) -> CachedReply | None:
        row = self.conn.execute(
            "SELECT response, usage FROM judge_cache WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        return CachedReply(row[0], json.loads(row[1]))

    def put(self, key: str, model: str, prompt_version: str, reply: CachedReply) -> None:
        with transaction(self.conn):
            self.conn.execute(
                "INSERT OR REPLACE INTO judge_cache VALUES (?, ?, ?, ?, ?, ?)",
                (key, model, prompt_version, reply.content, _dumps(reply.usage), now_iso()),
            )


# -- writing a run ------------------------------------------------------------------------------


def unique_run_id(conn: sqlite3.Connection, base: str) -> str:
    """``base``, or ``base-2``, ``base-3``, … when a run of that id exists (in any suite)."""
    base = re.sub(r"[\s/]+", "-", base).strip("-") or "judge"
    taken = {
        ext
        for (ext,) in conn.execute(
            "SELECT ext_id FROM judge_run WHERE ext_id = ? OR ext_id LIKE ?", (base, base + "-%")
        )
    }
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def running_usage(**extra: Any) -> dict[str, Any]:
    """A starting run's usage: who runs it (host, pid) and when it last showed life, so a run
    whose process died is recognised as interrupted (:func:`mark_stale_runs`)."""
    return {
        "status": "running",
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "heartbeat": now_iso(),
        **extra,
    }


def create_run(conn: sqlite3.Connection, suite_ids: Iterable[int], run: JudgeRun) -> dict[int, int]:
    """Add the run to each suite; returns suite id -> ``judge_run`` row id."""
    out: dict[int, int] = {}
    with transaction(conn):
        for suite_id in sorted(set(suite_ids)):
            cursor = conn.execute(
                "INSERT INTO judge_run (suite_id, ext_id, model, prompt_version, params, "
                "created_at, description, active, usage) VALUES (?,?,?,?,?,?,?,0,?)",
                (
                    suite_id,
                    run.id,
                    run.model,
                    run.prompt_version,
                    _dumps(run.params),
                    run.created_at,
                    run.description,
                    _dumps(running_usage()),
                ),
            )
            out[suite_id] = int(cursor.lastrowid or 0)
    return out


@dataclass(frozen=True, slots=True)
class Written:
    claims: int
    judgments: int


def write_outcome(
    conn: sqlite3.Connection, run_row: int, report_id: int, outcome: ReportOutcome
) -> Written:
    """One report's results, with its new claims, in one transaction. The run is a candidate
    until activated, so nothing it says counts yet; the subjects it judged are created, and
    decisions waiting for them (merged before they existed) apply."""
    with transaction(conn):
        task_id = conn.execute("SELECT task_id FROM report WHERE id = ?", (report_id,)).fetchone()[
            0
        ]
        subtasks = dict(
            conn.execute("SELECT ext_id, id FROM subtask WHERE task_id = ?", (task_id,)).fetchall()
        )
        criteria = {
            ext: (cid, sid)
            for ext, cid, sid in conn.execute(
                "SELECT ext_id, id, subtask_id FROM criterion WHERE task_id = ?", (task_id,)
            )
        }
        _write_references(conn, report_id, outcome)
        _write_claims(conn, report_id, outcome, subtasks, criteria)
        claims = {
            ext: (cid, sid, claim_cited(cites, url))
            for ext, cid, sid, cites, url in conn.execute(
                "SELECT c.ext_id, c.id, coalesce(c.subtask_id, k.subtask_id), c.citations, c.url "
                "FROM claim c LEFT JOIN criterion k ON k.id = c.criterion_id WHERE c.report_id = ?",
                (report_id,),
            )
        }
        rows = [_judgment_row(run_row, report_id, j, criteria, claims) for j in outcome.judgments]
        first = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM judgment").fetchone()[0])
        conn.executemany(
            "INSERT INTO judgment (run_id, report_id, kind, criterion_id, claim_id, ref_idx, "
            "key, subject, value, explanation, evidence, raw, error, source_sha256, current, "
            "subtask_id, claim_cited) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?,?)",
            rows,
        )
        refresh_subjects(conn, ensure_subjects(conn, first))
        if conn.execute("SELECT active FROM judge_run WHERE id = ?", (run_row,)).fetchone()[0] > 0:
            refresh_current(conn, [report_id])
    return Written(len(outcome.claims), len(rows))


def _write_references(conn: sqlite3.Connection, report_id: int, outcome: ReportOutcome) -> None:
    """The outcome's references the report does not list yet."""
    known_refs = {
        int(i)
        for (i,) in conn.execute("SELECT idx FROM reference WHERE report_id = ?", (report_id,))
    }
    conn.executemany(
        "INSERT INTO reference (report_id, idx, title, url) VALUES (?, ?, ?, ?)",
        [
            (report_id, r.index, r.title, r.url)
            for r in outcome.references
            if r.index not in known_refs
        ],
    )


def _write_claims(
    conn: sqlite3.Connection,
    report_id: int,
    outcome: ReportOutcome,
    subtasks: Mapping[str, int],
    criteria: Mapping[str, tuple[int, int | None]],
) -> None:
    """The outcome's claims after the report's own, each in the search index; a claim is
    placed in its own subtask, else in its criterion's (as the importer does)."""
    ordinal = conn.execute(
        "SELECT coalesce(max(ordinal), -1) + 1 FROM claim WHERE report_id = ?", (report_id,)
    ).fetchone()[0]
    for claim in outcome.claims:
        subtask, criterion_id = _claim_place(claim, subtasks, criteria)
        span = claim.span or (None, None)
        cursor = conn.execute(
            "INSERT INTO claim (report_id, ext_id, ordinal, subtask_id, criterion_id, fact, "
            "extract, span_start, span_end, citations, url, metadata) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                report_id,
                claim.id,
                ordinal,
                subtask,
                criterion_id,
                claim.fact,
                claim.extract or claim.fact,
                span[0],
                span[1],
                json.dumps(list(claim.citations or [])),
                claim.url,
                _dumps(claim.metadata),
            ),
        )
        conn.execute(
            "INSERT INTO claim_fts(rowid, fact, extract) VALUES (?, ?, ?)",
            (cursor.lastrowid, claim.fact, claim.extract or claim.fact),
        )
        ordinal += 1


def _claim_place(
    claim: Claim, subtasks: Mapping[str, int], criteria: Mapping[str, tuple[int, int | None]]
) -> tuple[int | None, int | None]:
    """(subtask, criterion) of a new claim: its own subtask, else its criterion's."""
    criterion = criteria.get(claim.criterion) if claim.criterion else None
    subtask = subtasks.get(claim.subtask) if claim.subtask else None
    if subtask is None and criterion is not None:
        subtask = criterion[1]
    return subtask, criterion[0] if criterion is not None else None


def _verdict_value(j: Judgment) -> str | None:
    """A verdict's value as its kind's scale writes it (as text for an unknown kind)."""
    if j.value is None:
        return None
    kind = get_kind(j.kind)
    return kind.scale.normalize(j.value) if kind is not None else str(j.value)


def _judgment_row(
    run_row: int,
    report_id: int,
    j: Judgment,
    criteria: Mapping[str, tuple[int, int | None]],
    claims: Mapping[str, tuple[int, int | None, int]],
) -> tuple[Any, ...]:
    """One verdict as the judgment table holds it: its value on its kind's scale, the
    criterion or claim it is about, its subtask, and its claim's citation fact."""
    crit = criteria.get(j.criterion) if j.criterion else None
    claim_row = claims.get(j.claim) if j.claim else None
    subtask = crit[1] if crit else (claim_row[1] if claim_row else None)
    return (
        run_row,
        report_id,
        j.kind,
        crit[0] if crit else None,
        claim_row[0] if claim_row else None,
        j.ref,
        j.key,
        subject_of(j),
        _verdict_value(j),
        clip(j.explanation),
        clip(j.evidence),
        j.raw[:RAW_LIMIT],
        clip(j.error) if j.error is not None else None,
        j.source_sha256,
        subtask,
        None if claim_row is None else verdict_cited(claim_row[2], subtask, claim_row[1]),
    )


HEARTBEAT_SECONDS = 15.0
"""How often a running judge run records that its process is alive."""
STALE_AFTER_SECONDS = 300.0
"""A ``running`` run whose heartbeat is older than this (and whose process cannot be asked,
being on another host) is taken to have died."""


def heartbeat(conn: sqlite3.Connection, run_rows: Iterable[int], **extra: Any) -> None:
    """Record that the run's process is alive (and any progress counts in ``extra``)."""
    rows = sorted(set(run_rows))
    if not rows:
        return
    with transaction(conn):
        for row, usage in conn.execute(
            f"SELECT id, usage FROM judge_run WHERE id IN ({_in(rows)})", rows
        ).fetchall():
            data = json.loads(usage)
            if data.get("status") != "running":
                continue
            data.update(extra, heartbeat=now_iso())
            conn.execute("UPDATE judge_run SET usage = ? WHERE id = ?", (_dumps(data), row))


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def mark_stale_runs(
    conn: sqlite3.Connection,
    *,
    now: datetime | None = None,
    stale_after: float = STALE_AFTER_SECONDS,
) -> list[str]:
    """Mark ``running`` runs whose process is gone as ``interrupted``; returns their ids.

    On this host a run is stale when its process no longer exists (or is another program
    that got the pid: its heartbeat is old); on another host when its heartbeat is older than
    ``stale_after``. Every report it finished stays; the run can be re-run from the cache.
    """
    host = socket.gethostname()
    moment = now or datetime.now(UTC)
    stale: dict[int, tuple[str, str]] = {}
    for row, ext, usage in conn.execute(
        "SELECT id, ext_id, usage FROM judge_run WHERE usage LIKE '%\"running\"%'"
    ):
        data = json.loads(usage)
        if data.get("status") != "running":
            continue
        beat = _parse_time(data.get("heartbeat"))
        age = (moment - beat).total_seconds() if beat is not None else float("inf")
        if data.get("host") == host and not _alive(data.get("pid")):
            stale[int(row)] = (ext, f"its process {data.get('pid')} on {host} is gone")
        elif age > stale_after and (data.get("host") != host or age > 4 * stale_after):
            stale[int(row)] = (
                ext,
                f"no sign of life for {age:.0f} s (last heartbeat "
                f"{data.get('heartbeat') or 'never'})",
            )
    if not stale:
        return []
    with transaction(conn):
        for row, (_, why) in stale.items():
            data = json.loads(
                conn.execute("SELECT usage FROM judge_run WHERE id = ?", (row,)).fetchone()[0]
            )
            if data.get("status") != "running":
                continue
            data.update(status="interrupted", interrupted=why, marked_at=now_iso())
            conn.execute("UPDATE judge_run SET usage = ? WHERE id = ?", (_dumps(data), row))
    return sorted({ext for ext, _ in stale.values()})


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def record_page(conn: sqlite3.Connection, suite_id: int, run_row: int | None, page: Page) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO page_fetch (suite_id, run_id, url, final_url, fetched_at, status, "
            "content_type, title, text, sha256, error) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                suite_id,
                run_row,
                page.url,
                page.final_url,
                page.fetched_at or now_iso(),
                page.status,
                page.content_type,
                page.title,
                page.text,
                page.sha256,
                page.error,
            ),
        )


def finish_run(
    conn: sqlite3.Connection,
    run_rows: Iterable[int],
    usage: Mapping[str, Any],
    report_ids: Iterable[int],
) -> None:
    """Store the run's usage and status; when the run is active (a candidate is not), bring
    the score cache up to date for the reports it judged (both variants: the judge's values
    changed, and so may the effective ones where no human decided)."""
    rows = sorted(set(run_rows))
    ids = sorted(set(report_ids))
    with transaction(conn):
        conn.executemany(
            "UPDATE judge_run SET usage = ? WHERE id = ?",
            [(_dumps(dict(usage)), row) for row in rows],
        )
        active = (
            conn.execute(
                f"SELECT max(active) FROM judge_run WHERE id IN ({_in(rows)})", rows
            ).fetchone()[0]
            if rows
            else 0
        )
        if ids and active:
            refresh_current(conn, ids)
            update_scores(conn, ids, variants=("judge", "adjudicated"))
        if ids:
            # A candidate's verdicts change no score, but where they disagree with the
            # counting ones the subject is worth a look: the flags are recomputed either way.
            refresh_suspicion(conn, ids)


# -- listing and activation ---------------------------------------------------------------------


@dataclass(slots=True)
class RunInfo:
    id: str
    suites: list[str]
    model: str
    prompt_version: str
    created_at: str
    description: str
    active: bool
    params: dict[str, Any]
    usage: dict[str, Any]
    reports: int = 0
    judgments: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    claims: int = 0
    row_ids: list[int] = field(default_factory=list)


def list_runs(conn: sqlite3.Connection) -> list[RunInfo]:
    """Every judge run (imported or Gavel's own), oldest first, with counts."""
    runs: dict[str, RunInfo] = {}
    for (
        row_id,
        ext,
        suite,
        model,
        version,
        created,
        description,
        active,
        params,
        usage,
    ) in conn.execute(
        """SELECT jr.id, jr.ext_id, s.ext_id, jr.model, jr.prompt_version, jr.created_at,
                      jr.description, jr.active, jr.params, jr.usage
               FROM judge_run jr JOIN suite s ON s.id = jr.suite_id
               ORDER BY jr.created_at, jr.id"""
    ):
        info = runs.get(ext)
        if info is None:
            info = runs[ext] = RunInfo(
                ext,
                [],
                model,
                version,
                created,
                description,
                bool(active),
                json.loads(params),
                json.loads(usage),
            )
        info.suites.append(suite)
        info.row_ids.append(row_id)
        info.active = info.active or bool(active)
    by_row = {row: info for info in runs.values() for row in info.row_ids}
    for row, kind, count, errors in conn.execute(
        "SELECT run_id, kind, count(*), count(error) FROM judgment GROUP BY run_id, kind"
    ):
        info = by_row[row]
        info.judgments[kind] = info.judgments.get(kind, 0) + count
        info.errors += errors
    for row, reports in conn.execute(
        "SELECT run_id, count(DISTINCT report_id) FROM judgment GROUP BY run_id"
    ):
        by_row[row].reports += reports
    for ext, count in conn.execute(
        f"SELECT json_extract(metadata, '$.{RUN_CLAIM_KEY}'), count(*) FROM claim "
        f"WHERE json_extract(metadata, '$.{RUN_CLAIM_KEY}') IS NOT NULL GROUP BY 1"
    ):
        if ext in runs:
            runs[ext].claims = count
    return list(runs.values())


def run_rows(conn: sqlite3.Connection, run: str) -> list[int]:
    """``judge_run`` row ids of a run named by external id (or a row id); error if none."""
    rows = [
        int(r)
        for (r,) in conn.execute(
            "SELECT id FROM judge_run WHERE ext_id = ? OR CAST(id AS TEXT) = ? ORDER BY id",
            (run, run),
        )
    ]
    if not rows:
        known = ", ".join(
            ext
            for (ext,) in conn.execute(
                "SELECT DISTINCT ext_id FROM judge_run ORDER BY created_at LIMIT 20"
            )
        )
        raise InputError(
            "command line", f"no judge run {run!r} (runs: {known or 'none'})", field="RUN"
        )
    return rows


def set_active(conn: sqlite3.Connection, run: str, active: bool) -> list[int]:
    """Activate a run — it counts from now on, above every run activated before it, subject
    by subject — or retire it; recomputes what depends on it in the same transaction.
    Returns the ids of the reports whose current verdicts were re-chosen."""
    rows = run_rows(conn, run)
    with transaction(conn):
        rank = (
            (int(conn.execute("SELECT coalesce(max(active), 0) FROM judge_run").fetchone()[0]) + 1)
            if active
            else 0
        )
        conn.execute(f"UPDATE judge_run SET active = ? WHERE id IN ({_in(rows)})", [rank, *rows])
        ids = [
            int(r)
            for (r,) in conn.execute(
                f"SELECT DISTINCT report_id FROM judgment WHERE run_id IN ({_in(rows)})", rows
            )
        ]
        if ids:
            refresh_current(conn, ids)
            update_scores(conn, ids, variants=("judge", "adjudicated"))
            refresh_suspicion(conn, ids)
    return sorted(ids)


def set_run_selection(conn: sqlite3.Connection, selection: str) -> None:
    """Choose how the verdict that counts is picked among the active runs (``subject`` or
    ``report``: :mod:`store.reviewlog.subjects`), and re-choose it everywhere with the flags
    and scores that follow from it, in one transaction."""
    if selection not in RUN_SELECTIONS:
        raise ValueError(
            f"run_selection must be one of {' | '.join(RUN_SELECTIONS)}, not {selection!r}"
        )
    with transaction(conn):
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (RUN_SELECTION_KEY, selection))
        refresh_current(conn)
        refresh_suspicion(conn)
        rebuild_scores(conn)


# -- one run on its own (comparisons) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunVerdict:
    report_id: int
    report: str
    kind: str
    subject: str
    """Names the subject across runs: the criterion, or the claim by its normalised fact (runs
    that extracted claims separately give the same fact different ids) plus the reference."""
    value: str | None
    error: str | None
    group: str = ""
    """The verdict's kind, with its criterion's dimension or its key where it has one (what
    run-to-run agreement is reported by)."""


def run_verdicts(conn: sqlite3.Connection, run: str) -> list[RunVerdict]:
    rows = run_rows(conn, run)
    out = []
    for rid, rext, kind, crit, fact, ref, key, subject, value, error, dim in conn.execute(
        f"""SELECT j.report_id, r.ext_id, j.kind, c.ext_id, k.fact, j.ref_idx, j.key,
                   j.subject, j.value, j.error, c.dimension
            FROM judgment j JOIN report r ON r.id = j.report_id
            LEFT JOIN criterion c ON c.id = j.criterion_id
            LEFT JOIN claim k ON k.id = j.claim_id
            WHERE j.run_id IN ({_in(rows)}) ORDER BY j.id""",
        rows,
    ):
        if crit is not None:
            name = "c=" + crit
        elif fact is not None:
            name = "f=" + " ".join(fact.split()).casefold() + ("" if ref is None else f";r={ref}")
        elif key is not None:
            name = "x=" + key
        else:
            name = subject
        part = dim or key
        out.append(
            RunVerdict(rid, rext, kind, name, value, error, f"{kind}/{part}" if part else kind)
        )
    return out


def run_report_ids(conn: sqlite3.Connection, run: str) -> list[int]:
    rows = run_rows(conn, run)
    return [
        int(r)
        for (r,) in conn.execute(
            f"SELECT DISTINCT report_id FROM judgment WHERE run_id IN ({_in(rows)}) ORDER BY 1",
            rows,
        )
    ]


@dataclass(frozen=True, slots=True)
class RunScores:
    """One run's scores, as if it were the only run that counted for what it judged."""

    reports: dict[tuple[int, str], ReportScores]
    """(report id, framework) -> scores."""
    systems: dict[tuple[str, str], dict[str, Aggregate]]
    """(system ext id, framework) -> aggregates over the reports scored."""


def run_scores(
    conn: sqlite3.Connection,
    run: str,
    report_ids: Sequence[int] | None = None,
    variant: Variant = "judge",
    own_only: bool = False,
    inputs: ScoringInputs | None = None,
) -> RunScores:
    """Score the reports ``run`` judged (restricted to ``report_ids`` when given) from that
    run's judgments alone, computed on the fly with each framework's ``score_report``.

    Verdict kinds the run did not judge on a report (a DailyReport run re-judges ins,
    consistency and rat but not claim factuality) are taken from the report's current
    judgments, so that two runs differ only where they both judged; with ``own_only`` they
    are left out instead, so that a metric whose inputs the run did not judge has no value
    (a noise band must not count another run's figure as this one's). Human decisions on
    the run's own judgments count in the ``adjudicated`` variant. ``inputs``: the reports'
    inputs loaded once for several runs (:func:`scoring_inputs`), else each call loads them.
    """
    rows = run_rows(conn, run)
    judged = set(run_report_ids(conn, run))
    ids = sorted(judged if report_ids is None else judged & set(report_ids))
    if not ids:
        return RunScores({}, {})
    decided = dict(
        conn.execute("SELECT subject_id, value FROM decision WHERE status != 'conflict'").fetchall()
    )
    own: dict[int, list[VerdictIn]] = defaultdict(list)
    for row in conn.execute(
        f"""SELECT id, report_id, kind, subtask_id, criterion_id, claim_id, ref_idx, key,
                   value, value, error, subject_id FROM judgment
            WHERE run_id IN ({_in(rows)}) AND report_id IN ({_in(ids)}) ORDER BY id""",
        [*rows, *ids],
    ):
        verdict = VerdictIn._make(row)
        if verdict.subject in decided:
            verdict = verdict._replace(effective=decided[verdict.subject])
        own[verdict.report_id].append(verdict)
    return _score_reports(conn, ids, own, variant, own_only, inputs)


@dataclass(frozen=True, slots=True)
class ScoringInputs:
    """What scoring reads of some reports besides a run's verdicts, loaded once."""

    ids: frozenset[int]
    """The reports asked for (the scored ones among them have inputs)."""
    inputs: dict[int, ReportInput]
    metas: dict[int, ReportMeta]


def scoring_inputs(conn: sqlite3.Connection, report_ids: Sequence[int]) -> ScoringInputs:
    """The inputs of ``report_ids`` for scoring several runs of them (the loading is most of
    scoring a run)."""
    ids = sorted(set(report_ids))
    return ScoringInputs(frozenset(ids), load_inputs(conn, ids), report_meta(conn, ids))


def verdict_free_scores(
    conn: sqlite3.Connection,
    report_ids: Sequence[int],
    variant: Variant = "judge",
    inputs: ScoringInputs | None = None,
) -> RunScores:
    """The reports scored with no verdict at all: the value a framework gives a metric by
    default (DR. Bench's trust boost of 1 without trusted-source verdicts), which a run whose
    own-only score equals it has not informed."""
    return _score_reports(conn, sorted(set(report_ids)), {}, variant, True, inputs)


def _score_reports(
    conn: sqlite3.Connection,
    ids: Sequence[int],
    own: Mapping[int, list[VerdictIn]],
    variant: Variant,
    own_only: bool,
    loaded: ScoringInputs | None = None,
) -> RunScores:
    """Each report scored from ``own`` verdicts (with the current ones of the other kinds,
    unless ``own_only``), and each system's aggregates."""
    if not ids:
        return RunScores({}, {})
    if loaded is None or not loaded.ids.issuperset(ids):
        loaded = scoring_inputs(conn, ids)
    inputs, metas = loaded.inputs, loaded.metas
    systems = dict(conn.execute("SELECT id, ext_id FROM system").fetchall())
    options = load_options(conn)
    registry = frameworks()
    reports: dict[tuple[int, str], ReportScores] = {}
    grouped: dict[tuple[str, str], list[ReportScores]] = defaultdict(list)
    for rid in ids:
        base = inputs.get(rid)
        if base is None:
            continue
        mine = own.get(rid, [])
        kinds = {v.kind for v in mine}
        report = ReportInput(
            report_id=base.report_id,
            task_id=base.task_id,
            system_id=base.system_id,
            task_metadata=base.task_metadata,
            report_metadata=base.report_metadata,
            subtasks=base.subtasks,
            criteria=base.criteria,
            claims=base.claims,
            verdicts=mine if own_only else [v for v in base.verdicts if v.kind not in kinds] + mine,
            expansions=base.expansions,
        )
        for name in metas[rid].frameworks:
            fw = registry.get(name)
            if fw is None:
                continue
            scores = fw.score_report(report, variant, options[name])
            reports[(rid, name)] = scores
            grouped[(systems[base.system_id], name)].append(scores)
    aggregates = {
        key: registry[key[1]].aggregate(values, options[key[1]]) for key, values in grouped.items()
    }
    return RunScores(reports, aggregates)


def suite_runs(conn: sqlite3.Connection, suite: str | None = None) -> list[str]:
    """The runs of ``suite`` (every run when None), oldest first; error for an unknown suite."""
    if (
        suite is not None
        and conn.execute("SELECT 1 FROM suite WHERE ext_id = ?", (suite,)).fetchone() is None
    ):
        raise InputError("command line", f"no suite {suite!r}", field="--suite")
    rows = conn.execute(
        "SELECT jr.ext_id FROM judge_run jr JOIN suite s ON s.id = jr.suite_id "
        "WHERE ? IS NULL OR s.ext_id = ? ORDER BY jr.created_at, jr.id",
        (suite, suite),
    )
    return list(dict.fromkeys(ext for (ext,) in rows))
