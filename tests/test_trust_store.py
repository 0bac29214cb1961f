"""Trust rules in the database: calibrated on a plan's decided draws, applied as their own
state (never human labels, never review events), undone by clearing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

SUITE = "dailyreport-sample-2026-11"


def _conn(path: Path) -> sqlite3.Connection:
    from store.db.connection import connect

    return connect(path)


def _plan(conn: sqlite3.Connection, budget: int = 200, design: str = "uniform") -> str:
    from store.plans.design import PlanSpec, create_plan

    return create_plan(conn, PlanSpec(budget, design, seed=5, suite=SUITE), "ana").name  # type: ignore[arg-type]


def _review_plan(conn: sqlite3.Connection, name: str, overrule: int = 0) -> int:
    """Decide every draw of the plan: confirm the judge, overrule the first ``overrule``."""
    from store.plans.design import get_plan, plan_items
    from store.reviewlog.events import ReviewLog

    log = ReviewLog(conn, "ana")
    items = plan_items(conn, get_plan(conn, name).id)
    for k, item in enumerate(items):
        assert item.judgment_id is not None
        if k < overrule:
            value = conn.execute(
                "SELECT value FROM judgment WHERE id = ?", (item.judgment_id,)
            ).fetchone()[0]
            other = conn.execute(
                "SELECT value FROM judgment WHERE kind = ? AND value IS NOT NULL AND value != ? "
                "LIMIT 1",
                (item.kind, value),
            ).fetchone()
            if other is not None:
                log.decide(item.judgment_id, other[0])
                continue
        log.confirm(item.judgment_id)
    return len(items)


def test_the_migration_adds_the_trust_tables(sample_db: Path) -> None:
    conn = _conn(sample_db)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"trust_rule", "trust_accepted"} <= tables


def test_too_few_labels_accept_nothing_and_say_so(sample_db: Path) -> None:
    from store.trust.rules import calibrate_plan

    conn = _conn(sample_db)
    _plan(conn)
    result = calibrate_plan(conn, 0.1, 0.1)
    assert result.calibration.threshold is None and result.calibration.weak
    assert result.accepted == 0 and result.verdicts > 0
    assert any("22 are needed" in note for note in result.notes)


def test_a_reviewed_plan_calibrates_a_rule_that_accepts_undecided_verdicts(
    sample_db: Path,
) -> None:
    from store.trust.rules import calibrate_plan

    conn = _conn(sample_db)
    name = _plan(conn)
    reviewed = _review_plan(conn, name, overrule=3)
    result = calibrate_plan(conn, 0.1, 0.1, name)
    c = result.calibration
    assert c.labels == reviewed
    assert c.threshold is not None and c.chosen is not None
    assert c.chosen.upper <= 0.1 and c.guaranteed == pytest.approx(0.9)
    assert 0 < result.accepted <= result.verdicts
    # The targets are the frame's undecided verdicts outside the plan's own draws.
    (frame,) = conn.execute("SELECT frame FROM plan WHERE name = ?", (name,)).fetchone()
    assert result.verdicts == frame - reviewed
    assert sum(k.accepted for k in result.kinds) == result.accepted
    assert sum(k.verdicts for k in result.kinds) == result.verdicts
    drawn = {s for (s,) in conn.execute("SELECT subject_id FROM plan_draw")}
    assert not drawn & {s for s, _ in result.chosen}


def test_a_stricter_alpha_never_accepts_more(sample_db: Path) -> None:
    from store.trust.rules import calibrate_plan

    conn = _conn(sample_db)
    name = _plan(conn)
    _review_plan(conn, name, overrule=8)
    loose = calibrate_plan(conn, 0.2, 0.1, name)
    strict = calibrate_plan(conn, 0.02, 0.1, name)
    assert strict.accepted <= loose.accepted
    assert loose.accepted > 0


def _counts(conn: sqlite3.Connection) -> tuple[int, int, int]:
    return (
        conn.execute("SELECT count(*) FROM review_event").fetchone()[0],
        conn.execute("SELECT count(*) FROM decision").fetchone()[0],
        conn.execute("SELECT count(*) FROM score").fetchone()[0],
    )


def test_applied_acceptances_are_not_labels_events_or_score_changes(sample_db: Path) -> None:
    from store.exports.gold import gold_records
    from store.trust.rules import apply_rule, calibrate_plan, clear_rules
    from store.trust.standing import accepted_per_report, accepted_subjects, current_rule

    conn = _conn(sample_db)
    name = _plan(conn)
    _review_plan(conn, name, overrule=2)
    before = _counts(conn)
    scores = conn.execute("SELECT * FROM score ORDER BY 1, 2, 3, 4").fetchall()
    gold = [r["target"] for r in gold_records(conn)]
    result = calibrate_plan(conn, 0.1, 0.1, name)
    rule = apply_rule(conn, result, "ana")
    assert rule.accepted == result.accepted > 0 and rule.plan == name
    assert current_rule(conn) == rule
    # Never a review event, never a decision, never a score change, never a gold label.
    assert _counts(conn) == before
    assert conn.execute("SELECT * FROM score ORDER BY 1, 2, 3, 4").fetchall() == scores
    assert [r["target"] for r in gold_records(conn)] == gold
    accepted = accepted_subjects(conn)
    assert len(accepted) == rule.accepted
    assert sum(accepted_per_report(conn).values()) == rule.accepted
    assert clear_rules(conn) == rule.accepted
    assert current_rule(conn) is None and not accepted_subjects(conn)
    assert _counts(conn) == before


def test_a_human_decision_takes_an_acceptance_over(sample_db: Path) -> None:
    from store.reviewlog.events import ReviewLog
    from store.trust.rules import apply_rule, calibrate_plan
    from store.trust.standing import accepted_judgments, current_rule

    conn = _conn(sample_db)
    name = _plan(conn)
    _review_plan(conn, name)
    rule = apply_rule(conn, calibrate_plan(conn, 0.1, 0.1, name), "ana")
    _subject, judgment, report = conn.execute(
        "SELECT subject_id, judgment_id, report_id FROM trust_accepted LIMIT 1"
    ).fetchone()
    assert judgment in accepted_judgments(conn, report)
    ReviewLog(conn, "ana").confirm(judgment)
    assert judgment not in accepted_judgments(conn, report)
    now = current_rule(conn)
    assert now is not None and now.accepted == rule.accepted - 1


def test_applying_again_replaces_the_rule_in_force(sample_db: Path) -> None:
    from store.trust.rules import apply_rule, calibrate_plan

    conn = _conn(sample_db)
    name = _plan(conn)
    _review_plan(conn, name)
    apply_rule(conn, calibrate_plan(conn, 0.1, 0.1, name), "ana")
    second = apply_rule(conn, calibrate_plan(conn, 0.2, 0.1, name), "ana")
    assert second.name == "t2"
    assert conn.execute("SELECT count(*) FROM trust_rule").fetchone()[0] == 1
    assert {r for (r,) in conn.execute("SELECT DISTINCT rule_id FROM trust_accepted")} == {2}


def test_a_rule_that_accepts_nothing_is_not_applied(sample_db: Path) -> None:
    from store.trust.rules import apply_rule, calibrate_plan

    conn = _conn(sample_db)
    _plan(conn)
    with pytest.raises(ValueError, match="accepts nothing"):
        apply_rule(conn, calibrate_plan(conn, 0.1, 0.1), "ana")


def test_a_second_judge_run_that_disagrees_lowers_the_score() -> None:
    import numpy as np

    from reviewer.trust.score import Features, scores

    features = Features(
        ["claim"] * 3,
        ["correct"] * 3,
        np.zeros(3, dtype=bool),
        np.array([0, 2, 2]),
        np.array([0, 2, 1]),
        np.full(3, np.nan),
    )
    none, unanimous, split = scores(features, np.zeros(0, dtype=np.int64), np.zeros(0, bool))
    assert unanimous > none > split


def test_flags_and_low_stated_confidence_lower_the_score() -> None:
    import numpy as np

    from reviewer.trust.score import Features, scores

    features = Features(
        ["claim"] * 4,
        ["correct"] * 4,
        np.array([False, True, False, False]),
        np.zeros(4, dtype=np.int64),
        np.zeros(4, dtype=np.int64),
        np.array([np.nan, np.nan, 0.95, 0.2]),
    )
    plain, flagged, sure, unsure = scores(features, np.zeros(0, dtype=np.int64), np.zeros(0, bool))
    assert sure > plain > unsure > flagged


def test_decisions_outside_the_calibration_teach_the_cells() -> None:
    import numpy as np

    from reviewer.trust.score import Features, scores

    features = Features(
        ["claim"] * 8 + ["ins"] * 8,
        ["correct"] * 16,
        np.zeros(16, dtype=bool),
        np.zeros(16, dtype=np.int64),
        np.zeros(16, dtype=np.int64),
        np.full(16, np.nan),
    )
    learn = np.arange(16, dtype=np.int64)
    wrong = np.r_[np.ones(8, bool), np.zeros(8, bool)]
    s = scores(features, learn, wrong)
    assert s[0] < s[8]


def test_plan_export_can_hide_accepted_verdicts_and_show_counts_them(sample_db: Path) -> None:
    import json

    from click.testing import CliRunner

    from store.plans.design import PlanSpec, create_plan
    from store.trust.rules import apply_rule, calibrate_plan
    from store.trust.standing import accepted_subjects
    from tui.cli.group import gavel as main

    conn = _conn(sample_db)
    name = _plan(conn)
    _review_plan(conn, name)
    # A second plan drawn before the rule: some of its subjects will be accepted.
    other = create_plan(conn, PlanSpec(300, seed=9, suite=SUITE), "ana").name
    apply_rule(conn, calibrate_plan(conn, 0.1, 0.1, name), "ana")
    accepted = accepted_subjects(conn)
    drawn = {
        s
        for (s,) in conn.execute(
            "SELECT subject_id FROM plan_draw d JOIN plan p ON p.id = d.plan_id WHERE p.name = ?",
            (other,),
        )
    }
    hidden = drawn & accepted
    assert hidden
    runner = CliRunner()
    full = runner.invoke(main, ["plan", "export", other, "--db", str(sample_db)])
    shown = runner.invoke(
        main, ["plan", "export", other, "--db", str(sample_db), "--hide-accepted"]
    )
    assert full.exit_code == 0 and shown.exit_code == 0, shown.output
    every = json.loads(full.stdout)["draws"]
    kept = json.loads(shown.stdout)["draws"]
    assert len({d["target"] for d in every}) - len({d["target"] for d in kept}) == len(hidden)
    assert f"hidden: {len(hidden):,} subjects accepted" in shown.stderr
    show = runner.invoke(main, ["plan", "show", other, "--db", str(sample_db)])
    framed = {
        s
        for (s,) in conn.execute(
            "SELECT subject_id FROM plan_frame f JOIN plan p ON p.id = f.plan_id WHERE p.name = ?",
            (other,),
        )
    }
    assert f"accepted without review: {len(framed & accepted):,} of the frame" in show.stdout


def test_the_trust_commands_calibrate_apply_show_and_clear(sample_db: Path) -> None:
    import json

    from click.testing import CliRunner

    from tui.cli.group import gavel as main

    conn = _conn(sample_db)
    name = _plan(conn)
    _review_plan(conn, name, overrule=2)
    runner = CliRunner()
    db = ["--db", str(sample_db)]
    calibrated = runner.invoke(main, ["trust", "calibrate", *db, "--format", "json"])
    assert calibrated.exit_code == 0, calibrated.output
    document = json.loads(calibrated.stdout)
    assert document["guaranteed_agreement"] == pytest.approx(0.9)
    assert document["plan"] == name and document["labels"] == 200
    assert 0 < document["share_accepted"] <= 1
    table = runner.invoke(main, ["trust", "calibrate", *db, "--alpha", "0.1", "--delta", "0.1"])
    assert "guaranteed agreement ≥ 90.0% with confidence 90%" in table.stdout
    assert "per kind" in table.stdout
    applied = runner.invoke(main, ["trust", "apply", *db, "--reviewer", "ana"])
    assert applied.exit_code == 0 and "applied rule t1" in applied.stdout
    shown = runner.invoke(main, ["trust", "show", *db])
    assert f"{document['accepted']:,} verdicts accepted" in shown.stdout
    cleared = runner.invoke(main, ["trust", "clear", *db])
    assert f"cleared: {document['accepted']:,}" in cleared.stdout
    assert "no trust rule" in runner.invoke(main, ["trust", "show", *db]).stdout


def test_trust_apply_with_too_few_labels_fails_and_stores_nothing(sample_db: Path) -> None:
    from click.testing import CliRunner

    from tui.cli.group import gavel as main

    conn = _conn(sample_db)
    _plan(conn)
    result = CliRunner().invoke(main, ["trust", "apply", "--db", str(sample_db)])
    assert result.exit_code == 1 and "nothing applied" in result.stderr
    assert conn.execute("SELECT count(*) FROM trust_rule").fetchone()[0] == 0


def test_estimates_and_agreement_treat_accepted_verdicts_as_judge_values(
    sample_db: Path,
) -> None:
    from store.plans.estimates import estimate
    from store.trust.rules import apply_rule, calibrate_plan
    from store.views.agreement import agreement

    conn = _conn(sample_db)
    name = _plan(conn)
    _review_plan(conn, name, overrule=3)

    def measured() -> tuple[object, ...]:
        report = estimate(conn, name, resamples=100, ranks=False)
        stats = agreement(conn, n_resamples=100)
        return (report.rows, report.counts, report.notes, stats.judge_human)

    before = measured()
    assert apply_rule(conn, calibrate_plan(conn, 0.1, 0.1, name), "ana").accepted > 0
    assert measured() == before


def test_the_score_reads_other_runs_and_the_judges_stated_confidence(sample_db: Path) -> None:
    from store.plans.design import run_units, suite_row
    from store.trust.rules import _features

    conn = _conn(sample_db)
    suite_id, _, names = suite_row(conn, SUITE)
    units, _ = run_units(conn, suite_id, names)
    first, second = units.subject[0], units.subject[1]
    conn.execute(
        "UPDATE judgment SET raw = ? WHERE subject_id = ? AND current = 1",
        ('{"verdict": "x", "confidence": 0.2}', first),
    )
    run = conn.execute(
        "INSERT INTO judge_run (suite_id, ext_id, model, prompt_version, params, created_at, "
        "description, active) VALUES (?, 'other', 'm', 'p', '{}', '2026-01-01', '', 0)",
        (suite_id,),
    ).lastrowid
    for subject, same in ((first, True), (second, False)):
        conn.execute(
            """INSERT INTO judgment (run_id, report_id, kind, criterion_id, claim_id, ref_idx,
                   key, subject, value, explanation, evidence, raw, error, current, subtask_id,
                   subject_id)
               SELECT ?, report_id, kind, criterion_id, claim_id, ref_idx, key, subject,
                      CASE WHEN ? THEN value ELSE 'different' END, '', '', '', NULL, 0,
                      subtask_id, subject_id
               FROM judgment WHERE subject_id = ? AND current = 1""",
            (run, same, subject),
        )
    conn.commit()
    features = _features(conn, units)
    assert features.confidence[0] == pytest.approx(0.2)
    assert np.isnan(features.confidence[1])
    assert (features.others[0], features.agreeing[0]) == (1, 1)
    assert (features.others[1], features.agreeing[1]) == (1, 0)
    assert features.others[2:].sum() == 0
