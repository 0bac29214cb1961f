"""Reviewing a plan as if the humans said what another judge run said.

For benchmarks, tests and demonstrations only: a synthetic run with a planted judge bias
carries its true verdicts as a second run (``reviewer.frameworks.dailyreport.synthetic``);
deciding a plan's subjects with that run's values is what a team of careful reviewers would
have done, so the estimates can be checked against a known truth end to end — through the
same review log, decisions and scores as real reviews.
"""

from __future__ import annotations

import sqlite3

from store.plans.design import Plan, plan_items
from store.reviewlog.events import ReviewLog
from store.scores.cache import rebuild_scores
from store.sqlite.tx import transaction


def truth_values(conn: sqlite3.Connection, run: str) -> dict[int, str | None]:
    """Subject id -> the named run's value."""
    return {
        int(sid): value
        for sid, value in conn.execute(
            """SELECT j.subject_id, j.value FROM judgment j JOIN judge_run r ON r.id = j.run_id
           WHERE r.ext_id = ?""",
            (run,),
        )
    }


def review_plan(
    conn: sqlite3.Connection,
    plan: Plan,
    run: str | None,
    count: int,
    reviewer: str = "truth-reviewer",
    overrule_every: int = 10,
) -> int:
    """Decide the first ``count`` undecided subjects of the plan — with ``run``'s values, or
    without a run the judge's own value except every ``overrule_every``-th, which gets
    another value of its scale — in one transaction, then rebuild the scores; returns how
    many were decided."""
    truth = truth_values(conn, run) if run is not None else None
    log = ReviewLog(conn, reviewer)
    done = 0
    with transaction(conn):
        for item in plan_items(conn, plan.id):
            if done >= count:
                break
            if item.decided or item.judgment_id is None:
                continue
            if truth is not None:
                value = truth.get(item.subject_id)
            else:
                value = _judge_or_other(conn, item.judgment_id, item.kind, done % overrule_every)
            if value is None:
                continue
            log.decide(item.judgment_id, value, "simulated review")
            done += 1
    rebuild_scores(conn)
    return done


def _judge_or_other(conn: sqlite3.Connection, judgment_id: int, kind: str, turn: int) -> str | None:
    """The judge's value, or on turn 0 (and where the judge gave none) another value of its
    scale."""
    from reviewer.registry import get_kind

    row = conn.execute("SELECT value FROM judgment WHERE id = ?", (judgment_id,)).fetchone()
    judge: str | None = row[0]
    verdict_kind = get_kind(kind)
    if verdict_kind is None or (judge is not None and turn != 0):
        return judge
    return next((c.code for c in verdict_kind.scale.choices if c.code != judge), judge)
