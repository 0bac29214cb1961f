"""Noticing what other processes committed to the database, cheaply and without guessing.

Several reviewers often share one database on one host (SSH, one WAL file) and each runs a
workstation; a suite imported or a log merged from a shell belongs on every open screen too.
``PRAGMA data_version`` changes for a connection whenever *another* connection commits, so a
poll costs one pragma when nothing happened. When it moves, the new review events say which
reports changed and who changed them; events this workstation wrote itself are skipped (the
screen already shows them); anything else that moved (a suite, a judge run's activation, a
proposal, the scoring options) asks for a full reload.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Change:
    reports: frozenset[int]
    """Reports whose decisions, flags or ratings another process changed."""
    reviewers: tuple[str, ...]
    events: int
    structural: bool
    """Something beyond decisions moved: reload everything."""
    touched: frozenset[tuple[int, int | None]] = frozenset()
    """(report, subject) of each of those events; the subject is None for an event about
    the report itself (a rating). A screen can tell from it whether a change is one it
    shows: on the blind overlap, a co-reviewer's decision is not."""


_SHAPE = """SELECT (SELECT count(*) FROM suite), (SELECT coalesce(max(id), 0) FROM judge_run),
                   (SELECT coalesce(sum(active), 0) FROM judge_run),
                   (SELECT count(*) FROM proposal),
                   (SELECT value FROM meta WHERE key = 'options')"""


@dataclass(slots=True)
class ChangeWatcher:
    """Polls one connection (its owner's thread only)."""

    conn: sqlite3.Connection
    is_own: Callable[[str], bool]
    version: int = -1
    seq: int = 0
    shape: tuple[object, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        self.version = self._version()
        self.seq = int(
            self.conn.execute("SELECT coalesce(max(seq), 0) FROM review_event").fetchone()[0]
        )
        self.shape = tuple(self.conn.execute(_SHAPE).fetchone())

    def _version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def poll(self) -> Change | None:
        version = self._version()
        if version == self.version:
            return None
        self.version = version
        rows = self.conn.execute(
            """SELECT e.seq, e.uuid, e.reviewer, e.action,
                      coalesce(s.report_id, e.report_id), s.id
               FROM review_event e LEFT JOIN subject s ON s.target = e.target
               WHERE e.seq > ? ORDER BY e.seq""",
            (self.seq,),
        ).fetchall()
        if rows:
            self.seq = int(rows[-1][0])
        foreign = [r for r in rows if not self.is_own(str(r[1]))]
        shape = tuple(self.conn.execute(_SHAPE).fetchone())
        structural = shape != self.shape or any(
            r[3] in ("propose", "accept", "reject") for r in foreign
        )
        self.shape = shape
        if not foreign and not structural:
            return None
        return Change(
            frozenset(int(r[4]) for r in foreign if r[4] is not None),
            tuple(sorted({str(r[2]) for r in foreign})),
            len(foreign),
            structural,
            frozenset((int(r[4]), None if r[5] is None else int(r[5])) for r in foreign if r[4]),
        )
