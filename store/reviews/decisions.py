"""What a recorded decision did to its report's headline scores.

After any review event (decide, confirm, adjudicate, rate, undo, redo) the caller brings the
scores up to date; :func:`rescore` does that for one event and says what moved, so that an
interface can show the consequence of a decision next to the decision itself.
:func:`record` writes the event and its scores in one transaction: a process killed between
the two would otherwise leave a committed decision beside scores that ignore it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from reviewer.registry import find_framework
from store.reviewlog.events import Recorded
from store.scores import report_rows as report_scores
from store.scores.cache import update_scores
from store.sqlite.tx import transaction


@dataclass(frozen=True, slots=True)
class HeadlineChange:
    framework: str
    metric: str
    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


def report_headlines(
    conn: sqlite3.Connection, report_id: int
) -> dict[tuple[str, str], float | None]:
    """(framework, metric) -> the report's adjudicated score, for every headline metric."""
    out: dict[tuple[str, str], float | None] = {}
    heads: dict[str, set[str]] = {}
    for _, framework, _, scores in report_scores.read(conn, [report_id], variant="adjudicated"):
        if framework not in heads:  # only the report's frameworks are imported
            fw = find_framework(framework)
            heads[framework] = {m.name for m in fw.metrics if m.headline} if fw else set()
        for metric, value in scores.items():
            if metric in heads[framework]:
                out[(framework, metric)] = value
    return out


def rescore(conn: sqlite3.Connection, recorded: Recorded) -> list[HeadlineChange]:
    """Update the scores of the event's report; its headline scores before → after, ordered by
    framework and metric. Events that touch no report change nothing."""
    report_id = recorded.report_id
    if report_id is None:
        return []
    before = report_headlines(conn, report_id)
    update_scores(conn, [report_id])
    return [
        HeadlineChange(fw, metric, before.get((fw, metric)), value)
        for (fw, metric), value in sorted(report_headlines(conn, report_id).items())
    ]


def record(
    conn: sqlite3.Connection, write: Callable[[], Recorded | None]
) -> tuple[Recorded | None, list[HeadlineChange]]:
    """Run ``write`` (a :class:`store.reviewlog.events.ReviewLog` call) and rescore what it touched,
    committed together or not at all."""
    with transaction(conn):
        recorded = write()
        changes = rescore(conn, recorded) if recorded is not None else []
    return recorded, changes
