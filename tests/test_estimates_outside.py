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


def _true_values(conn: sqlite3.Connection) -> dict[int | None, dict[str, float | None]]:
    """Each system's (and, under None, every system's) metrics on the true verdicts."""
    from reviewer.estimates.influence import aggregate_values, score_at
    from reviewer.registry import get_framework
    from store.plans.simulated import truth_values
    from store.scores.cache import load_options
    from store.scores.inputs import load_inputs

    fw, options = get_framework("cascade"), load_options(conn)["cascade"]
    truth = truth_values(conn, "truth")
    by_system: dict[int | None, list[object]] = {None: []}
    for report in load_inputs(conn).values():
        verdicts = [v._replace(effective=truth[v.subject]) for v in report.verdicts]
        scores = score_at(fw, report, verdicts, options)
        by_system.setdefault(report.system_id, []).append(scores)
        by_system[None].append(scores)
    return {s: aggregate_values(fw, r, options) for s, r in by_system.items()}  # type: ignore[arg-type]


def _walk_active(conn: sqlite3.Connection, plan_name: str) -> int:
    """Decide an active plan as plan mode walks it, from the true verdicts: each subject in
    order, the next batch drawn when every drawn one is decided."""
    from store.plans.design import get_plan, next_item
    from store.plans.simulated import truth_values
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores

    truth = truth_values(conn, "truth")
    log = ReviewLog(conn, "ana")
    plan = get_plan(conn, plan_name)
    done = 0
    while (item := next_item(conn, plan.id)) is not None:
        assert item.judgment_id is not None
        log.decide(item.judgment_id, truth[item.subject_id], "plan")
        done += 1
    rebuild_scores(conn)
    return done


def test_an_active_plan_is_walked_batch_by_batch_and_estimates_the_truth(
    biased: Path, tmp_path: Path
) -> None:
    from store.plans.design import PlanSpec, create_plan, get_plan
    from store.plans.estimates import estimate, report_json

    conn = _copy(biased, tmp_path)
    plan = create_plan(conn, PlanSpec(400, "active", seed=2), "ana")
    assert plan.active and not plan.with_replacement and plan.budget == 400
    first = plan.progress.subjects
    assert 40 <= first <= 120  # the first batch: a fifth of the budget, Poisson-sized
    done = _walk_active(conn, plan.name)
    plan = get_plan(conn, plan.name)
    assert done == plan.progress.subjects > first  # the second batch was drawn and decided
    assert 300 <= done <= 500
    batches = dict(
        conn.execute(
            "SELECT CAST(weight AS INTEGER), count(*) FROM plan_draw WHERE plan_id = ? GROUP BY 1",
            (plan.id,),
        ).fetchall()
    )
    assert set(batches) == {0, 1}
    # the second batch goes where the first found the judge wrong: more errors per review
    from store.plans.simulated import truth_values

    truth = truth_values(conn, "truth")
    errors = [
        sum(
            truth[s] != v
            for s, v in conn.execute(
                """SELECT pd.subject_id, j.value FROM plan_draw pd JOIN judgment j
                   ON j.subject_id = pd.subject_id AND j.current = 1
                   WHERE pd.plan_id = ? AND CAST(pd.weight AS INTEGER) = ?""",
                (plan.id, b),
            )
        )
        / batches[b]
        for b in (0, 1)
    ]
    print("\nactive plan: batches", batches, "error rate per batch", errors)
    assert errors[1] > errors[0]
    data = report_json(estimate(conn, ranks=False))
    true_values = _true_values(conn)
    checked = inside = 0
    for row in data["estimates"]:  # type: ignore[attr-defined]
        if row["metric"] not in ("Ins", "Fac", "Rat") or row["lower"] is None:
            continue
        true = true_values[row["system_id"]][row["metric"]]
        checked += 1
        inside += row["lower"] <= true <= row["upper"]
    print(f"intervals covering the truth: {inside} of {checked}")
    assert checked >= 10
    assert inside >= checked - 2


def test_skips_inside_an_active_plan_are_counted_and_bound_the_interval(
    biased: Path, tmp_path: Path
) -> None:
    """The first batch of an active plan decided but for its first six errors: the skips are
    counted, noted, and widen the intervals by their worst-case bounds, as in the other
    designs (before, an active plan counted them and left its intervals alone)."""
    from reviewer.registry import get_framework
    from store.plans.design import PlanSpec, create_plan, plan_items
    from store.plans.estimates import estimate, report_json
    from store.plans.simulated import truth_values
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores

    conn = _copy(biased, tmp_path)
    plan = create_plan(conn, PlanSpec(400, "active", seed=3), "ana")
    truth = truth_values(conn, "truth")
    log = ReviewLog(conn, "ana")
    skipped = decided = 0
    for item in plan_items(conn, plan.id):
        assert item.judgment_id is not None
        judge = conn.execute(
            "SELECT value FROM judgment WHERE id = ?", (item.judgment_id,)
        ).fetchone()[0]
        if truth[item.subject_id] != judge and skipped < 6:
            skipped += 1
            continue
        log.decide(item.judgment_id, truth[item.subject_id], "plan")
        decided += 1
    rebuild_scores(conn)
    report = estimate(conn, ranks=False)
    data = report_json(report)
    assert data["decisions"]["skipped"] == skipped == 6  # type: ignore[index]
    assert any(f"{skipped} subjects of plan" in n for n in report.notes)
    bounds = {m.name: m.bounds for m in get_framework("cascade").metrics}
    widened = [r for r in report.rows if r.skip_low < 0 or r.skip_high > 0]
    assert widened and any(r.metric == "Fac" for r in widened)
    for row in widened:
        assert any("skipped draws" in n for n in row.notes)
        if row.lower is None or row.corrected is None or row.half_width is None:
            continue
        low, high = bounds[row.metric]
        assert row.lower == pytest.approx(
            max(low, min(row.corrected + row.skip_low - row.half_width, high))
        )
        assert row.upper == pytest.approx(
            min(high, max(row.corrected + row.skip_high + row.half_width, low))
        )
