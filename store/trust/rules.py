"""Calibrating a trust rule on a review plan's gold labels, applying it, and clearing it.

The calibration set is the plan's decided draws: a random sample of the plan's frame with
known inclusion probabilities (:mod:`store.plans.design`), so exchangeable with the frame's
verdicts still undecided — the ones the rule is applied to. Decisions reached any other way
(the suspicion order, browsing) are no sample: they only teach the confidence score its
cells' error rates, which keeps each calibration label out of its own score.

Accepted verdicts are stored beside the rule that accepted them (:mod:`store.trust.schema`);
one rule is in force at a time, applying another replaces it, and clearing removes every
acceptance. An acceptance stands only while its verdict is the subject's current one and no
human has decided the subject: a decision always wins, and a newly activated run's verdict was
never accepted.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from reviewer.trust.rule import Calibration, accepted, calibrate
from reviewer.trust.score import Features, scores
from store.plans.design import Plan, Units, get_plan, run_units, suite_row
from store.sqlite.tx import now_iso, transaction
from store.trust.standing import (
    Rule,
    current_rule,
)

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class KindRow:
    """One verdict kind: how many of its undecided verdicts the rule accepts, and its
    calibration labels above the threshold with the judge's errors among them."""

    kind: str
    verdicts: int
    accepted: int
    labels: int
    errors: int

    @property
    def share(self) -> float:
        return self.accepted / self.verdicts if self.verdicts else 0.0


@dataclass(frozen=True, slots=True)
class TrustCalibration:
    plan: Plan
    calibration: Calibration
    verdicts: int
    """Undecided verdicts of the plan's frame: what the rule is applied to."""
    accepted: int
    kinds: tuple[KindRow, ...]
    notes: tuple[str, ...]
    chosen: tuple[tuple[int, float], ...]
    """(subject id, score) of every verdict the rule accepts."""

    @property
    def share(self) -> float:
        return self.accepted / self.verdicts if self.verdicts else 0.0


def _plan_draws(conn: sqlite3.Connection, plan_id: int) -> dict[int, float]:
    """Each drawn subject's inclusion probability (at its first draw)."""
    return {
        int(sid): float(pi)
        for sid, _first, pi in conn.execute(
            "SELECT subject_id, min(position), pi FROM plan_draw WHERE plan_id = ? "
            "GROUP BY subject_id",
            (plan_id,),
        )
    }


def _frame(conn: sqlite3.Connection, plan_id: int) -> set[int]:
    return {
        int(s)
        for (s,) in conn.execute("SELECT subject_id FROM plan_frame WHERE plan_id = ?", (plan_id,))
    }


def _flagged(conn: sqlite3.Connection) -> set[int]:
    return {int(s) for (s,) in conn.execute("SELECT DISTINCT subject_id FROM suspicion")}


def _conflicts(conn: sqlite3.Connection) -> set[int]:
    return {
        int(s) for (s,) in conn.execute("SELECT subject_id FROM decision WHERE status = 'conflict'")
    }


_OTHER_RUNS = """
    SELECT j.subject_id, count(*), sum(o.value = j.value)
    FROM judgment j
    JOIN judgment o ON o.subject_id = j.subject_id AND o.run_id != j.run_id
    WHERE j.current = 1 AND o.error IS NULL AND o.value IS NOT NULL
    GROUP BY j.subject_id
"""

_STATED = """
    SELECT subject_id, json_extract(raw, '$.confidence') FROM judgment
    WHERE current = 1 AND raw LIKE '%confidence%' AND json_valid(raw)
"""


def _features(conn: sqlite3.Connection, units: Units) -> Features:
    """Flags, other runs' agreement and stated confidence of every unit."""
    flagged = _flagged(conn)
    runs = {int(s): (int(n), int(a or 0)) for s, n, a in conn.execute(_OTHER_RUNS)}
    stated: dict[int, float] = {}
    for sid, value in conn.execute(_STATED):
        if isinstance(value, int | float) and 0.0 <= float(value) <= 1.0:
            stated[int(sid)] = float(value)
    subjects = units.subject
    return Features(
        units.kind,
        units.judge,
        np.array([s in flagged for s in subjects], dtype=bool),
        np.array([runs.get(s, (0, 0))[0] for s in subjects], dtype=np.int64),
        np.array([runs.get(s, (0, 0))[1] for s in subjects], dtype=np.int64),
        np.array([stated.get(s, np.nan) for s in subjects], dtype=np.float64),
    )


@dataclass(frozen=True, slots=True)
class _Sets:
    """Positions in the units: the calibration labels, the decisions the score learns from,
    and the verdicts the rule is applied to."""

    calibration: Ints
    weights: Floats | None
    learn: Ints
    targets: Ints
    notes: tuple[str, ...]


def _sets(conn: sqlite3.Connection, plan: Plan, units: Units, decided: list[bool]) -> _Sets:
    draws = _plan_draws(conn, plan.id)
    frame = _frame(conn, plan.id) - _conflicts(conn) - set(draws)
    # The plan's own undecided draws are no target: they stay to be reviewed, so that the
    # sample stays complete.
    roles: dict[str, list[int]] = {"calibration": [], "learn": [], "target": [], "": []}
    for i, subject in enumerate(units.subject):
        roles[_role(decided[i], subject in draws, subject in frame)].append(i)
    calibration, learn, targets = roles["calibration"], roles["learn"], roles["target"]
    pi = np.array([draws[units.subject[i]] for i in calibration], dtype=np.float64)
    equal = not len(pi) or bool(np.allclose(pi, pi[0]))
    return _Sets(
        np.array(calibration, dtype=np.int64),
        None if equal else 1.0 / pi,
        np.array(learn, dtype=np.int64),
        np.array(targets, dtype=np.int64),
        _skipped_note(plan),
    )


def _role(decided: bool, drawn: bool, framed: bool) -> str:
    """What a unit is to the rule: a calibration label (a decided plan draw), a decision the
    score learns from (any other), a verdict the rule is applied to, or nothing."""
    if decided:
        return "calibration" if drawn else "learn"
    return "target" if framed else ""


def _skipped_note(plan: Plan) -> tuple[str, ...]:
    if not plan.progress.skipped:
        return ()
    return (
        f"{plan.progress.skipped} plan subjects were skipped before the last decided one: "
        "the calibration assumes they are missing at random",
    )


def _wrong(units: Units, positions: Ints) -> npt.NDArray[np.bool_]:
    return np.array(
        [units.human[i] != units.judge[i] for i in positions.tolist()], dtype=bool
    ).reshape(-1)


def calibrate_plan(
    conn: sqlite3.Connection,
    alpha: float,
    delta: float,
    plan: str | None = None,
    suite: str | None = None,
) -> TrustCalibration:
    """The rule the plan's gold labels support at ``α`` and ``δ`` (the newest plan of the
    suite when none is named), and what it would accept."""
    suite_id = suite_row(conn, suite)[0] if suite is not None else None
    chosen_plan = get_plan(conn, plan, suite_id)
    units, decided = run_units(conn, chosen_plan.suite_id, chosen_plan.frameworks)
    sets = _sets(conn, chosen_plan, units, decided)
    score = scores(_features(conn, units), sets.learn, _wrong(units, sets.learn))
    calibration = calibrate(
        score[sets.calibration], _wrong(units, sets.calibration), alpha, delta, sets.weights
    )
    take = accepted(score[sets.targets], calibration)
    kept = sets.targets[take]
    return TrustCalibration(
        chosen_plan,
        calibration,
        len(sets.targets),
        int(take.sum()),
        _kinds(units, score, sets, kept, calibration),
        calibration.notes + sets.notes,
        tuple((units.subject[i], float(score[i])) for i in kept.tolist()),
    )


def _kinds(
    units: Units, score: Floats, sets: _Sets, kept: Ints, calibration: Calibration
) -> tuple[KindRow, ...]:
    verdicts = Counter(units.kind[i] for i in sets.targets.tolist())
    taken = Counter(units.kind[i] for i in kept.tolist())
    labels: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    above = accepted(score[sets.calibration], calibration)
    for i in sets.calibration[above].tolist():
        labels[units.kind[i]] += 1
        errors[units.kind[i]] += units.human[i] != units.judge[i]
    return tuple(
        KindRow(kind, verdicts[kind], taken[kind], labels[kind], errors[kind])
        for kind in sorted(set(verdicts) | set(labels))
    )


def apply_rule(conn: sqlite3.Connection, result: TrustCalibration, reviewer: str) -> Rule:
    """Store the calibrated rule and its acceptances, replacing the rule in force."""
    step = result.calibration.chosen
    if result.calibration.threshold is None or step is None:
        raise ValueError("the calibration accepts nothing: there is no rule to apply")
    with transaction(conn):
        _clear(conn)
        cursor = conn.execute(
            "INSERT INTO trust_rule (name, plan_id, alpha, delta, threshold, labels, effective,"
            " upper, weighted, created_at, created_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                "",
                result.plan.id,
                result.calibration.alpha,
                result.calibration.delta,
                result.calibration.threshold,
                result.calibration.labels,
                step.effective,
                step.upper,
                int(result.calibration.weighted),
                now_iso(),
                reviewer,
            ),
        )
        rule_id = cursor.lastrowid
        conn.execute("UPDATE trust_rule SET name = 't' || id WHERE id = ?", (rule_id,))
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS trust_chosen (subject_id INTEGER, score REAL)"
        )
        conn.execute("DELETE FROM temp.trust_chosen")
        conn.executemany("INSERT INTO temp.trust_chosen VALUES (?,?)", result.chosen)
        conn.execute(
            """INSERT INTO trust_accepted (subject_id, rule_id, judgment_id, report_id, score)
               SELECT c.subject_id, ?, j.id, j.report_id, c.score
               FROM temp.trust_chosen c
               JOIN judgment j INDEXED BY judgment_subject
                    ON j.subject_id = c.subject_id AND j.current = 1""",
            (rule_id,),
        )
        conn.execute("DELETE FROM temp.trust_chosen")
    rule = current_rule(conn)
    assert rule is not None
    return rule


def _clear(conn: sqlite3.Connection) -> int:
    removed = int(conn.execute("DELETE FROM trust_accepted").rowcount)
    conn.execute("DELETE FROM trust_rule")
    return removed


def clear_rules(conn: sqlite3.Connection) -> int:
    """Remove the rule in force and every acceptance; returns how many were removed."""
    with transaction(conn):
        return _clear(conn)


def to_json(result: TrustCalibration) -> dict[str, object]:
    """The calibration as a JSON document (``gavel trust calibrate --json``)."""
    c = result.calibration
    return {
        "plan": result.plan.name,
        "alpha": c.alpha,
        "delta": c.delta,
        "guaranteed_agreement": c.guaranteed if c.threshold is not None else None,
        "threshold": c.threshold,
        "labels": c.labels,
        "weighted": c.weighted,
        "verdicts": result.verdicts,
        "accepted": result.accepted,
        "share_accepted": result.share,
        "steps": [
            {
                "threshold": s.threshold,
                "labels": s.labels,
                "errors": s.errors,
                "effective": s.effective,
                "upper": s.upper,
                "passed": s.passed,
            }
            for s in c.steps
        ],
        "kinds": [
            {
                "kind": k.kind,
                "verdicts": k.verdicts,
                "accepted": k.accepted,
                "share": k.share,
                "labels_above": k.labels,
                "errors_above": k.errors,
            }
            for k in result.kinds
        ],
        "notes": list(result.notes),
    }


def dumps(result: TrustCalibration) -> str:
    return json.dumps(to_json(result), indent=2, ensure_ascii=False)
