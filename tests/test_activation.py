"""A judge run is validated against the human labels before it counts.

On the tiny bundle, ana decides four instruction-following subjects; two candidate runs judge
them, one agreeing with her on all four, one on one. Everything below is counted by hand from
``tests/builders.tiny_bundle`` and the values written here.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from reviewer.frameworks.dailyreport.judge_pipeline import ReportOutcome
from reviewer.models import JudgeRun, Judgment
from store.reviewlog.events import ReviewLog
from store.runs.activation import NeedsConfirmation, activate, preview, runs_against_gold
from store.runs.records import create_run, finish_run, write_outcome
from store.scores.cache import update_scores
from tests.score_rows import all_scores

CRITERIA = ("s1-ins", "s2-ins", "s3-ins", "s4-ins")
GOLD = {
    ("alpha", "s1-ins"): "1",
    ("alpha", "s2-ins"): "0.5",
    ("beta", "s2-ins"): "0.5",
    ("beta", "s4-ins"): "0",
}
RUNS = {
    "good": {"alpha": ("1", "0.5", "1", "1"), "beta": ("1", "0.5", "1", "0")},
    "bad": {"alpha": ("1", "1", "1", "1"), "beta": ("1", "1", "1", "1")},
}


def judgment(conn: sqlite3.Connection, report: str, criterion: str) -> int:
    return int(
        conn.execute(
            "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
            "WHERE r.ext_id = ? AND j.subject = ? AND j.current = 1",
            (report, f"c={criterion}"),
        ).fetchone()[0]
    )


def add_run(conn: sqlite3.Connection, name: str, errors: int = 0) -> None:
    suite = conn.execute("SELECT id FROM suite").fetchone()[0]
    rows = create_run(conn, [suite], JudgeRun(id=name, model=f"model-{name}"))
    ids = []
    for system, values in RUNS["good" if name.startswith("good") else "bad"].items():
        report = f"t1-{system}"
        rid = conn.execute("SELECT id FROM report WHERE ext_id = ?", (report,)).fetchone()[0]
        ids.append(rid)
        judgments = [
            Judgment(
                run=name,
                report=report,
                kind="ins",
                criterion=c,
                value=None if n < errors else v,
                error="timeout" if n < errors else None,
            )
            for n, (c, v) in enumerate(zip(CRITERIA, values, strict=True))
        ]
        write_outcome(conn, rows[suite], rid, ReportOutcome(report, judgments, []))
    finish_run(conn, rows.values(), {"status": "complete"}, ids)


@pytest.fixture
def decided(tiny_db: sqlite3.Connection) -> sqlite3.Connection:
    log = ReviewLog(tiny_db, "ana")
    for (system, criterion), value in GOLD.items():
        recorded = log.decide(judgment(tiny_db, f"t1-{system}", criterion), value, "read it")
        update_scores(tiny_db, [recorded.report_id or 0])
    add_run(tiny_db, "good")
    add_run(tiny_db, "bad")
    return tiny_db


def change(result: object, system: str, variant: str) -> tuple[object, ...]:
    found = [
        c
        for c in result.changes  # type: ignore[attr-defined]
        if (c.system, c.metric, c.variant) == (system, "Ins", variant)
    ]
    assert len(found) == 1
    return found[0].before, found[0].after, found[0].rank_before, found[0].rank_after


def test_a_run_that_agrees_with_the_humans_activates_without_a_question(
    decided: sqlite3.Connection,
) -> None:
    seen = preview(decided, "good")
    # Against ana's four labels: good 4/4; what counts now (the imported run r1) 3/4: it
    # says 1 where she says 0.5 on alpha's s2-ins.
    assert (seen.gold.n, seen.gold.agreed) == (4, 4)
    assert (seen.current.n, seen.current.agreed) == (4, 3)
    (ins,) = seen.gold.kinds
    assert ins.kind == "ins" and ins.confusion is not None
    assert seen.errors == 0 and not seen.needs_confirmation
    # Judge-variant Ins: alpha (1 + 1 + 1 + 1)/4 = 1 → (1 + 0.5 + 1 + 1)/4 = 0.875; beta stays
    # (1 + 0.5 + 1 + 0)/4 = 0.625. The adjudicated variant cannot move: the subjects the run
    # changes are exactly those ana decided.
    assert change(seen, "alpha", "judge") == (1.0, 0.875, 1, 1)
    assert change(seen, "beta", "judge") == (0.625, 0.625, 2, 2)
    assert change(seen, "alpha", "adjudicated") == (0.875, 0.875, 1, 1)
    before = decided.execute(f"SELECT * FROM {all_scores(decided)} ORDER BY 1, 2, 3, 4").fetchall()
    assert (
        decided.execute(f"SELECT * FROM {all_scores(decided)} ORDER BY 1, 2, 3, 4").fetchall()
        == before
    )
    assert not decided.in_transaction  # the preview rolled everything back
    activate(decided, "good")
    assert decided.execute(
        "SELECT value FROM score WHERE scope = 'system:1' AND metric = 'Ins' AND variant = 'judge'"
    ).fetchone()[0] == pytest.approx(0.875)


def test_a_run_that_disagrees_more_needs_a_confirmation(decided: sqlite3.Connection) -> None:
    seen = preview(decided, "bad")
    assert (seen.gold.n, seen.gold.agreed) == (4, 1)  # only alpha's s1-ins = 1
    assert seen.needs_confirmation and "less than what counts now" in seen.reasons[0]
    with pytest.raises(NeedsConfirmation):
        activate(decided, "bad")
    assert decided.execute("SELECT active FROM judge_run WHERE ext_id = 'bad'").fetchone() == (0,)
    activate(decided, "bad", confirmed=True)
    assert decided.execute("SELECT active FROM judge_run WHERE ext_id = 'bad'").fetchone()[0] > 0


def test_errors_need_a_confirmation_and_never_replace_a_valid_verdict(
    decided: sqlite3.Connection,
) -> None:
    add_run(decided, "good-but-flaky", errors=1)  # s1-ins errored on both reports
    seen = preview(decided, "good-but-flaky")
    assert seen.errors == 2 and any("errored" in r for r in seen.reasons)
    activate(decided, "good-but-flaky", confirmed=True)
    current = dict(
        decided.execute(
            """SELECT r.ext_id, jr.ext_id FROM judgment j JOIN report r ON r.id = j.report_id
           JOIN judge_run jr ON jr.id = j.run_id
           WHERE j.current = 1 AND j.subject = 'c=s1-ins'"""
        )
    )
    assert current == {"t1-alpha": "r1", "t1-beta": "r1"}  # the valid imported verdict


def test_runs_are_ranked_by_agreement_with_the_humans(decided: sqlite3.Connection) -> None:
    ranking = [(s.run, s.gold.agreed, s.gold.n) for s in runs_against_gold(decided)]
    assert ranking == [("good", 4, 4), ("r1", 3, 4), ("bad", 1, 4)]


def test_the_command_line_shows_the_preview_and_asks_before_a_worse_run(
    decided: sqlite3.Connection, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from tui.cli.group import gavel

    db = str(tmp_path / "gavel.db")
    runner = CliRunner()
    shown = runner.invoke(gavel, ["runs", "activate", "bad", "--db", db], input="")
    assert shown.exit_code == 1
    assert "1/4 agree" in shown.stdout and "3/4 agree" in shown.stdout
    assert "nothing changed" in shown.stderr
    assert decided.execute("SELECT active FROM judge_run WHERE ext_id = 'bad'").fetchone() == (0,)
    good = runner.invoke(gavel, ["runs", "activate", "good", "--db", db])
    assert good.exit_code == 0 and "alpha" in good.stdout  # alpha's Ins moves
    assert "is active" in good.stderr
    ranked = runner.invoke(gavel, ["runs", "--against-gold", "--format", "json", "--db", db])
    assert [r["run"] for r in json.loads(ranked.stdout)] == ["good", "r1", "bad"]
    retired = runner.invoke(gavel, ["runs", "deactivate", "good", "--db", db])
    assert retired.exit_code == 0 and "no longer counts" in retired.stderr
