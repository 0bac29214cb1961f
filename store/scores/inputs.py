"""Loading what the scoring functions need, for all reports or for a few.

One query per table, grouped in Python: a full load of a DailyReport-size run is a handful of
sequential scans instead of thousands of per-report queries. Subtask and criterion lists are
shared between the reports of one task.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any

from reviewer.inputs import ClaimIn, CriterionIn, ReportInput, SubtaskIn, VerdictIn

EFFECTIVE_SQL = "CASE WHEN d.status IS NULL OR d.status = 'conflict' THEN j.value ELSE d.value END"
"""The effective verdict: a resolved human decision, else the judge's value."""

RUN_CLAIM_KEY = "gavel_judge_run"
"""``reviewer.models.RUN_CLAIM_KEY`` (the claim metadata key naming the judge run that
extracted a claim), repeated here so that the first screen's queries do not import pydantic."""

PROPOSAL_STATUS_SQL = """
    SELECT proposal,
           CASE WHEN min(action) OVER whole = max(action) OVER whole THEN action
                ELSE 'conflict' END AS action,
           reviewer, rationale, created_at, event,
           row_number() OVER (PARTITION BY proposal ORDER BY created_at DESC, event DESC) AS rn
    FROM (SELECT substr(e.target, 3) AS proposal, e.action AS action, e.reviewer AS reviewer,
                 e.rationale AS rationale, e.created_at AS created_at, e.uuid AS event,
                 row_number() OVER (PARTITION BY e.target, e.reviewer, coalesce(e.key, '')
                                    ORDER BY e.created_at DESC, e.uuid DESC) AS mine
          FROM review_event e
          WHERE e.target >= 'p:' AND e.target < 'p;' AND e.action IN ('accept', 'reject'))
    WHERE mine = 1
    WINDOW whole AS (PARTITION BY proposal)
"""
"""The standing status of each decided ground-truth proposal (``rn = 1``; its ``action``).

Each identity (name and key) stands by its own newest accept or reject, by its own clock; when
the identities' standing actions differ, the proposal is in ``conflict`` — neither accepted nor
rejected — whatever their time stamps say, so no clock (or a forged far-future date) decides
between two people. The row's reviewer, rationale and time are the newest standing event's,
for display. Nothing depends on log position, so merging logs in any order gives the same
status. The target range finds the few of them on the target index, without a scan of the log.
"""


@dataclass(frozen=True, slots=True)
class ReportMeta:
    report_id: int
    task_id: int
    system_id: int
    suite_id: int
    frameworks: tuple[str, ...]
    metadata: dict[str, Any]


def report_meta(
    conn: sqlite3.Connection, report_ids: Sequence[int] | None = None
) -> dict[int, ReportMeta]:
    """The scored reports' metadata (of ``report_ids`` if given)."""
    where, params = _where("r.id", report_ids)
    rows = conn.execute(
        f"""SELECT r.id, r.task_id, r.system_id, s.id, s.frameworks, r.metadata
            FROM report r JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id
            WHERE y.is_reference = 0 {where} ORDER BY r.id""",
        params,
    ).fetchall()
    cache: dict[str, tuple[str, ...]] = {}
    out: dict[int, ReportMeta] = {}
    for rid, tid, sid, suite_id, fw, metadata in rows:
        frameworks = cache.get(fw)
        if frameworks is None:
            frameworks = cache[fw] = tuple(json.loads(fw))
        out[rid] = ReportMeta(
            rid, tid, sid, suite_id, frameworks, json.loads(metadata) if metadata != "{}" else {}
        )
    return out


def _where(column: str, ids: Sequence[int] | None) -> tuple[str, list[int]]:
    if ids is None:
        return "", []
    unique = sorted(set(ids))
    return f"AND {column} IN ({','.join('?' * len(unique))})", unique


def task_structure(
    conn: sqlite3.Connection, task_ids: Sequence[int] | None = None
) -> tuple[dict[int, dict[str, Any]], dict[int, list[SubtaskIn]], dict[int, list[CriterionIn]]]:
    """Each task's metadata, subtasks and criteria (in order): shared by its reports."""
    twhere, tparams = _where("task_id", task_ids)
    task_meta: dict[int, dict[str, Any]] = {}
    for tid, metadata in conn.execute(
        f"SELECT id, metadata FROM task WHERE 1 {_where('id', task_ids)[0]}", tparams
    ):
        task_meta[tid] = json.loads(metadata) if metadata != "{}" else {}
    subtasks: dict[int, list[SubtaskIn]] = defaultdict(list)
    for sid, tid, importance, grp in conn.execute(
        f"SELECT id, task_id, importance, grp FROM subtask WHERE 1 {twhere} "
        "ORDER BY task_id, ordinal",
        tparams,
    ):
        subtasks[tid].append(SubtaskIn(sid, importance, grp))
    criteria: dict[int, list[CriterionIn]] = defaultdict(list)
    for cid, tid, subtask_id, dimension, weight, text in conn.execute(
        f"SELECT id, task_id, subtask_id, dimension, weight, text FROM criterion WHERE 1 {twhere} "
        "ORDER BY task_id, ordinal",
        tparams,
    ):
        criteria[tid].append(CriterionIn(cid, subtask_id, dimension, weight, text))
    return task_meta, subtasks, criteria


def load_inputs(
    conn: sqlite3.Connection, report_ids: Sequence[int] | None = None
) -> dict[int, ReportInput]:
    """ReportInput for the given reports (all scored reports when None)."""
    metas = report_meta(conn, report_ids)
    if not metas:
        return {}
    ids = None if report_ids is None else list(metas)
    task_ids = None if report_ids is None else sorted({m.task_id for m in metas.values()})
    task_meta, subtasks, criteria = task_structure(conn, task_ids)
    expansions = _expansions(conn, task_ids)
    inputs: dict[int, ReportInput] = {}
    for rid, meta in metas.items():
        inputs[rid] = ReportInput(
            report_id=rid,
            task_id=meta.task_id,
            system_id=meta.system_id,
            task_metadata=task_meta.get(meta.task_id, {}),
            report_metadata=meta.metadata,
            subtasks=subtasks.get(meta.task_id, []),
            criteria=criteria.get(meta.task_id, []),
            expansions=expansions.get(meta.task_id, []),
        )
    _add_claims(conn, inputs, ids)
    _add_verdicts(conn, inputs, ids)
    return inputs


def _expansions(
    conn: sqlite3.Connection, task_ids: Sequence[int] | None
) -> dict[int, list[dict[str, Any]]]:
    """Accepted ground-truth expansions, by task: shared by every report of the task. A
    rubric item under revision (``revise_item``) changes no score and is left out."""
    expansions: dict[int, list[dict[str, Any]]] = defaultdict(list)
    where, params = _where("p.task_id", task_ids)
    for tid, kind, framework, payload, target, puuid in conn.execute(
        f"""SELECT p.task_id, p.kind, p.framework, p.payload, p.target, p.uuid
            FROM proposal p JOIN ({PROPOSAL_STATUS_SQL}) s ON s.proposal = p.uuid AND s.rn = 1
            WHERE s.action = 'accept' AND p.kind != 'revise_item' {where}
            ORDER BY p.task_id, p.created_at, p.uuid""",
        params,
    ):
        expansions[tid].append(
            {
                "kind": kind,
                "framework": framework,
                "payload": json.loads(payload),
                "target": target,
                "proposal": puuid,
            }
        )
    return expansions


def _add_claims(
    conn: sqlite3.Connection, inputs: dict[int, ReportInput], ids: Sequence[int] | None
) -> None:
    """Each report's extracted claims, in order, with the judge run that extracted each."""
    rwhere, rparams = _where("report_id", ids)
    cites_cache: dict[str, tuple[int, ...]] = {"[]": ()}
    ranks = {
        ext: int(rank)
        for ext, rank in conn.execute("SELECT ext_id, max(active) FROM judge_run GROUP BY ext_id")
    }
    for rid, rows in groupby(
        conn.execute(
            f"SELECT report_id, id, subtask_id, criterion_id, citations, url, "
            f"CASE WHEN metadata = '{{}}' THEN NULL "
            f"ELSE json_extract(metadata, '$.{RUN_CLAIM_KEY}') END FROM claim "
            f"WHERE 1 {rwhere} ORDER BY report_id, ordinal",
            rparams,
        ),
        key=itemgetter(0),
    ):
        target = inputs.get(rid)
        if target is None:
            continue
        claims = target.claims
        for _, kid, subtask_id, criterion_id, citations, url, origin in rows:
            cites = cites_cache.get(citations)
            if cites is None:
                cites = cites_cache[citations] = tuple(json.loads(citations))
            rank = ranks.get(origin, 0) if origin is not None else 0
            claims.append(ClaimIn(kid, subtask_id, criterion_id, cites, url, origin, rank))


def _add_verdicts(
    conn: sqlite3.Connection, inputs: dict[int, ReportInput], ids: Sequence[int] | None
) -> None:
    """Each report's verdicts in force, with the human decisions in force on them.

    Judge values come from one scan of a covering index; the human decisions are patched
    in afterwards instead of joining every row against the decision table. For a few
    reports (a decision's rescore) only their subjects' decisions are read: a team that has
    decided a whole run holds ~10⁵ of them, and reading all would cost every keypress.
    """
    swhere, sparams = _where("s.report_id", ids)
    decided = {
        jid: value
        for jid, value in conn.execute(
            "SELECT d.subject_id, d.value FROM decision d "
            + ("" if ids is None else "JOIN subject s ON s.id = d.subject_id ")
            + f"WHERE d.status != 'conflict' {swhere}",
            sparams,
        )
    }
    make = VerdictIn._make
    jwhere, jparams = _where("report_id", ids)
    for rid, rows in groupby(
        conn.execute(
            f"""SELECT id, report_id, kind, subtask_id, criterion_id, claim_id, ref_idx, key,
                   value, value, error, subject_id
            FROM judgment INDEXED BY judgment_scoring
            WHERE current = 1 {jwhere} ORDER BY report_id""",
            jparams,
        ),
        key=itemgetter(1),
    ):
        target = inputs.get(rid)
        if target is None:
            continue
        verdicts = list(map(make, rows))
        if decided:
            for i, verdict in enumerate(verdicts):
                if verdict.subject in decided:
                    verdicts[i] = verdict._replace(effective=decided[verdict.subject])
        target.verdicts = verdicts
