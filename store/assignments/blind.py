"""Blind review on the overlap, in every figure a reviewer is shown.

The rule: for the reviewer looking, an overlap subject handed to them (``k`` ≥ 2) that they
have not decided yet reads as if nobody had decided it. Its verdict counts at the judge's
value, and other reviewers' decisions on it, a conflict between them and their flag on it are
left out of what that reviewer is shown — the report's rows, the queue's counts and the
report's adjudicated scores — until they decide it themselves; then everything shows. Counts
that are about the team rather than a report (``team 31/96``) are not blinded: they say how
much was done, never on which subject nor which value.

Only the subjects that others touched change a figure, and they are few: the reviewer's own
undecided overlap subjects are found in SQL from their own assignments, what others did on
them in one more query, and only the reports where a hidden decision moved a value are scored
again (from their rows, with the hidden decisions taken back out).
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from reviewer.actions import DECISION_ACTIONS
from reviewer.framework import ReportScores
from reviewer.registry import frameworks
from reviewer.suspicion import suspicion
from store.assignments.holding import Held, held_events
from store.scores import report_rows as report_scores
from store.scores.cache import load_options
from store.scores.inputs import load_inputs

_ACTIONS = ",".join(f"'{a}'" for a in sorted(DECISION_ACTIONS - {"adjudicate"}))


def _held_on_overlap(conn: sqlite3.Connection, reviewer: str) -> list[Held]:
    """``reviewer``'s assignments with ``k`` ≥ 2 that still hold (work taken back or moved to
    someone else is no longer theirs, and no longer blind), with the subjects of a report
    assignment that were taken back one by one."""
    return [held for held in held_events(conn, reviewer) if held.k >= 2]


_UNDECIDED_SQL = f"""
    NOT EXISTS (SELECT 1 FROM review_event e JOIN event_live l ON l.uuid = e.uuid
                WHERE e.target = s.target AND e.reviewer = :me AND l.live = 1
                  AND e.action IN ({_ACTIONS}))"""
"""No decision of ``:me`` that counts on subject ``s``."""

_TOUCHED = "(SELECT subject_id FROM decision UNION SELECT subject_id FROM flag)"
"""Subjects someone decided or flagged: the only blind ones whose figures need changing."""


def _overlap_scope(
    conn: sqlite3.Connection, reviewer: str, report_ids: Sequence[int] | None
) -> tuple[list[int], list[str], list[str]]:
    """``reviewer``'s overlap (of ``report_ids`` when given) as whole reports, single subjects,
    and the subjects of those reports that are not on it (taken back from every overlap
    assignment of the report); from their own assignment events, a few per report at most."""
    held = _held_on_overlap(conn, reviewer)
    if not held:
        return [], [], []
    whole = _released_per_report(held)
    reports: list[int] = []
    released: set[str] = set()
    for rid, target in _report_targets(conn, report_ids) if whole else ():
        if target in whole:
            reports.append(int(rid))
            released |= whole[target]
    subjects = [item.target for item in held if not item.target.startswith("r:")]
    return reports, subjects, sorted(released - set(subjects))


def _released_per_report(held: list[Held]) -> dict[str, frozenset[str]]:
    """Each report assigned whole on the overlap, with the subjects that are off it: those
    every overlap assignment of the report let go."""
    whole: dict[str, frozenset[str]] = {}
    for item in held:
        if item.target.startswith("r:"):
            before = whole.get(item.target)
            whole[item.target] = item.released if before is None else before & item.released
    return whole


def _report_targets(
    conn: sqlite3.Connection, report_ids: Sequence[int] | None
) -> list[tuple[int, str]]:
    """(report id, the target an assignment names it by) of every report, or of those."""
    only = "" if report_ids is None else " WHERE r.id IN (SELECT value FROM json_each(?))"
    return conn.execute(
        "SELECT r.id, 'r:' || su.ext_id || '/' || r.ext_id FROM report r "
        "JOIN system y ON y.id = r.system_id JOIN suite su ON su.id = y.suite_id" + only,
        () if report_ids is None else (json.dumps(sorted(set(report_ids))),),
    ).fetchall()


def blind_per_report(
    conn: sqlite3.Connection,
    reviewer: str,
    report_ids: Sequence[int] | None = None,
    *,
    touched: bool = False,
) -> dict[int, frozenset[int]]:
    """Per report, ``reviewer``'s overlap subjects they have yet to decide (of ``report_ids``
    when given): what others did on them stays hidden from ``reviewer`` until they do. With
    ``touched``, only those someone decided or flagged: what a count or a score can leak, found
    from those rows rather than from every subject of the overlap."""
    reports, targets, released = _overlap_scope(conn, reviewer, report_ids)
    if not reports and not targets:
        return {}
    only = "" if report_ids is None else " AND s.report_id IN (SELECT value FROM json_each(:ids))"
    some = f" AND s.id IN {_TOUCHED}" if touched else ""
    in_force = "EXISTS (SELECT 1 FROM judgment j WHERE j.subject_id = s.id AND j.current = 1)"
    found: dict[int, set[int]] = defaultdict(set)
    for sid, rid in conn.execute(
        f"""SELECT s.id, s.report_id FROM subject s
            WHERE s.report_id IN (SELECT value FROM json_each(:reports)){some}
              AND s.target NOT IN (SELECT value FROM json_each(:released))
              AND {in_force} AND {_UNDECIDED_SQL}
            UNION
            SELECT s.id, s.report_id FROM subject s
            WHERE s.target IN (SELECT value FROM json_each(:targets)){some}{only}
              AND {in_force} AND {_UNDECIDED_SQL}""",
        {
            "me": reviewer,
            "reports": json.dumps(reports),
            "targets": json.dumps(targets),
            "released": json.dumps(released),
            "ids": json.dumps(sorted(set(report_ids or ()))),
        },
    ):
        found[int(rid)].add(int(sid))
    return {rid: frozenset(subjects) for rid, subjects in found.items()}


def hidden_subjects(conn: sqlite3.Connection, reviewer: str) -> frozenset[int]:
    """``reviewer``'s blind subjects that someone decided or flagged: the decisions to leave
    out of what ``reviewer`` is shown (the agreement screen's figures)."""
    found = blind_per_report(conn, reviewer, touched=True)
    return frozenset(sid for subjects in found.values() for sid in subjects)


@dataclass(frozen=True, slots=True)
class Hidden:
    """What other reviewers did on one report's blind subjects: taken back out of the
    report's figures for the reviewer who is blind to it (:func:`hidden_work`)."""

    subjects: frozenset[int]
    """The blind subjects others decided or flagged."""
    flagged: frozenset[int] = frozenset()
    """Of those, the ones flagged by someone else (a flag's note can say a value)."""
    decided: int = 0
    """Verdicts in force the report's row counts as decided (a conflict included)."""
    differs: int = 0
    """Of those, resolved to another value than the judge's."""
    conflicts: int = 0
    flags: int = 0
    """Verdicts in force flagged by someone else."""
    suspects: int = 0
    """Suspicious subjects whose hidden decision took them out of the undecided ones."""
    suspicion: float = 0.0
    """Their summed suspicion."""
    accepted: frozenset[int] = frozenset()
    """Verdicts (judgment ids) a trust rule accepted that the hidden decisions took out of
    the standing acceptances (:mod:`store.trust.standing` counts undecided verdicts only)."""
    adjudicated: dict[str, ReportScores] = field(default_factory=dict)
    """Per framework, the adjudicated scores with the hidden decisions taken out; empty when
    no hidden decision moved a value (the stored scores are right as they are)."""


def hidden_work(
    conn: sqlite3.Connection,
    reviewer: str,
    report_ids: Sequence[int] | None = None,
    blind: dict[int, frozenset[int]] | None = None,
) -> dict[int, Hidden]:
    """Per report (of ``report_ids`` when given) where someone else decided or flagged one of
    ``reviewer``'s blind subjects, what to take out of what ``reviewer`` is shown (``blind``:
    :func:`blind_per_report`'s answer, when the caller has it already)."""
    if blind is None:
        blind = blind_per_report(conn, reviewer, report_ids, touched=True)
    if not blind:
        return {}
    subjects = sorted(s for found in blind.values() for s in found)
    counts, moved = _counts(conn, reviewer, subjects)
    if not counts:
        return {}
    weights = _suspicions(conn, sorted({s for c in counts.values() for s in c.undecided}))
    rescored = adjudicated_blind(conn, {rid: blind[rid] for rid in moved})
    return {rid: _hidden(c, weights, rescored.get(rid, {})) for rid, c in counts.items()}


def _hidden(
    count: _Count, weights: dict[int, float], adjudicated: dict[str, ReportScores]
) -> Hidden:
    """One report's hidden work, its suspicious subjects weighed as the queue weighs them."""
    suspects = [weights[s] for s in count.undecided if s in weights]
    return Hidden(
        frozenset(count.touched),
        frozenset(count.flagged),
        count.decided,
        count.differs,
        count.conflicts,
        count.flags,
        len(suspects),
        sum(suspects),
        frozenset(count.accepted),
        adjudicated,
    )


@dataclass(slots=True)
class _Count:
    touched: set[int] = field(default_factory=set)
    flagged: set[int] = field(default_factory=set)
    undecided: set[int] = field(default_factory=set)
    """Subjects a hidden resolved decision took out of the undecided ones."""
    decided: int = 0
    differs: int = 0
    conflicts: int = 0
    flags: int = 0
    accepted: set[int] = field(default_factory=set)


def _counts(
    conn: sqlite3.Connection, reviewer: str, subjects: list[int]
) -> tuple[dict[int, _Count], set[int]]:
    """Per report, the queue's counts that the hidden decisions and flags make, counted as the
    queue counts them (per verdict in force); and the reports where a hidden decision moved a
    value (their scores need taking back)."""
    counts: dict[int, _Count] = defaultdict(_Count)
    moved: set[int] = set()
    for rid, sid, jid, judge, status, value, flagged, accepted in conn.execute(
        """SELECT j.report_id, j.subject_id, j.id, j.value, d.status, d.value,
                  f.subject_id IS NOT NULL AND coalesce(fe.reviewer, '') != :me,
                  EXISTS (SELECT 1 FROM trust_accepted t WHERE t.judgment_id = j.id)
           FROM judgment j
           LEFT JOIN decision d ON d.subject_id = j.subject_id
           LEFT JOIN flag f ON f.subject_id = j.subject_id
           LEFT JOIN review_event fe ON fe.uuid = f.event_uuid
           WHERE j.current = 1 AND j.subject_id IN (SELECT value FROM json_each(:ids))
             AND (d.subject_id IS NOT NULL OR f.subject_id IS NOT NULL)""",
        {"me": reviewer, "ids": json.dumps(subjects)},
    ):
        if status is None and not flagged:
            continue
        count = counts[int(rid)]
        count.touched.add(int(sid))
        if flagged:
            count.flags += 1
            count.flagged.add(int(sid))
        if status is None:
            continue
        count.decided += 1
        if accepted:
            count.accepted.add(int(jid))
        if status == "conflict":
            count.conflicts += 1
            continue
        count.undecided.add(int(sid))
        if value != judge:
            count.differs += 1
            moved.add(int(rid))
    return dict(counts), moved


def _suspicions(conn: sqlite3.Connection, subjects: list[int]) -> dict[int, float]:
    """Each flagged subject's suspicion, as the queue sums it per subject."""
    weights: dict[int, list[float]] = defaultdict(list)
    for sid, weight in conn.execute(
        "SELECT subject_id, weight FROM suspicion "
        "WHERE subject_id IN (SELECT value FROM json_each(?))",
        (json.dumps(subjects),),
    ):
        weights[int(sid)].append(float(weight))
    return {sid: suspicion(found) for sid, found in weights.items()}


def adjudicated_blind(
    conn: sqlite3.Connection, blind: dict[int, frozenset[int]]
) -> dict[int, dict[str, ReportScores]]:
    """As :func:`rescore_blind`, without scoring where it need not: a report where the hidden
    decisions are the only ones that move a value, and no ground-truth proposal was made on
    its task, scores as its judge variant, which is stored. That is the common case — my
    co-reviewer went through a shared report before me — and it costs one read."""
    if not blind:
        return {}
    hidden = sorted(s for subjects in blind.values() for s in subjects)
    ids = json.dumps(sorted(blind))
    mixed = {
        int(rid)
        for (rid,) in conn.execute(
            """SELECT DISTINCT j.report_id FROM judgment j JOIN decision d
                   ON d.subject_id = j.subject_id
               WHERE j.current = 1 AND j.report_id IN (SELECT value FROM json_each(:ids))
                 AND d.status != 'conflict' AND d.value IS NOT j.value
                 AND j.subject_id NOT IN (SELECT value FROM json_each(:hidden))
               UNION
               SELECT r.id FROM report r JOIN proposal p ON p.task_id = r.task_id
               WHERE r.id IN (SELECT value FROM json_each(:ids))""",
            {"ids": ids, "hidden": json.dumps(hidden)},
        )
    }
    out = rescore_blind(conn, {rid: blind[rid] for rid in mixed})
    plain = sorted(set(blind) - mixed)
    for rid, framework, _, scores in report_scores.read(conn, plain, variant="judge"):
        out.setdefault(rid, {})[framework] = scores
    return out


def rescore_blind(
    conn: sqlite3.Connection, blind: dict[int, frozenset[int]]
) -> dict[int, dict[str, ReportScores]]:
    """Per report, each framework's adjudicated scores with the verdicts of its ``blind``
    subjects at the judge's value: the scores as they stand for someone who may not see the
    decisions on them yet."""
    if not blind:
        return {}
    inputs = load_inputs(conn, sorted(blind))
    registry = frameworks()
    options = load_options(conn)
    names = {
        int(rid): json.loads(fws)
        for rid, fws in conn.execute(
            "SELECT r.id, su.frameworks FROM report r JOIN system y ON y.id = r.system_id "
            "JOIN suite su ON su.id = y.suite_id WHERE r.id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(inputs)),),
        )
    }
    out: dict[int, dict[str, ReportScores]] = {}
    for rid, report in inputs.items():
        hidden = blind[rid]
        report.verdicts = [
            v._replace(effective=v.judge) if v.subject in hidden else v for v in report.verdicts
        ]
        out[rid] = {
            name: registry[name].score_report(report, "adjudicated", options[name])
            for name in names.get(rid, ())
            if name in registry and name in options
        }
    return out
