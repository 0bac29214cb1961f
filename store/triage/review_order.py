"""How many known judge errors a reviewer reaches with a small budget, in a given order.

A reviewer with time for a tenth of the verdicts takes them in some order: by suspicion (the
flags of :mod:`store.triage.suspicion`, then impact), by impact alone (how far one flip of the
verdict moves its report's first headline score), or at random. The known errors are the sample's
MISTAKES.md lists or a synthetic run's planted errors (:mod:`reviewer.planted`); *recall* is
the share of them inside the budget. `gavel bench` prints these figures.
"""

from __future__ import annotations

import random
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from reviewer.impact import Impact, verdict_impacts
from reviewer.planted import Planted
from reviewer.registry import frameworks
from reviewer.suspicion import suspicion
from store.scores.cache import load_options
from store.scores.inputs import load_inputs, report_meta

BUDGET = 0.10
"""The share of a suite's verdicts a reviewer has time for."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """One verdict that counts, as an order sees it."""

    subject: int
    judgment: int
    report: int
    suspicion: float
    impact: tuple[float, float]
    rules: tuple[str, ...] = ()


def candidates(conn: sqlite3.Connection, suite: str) -> list[Candidate]:
    """Every counting verdict of a suite's (non-reference) reports, with its suspicion and its
    own impact."""
    rows = conn.execute(
        """SELECT j.subject_id, j.id, j.report_id FROM judgment j
           JOIN report r ON r.id = j.report_id JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id
           WHERE s.ext_id = ? AND y.is_reference = 0 AND j.current = 1 ORDER BY j.id""",
        (suite,),
    ).fetchall()
    weights: dict[int, list[float]] = defaultdict(list)
    rules: dict[int, list[str]] = defaultdict(list)
    for sid, rule, weight in conn.execute(
        """SELECT x.subject_id, x.rule, x.weight FROM suspicion x
               JOIN subject s ON s.id = x.subject_id JOIN report r ON r.id = s.report_id
               JOIN system y ON y.id = r.system_id JOIN suite u ON u.id = y.suite_id
               WHERE u.ext_id = ?""",
        (suite,),
    ):
        weights[sid].append(weight)
        rules[sid].append(rule)
    impacts = judgment_impacts(conn, sorted({r[2] for r in rows}))
    none = Impact(0.0, 0.0, None)
    return [
        Candidate(
            sid,
            jid,
            rid,
            suspicion(weights.get(sid, [])),
            impacts.get(jid, none).key(),
            tuple(sorted(rules.get(sid, []))),
        )
        for sid, jid, rid in rows
    ]


def judgment_impacts(conn: sqlite3.Connection, report_ids: Sequence[int]) -> dict[int, Impact]:
    """Judgment id -> its own impact under the report's frameworks (the largest)."""
    if not report_ids:
        return {}
    inputs = load_inputs(conn, report_ids)
    metas = report_meta(conn, report_ids)
    options = load_options(conn)
    registry = frameworks()
    out: dict[int, Impact] = {}
    for rid, report in inputs.items():
        for name in metas[rid].frameworks:
            fw = registry.get(name)
            if fw is None:
                continue
            for jid, impact in verdict_impacts(fw, report, options[name]).items():
                if jid not in out or impact.key() > out[jid].key():
                    out[jid] = impact
    return out


def suspicion_order(found: Sequence[Candidate]) -> list[int]:
    """Subjects most suspicious first; impact orders the rest (and breaks ties)."""
    ranked = sorted(found, key=lambda c: (-c.suspicion, -c.impact[0], -c.impact[1], c.judgment))
    return [c.subject for c in ranked]


def impact_order(found: Sequence[Candidate]) -> list[int]:
    ranked = sorted(found, key=lambda c: (-c.impact[0], -c.impact[1], c.judgment))
    return [c.subject for c in ranked]


def random_order(found: Sequence[Candidate], seed: int) -> list[int]:
    subjects = [c.subject for c in found]
    random.Random(seed).shuffle(subjects)
    return subjects


def resolve(
    conn: sqlite3.Connection, suite: str, planted: Sequence[Planted]
) -> dict[Planted, int | None]:
    """The subject of each listed error in a suite (None when no counting verdict matches)."""
    rows = conn.execute(
        """SELECT r.ext_id, j.kind, c.ext_id, k.ext_id, j.ref_idx, j.key, j.subject_id
           FROM judgment j JOIN report r ON r.id = j.report_id
           JOIN system y ON y.id = r.system_id JOIN suite s ON s.id = y.suite_id
           LEFT JOIN criterion c ON c.id = j.criterion_id LEFT JOIN claim k ON k.id = j.claim_id
           WHERE s.ext_id = ? AND j.current = 1""",
        (suite,),
    ).fetchall()
    index: dict[
        tuple[str, str], list[tuple[str | None, str | None, int | None, str | None, int]]
    ] = defaultdict(list)
    for report, kind, crit, claim, ref, key, sid in rows:
        index[(report, kind)].append((crit, claim, ref, key, sid))
    out: dict[Planted, int | None] = {}
    for item in planted:
        match = None
        for crit, claim, ref, key, sid in index.get((item.report, item.kind), []):
            if (
                (item.criterion is None or item.criterion == crit)
                and (item.claim is None or item.claim == claim)
                and (item.ref is None or item.ref == ref)
                and (item.key is None or item.key == key)
            ):
                match = sid
                break
        out[item] = match
    return out


@dataclass(slots=True)
class Recall:
    reached: int = 0
    total: int = 0
    by_type: dict[str, list[int]] = field(default_factory=dict)
    """type -> [reached, total]."""

    @property
    def value(self) -> float:
        return self.reached / self.total if self.total else 0.0

    def add(self, other: Recall) -> None:
        self.reached += other.reached
        self.total += other.total
        for name, (r, t) in other.by_type.items():
            counts = self.by_type.setdefault(name, [0, 0])
            counts[0] += r
            counts[1] += t


def recall(
    order: Sequence[int], errors: dict[Planted, int | None], budget: float = BUDGET
) -> Recall:
    """Share of ``errors`` whose subject is in the first ``budget`` share of ``order``."""
    size = max(1, round(budget * len(order)))
    reached_subjects = set(order[:size])
    out = Recall()
    for item, subject in errors.items():
        name = item.type or ("found on review" if item.found else "planted")
        counts = out.by_type.setdefault(name, [0, 0])
        counts[1] += 1
        out.total += 1
        if subject is not None and subject in reached_subjects:
            counts[0] += 1
            out.reached += 1
    return out


@dataclass(slots=True)
class Precision:
    """Of the flagged subjects, how many are known errors (overall and per rule)."""

    flagged: int = 0
    right: int = 0
    by_rule: dict[str, list[int]] = field(default_factory=dict)
    """rule -> [known errors among its flags, flags]."""

    def add(self, other: Precision) -> None:
        self.flagged += other.flagged
        self.right += other.right
        for rule, (r, n) in other.by_rule.items():
            counts = self.by_rule.setdefault(rule, [0, 0])
            counts[0] += r
            counts[1] += n


def precision(found: Sequence[Candidate], errors: dict[Planted, int | None]) -> Precision:
    wrong = {s for s in errors.values() if s is not None}
    out = Precision()
    for candidate in found:
        if not candidate.rules:
            continue
        out.flagged += 1
        hit = candidate.subject in wrong
        out.right += hit
        for rule in candidate.rules:
            counts = out.by_rule.setdefault(rule, [0, 0])
            counts[0] += hit
            counts[1] += 1
    return out


@dataclass(slots=True)
class OrderFigures:
    """Recall at the budget in each order, and the flags' precision, for some suites."""

    suspicion: Recall = field(default_factory=Recall)
    impact: Recall = field(default_factory=Recall)
    random: Recall = field(default_factory=Recall)
    precision: Precision = field(default_factory=Precision)
    verdicts: int = 0
    budget: int = 0
    seeds: int = 0


def measure(
    conn: sqlite3.Connection,
    suite: str,
    planted: Sequence[Planted],
    seeds: int = 200,
    budget: float = BUDGET,
) -> OrderFigures:
    """Every figure for one suite; random order is the mean over ``seeds`` shuffles."""
    found = candidates(conn, suite)
    errors = resolve(conn, suite, planted)
    figures = OrderFigures(
        verdicts=len(found), budget=max(1, round(budget * len(found))), seeds=seeds
    )
    figures.suspicion = recall(suspicion_order(found), errors, budget)
    figures.impact = recall(impact_order(found), errors, budget)
    mean = Recall()
    for seed in range(seeds):
        mean.add(recall(random_order(found, seed), errors, budget))
    figures.random = mean  # summed over the seeds: its value is the mean recall
    figures.precision = precision(found, errors)
    return figures


def combine(parts: Sequence[OrderFigures]) -> OrderFigures:
    out = OrderFigures()
    for part in parts:
        out.suspicion.add(part.suspicion)
        out.impact.add(part.impact)
        out.random.add(part.random)
        out.precision.add(part.precision)
        out.verdicts += part.verdicts
        out.budget += part.budget
        out.seeds = max(out.seeds, part.seeds)
    return out
