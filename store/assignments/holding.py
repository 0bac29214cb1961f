"""Which ``assign`` events still hold, once the ``unassign`` events that release them are read.

An ``unassign`` event names the ``assign`` events it ends (:class:`reviewer.assignment.Release`)
and is about either the whole target of those assignments or one subject of a report they
assigned. Holding is then a function of the set of events alone: an assignment holds a subject
unless a release of the same reviewer names it, about its target or about that subject. No
event is read in log order, so every database that has the same events agrees on who holds
what, whatever order its merges brought them in; an assignment made where the release was not
seen still holds, as a decision made meanwhile would.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Held:
    """An ``assign`` event that still holds all of its target, or all but ``released``."""

    uuid: str
    target: str
    to: str
    k: int
    released: frozenset[str] = frozenset()
    """Subjects of a report assignment taken back one by one (the reviewer decided others)."""


def held_events(conn: sqlite3.Connection, reviewer: str | None = None) -> list[Held]:
    """Every ``assign`` event (``reviewer``'s alone when given) that still holds something."""
    mine = "AND json_extract(value, '$.to') = ?" if reviewer is not None else ""
    params: tuple[str, ...] = (reviewer,) if reviewer is not None else ()
    rows = conn.execute(
        f"""SELECT uuid, target, json_extract(value, '$.to'), json_extract(value, '$.k')
            FROM review_event WHERE action = 'assign' {mine}""",
        params,
    ).fetchall()
    if not rows:
        return []
    releases = _releases(conn, reviewer)
    held: list[Held] = []
    for uuid, target, to, k in rows:
        ended = releases.get((uuid, to)) if releases else None
        if ended is None:
            held.append(Held(uuid, target, to, k))
        elif target not in ended:
            held.append(Held(uuid, target, to, k, frozenset(ended)))
    return held


def _releases(conn: sqlite3.Connection, reviewer: str | None) -> dict[tuple[str, str], set[str]]:
    """(assign event, reviewer released) → the targets it was released on (values were
    checked when written or merged: SQLite reads them without a model per event)."""
    mine = "AND json_extract(u.value, '$.from') = ?" if reviewer is not None else ""
    params: tuple[str, ...] = (reviewer,) if reviewer is not None else ()
    ended: dict[tuple[str, str], set[str]] = defaultdict(set)
    for target, giver, uuid in conn.execute(
        f"""SELECT u.target, json_extract(u.value, '$.from'), r.value
            FROM review_event u, json_each(u.value, '$.revokes') r
            WHERE u.action = 'unassign' {mine}""",
        params,
    ):
        ended[(str(uuid), str(giver))].add(str(target))
    return ended


def held_targets(conn: sqlite3.Connection) -> set[str]:
    """Targets someone holds, in whole or in part: handing work out leaves them alone, and a
    target taken back from everyone may be handed out again."""
    return {item.target for item in held_events(conn)}
