"""Validating a judge run against the human gold labels before it counts.

A new run is a candidate. Before it is activated a maintainer sees what it would change: its
agreement with the human decisions on the subjects both cover (accuracy, κ and the confusion
matrix per verdict kind), beside the agreement of what counts now; how many of its verdicts
errored; and every system's headline scores and rank before → after. Activation asks for
confirmation when the run has errors or agrees with the gold labels less than the current
verdicts do. ``runs_against_gold`` ranks every run of the database by that agreement.

The after-scores are exact: the activation is applied inside a transaction, the affected
scores recomputed, read, and the transaction rolled back.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field

from reviewer.judge.compare import ItemVerdict, KindAgreement, agreement_by_kind
from reviewer.registry import frameworks
from store.runs.records import run_rows, set_active

HUMAN = "('single', 'unanimous', 'adjudicated')"


@dataclass(frozen=True, slots=True)
class GoldAgreement:
    """How a set of verdicts agrees with the human labels, per kind and overall."""

    kinds: list[KindAgreement]
    n: int
    agreed: int

    @property
    def accuracy(self) -> float | None:
        return self.agreed / self.n if self.n else None


def _gold(conn: sqlite3.Connection, where: str, params: tuple[object, ...]) -> GoldAgreement:
    judged: list[ItemVerdict] = []
    human: list[ItemVerdict] = []
    for kind, subject, value, gold in conn.execute(
        f"""SELECT j.kind, j.subject_id, j.value, d.value FROM judgment j
            JOIN decision d ON d.subject_id = j.subject_id AND d.status IN {HUMAN}
            WHERE {where}""",
        params,
    ):
        judged.append(ItemVerdict(kind, (subject,), value))
        human.append(ItemVerdict(kind, (subject,), gold))
    kinds = [k for k in agreement_by_kind(judged, human) if k.n or k.failed_a]
    n = sum(k.n for k in kinds)
    agreed = sum(round((k.accuracy.value or 0.0) * k.n) for k in kinds)
    return GoldAgreement(kinds, n, agreed)


def run_against_gold(conn: sqlite3.Connection, run: str) -> GoldAgreement:
    rows = run_rows(conn, run)
    return _gold(conn, f"j.run_id IN ({','.join('?' * len(rows))})", tuple(rows))


def current_against_gold(conn: sqlite3.Connection, run: str) -> GoldAgreement:
    """What counts now, on the subjects ``run`` judged (the fair comparison for it)."""
    rows = run_rows(conn, run)
    marks = ",".join("?" * len(rows))
    return _gold(
        conn,
        f"""j.current = 1 AND j.subject_id IN (
                               SELECT subject_id FROM judgment WHERE run_id IN ({marks}))""",
        tuple(rows),
    )


@dataclass(frozen=True, slots=True)
class SystemChange:
    suite: str
    system: str
    framework: str
    metric: str
    variant: str
    """``judge``: what the judges say; ``adjudicated``: with the human decisions (which a run
    can only change on subjects nobody decided)."""
    before: float | None
    after: float | None
    rank_before: int | None
    rank_after: int | None


@dataclass(slots=True)
class ActivationPreview:
    run: str
    active: bool
    judgments: int
    errors: int
    reports: int
    gold: GoldAgreement
    current: GoldAgreement
    changes: list[SystemChange] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    """Why activating needs a confirmation (empty: it does not)."""

    @property
    def needs_confirmation(self) -> bool:
        return bool(self.reasons)


Key = tuple[str, str, str, str, str]
"""(suite, system, framework, metric, variant)."""


def _headlines(conn: sqlite3.Connection, suite_ids: list[int]) -> dict[Key, float | None]:
    heads = [(fw.name, m.name) for fw in frameworks().values() for m in fw.metrics if m.headline]
    marks = ",".join("?" * len(suite_ids))
    out: dict[Key, float | None] = {}
    for suite, system, framework, metric, variant, value in conn.execute(
        f"""SELECT su.ext_id, y.ext_id, s.framework, s.metric, s.variant, s.value FROM score s
            JOIN system y ON s.scope = 'system:' || y.id JOIN suite su ON su.id = y.suite_id
            WHERE y.suite_id IN ({marks})""",
        suite_ids,
    ):
        if (framework, metric) in heads:
            out[(suite, system, framework, metric, variant)] = value
    return out


def _ranks(values: dict[Key, float | None]) -> dict[Key, int | None]:
    """Rank among the suite's systems on one metric and variant (ties share the better)."""
    groups: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for (suite, _, framework, metric, variant), value in values.items():
        if value is not None:
            groups[(suite, framework, metric, variant)].append(value)
    out: dict[Key, int | None] = {}
    for key, value in values.items():
        group = groups[(key[0], key[2], key[3], key[4])]
        out[key] = None if value is None else 1 + sum(1 for v in group if v > value)
    return out


def preview(conn: sqlite3.Connection, run: str) -> ActivationPreview:
    """What activating ``run`` would change, computed exactly and rolled back."""
    rows = run_rows(conn, run)
    marks = ",".join("?" * len(rows))
    active, judgments, errors, reports = conn.execute(
        f"""SELECT max(r.active), count(j.id), count(j.error), count(DISTINCT j.report_id)
            FROM judge_run r LEFT JOIN judgment j ON j.run_id = r.id
            WHERE r.id IN ({marks})""",
        rows,
    ).fetchone()
    suite_ids = [
        int(s)
        for (s,) in conn.execute(
            f"SELECT DISTINCT suite_id FROM judge_run WHERE id IN ({marks})", rows
        )
    ]
    result = ActivationPreview(
        run,
        bool(active),
        judgments,
        errors,
        reports,
        run_against_gold(conn, run),
        current_against_gold(conn, run),
    )
    before = _headlines(conn, suite_ids)
    if conn.in_transaction:
        raise RuntimeError("preview needs a connection outside any transaction")
    conn.execute("BEGIN IMMEDIATE")
    try:
        set_active(conn, run, True)
        after = _headlines(conn, suite_ids)
    finally:
        conn.execute("ROLLBACK")
    rank_before, rank_after = _ranks(before), _ranks(after)
    for key in sorted(set(before) | set(after)):
        result.changes.append(
            SystemChange(
                *key, before.get(key), after.get(key), rank_before.get(key), rank_after.get(key)
            )
        )
    if errors:
        result.reasons.append(
            f"{errors} of its {judgments} verdicts errored (those subjects "
            "keep another active run's valid verdict)"
        )
    gold, now = result.gold.accuracy, result.current.accuracy
    if gold is not None and now is not None and gold < now:
        result.reasons.append(
            f"it agrees with the human labels less than what counts now "
            f"({gold:.3f} vs {now:.3f} on {result.gold.n} decided subjects)"
        )
    return result


class NeedsConfirmation(Exception):
    """Activation refused until confirmed; the preview says why."""

    def __init__(self, preview: ActivationPreview) -> None:
        super().__init__("; ".join(preview.reasons))
        self.preview = preview


def activate(conn: sqlite3.Connection, run: str, *, confirmed: bool = False) -> list[int]:
    """Activate ``run``; refused (``NeedsConfirmation``) when its preview says it should be
    looked at first, unless ``confirmed``. Returns the reports whose verdicts changed."""
    if not confirmed:
        seen = preview(conn, run)
        if seen.needs_confirmation:
            raise NeedsConfirmation(seen)
    return set_active(conn, run, True)


@dataclass(frozen=True, slots=True)
class RunStanding:
    run: str
    model: str
    active: bool
    gold: GoldAgreement


def runs_against_gold(conn: sqlite3.Connection) -> list[RunStanding]:
    """Every run, best agreement with the human labels first (runs with no decided subject
    last: nothing to measure them by)."""
    out = [
        RunStanding(ext, model, bool(active), run_against_gold(conn, ext))
        for ext, model, active in conn.execute(
            "SELECT ext_id, max(model), max(active) FROM judge_run GROUP BY ext_id ORDER BY min(id)"
        )
    ]
    return sorted(out, key=lambda s: (s.gold.accuracy is None, -(s.gold.accuracy or 0.0), s.run))
