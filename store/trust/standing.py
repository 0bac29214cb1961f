"""What the rule in force accepted, as the workstation reads it on every screen.

Kept apart from the calibration (:mod:`store.trust.rules`, which needs numpy) so that
opening the queue or a report does not load what only calibrating uses.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    """The rule in force, as stored."""

    name: str
    plan: str
    alpha: float
    delta: float
    threshold: float
    labels: int
    created_at: str
    created_by: str
    accepted: int
    """Acceptances still standing (verdict current, subject undecided)."""

    def describe(self) -> str:
        return (
            f"rule {self.name} (plan {self.plan}, α={self.alpha:g}, δ={self.delta:g}, "
            f"threshold {self.threshold:.4f}, {self.labels} gold labels)"
        )


_STANDING = """
    FROM trust_accepted t
    JOIN judgment j ON j.id = t.judgment_id AND j.current = 1
    LEFT JOIN decision d ON d.subject_id = t.subject_id
    WHERE d.subject_id IS NULL
"""


def current_rule(conn: sqlite3.Connection) -> Rule | None:
    row = conn.execute(
        """SELECT r.name, p.name, r.alpha, r.delta, r.threshold, r.labels, r.created_at,
                  r.created_by
           FROM trust_rule r JOIN plan p ON p.id = r.plan_id ORDER BY r.id DESC LIMIT 1"""
    ).fetchone()
    if row is None:
        return None
    (standing,) = conn.execute("SELECT count(*) " + _STANDING).fetchone()
    return Rule(
        str(row[0]),
        str(row[1]),
        float(row[2]),
        float(row[3]),
        float(row[4]),
        int(row[5]),
        str(row[6]),
        str(row[7]),
        int(standing),
    )


def accepted_judgments(conn: sqlite3.Connection, report_id: int) -> set[int]:
    """The report's verdicts (judgment ids) accepted by the rule in force and standing."""
    return {
        int(j)
        for (j,) in conn.execute(
            "SELECT t.judgment_id " + _STANDING + " AND t.report_id = ?", (report_id,)
        )
    }


def acceptance_notes(
    conn: sqlite3.Connection, report_id: int, also: Iterable[int] = ()
) -> dict[int, str]:
    """The report's accepted verdicts (judgment id) with what accepted each, in words; with
    ``also``, acceptances a decision the reader may not see yet took away (blind review on
    the overlap, :mod:`store.assignments.blind`)."""
    ids = accepted_judgments(conn, report_id) | set(also)
    rule = current_rule(conn) if ids else None
    if rule is None:
        return {}
    note = (
        f"accepted by {rule.describe()}: agreement ≥ {1 - rule.alpha:.0%} guaranteed with "
        f"confidence {1 - rule.delta:.0%}; the judge's value, not a human label "
        "(a decision replaces it)"
    )
    return dict.fromkeys(ids, note)


def accepted_per_report(
    conn: sqlite3.Connection, report_ids: Sequence[int] | None = None
) -> dict[int, int]:
    """How many standing acceptances each report has (of ``report_ids`` when given, each of
    them present, 0 for none: a decision there only needs those recounted)."""
    if report_ids is None:
        return {
            int(r): int(n)
            for r, n in conn.execute("SELECT t.report_id, count(*) " + _STANDING + " GROUP BY 1")
        }
    counts = dict.fromkeys(report_ids, 0)
    for rid in report_ids:
        (counts[rid],) = conn.execute(
            "SELECT count(*) " + _STANDING + " AND t.report_id = ?", (rid,)
        ).fetchone()
    return counts


def accepted_subjects(conn: sqlite3.Connection, subjects: Sequence[int] | None = None) -> set[int]:
    """Subjects whose verdict the rule in force accepts (of ``subjects`` when given)."""
    found = {int(s) for (s,) in conn.execute("SELECT t.subject_id " + _STANDING)}
    return found if subjects is None else found & set(subjects)
