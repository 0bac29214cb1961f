"""Each reviewer's standing decision per subject, the conflicts between them, adjudication.

A reviewer's standing decision on a subject is their identity's latest live confirm or override
(undone ones do not count; adjudications that rule are not a reviewer's own reading and are
left out, while one that does not rule — unsigned beside signed reviewers, or by a key this
database does not hold as an adjudicator's — is one more side), resolved exactly as
:func:`store.reviewlog.events.refresh_decision` does. Two identities whose standing decisions
differ put the subject in conflict (``decision.status``); its judgments keep
their judge values until someone adjudicates, never a silent last-write-wins.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any

from reviewer.adjudication import Side, adjudication_rationale
from reviewer.identity import Identity
from store.reviewlog.events import (
    Adjudicators,
    Claims,
    Recorded,
    ReviewLog,
    Row,
    _standing,
    display_name,
    judgment_ref,
    rulings,
    trusted_adjudicators,
)

Record = dict[str, Any]


def standing_decisions(
    conn: sqlite3.Connection, subject_ids: Sequence[int] | None = None
) -> Iterator[tuple[int, list[Side]]]:
    """(subject id, sides in reviewer order) for every subject some reviewer decided, in
    subject-id order."""
    where = ""
    params: list[int] = []
    if subject_ids is not None:
        unique = sorted(set(subject_ids))
        if not unique:
            return
        where = f"AND s.id IN ({','.join('?' * len(unique))})"
        params = unique
    rows = conn.execute(
        f"""SELECT s.id, e.uuid, e.reviewer, e.key, e.action, e.value, e.created_at,
                   e.supersedes, e.rationale, e.reason
            FROM subject s JOIN review_event e ON e.target = s.target
            JOIN event_live l ON l.uuid = e.uuid
            WHERE l.live = 1 AND e.action IN ('confirm', 'override', 'adjudicate') {where}
            ORDER BY s.id""",
        params,
    )
    claims = Claims(conn)
    trusted = trusted_adjudicators(conn)
    for subject_id, group in groupby(rows, key=itemgetter(0)):
        events = list(group)
        notes = {row[1]: (row[8], row[9]) for row in events}
        standing = _sides([_as_row(row) for row in events], claims, trusted)
        if not standing:
            continue
        yield (
            int(subject_id),
            sorted(
                (
                    Side(
                        display_name(conn, row[1], row[2]),
                        row[4],
                        notes[row[0]][0],
                        notes[row[0]][1],
                        row[5],
                        row[0],
                    )
                    for row in standing.values()
                ),
                key=lambda side: side.reviewer,
            ),
        )


def _sides(rows: list[Row], claims: Claims, trusted: Adjudicators) -> dict[str, Row]:
    """The standing decisions that are sides: reviewers', and adjudications that do not
    rule."""
    reviewers = _standing([row for row in rows if row[3] != "adjudicate"], claims)
    adjudications = _standing([row for row in rows if row[3] == "adjudicate"], claims)
    return rulings(reviewers, adjudications, trusted)[1]


def _as_row(row: tuple[Any, ...]) -> Row:
    """(subject id, uuid, reviewer, key, action, value, created_at, supersedes, …) as the
    reviewlog's Row."""
    return (row[1], row[2], row[3], row[4], row[5], row[6], row[7])


_LIVE_DECISIONS_SQL = """
    SELECT s.id, e.uuid, e.reviewer, e.key, e.action, e.value, e.created_at, e.supersedes,
           e.rationale, e.reason, e.run
    FROM subject s JOIN review_event e ON e.target = s.target
    JOIN event_live l ON l.uuid = e.uuid
    WHERE l.live = 1 AND e.action IN ('confirm', 'override', 'adjudicate')
    ORDER BY s.id
"""


def decisions_by_subject(conn: sqlite3.Connection) -> dict[int, list[Record]]:
    """Per decided subject: each identity's standing decision and standing adjudication,
    oldest first (time, then uuid, so merge order never shows) — resolved as the decision
    table is."""
    out: dict[int, list[Record]] = {}
    claims = Claims(conn)
    for sid, rows in groupby(conn.execute(_LIVE_DECISIONS_SQL), key=itemgetter(0)):
        events = list(rows)
        extra = {r[1]: r for r in events}
        standing = [
            *_standing([r[1:8] for r in events if r[4] != "adjudicate"], claims).items(),
            *_standing([r[1:8] for r in events if r[4] == "adjudicate"], claims).items(),
        ]
        standing.sort(key=lambda item: (item[1][5], item[1][0]))
        out[int(sid)] = [
            {
                "reviewer": display_name(conn, row[1], row[2]),
                "action": row[3],
                "value": row[4],
                "rationale": extra[row[0]][8],
                "reason": extra[row[0]][9],
                "created_at": row[5],
                "run": extra[row[0]][10],
                "event": row[0],
            }
            for who, row in standing
        ]
    return out


@dataclass(frozen=True, slots=True)
class Conflict:
    """A subject two or more reviewers decided differently, with every side."""

    subject_id: int
    judgment_id: int
    """The subject's current judgment (``gavel adjudicate`` takes its id)."""
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
    """Every subject in conflict, in subject order, with each reviewer's side."""
    heads = conn.execute(
        """SELECT s.id, j.id, s.target, su.ext_id, t.ext_id, y.ext_id, r.ext_id, s.kind, s.key,
                  j.value
           FROM decision d
           JOIN subject s ON s.id = d.subject_id
           JOIN judgment j ON j.subject_id = s.id AND j.current = 1
           JOIN report r ON r.id = s.report_id
           JOIN task t ON t.id = r.task_id
           JOIN system y ON y.id = r.system_id
           JOIN suite su ON su.id = y.suite_id
           WHERE d.status = 'conflict' ORDER BY s.id"""
    ).fetchall()
    if not heads:
        return []
    sides = dict(standing_decisions(conn, [h[0] for h in heads]))
    return [
        Conflict(
            sid,
            jid,
            target,
            suite,
            task,
            system,
            report,
            kind,
            subject,
            judge,
            tuple(sides.get(sid, [])),
        )
        for sid, jid, target, suite, task, system, report, kind, subject, judge in heads
    ]


def adjudicate(
    conn: sqlite3.Connection,
    reviewer: str,
    judgment_id: int,
    value: object,
    rationale: str,
    reason: str | None = None,
    identity: Identity | None = None,
) -> Recorded:
    """Resolve a subject with an adjudication event that records the sides it resolved.

    The sides (each reviewer's standing decision, event uuid, value and rationale) are appended
    to the rationale (see :func:`reviewer.adjudication.adjudication_rationale`), so the log
    itself says what was decided between, wherever it is merged. The caller updates the
    scores, as after any decision.
    """
    ref = judgment_ref(conn, judgment_id)  # an unknown id fails before anything else
    sides = next(iter(standing_decisions(conn, [ref.subject_id])), (ref.subject_id, []))[1]
    text = adjudication_rationale(rationale, sides)
    return ReviewLog(conn, reviewer, identity).decide(
        judgment_id, value, text, reason, adjudicate=True
    )
