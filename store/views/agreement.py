"""Agreement read model: judge vs human, reviewer vs reviewer, UserPref vs overall ratings.

Assembles plain dataclasses that the command line prints and the workstation's agreement screen
draws; the statistics come from :mod:`reviewer.agreement` through :mod:`reviewer.comparison`.

* **Judge vs human** — per framework, criterion dimension, verdict kind and judge run: each
  judgment with an effective human decision (status ``single``, ``unanimous`` or
  ``adjudicated``; a conflict is not a human label yet) paired with the judge's value.
  Confusion matrices have the judge in rows and the human in columns; the disagreeing items
  are listed with the deciding reviewer's rationale (every reviewer, ';'-joined, for a
  unanimous decision; the adjudicator for an adjudicated one).
* **Reviewer vs reviewer** — per framework and verdict kind, on the judgments at least two
  reviewers decided: each reviewer's standing decision (their latest live confirm/override;
  adjudications are not a reviewer's own reading), Krippendorff's alpha and Gwet's AC1 over
  all of them, Cohen's kappa per pair.
* **UserPref vs overall ratings** (DailyReport §5.5, paper κ_w = 0.859) — each reviewer's 1–4
  rating of a report (``report_rating``) against the report's computed UserPref level (the
  ``score`` cache, adjudicated variant, and the judge variant beside it): quadratic-weighted
  kappa and the 4×4 table, UserPref in rows. A report rated by two reviewers gives two pairs.

Intervals are percentile bootstraps over items (fixed seed: the same data gives the same
report).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from reviewer.comparison import (
    DEFAULT_RESAMPLES,
    CategoricalComparison,
    ContinuousComparison,
    InterRater,
    Level,
    compare_categorical,
    compare_continuous,
    inter_rater,
    scale_labels,
    scale_level,
)
from reviewer.framework import Rating
from reviewer.registry import frameworks, get_kind
from reviewer.scales import Scale
from store.reviewlog.conflicts import standing_decisions
from store.reviewlog.events import display_name
from store.scores import report_rows as report_scores

HUMAN_STATUSES = ("single", "unanimous", "adjudicated")


@dataclass(frozen=True, slots=True)
class Disagreement:
    judgment_id: int
    target: str
    task: str
    system: str
    report: str
    subject: str
    judge: str
    human: str
    status: str
    decided_by: str
    rationale: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class JudgeHumanGroup:
    """Judge vs effective human decision for one (framework, dimension, kind, run)."""

    framework: str
    dimension: str
    kind: str
    run: str
    model: str
    scale: str
    level: Level
    n: int
    judge_failed: int
    """Decided judgments the judge gave no value for (left out of the statistics)."""
    categorical: CategoricalComparison | None
    continuous: ContinuousComparison | None
    disagreements: tuple[Disagreement, ...]


@dataclass(frozen=True, slots=True)
class ReviewerGroup:
    """Reviewers against each other on one verdict kind."""

    framework: str
    kind: str
    scale: str
    stats: InterRater
    differing: int
    """Items whose reviewers' standing decisions differ (conflicts, adjudicated or not)."""


@dataclass(frozen=True, slots=True)
class RatingAgreement:
    """A computed 1–4 report level against reviewers' overall ratings."""

    framework: str
    metric: str
    variant: str
    n: int
    reports: int
    raters: tuple[str, ...]
    comparison: CategoricalComparison


@dataclass(frozen=True, slots=True)
class AgreementReport:
    judge_human: tuple[JudgeHumanGroup, ...]
    reviewers: tuple[ReviewerGroup, ...]
    ratings: tuple[RatingAgreement, ...]
    human_decisions: int
    n_resamples: int


def agreement(
    conn: sqlite3.Connection,
    framework: str | None = None,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    hidden: AbstractSet[int] = frozenset(),
) -> AgreementReport:
    """Everything the agreement screen shows, for one framework or all of them; the
    decisions on ``hidden`` subjects left out (a reviewer's blind overlap subjects,
    :mod:`store.assignments.blind`: shown to them as nobody decided them)."""
    judge_human = _judge_vs_human(conn, framework, n_resamples, seed, hidden)
    return AgreementReport(
        judge_human=tuple(judge_human),
        reviewers=tuple(_reviewer_vs_reviewer(conn, framework, hidden)),
        ratings=tuple(_ratings(conn, framework, n_resamples, seed)),
        human_decisions=sum(g.n + g.judge_failed for g in judge_human),
        n_resamples=n_resamples,
    )


def _order() -> dict[tuple[str, str], int]:
    """Registry order of (framework, kind), so tables read in the frameworks' own order."""
    order: dict[tuple[str, str], int] = {}
    for fw in frameworks().values():
        for kind in fw.kinds:
            order[(fw.name, kind)] = len(order)
    return order


_JUDGE_HUMAN_SQL = f"""
    SELECT j.id, j.kind, coalesce(c.dimension, kc.dimension, ''), jr.ext_id, jr.model, j.value,
           d.value, d.status, s.ext_id, t.ext_id, y.ext_id, r.ext_id, j.subject,
           e.reviewer, e.rationale, e.reason, j.subject_id, sj.target, e.key
    FROM decision d
    JOIN subject sj ON sj.id = d.subject_id
    JOIN judgment j ON j.subject_id = d.subject_id
    JOIN judge_run jr ON jr.id = j.run_id
    JOIN suite s ON s.id = jr.suite_id
    JOIN report r ON r.id = j.report_id
    JOIN task t ON t.id = r.task_id
    JOIN system y ON y.id = r.system_id
    LEFT JOIN criterion c ON c.id = j.criterion_id
    LEFT JOIN claim k ON k.id = j.claim_id
    LEFT JOIN criterion kc ON kc.id = k.criterion_id
    LEFT JOIN review_event e ON e.uuid = d.event_uuid
    WHERE d.status IN ({",".join(f"'{s}'" for s in HUMAN_STATUSES)})
    ORDER BY j.id
"""


def _judge_vs_human(
    conn: sqlite3.Connection,
    framework: str | None,
    n_resamples: int,
    seed: int,
    hidden: AbstractSet[int] = frozenset(),
) -> list[JudgeHumanGroup]:
    groups, models = _judge_human_rows(conn, framework, hidden)
    deciders = _unanimous_deciders(conn, groups)
    order = _order()
    return [
        _judge_human_group(conn, key, groups[key], models[key[3]], deciders, n_resamples, seed)
        for key in sorted(groups, key=lambda k: (order.get((k[0], k[2]), 1 << 30), k))
    ]


def _judge_human_rows(
    conn: sqlite3.Connection, framework: str | None, hidden: AbstractSet[int] = frozenset()
) -> tuple[dict[tuple[str, str, str, str], list[tuple[Any, ...]]], dict[str, str]]:
    """Decided judgments grouped by (framework, dimension, kind, run), and each run's
    model."""
    groups: dict[tuple[str, str, str, str], list[tuple[Any, ...]]] = defaultdict(list)
    models: dict[str, str] = {}
    for row in conn.execute(_JUDGE_HUMAN_SQL):
        kind = get_kind(row[1])
        if kind is None or (framework is not None and kind.framework != framework):
            continue
        if row[16] in hidden:
            continue
        groups[(kind.framework, row[2], row[1], row[3])].append(row)
        models[row[3]] = row[4]
    return groups, models


def _unanimous_deciders(
    conn: sqlite3.Connection, groups: dict[tuple[str, str, str, str], list[tuple[Any, ...]]]
) -> dict[int, str]:
    """A unanimous decision was made by every reviewer who decided: name them all."""
    unanimous = [int(r[16]) for rows in groups.values() for r in rows if r[7] == "unanimous"]
    if not unanimous:
        return {}
    return {
        sid: ";".join(s.reviewer for s in sides)
        for sid, sides in standing_decisions(conn, unanimous)
    }


def _judge_human_group(
    conn: sqlite3.Connection,
    key: tuple[str, str, str, str],
    rows: list[tuple[Any, ...]],
    model: str,
    deciders: dict[int, str],
    n_resamples: int,
    seed: int,
) -> JudgeHumanGroup:
    """One group's statistics on the judgments both the judge and a human gave a value, and
    its disagreements."""
    fw_name, dimension, kind_name, run = key
    kind = get_kind(kind_name)
    assert kind is not None
    level = scale_level(kind.scale)
    valid = [r for r in rows if r[5] is not None and r[6] is not None]
    categorical, continuous = _compare(
        kind.scale, level, [str(r[5]) for r in valid], [str(r[6]) for r in valid], n_resamples, seed
    )
    return JudgeHumanGroup(
        framework=fw_name,
        dimension=dimension,
        kind=kind_name,
        run=run,
        model=model,
        scale=kind.scale.name,
        level=level,
        n=len(valid),
        judge_failed=len(rows) - len(valid),
        categorical=categorical,
        continuous=continuous,
        disagreements=tuple(
            _disagreement(conn, r, deciders) for r in valid if _differs(level, str(r[5]), str(r[6]))
        ),
    )


def _compare(
    scale: Scale, level: Level, judge: list[str], human: list[str], n_resamples: int, seed: int
) -> tuple[CategoricalComparison | None, ContinuousComparison | None]:
    """Judge against human: as numbers on an interval scale, as categories otherwise."""
    if level == "interval":
        return None, compare_continuous([float(v) for v in judge], [float(v) for v in human])
    categorical = compare_categorical(
        judge,
        human,
        scale_labels(scale),
        ordinal=level == "ordinal",
        n_resamples=n_resamples,
        seed=seed,
    )
    return categorical, None


def _disagreement(
    conn: sqlite3.Connection, r: tuple[Any, ...], deciders: dict[int, str]
) -> Disagreement:
    return Disagreement(
        judgment_id=int(r[0]),
        target=str(r[17]),
        task=str(r[9]),
        system=str(r[10]),
        report=str(r[11]),
        subject=str(r[12]),
        judge=str(r[5]),
        human=str(r[6]),
        status=str(r[7]),
        decided_by=deciders.get(int(r[16]), display_name(conn, str(r[13] or ""), r[18])),
        rationale=str(r[14] or ""),
        reason=None if r[15] is None else str(r[15]),
    )


def _differs(level: Level, judge: str, human: str) -> bool:
    if level == "interval":
        return float(judge) != float(human)
    return judge != human


def _reviewer_vs_reviewer(
    conn: sqlite3.Connection, framework: str | None, hidden: AbstractSet[int] = frozenset()
) -> Iterable[ReviewerGroup]:
    by_kind = _shared_by_kind(conn, hidden)
    order = _order()
    for kind_name in sorted(by_kind, key=lambda k: (order.get(_fw_kind(k), 1 << 30), k)):
        kind = get_kind(kind_name)
        if kind is None or (framework is not None and kind.framework != framework):
            continue
        units = by_kind[kind_name]
        stats = inter_rater(units, kind.scale)
        if stats.n_items == 0:
            continue
        differing = sum(1 for u in units if len(set(u.values())) > 1)
        yield ReviewerGroup(kind.framework, kind_name, kind.scale.name, stats, differing)


def _shared_by_kind(
    conn: sqlite3.Connection, hidden: AbstractSet[int] = frozenset()
) -> dict[str, list[dict[str, str]]]:
    """Per verdict kind, in subject order: each subject at least two reviewers decided, as
    reviewer -> their standing value."""
    shared: dict[int, dict[str, str]] = {}
    for subject_id, sides in standing_decisions(conn):
        if len(sides) >= 2 and subject_id not in hidden:
            shared[subject_id] = {s.reviewer: str(s.value) for s in sides if s.value is not None}
    by_kind: dict[str, list[dict[str, str]]] = defaultdict(list)
    if not shared:
        return by_kind
    ids = sorted(shared)
    kinds: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        kinds.update(
            conn.execute(
                f"SELECT id, kind FROM subject WHERE id IN ({','.join('?' * len(chunk))})", chunk
            )
        )
    for sid in ids:
        by_kind[kinds[sid]].append(shared[sid])
    return by_kind


def _fw_kind(kind_name: str) -> tuple[str, str]:
    kind = get_kind(kind_name)
    return (kind.framework if kind else "", kind_name)


def _ratings(
    conn: sqlite3.Connection, framework: str | None, n_resamples: int, seed: int
) -> Iterable[RatingAgreement]:
    ratings = conn.execute(
        "SELECT report_id, reviewer, value FROM report_rating ORDER BY report_id, reviewer"
    ).fetchall()
    rated_reports = sorted({r[0] for r in ratings})
    for fw_name, fw in frameworks().items():
        if fw.rating is None or (framework is not None and fw_name != framework):
            continue
        for variant in ("adjudicated", "judge"):
            pairs = _rating_pairs(conn, fw_name, fw.rating.metric, variant, ratings, rated_reports)
            if pairs:
                yield _rating_agreement(fw_name, fw.rating, variant, pairs, n_resamples, seed)


def _rating_pairs(
    conn: sqlite3.Connection,
    fw_name: str,
    metric: str,
    variant: str,
    ratings: list[tuple[Any, ...]],
    rated_reports: list[int],
) -> list[tuple[Any, ...]]:
    """(report, reviewer, rating, computed level) for each rating of a report the metric has a
    value for."""
    computed_of = {
        rid: value
        for rid, _, _, scores in report_scores.read_metrics(
            conn, (metric,), rated_reports, framework=fw_name, variant=variant
        )
        if (value := scores.get(metric)) is not None
    }
    return [
        (rid, reviewer, value, computed_of[rid])
        for rid, reviewer, value in ratings
        if rid in computed_of
    ]


def _rating_agreement(
    fw_name: str,
    rating: Rating,
    variant: str,
    pairs: list[tuple[Any, ...]],
    n_resamples: int,
    seed: int,
) -> RatingAgreement:
    computed = [rating.scale.normalize(float(p[3])) for p in pairs]
    rated = [str(p[2]) for p in pairs]
    return RatingAgreement(
        framework=fw_name,
        metric=rating.metric,
        variant=variant,
        n=len(pairs),
        reports=len({p[0] for p in pairs}),
        raters=tuple(sorted({str(p[1]) for p in pairs})),
        comparison=compare_categorical(
            computed,
            rated,
            scale_labels(rating.scale),
            ordinal=True,
            n_resamples=n_resamples,
            seed=seed,
        ),
    )
