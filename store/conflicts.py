"""Each reviewer's standing decision per judgment, the conflicts between them, adjudication.

A reviewer's standing decision on a judgment is their latest live confirm or override (undone
ones do not count; adjudications are not a reviewer's own reading and are left out). Two
reviewers whose standing decisions differ put the judgment in conflict (``decision.status``);
the judgment keeps its judge value until someone adjudicates, never a silent last-write-wins.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter

from reviewer.adjudication import Side, adjudication_rationale
from store.reviewlog import Recorded, ReviewLog, judgment_ref


def standing_decisions(
    conn: sqlite3.Connection, judgment_ids: Sequence[int] | None = None
) -> Iterator[tuple[int, list[Side]]]:
    """(judgment id, sides in reviewer order) for every judgment some reviewer decided.

    Streams in judgment-id order; "latest" follows the order ``refresh_decision`` uses
    (created_at, then log order), so the sides always match the stored decision status.
    """
    where = ""
    params: list[int] = []
    if judgment_ids is not None:
        unique = sorted(set(judgment_ids))
        if not unique:
            return
        where = f"AND e.judgment_id IN ({','.join('?' * len(unique))})"
        params = unique
    rows = conn.execute(
        f"""SELECT e.judgment_id, e.reviewer, e.value, e.rationale, e.reason, e.created_at,
                   e.uuid
            FROM review_event e JOIN event_live l ON l.uuid = e.uuid
            WHERE l.live = 1 AND e.action IN ('confirm', 'override') {where}
            ORDER BY e.judgment_id, e.created_at, e.seq""",
        params,
    )
    for judgment_id, group in groupby(rows, key=itemgetter(0)):
        latest: dict[str, Side] = {}
        for _, reviewer, value, rationale, reason, created_at, event in group:
            latest[reviewer] = Side(reviewer, value, rationale, reason, created_at, event)
        yield int(judgment_id), [latest[r] for r in sorted(latest)]


@dataclass(frozen=True, slots=True)
class Conflict:
    """A judgment two or more reviewers decided differently, with every side."""

    judgment_id: int
    target: str
    suite: str
    task: str
    system: str
    report: str
    kind: str
    subject: str
    judge_value: str | None
    sides: tuple[Side, ...]


def conflicts(conn: sqlite3.Connection) -> list[Conflict]:
    """Every judgment in conflict, in judgment-id order, with each reviewer's side."""
    heads = conn.execute(
        """SELECT j.id, s.ext_id, t.ext_id, y.ext_id, r.ext_id, j.kind, j.subject, j.value,
                  jr.ext_id
           FROM decision d
           JOIN judgment j ON j.id = d.judgment_id
           JOIN report r ON r.id = j.report_id
           JOIN task t ON t.id = r.task_id
           JOIN system y ON y.id = r.system_id
           JOIN judge_run jr ON jr.id = j.run_id
           JOIN suite s ON s.id = jr.suite_id
           WHERE d.status = 'conflict' ORDER BY j.id"""
    ).fetchall()
    if not heads:
        return []
    sides = dict(standing_decisions(conn, [h[0] for h in heads]))
    return [
        Conflict(jid, f"j:{suite}/{report}/{run}/{kind}/{subject}", suite, task, system, report,
                 kind, subject, judge, tuple(sides.get(jid, [])))
        for jid, suite, task, system, report, kind, subject, judge, run in heads
    ]


def adjudicate(
    conn: sqlite3.Connection,
    reviewer: str,
    judgment_id: int,
    value: object,
    rationale: str,
    reason: str | None = None,
) -> Recorded:
    """Resolve a judgment with an adjudication event that records the sides it resolved.

    The sides (each reviewer's standing decision, event uuid, value and rationale) are appended
    to the rationale (see :func:`reviewer.proposals.adjudication_rationale`), so the log itself
    says what was decided between, wherever it is merged. The caller updates the scores, as
    after any decision.
    """
    judgment_ref(conn, judgment_id)  # an unknown id fails before anything else
    sides = next(iter(standing_decisions(conn, [judgment_id])), (judgment_id, []))[1]
    text = adjudication_rationale(rationale, sides)
    return ReviewLog(conn, reviewer).decide(judgment_id, value, text, reason, adjudicate=True)
