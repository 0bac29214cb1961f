"""End to end through the review log: decisions outside a plan and skipped plan subjects.

A synthetic run with a planted judge bias; a uniform plan; then every judge error of the
frame *outside* the plan decided (the suspicion order at its best), and the plan decided from
the true verdicts. Everything wrong is then fixed: the adjudicated scores are the truth. The
landed estimator shrank the frame by the outside decisions while the plan's sample still
stood for the whole of it, so it corrected for the errors a second time (the whole planted
bias, below the truth); the difference estimator subtracts what those decisions settled and
the truth lies in its intervals."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner


@pytest.fixture(scope="module")
def biased(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from reviewer.formats.native import iter_records
    from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
    from store.db.connection import connect
    from store.imports.loader import import_records
    from store.runs.records import set_active
    from store.scores.cache import rebuild_scores

    root = tmp_path_factory.mktemp("outside")
    write_synthetic(
        root / "bundle",
        SyntheticSpec(
            tasks=16,
            systems=3,
            subtasks=5,
            claims=10,
            words=30,
            seed=4,
            judge_bias=(0.45, 0.2, 0.0),
            judge_noise=0.03,
        ),
    )
    db = root / "base.db"
    conn = connect(db)
    suite, records = iter_records(root / "bundle")
    import_records(conn, suite, records, "test")
    set_active(conn, "truth", False)
    rebuild_scores(conn)
    conn.close()
    return db


def _copy(db: Path, tmp_path: Path) -> sqlite3.Connection:
    from store.db.connection import connect

    target = tmp_path / "work.db"
    source = sqlite3.connect(db)
    dest = sqlite3.connect(target)
    source.backup(dest)
    source.close()
    dest.close()
    return connect(target)


def _decide_errors_outside(conn: sqlite3.Connection, plan_id: int) -> int:
    from store.plans.simulated import truth_values
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores
    from store.sqlite.tx import transaction

    truth = truth_values(conn, "truth")
    log = ReviewLog(conn, "suspicion")
    rows = conn.execute(
        """SELECT j.id, j.subject_id, j.value FROM judgment j
           JOIN plan_frame pf ON pf.subject_id = j.subject_id AND pf.plan_id = ?
           WHERE j.current = 1 AND j.subject_id NOT IN
                 (SELECT subject_id FROM plan_draw WHERE plan_id = ?)""",
        (plan_id, plan_id),
    ).fetchall()
    done = 0
    with transaction(conn):
        for jid, sid, value in rows:
            if truth.get(sid) is not None and truth[sid] != value:
                log.decide(jid, truth[sid], "suspicion order")
                done += 1
    rebuild_scores(conn)
    return done


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_decisions_outside_the_plan_are_not_counted_twice(
    biased: Path, tmp_path: Path, seed: int
) -> None:
    from store.plans.design import PlanSpec, create_plan
    from store.plans.simulated import review_plan
    from tui.cli.group import gavel

    conn = _copy(biased, tmp_path)
    plan = create_plan(conn, PlanSpec(400, seed=seed), "ana")
    outside = _decide_errors_outside(conn, plan.id)
    assert outside > 50
    review_plan(conn, plan, "truth", 400)
    result = CliRunner().invoke(
        gavel, ["--db", str(tmp_path / "work.db"), "estimate", "--format", "json", "--no-ranks"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["decisions"]["outside_plan"] == outside
    assert data["decisions"]["in_plan"] == 400
    assert any("decided outside the plan" in n for n in data["notes"])
    checked = inside = 0
    for row in data["estimates"]:
        if row["metric"] not in ("Ins", "Fac", "Rat") or row["lower"] is None:
            continue
        truth = row["adjudicated"]  # every error fixed: adjudicated is the truth
        checked += 1
        inside += row["lower"] <= truth <= row["upper"]
        # the corrected value is the truth up to the plan's own sampling error, far less than
        # the planted bias the landed estimator subtracted a second time
        if row["system"] == "sys00" and row["metric"] == "Fac":
            assert abs(row["corrected"] - truth) < 0.4 * (row["judge"] - truth)
    assert checked >= 10
    # 95% intervals of a dozen correlated targets: a plan that misses two (one system's
    # metric and the overall one with it) is a one-in-twenty event; over eight seeds the
    # misses were 3 of 96
    assert inside >= checked - 2


def test_skipped_plan_subjects_are_counted_and_widen_the_interval(
    biased: Path, tmp_path: Path
) -> None:
    from store.plans.design import PlanSpec, create_plan, plan_items
    from store.plans.estimates import estimate, report_json
    from store.plans.simulated import truth_values
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores

    conn = _copy(biased, tmp_path)
    plan = create_plan(conn, PlanSpec(200, seed=5), "ana")
    truth = truth_values(conn, "truth")
    log = ReviewLog(conn, "ana")
    skipped = 0
    for item in plan_items(conn, plan.id):
        assert item.judgment_id is not None
        judge = conn.execute(
            "SELECT value FROM judgment WHERE id = ?", (item.judgment_id,)
        ).fetchone()[0]
        if truth[item.subject_id] != judge and skipped < 6:
            skipped += 1  # the hard ones are passed over
            continue
        log.decide(item.judgment_id, truth[item.subject_id], "plan")
    rebuild_scores(conn)
    report = estimate(conn, ranks=False)
    data = report_json(report)
    assert data["decisions"] == {
        "in_plan": 200 - skipped,
        "outside_plan": 0,
        "outside_frame": 0,
        "skipped": skipped,
    }
    assert any(f"{skipped} subjects of plan" in n and "skipped" in n for n in report.notes)
    from reviewer.registry import get_framework

    bounds = {m.name: m.bounds for m in get_framework("cascade").metrics}
    widened = [r for r in report.rows if r.skip_low < 0 or r.skip_high > 0]
    assert widened
    for row in widened:
        assert any("skipped draws" in n for n in row.notes)
        if row.lower is None or row.corrected is None or row.half_width is None:
            continue
        low, high = bounds[row.metric]
        widened_lower = row.corrected + row.skip_low - row.half_width
        widened_upper = row.corrected + row.skip_high + row.half_width
        assert row.lower == pytest.approx(max(low, min(widened_lower, high)))
        assert row.upper == pytest.approx(min(high, max(widened_upper, low)))
