"""Report plans end to end: whole reports drawn by system, reviewed through the review log
from a synthetic run's true verdicts, estimated by `gavel estimate` — UserPref (a level per
report) gets a valid interval holding its true value, and a subject plan says plainly that it
cannot give one."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner


@pytest.fixture(scope="module")
def synthetic_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from reviewer.formats.native import iter_records
    from reviewer.frameworks.dailyreport.synthetic import SyntheticSpec, write_synthetic
    from store.db.connection import connect
    from store.imports.loader import import_records
    from store.runs.records import set_active
    from store.scores.cache import rebuild_scores

    tmp = tmp_path_factory.mktemp("reports")
    write_synthetic(
        tmp / "bundle",
        SyntheticSpec(
            tasks=30,
            systems=4,
            subtasks=4,
            claims=8,
            words=30,
            seed=13,
            judge_bias=(0.4, 0.25, 0.1, 0.0),
            judge_noise=0.03,
        ),
    )
    db = tmp / "base.db"
    conn = connect(db)
    suite, records = iter_records(tmp / "bundle")
    import_records(conn, suite, records, "test")
    set_active(conn, "truth", False)
    rebuild_scores(conn)
    conn.close()
    return db


def _copy(db: Path, to: Path) -> sqlite3.Connection:
    from store.db.connection import connect

    source = sqlite3.connect(db)
    source.backup(sqlite3.connect(to))
    source.close()
    return connect(to)


def _true_values(conn: sqlite3.Connection) -> dict[int | None, dict[str, float | None]]:
    from reviewer.estimates.influence import aggregate_values, score_at
    from reviewer.registry import get_framework
    from store.plans.simulated import truth_values
    from store.scores.cache import load_options
    from store.scores.inputs import load_inputs

    fw, options = get_framework("cascade"), load_options(conn)["cascade"]
    truth = truth_values(conn, "truth")
    by_system: dict[int | None, list] = {None: []}
    for report in load_inputs(conn).values():
        scores = score_at(
            fw, report, [v._replace(effective=truth[v.subject]) for v in report.verdicts], options
        )
        by_system.setdefault(report.system_id, []).append(scores)
        by_system[None].append(scores)
    return {sid: aggregate_values(fw, reports, options) for sid, reports in by_system.items()}


def test_a_report_plan_draws_whole_reports_by_system(synthetic_db: Path, tmp_path: Path) -> None:
    from store.plans.design import PlanSpec, create_plan

    conn = _copy(synthetic_db, tmp_path / "a.db")
    plan = create_plan(conn, PlanSpec(20, "reports", seed=4), "ana")
    assert plan.reports and "whole reports" in plan.summary()
    drawn = conn.execute(
        """SELECT sj.report_id, count(*) FROM plan_draw pd JOIN subject sj ON sj.id = pd.subject_id
           WHERE pd.plan_id = ? GROUP BY 1""",
        (plan.id,),
    ).fetchall()
    assert len(drawn) == 20
    for rid, count in drawn:  # every frame subject of a drawn report
        in_frame = conn.execute(
            """SELECT count(*) FROM plan_frame pf JOIN subject sj ON sj.id = pf.subject_id
               WHERE pf.plan_id = ? AND sj.report_id = ?""",
            (plan.id, rid),
        ).fetchone()[0]
        assert count == in_frame
    per_system = conn.execute(
        """SELECT r.system_id, count(DISTINCT r.id) FROM plan_draw pd
           JOIN subject sj ON sj.id = pd.subject_id JOIN report r ON r.id = sj.report_id
           WHERE pd.plan_id = ? GROUP BY 1""",
        (plan.id,),
    ).fetchall()
    assert sorted(n for _, n in per_system) == [5, 5, 5, 5]
    positions = [
        rid
        for (rid,) in conn.execute(
            """SELECT sj.report_id FROM plan_draw pd JOIN subject sj ON sj.id = pd.subject_id
               WHERE pd.plan_id = ? ORDER BY pd.position""",
            (plan.id,),
        )
    ]
    runs = [positions[0]] + [b for a, b in itertools.pairwise(positions) if a != b]
    assert len(runs) == 20  # each report's subjects in one run: a report is reviewed whole


def test_a_report_plan_gives_userpref_a_valid_interval(synthetic_db: Path, tmp_path: Path) -> None:
    """A report plan of 40 of the 120 reports, decided from the true verdicts: every target —
    UserPref included, no longer first-order — has an interval, and the true values lie in
    them (at most one of the 20 may miss)."""
    from store.plans.design import PlanSpec, create_plan
    from store.plans.estimates import NOT_ESTIMABLE
    from store.plans.simulated import review_plan
    from tui.cli.group import gavel

    db = tmp_path / "b.db"
    conn = _copy(synthetic_db, db)
    plan = create_plan(conn, PlanSpec(40, "reports", seed=9), "ana")
    review_plan(conn, plan, "truth", 100_000)
    true = _true_values(conn)
    result = CliRunner().invoke(gavel, ["--db", str(db), "estimate", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    checked = inside = 0
    for row in data["estimates"]:
        assert NOT_ESTIMABLE not in row["notes"]
        assert not any("first-order" in n for n in row["notes"])
        assert row["lower"] is not None and row["upper"] is not None, row
        value = true[row["system_id"]][row["metric"]]
        checked += 1
        inside += row["lower"] <= value <= row["upper"]
    assert checked == 20  # UserPref, Ins, Fac, Rat × (4 systems + overall)
    assert inside >= checked - 1
    userpref = [r for r in data["estimates"] if r["metric"] == "UserPref"]
    assert all(r["reviews"] == (40 if r["system"] == "overall" else 10) for r in userpref)
    text = CliRunner().invoke(gavel, ["--db", str(db), "estimate", "--metric", "UserPref"])
    assert text.exit_code == 0 and "UserPref" in text.output


def test_a_subject_plan_says_userpref_is_not_estimable(synthetic_db: Path, tmp_path: Path) -> None:
    from store.plans.design import PlanSpec, create_plan
    from store.plans.estimates import NOT_ESTIMABLE, estimate
    from store.plans.simulated import review_plan

    conn = _copy(synthetic_db, tmp_path / "c.db")
    plan = create_plan(conn, PlanSpec(600, seed=2), "ana")
    review_plan(conn, plan, "truth", 600)
    report = estimate(conn, ranks=False)
    for row in report.rows:
        if row.metric == "UserPref":
            assert row.lower is None and row.upper is None and row.status == "weak"
            assert row.notes[0] == NOT_ESTIMABLE and "disagreement" in row.notes[1]
            assert row.corrected is not None  # the first-order value, shown as such
        elif row.status == "ok":
            assert row.lower is not None


def test_race_ratios_are_estimated_from_whole_reports(tmp_path: Path) -> None:
    """RACE's T/(T+R) per report (the DeepResearch Bench fixture): a report plan of every
    report, decided (every third verdict overruled), gives the adjudicated scores exactly;
    one of half of them gives an interval, never the subject plan's 'not estimable'."""
    from store.db.connection import connect
    from store.plans.design import PlanSpec, create_plan
    from store.plans.estimates import NOT_ESTIMABLE, estimate
    from tui.cli import main

    fixture = Path(__file__).parent / "fixtures" / "drb_mini"
    db = tmp_path / "drb.db"
    assert main(["import", str(fixture), "--format", "drb", "--db", str(db)]) == 0
    conn = connect(db)
    half = create_plan(conn, PlanSpec(2, "reports", seed=1, frameworks=("race",)), "ana")
    _decide(conn, half.id)
    rows = [r for r in estimate(conn, ranks=False).rows if r.metric == "overall"]
    assert rows and all(NOT_ESTIMABLE not in r.notes for r in rows)
    assert any(r.adjudicated != r.judge for r in rows)
    assert any(r.lower is not None and r.lower < r.upper for r in rows)  # type: ignore[operator]
    every = create_plan(conn, PlanSpec(100, "reports", seed=2, frameworks=("race",)), "ana")
    _decide(conn, every.id)
    for row in estimate(conn, every.name, ranks=False).rows:
        if row.reviews:
            assert row.corrected == pytest.approx(row.adjudicated, abs=1e-12), row
            assert row.lower == row.upper == row.corrected


def _decide(conn: sqlite3.Connection, plan_id: int) -> None:
    """Decide every undecided subject of the plan: the judge's score, or on every third
    two points lower (another value of its scale)."""
    from store.plans.design import plan_items
    from store.reviewlog.events import ReviewLog
    from store.scores.cache import rebuild_scores

    log = ReviewLog(conn, "ana")
    for n, item in enumerate(plan_items(conn, plan_id)):
        if item.decided or item.judgment_id is None:
            continue
        judge = conn.execute(
            "SELECT value FROM judgment WHERE id = ?", (item.judgment_id,)
        ).fetchone()[0]
        value = judge
        if n % 3 == 0 and judge is not None:
            value = str(max(0, int(float(judge)) - 2))
        log.decide(item.judgment_id, value, "test")
    rebuild_scores(conn)


def test_the_notes_give_the_degrees_of_freedom_the_interval_used() -> None:
    from store.plans.estimates import _freedom

    assert _freedom(8, None) == "10"  # disagreements + 2
    assert _freedom(3, 2.0) == "2"  # three reports decided: the design's n − 1
    assert _freedom(3, 4.5) == "4.5"
