"""The rows a judge card is built from: each subject a run judged that a human decided, with
its rubric item, the decision's reviewer and rationale (:mod:`reviewer.judge_card`).

Gold labels are decisions in force (single, unanimous or adjudicated; an open conflict is no
label): the same decisions the activation preview and ``gavel runs --against-gold`` count.
"""

from __future__ import annotations

import sqlite3

from reviewer.judge_card.build import Card, Label, Settings, build_card
from store.runs.activation import HUMAN
from store.runs.records import run_rows


def run_labels(conn: sqlite3.Connection, run: str) -> tuple[list[Label], int]:
    """(labels, subjects decided that the run judged with an error)."""
    rows = run_rows(conn, run)
    marks = ",".join("?" * len(rows))
    labels: list[Label] = []
    errored = 0
    for (
        kind,
        value,
        gold,
        dimension,
        item,
        text,
        task,
        report,
        system,
        reviewer,
        rationale,
        explanation,
    ) in conn.execute(
        f"""SELECT j.kind, j.value, d.value, c.dimension, c.ext_id, c.text, t.ext_id, r.ext_id,
                   y.ext_id, e.reviewer, e.rationale, j.explanation
            FROM judgment j
            JOIN decision d ON d.subject_id = j.subject_id AND d.status IN {HUMAN}
            JOIN report r ON r.id = j.report_id
            JOIN task t ON t.id = r.task_id
            JOIN system y ON y.id = r.system_id
            LEFT JOIN criterion c ON c.id = j.criterion_id
            LEFT JOIN review_event e ON e.uuid = d.event_uuid
            WHERE j.run_id IN ({marks}) AND d.value IS NOT NULL
            ORDER BY j.id""",
        rows,
    ):
        if value is None:
            errored += 1
            continue
        labels.append(
            Label(
                kind=kind,
                judge=value,
                human=gold,
                dimension=dimension or "",
                item=item,
                text=text or "",
                task=task,
                report=report,
                system=system,
                reviewer=reviewer or "",
                rationale=rationale or "",
                explanation=explanation or "",
            )
        )
    return labels, errored


def run_card(conn: sqlite3.Connection, run: str, settings: Settings | None = None) -> Card:
    """The judge card of ``run`` (external id or row id)."""
    rows = run_rows(conn, run)
    marks = ",".join("?" * len(rows))
    ext, model, active = conn.execute(
        f"SELECT max(ext_id), max(model), max(active) FROM judge_run WHERE id IN ({marks})", rows
    ).fetchone()
    labels, errored = run_labels(conn, run)
    return build_card(ext, model, bool(active), labels, errored, settings)
