"""Estimates from a database: every headline metric per system and overall, what each rests
on, and what it says when it cannot be trusted; and, end to end, a run with a planted judge
bias reviewed through the review log, whose estimates recover the true scores and the
planted bias within their intervals."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

SUITE = "dailyreport-sample-2026-11"


def _conn(path: Path) -> sqlite3.Connection:
    from store.db.connection import connect

    return connect(path)


def test_without_a_plan_only_judge_and_adjudicated_are_given(sample_db: Path) -> None:
    from store.plans.estimates import estimate

    report = estimate(_conn(sample_db), suite=SUITE)
    assert report.plan is None
    assert any("no review plan" in note for note in report.notes)
    headline = {(r.metric, r.system) for r in report.rows}
    assert ("Fac", "atlas-dr") in headline and ("UserPref", "overall") in headline
    for row in report.rows:
        assert row.corrected is None and row.lower is None and row.status == "undefined"
        assert row.judge is not None
    assert {r.variant for r in report.ranks} == {"judge", "adjudicated"}
    assert all(r.status == "weak" and "8 tasks" in r.note for r in report.ranks)


def test_a_plan_not_reviewed_yet_says_so(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan
    from store.plans.estimates import estimate

    conn = _conn(sample_db)
    create_plan(conn, PlanSpec(40, seed=1, suite=SUITE), "ana")
    report = estimate(conn)
    assert report.plan is not None and report.plan.name == "p1"
    assert all(r.status == "undefined" and r.notes == ("no plan reviews yet",) for r in report.rows)


def _review(conn: sqlite3.Connection, plan_id: int, count: int, flip_every: int) -> None:
    """Decide the first ``count`` subjects of the plan: the judge's value, except every
    ``flip_every``-th, which gets another value of its scale."""
    from reviewer.registry import get_kind
    from store.plans.design import plan_items
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores

    log = ReviewLog(conn, "ana")
    for n, item in enumerate(plan_items(conn, plan_id)[:count]):
        judge = conn.execute(
            "SELECT value FROM judgment WHERE id = ?", (item.judgment_id,)
        ).fetchone()[0]
        scale = get_kind(item.kind).scale  # type: ignore[union-attr]
        value = judge
        if judge is None or n % flip_every == 0:
            value = next(c.code for c in scale.choices if c.code != judge)
        assert item.judgment_id is not None
        log.decide(item.judgment_id, value, "test")
    rebuild_scores(conn)


def test_a_reviewed_plan_gives_intervals_ranks_and_says_what_is_weak(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan
    from store.plans.estimates import estimate
    from store.reviewlog.events import ReviewLog

    conn = _conn(sample_db)
    plan = create_plan(conn, PlanSpec(300, seed=2, suite=SUITE), "ana")
    _review(conn, plan.id, 250, 4)
    outside = conn.execute(
        "SELECT j.id FROM judgment j WHERE j.current = 1 AND j.subject_id NOT IN "
        "(SELECT subject_id FROM plan_draw) AND j.kind = 'claim' LIMIT 3"
    ).fetchall()
    for (jid,) in outside:
        ReviewLog(conn, "ben").decide(jid, "unknown", "outside the plan")
    report = estimate(conn)
    assert any(
        "3 subjects of the plan's frame were decided outside the plan" in n for n in report.notes
    )
    overall = {r.metric: r for r in report.rows if r.system == "overall"}
    fac = overall["Fac"]
    assert fac.reviews > 100 and fac.disagreements >= 10
    assert fac.lower is not None and fac.upper is not None and fac.lower < fac.corrected < fac.upper
    assert fac.bias == pytest.approx(fac.judge - fac.corrected)  # type: ignore[operator]
    assert fac.bias_lower == pytest.approx(fac.judge - fac.upper)  # type: ignore[operator]
    assert fac.needed is not None and fac.anytime is not None and fac.anytime > fac.half_width
    assert overall["UserPref"].status == "weak"
    assert any("first-order" in n for n in overall["UserPref"].notes)
    assert any(n.startswith("not estimable from this sample") for n in overall["UserPref"].notes)
    assert overall["UserPref"].lower is None  # no interval a subject plan could justify
    # Nothing confident-looking where nothing was measured: no zero-width intervals but exact.
    for row in report.rows:
        if row.lower is not None and row.lower == row.upper:
            assert any(n.startswith("exact") for n in row.notes)
        # Few disagreements: an interval (pseudo-observations), flagged weak and saying why.
        exact = any(n.startswith("exact") for n in row.notes)
        if row.disagreements < 10 and row.status != "undefined" and not exact:
            assert row.status == "weak"
            assert any("disagreement" in n or "none of" in n for n in row.notes)
    variants = {r.variant for r in report.ranks}
    assert variants == {"judge", "adjudicated", "corrected"}
    systems = [r for r in report.rows if r.metric == "Fac" and r.system_id is not None]
    assert sorted(r.ranks["judge"] for r in systems) == [1, 2, 3]  # type: ignore[type-var]


def test_reviewing_every_subject_gives_the_adjudicated_scores_exactly(sample_db: Path) -> None:
    from store.plans.design import PlanSpec, create_plan
    from store.plans.estimates import estimate

    conn = _conn(sample_db)
    plan = create_plan(conn, PlanSpec(10_000, seed=3, suite=SUITE), "ana")
    _review(conn, plan.id, plan.progress.subjects, 3)
    report = estimate(conn, ranks=False)
    for row in report.rows:
        assert row.corrected == pytest.approx(row.adjudicated, abs=1e-12), row
        if row.reviews:
            assert row.lower == row.upper == row.corrected
            assert "exact: every verdict that moves it is reviewed" in row.notes


def test_a_planted_judge_bias_is_recovered_within_the_intervals(tmp_path: Path) -> None:
    """40 tasks × 5 systems, the judge flattering the weaker systems; a stratified plan by
    system, reviewed from the true verdicts through the review log; `gavel estimate --format
    json` — the true scores and the true judge bias lie in the intervals."""
    from reviewer.estimates.influence import aggregate_values, score_at
    from reviewer.formats.native import iter_records
    from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
    from reviewer.registry import get_framework
    from store.imports.loader import import_records
    from store.plans.design import PlanSpec, create_plan
    from store.plans.simulated import review_plan, truth_values
    from store.runs.records import set_active
    from store.scores.cache import load_options, rebuild_scores
    from store.scores.inputs import load_inputs
    from tui.cli.group import gavel

    write_synthetic(
        tmp_path / "bundle",
        SyntheticSpec(
            tasks=40,
            systems=5,
            subtasks=6,
            claims=12,
            words=40,
            seed=11,
            judge_bias=(0.4, 0.25, 0.1, 0.0, 0.0),
            judge_noise=0.03,
        ),
    )
    db = tmp_path / "bias.db"
    conn = _conn(db)
    suite, records = iter_records(tmp_path / "bundle")
    import_records(conn, suite, records, "test")
    set_active(conn, "truth", False)
    rebuild_scores(conn)
    plan = create_plan(conn, PlanSpec(2400, "stratified", ("system",), seed=5), "ana")
    assert review_plan(conn, plan, "truth", 2400) == 2400

    fw, options = get_framework("cascade"), load_options(conn)["cascade"]
    truth = truth_values(conn, "truth")
    by_system: dict[int | None, list] = {None: []}
    for report in load_inputs(conn).values():
        scores = score_at(
            fw, report, [v._replace(effective=truth[v.subject]) for v in report.verdicts], options
        )
        by_system.setdefault(report.system_id, []).append(scores)
        by_system[None].append(scores)
    true = {sid: aggregate_values(fw, reports, options) for sid, reports in by_system.items()}

    result = CliRunner().invoke(gavel, ["--db", str(db), "estimate", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["plan"]["name"] == plan.name and data["plan"]["reviewed"] == 2400
    checked = inside = 0
    for row in data["estimates"]:
        if row["metric"] == "UserPref" or row["lower"] is None:
            continue
        value = true[row["system_id"]][row["metric"]]
        checked += 1
        inside += row["lower"] <= value <= row["upper"]
        true_bias = row["judge"] - value
        assert (row["bias_lower"] <= true_bias <= row["bias_upper"]) == (
            row["lower"] <= value <= row["upper"]
        )
    assert checked >= 15
    assert inside >= checked - 1  # 95% intervals: at most one of ~18 may miss
    weakest = next(r for r in data["estimates"] if r["metric"] == "Fac" and r["system"] == "sys00")
    assert weakest["judge"] - true[weakest["system_id"]]["Fac"] > 0.05  # the planted bias
    assert weakest["bias_lower"] > 0  # … is seen
