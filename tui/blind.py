"""Blind review on the overlap: what a reviewer is shown while other reviewers' values on
their overlap subjects must stay hidden from them (the rule is :mod:`store.assignments.blind`'s).

Those verdicts show as undecided, with the judge's value and no history, until the reviewer
decides them; the queue's counts and both screens' adjudicated scores leave the hidden
decisions out. Then the report is reloaded and everything shows, a disagreement included.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from typing import TypeVar

from store.assignments.blind import Hidden, blind_per_report, hidden_work
from store.views.screens import (
    JudgmentView,
    QueueRow,
    ReportView,
    ScoreLine,
    recheck_premises,
)

H = TypeVar("H")


def blinded(
    view: ReportView,
    history: dict[int, H],
    subjects: AbstractSet[int],
    hidden: Hidden | None = None,
) -> tuple[ReportView, dict[int, H]]:
    """The report with ``subjects`` undecided at the judge's value and without history, and
    the flags another reviewer put on them (``hidden``) taken off."""
    if not subjects:
        return view, history
    hidden_ids = {j.id for j in view.judgments if j.subject_id in subjects}
    view.judgments = _undecided(view.judgments, hidden_ids)
    if hidden is not None and hidden.flagged:
        view.judgments = _unflagged(view.judgments, hidden.flagged)
    # The flags whose premise is another verdict were checked against the hidden values.
    recheck_premises(view)
    return view, {jid: h for jid, h in history.items() if jid not in hidden_ids}


def _undecided(judgments: list[JudgmentView], ids: AbstractSet[int]) -> list[JudgmentView]:
    """The ``ids`` verdicts as nobody decided them: the judge's value, no status."""
    return [
        replace(j, status=None, effective=j.judge, reviewers=0) if j.id in ids else j
        for j in judgments
    ]


def _unflagged(judgments: list[JudgmentView], subjects: AbstractSet[int]) -> list[JudgmentView]:
    """Without the flags someone else put on ``subjects``."""
    return [
        replace(j, flagged=False, flag_note=None) if j.subject_id in subjects else j
        for j in judgments
    ]


def blinded_rows(rows: Iterable[QueueRow], hidden: Mapping[int, Hidden]) -> None:
    """Take the hidden decisions and flags out of the queue rows they are counted in."""
    if not hidden:
        return
    for row in rows:
        found = hidden.get(row.report_id)
        if found is None:
            continue
        row.decided -= found.decided
        row.differs -= found.differs
        row.conflicts -= found.conflicts
        row.flags -= found.flags
        row.suspects += found.suspects
        row.suspicion += found.suspicion
        for framework, scores in found.adjudicated.items():
            for metric, value in scores.items():
                name = f"{framework}.{metric}"
                if name in row.adjudicated or name in row.judge:
                    row.adjudicated[name] = value


def blinded_accepted(accepted: dict[int, int], hidden: Mapping[int, Hidden]) -> dict[int, int]:
    """Standing trust acceptances per report, with those a hidden decision took away."""
    for rid, found in hidden.items():
        if found.accepted:
            accepted[rid] = accepted.get(rid, 0) + len(found.accepted)
    return accepted


def blinded_scores(scores: list[ScoreLine], hidden: Hidden | None) -> list[ScoreLine]:
    """A report's score lines with the hidden decisions taken out of the adjudicated ones."""
    if hidden is None or not hidden.adjudicated:
        return scores
    return [
        replace(s, adjudicated=hidden.adjudicated[s.framework].get(s.metric, s.adjudicated))
        if s.framework in hidden.adjudicated
        else s
        for s in scores
    ]


def report_blind(
    conn: sqlite3.Connection, reviewer: str, report_id: int
) -> tuple[frozenset[int], Hidden | None]:
    """``reviewer``'s blind subjects in a report, and what others did on them."""
    blind = blind_per_report(conn, reviewer, [report_id])
    subjects = blind.get(report_id, frozenset())
    if not subjects:
        return subjects, None
    return subjects, hidden_work(conn, reviewer, [report_id], blind).get(report_id)
