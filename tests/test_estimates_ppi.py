"""PPI++ agrees with ppi-python (the reference implementation of Angelopoulos et al.) to 1e-9:
the mean estimator itself on random data, with and without weights, tuned and fixed λ; and the
whole store path — a plan, reviews in the review log, influences computed by rescoring — on a
metric that is a plain mean of verdicts (DailyReport's reference-claim consistency of one
system), where the design-based estimate must be ppi-python's estimate of that mean."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from reviewer.estimates.ppi import Moments, power_tuning, ppi_mean
from tests.oracles import ppi_py

TOLERANCE = 1e-9


def _cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]]:
    rng = np.random.default_rng(20231104)
    out = []
    for k in range(60):
        n, big_n = int(rng.integers(5, 300)), int(rng.integers(10, 3000))
        if k % 2:
            y = rng.binomial(1, 0.7, n).astype(float)
            yhat = np.where(rng.random(n) < 0.8, y, 1 - y)
            unlabeled = rng.binomial(1, 0.75, big_n).astype(float)
        else:
            y = rng.normal(size=n)
            yhat = y + rng.normal(size=n) * rng.random() * 3
            unlabeled = rng.normal(size=big_n)
        weights = None if k % 3 == 0 else rng.random(n) * 5 + 0.1
        out.append((y, yhat, unlabeled, weights))
    return out


@pytest.mark.parametrize("lam", [None, 0.0, 1.0, 0.37])
def test_the_mean_estimator_and_its_interval_are_ppi_pythons(lam: float | None) -> None:
    for y, yhat, unlabeled, weights in _cases():
        mine = ppi_mean(y, yhat, unlabeled, w=weights, lam=lam, confidence=0.9)
        point = ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, lam=lam, w=weights)
        lower, upper = ppi_py.ppi_mean_ci(y, yhat, unlabeled, alpha=0.1, lam=lam, w=weights)
        assert abs(mine.estimate - float(np.ravel(point)[0])) < TOLERANCE
        assert abs(mine.lower - float(np.ravel(lower)[0])) < TOLERANCE
        assert abs(mine.upper - float(np.ravel(upper)[0])) < TOLERANCE


def test_the_tuned_weight_is_ppi_pythons_and_computed_cell_by_cell() -> None:
    """λ from sums, several cells at once (as the design-based estimator computes it)."""
    from ppi_py.ppi import _calc_lam_glm

    cases = _cases()[:10]
    stacked = [Moments.of(y, p, q, w) for y, p, q, w in cases]
    joined = Moments(
        *(np.array([getattr(m, f) for m in stacked]) for f in Moments.__dataclass_fields__)
    )
    lams = power_tuning(joined)
    for (y, p, q, w), lam in zip(cases, lams, strict=True):
        weights = np.ones(len(y)) if w is None else w / w.sum() * len(y)
        theta = float(np.mean(q) + np.mean(weights * (y - p)))
        expected = float(
            _calc_lam_glm(
                weights * (y - theta), weights * (p - theta), q - theta, np.eye(1), clip=True
            )
        )
        assert abs(lam - expected) < TOLERANCE


def _consistency_case(db: Path) -> tuple[sqlite3.Connection, np.ndarray, np.ndarray, np.ndarray]:
    """A plan stratified down to (framework, dimension, system), every drawn consistency pair
    of kestrel decided (a fifth of the judge's support verdicts overruled, a third of its
    others upgraded); the arrays ppi-python needs for that cell."""
    from reviewer.registry import get_kind
    from store.db.connection import connect
    from store.plans.design import PlanSpec, create_plan, plan_items
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores

    conn = connect(db)
    plan = create_plan(
        conn,
        PlanSpec(
            400,
            "stratified",
            ("framework", "dimension", "system"),
            seed=5,
            suite="dailyreport-sample-2026-11",
        ),
        "ana",
    )
    stratum = next(s.index for s in plan.strata if s.label == "cascade/consistency/kestrel")
    drawn = {
        sid
        for (sid,) in conn.execute(
            "SELECT subject_id FROM plan_draw WHERE plan_id = ? AND stratum = ?", (plan.id, stratum)
        )
    }
    scale = get_kind("consistency").scale  # type: ignore[union-attr]
    log = ReviewLog(conn, "ana")
    y, yhat = [], []
    for item in plan_items(conn, plan.id):
        if item.subject_id not in drawn:
            continue
        judge = conn.execute(
            "SELECT value FROM judgment WHERE id = ?", (item.judgment_id,)
        ).fetchone()[0]
        human = judge
        if judge == "support" and item.position % 5 == 0:
            human = "unknown"
        elif judge != "support" and item.position % 3 == 0:
            human = "support"
        assert item.judgment_id is not None
        log.decide(item.judgment_id, human, "test")
        y.append(scale.numeric(human))
        yhat.append(scale.numeric(judge))
    rebuild_scores(conn)
    unlabeled = [
        scale.numeric(v)
        for (v,) in conn.execute(
            """SELECT j.value FROM plan_frame pf JOIN judgment j ON j.subject_id = pf.subject_id
           AND j.current = 1 WHERE pf.plan_id = ? AND pf.stratum = ?""",
            (plan.id, stratum),
        )
    ]
    return (
        conn,
        np.array(y, dtype=float),
        np.array(yhat, dtype=float),
        np.array(unlabeled, dtype=float),
    )


def test_the_store_estimate_of_a_mean_of_verdicts_is_ppi_pythons(sample_db: Path) -> None:
    from store.plans.estimates import estimate

    conn, y, yhat, unlabeled = _consistency_case(sample_db)
    assert len(y) >= 10 and (y != yhat).sum() >= 5
    system = conn.execute("SELECT id FROM system WHERE ext_id = 'kestrel'").fetchone()[0]

    def kestrel(**options: bool) -> float:
        report = estimate(conn, metrics=("Refer_Claim_Consistency",), ranks=False, **options)
        row = next(
            r
            for r in report.rows
            if r.metric == "Refer_Claim_Consistency" and r.system_id == system
        )
        assert row.judge == pytest.approx(float(np.mean(unlabeled)), abs=1e-12)
        assert row.corrected is not None
        return row.corrected

    tuned = ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled)
    assert abs(kestrel(crossfit=False) - float(np.ravel(tuned)[0])) < TOLERANCE
    # Cross-fitted, λ stays 1 where a fold holds fewer than 10 disagreements: plain PPI.
    plain = ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, lam=1)
    assert abs(kestrel() - float(np.ravel(plain)[0])) < TOLERANCE
    # And the classical estimate (λ = 0) is the human sample mean.
    assert (
        abs(
            float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, unlabeled, lam=0))[0])
            - float(np.mean(y))
        )
        < TOLERANCE
    )
    # … and so is the store's "human only" (issue 31: it was the judge's mean where a
    # cross-fitting fold held no disagreement).
    report = estimate(conn, metrics=("Refer_Claim_Consistency",), ranks=False)
    row = next(
        r for r in report.rows if r.metric == "Refer_Claim_Consistency" and r.system_id == system
    )
    assert row.human == pytest.approx(float(np.mean(y)), abs=TOLERANCE)
