"""Moving a benchmark's verdicts to a new judge model, checked against the humans first.

A judge model is retired; the maintainer must re-judge with another and know, before paying
for everything, whether the new model agrees with the human labels as well as the old one did.
So the migration runs in two phases from one source run: first the new model judges only the
reports where humans labelled subjects the source run judged (cheap), and that candidate is
compared with the gold labels beside what counts now, with the exact score and rank changes
activating it would make (:func:`store.runs.activation.preview`); then, on confirmation, the full
run over every report the source run judged, whose already-judged gold reports come from the
response cache for free. Both are candidates: activating remains its own decision.

Which framework and steps: those of the source run (its stored ``framework``, else the
framework of the verdict kinds it holds), limited to the steps that re-judge existing subjects
(:attr:`reviewer.judge.pipeline.PipelineSpec.gold_steps`), so every verdict of the new run can
be compared with a label.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, replace

from reviewer.errors import InputError
from reviewer.judge.pipeline import PipelineSpec
from reviewer.registry import frameworks, get_kind
from store.runs.activation import HUMAN
from store.runs.judging import (
    JudgePlan,
    JudgeRequest,
    PreparedJudge,
    Selection,
    plan_judge,
    prepare_judge,
    spec_for,
)
from store.runs.records import run_report_ids, run_rows


@dataclass(frozen=True, slots=True)
class MigrationPlan:
    source: str
    framework: str
    steps: frozenset[str]
    reports: list[int]
    """Every report the source run judged (the full run)."""
    gold_reports: list[int]
    """Those with a human label on a subject the source run judged (the first phase)."""
    labelled_subjects: int
    gold: PreparedJudge
    full: PreparedJudge
    gold_plan: JudgePlan
    full_plan: JudgePlan


def source_framework(conn: sqlite3.Connection, run: str) -> str:
    """The framework a run judged: its own record, else its verdict kinds' (one only)."""
    rows = run_rows(conn, run)
    marks = ",".join("?" * len(rows))
    for (params,) in conn.execute(f"SELECT params FROM judge_run WHERE id IN ({marks})", rows):
        framework = json.loads(params).get("framework")
        if isinstance(framework, str) and framework in frameworks():
            return framework
    kinds = Counter(
        kind
        for (kind,) in conn.execute(f"SELECT kind FROM judgment WHERE run_id IN ({marks})", rows)
    )
    found = {k.framework for name in kinds if (k := get_kind(name)) is not None}
    judged = {
        f
        for f in found
        if (fw := frameworks().get(f)) is not None
        and fw.rejudge is not None
        and fw.rejudge.pipeline
    }
    if len(judged) != 1:
        what = ", ".join(sorted(found)) or "no verdicts"
        raise InputError(
            "command line",
            f"run {run} judged {what}: name the framework to migrate with --framework",
            field="--from",
        )
    return judged.pop()


def _steps(
    spec: PipelineSpec, framework: str, conn: sqlite3.Connection, run: str
) -> frozenset[str]:
    """The steps that re-judge what the source run judged, never extraction."""
    rows = run_rows(conn, run)
    kinds = {
        k
        for (k,) in conn.execute(
            f"SELECT DISTINCT kind FROM judgment WHERE run_id IN ({','.join('?' * len(rows))})",
            rows,
        )
    }
    rejudge = frameworks()[framework].rejudge
    mapped = {rejudge.steps.get(k, k) for k in kinds} if rejudge is not None else set()
    chosen = frozenset(s for s in spec.gold_steps if s in mapped)
    return chosen or frozenset(spec.gold_steps)


def gold_reports(conn: sqlite3.Connection, run: str) -> tuple[list[int], int]:
    """(reports with a human label on a subject ``run`` judged, how many such subjects)."""
    rows = run_rows(conn, run)
    found = conn.execute(
        f"""SELECT DISTINCT j.report_id, j.subject_id FROM judgment j
            JOIN decision d ON d.subject_id = j.subject_id AND d.status IN {HUMAN}
            WHERE j.run_id IN ({",".join("?" * len(rows))})""",
        rows,
    ).fetchall()
    return sorted({int(r) for r, _ in found}), len({s for _, s in found})


def plan_migration(
    conn: sqlite3.Connection,
    source: str,
    request: JudgeRequest,
    api_key: str | None,
    framework: str | None = None,
) -> MigrationPlan:
    """Both phases prepared and costed; nothing is sent."""
    name = framework or source_framework(conn, source)
    spec = spec_for(name)
    steps = request.steps or _steps(spec, name, conn, source)
    reports = run_report_ids(conn, source)
    gold, labelled = gold_reports(conn, source)
    if not reports:
        raise InputError("command line", f"run {source} judged no report", field="--from")
    base = replace(request, framework=name, steps=steps)
    full = prepare_judge(
        conn,
        replace(
            base, selection=Selection(reports=[str(r) for r in reports]), run_id=request.run_id
        ),
        api_key,
    )
    gold_request = replace(
        base,
        selection=Selection(reports=[str(r) for r in gold]),
        run_id=(request.run_id + "-gold") if request.run_id else None,
        description=(request.description or "")
        + f" (migration from {source}: the labelled reports)",
    )
    gold_prepared = (
        prepare_judge(conn, gold_request, api_key) if gold else replace(full, loaded=[], suites=[])
    )
    return MigrationPlan(
        source,
        name,
        steps,
        reports,
        gold,
        labelled,
        gold_prepared,
        full,
        plan_judge(conn, gold_prepared),
        plan_judge(conn, full),
    )
