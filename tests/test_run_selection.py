"""Which active run's verdict counts: per subject (the default: the newest valid verdict, an
errored one never replacing another run's valid one) or, with ``run_selection = report``, per
report and kind every verdict of the newest run that judged it (what a benchmark's own script
computes from that one run)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.frameworks.dailyreport.judge_pipeline import ReportOutcome
from reviewer.models import JudgeRun, Judgment
from store.reviewlog.subjects import run_selection
from store.runs.records import create_run, finish_run, set_active, set_run_selection, write_outcome
from store.scores.cache import cached, compute_all
from tui.cli.group import gavel


@pytest.fixture
def two_runs(tiny_db: sqlite3.Connection) -> sqlite3.Connection:
    """A second run, activated, judged t1-alpha's ins rubrics partly: s1 errored, s2 = 0, s3
    and s4 not at all."""
    conn = tiny_db
    suite = conn.execute("SELECT id FROM suite").fetchone()[0]
    rows = create_run(conn, [suite], JudgeRun(id="second", model="m2"))
    rid = conn.execute("SELECT id FROM report WHERE ext_id = 't1-alpha'").fetchone()[0]
    verdicts = [
        Judgment(run="second", report="t1-alpha", kind="ins", criterion="s1-ins", error="timeout"),
        Judgment(run="second", report="t1-alpha", kind="ins", criterion="s2-ins", value=0),
    ]
    write_outcome(conn, rows[suite], rid, ReportOutcome("t1-alpha", verdicts, []))
    finish_run(conn, rows.values(), {"status": "complete"}, [rid])
    set_active(conn, "second", True)
    return conn


def counting(conn: sqlite3.Connection) -> dict[str, tuple[str, str | None]]:
    """t1-alpha's ins subjects -> (run, value) of the verdict that counts."""
    return {
        subject: (run, value)
        for subject, run, value in conn.execute(
            "SELECT j.subject, r.ext_id, j.value FROM judgment j "
            "JOIN judge_run r ON r.id = j.run_id JOIN report p ON p.id = j.report_id "
            "WHERE p.ext_id = 't1-alpha' AND j.kind = 'ins' AND j.current = 1"
        )
    }


def test_per_subject_an_error_never_replaces_a_valid_verdict(two_runs: sqlite3.Connection) -> None:
    assert run_selection(two_runs) == "subject"
    assert counting(two_runs) == {
        "c=s1-ins": ("r1", "1"),
        "c=s2-ins": ("second", "0"),
        "c=s3-ins": ("r1", "1"),
        "c=s4-ins": ("r1", "1"),
    }


def test_per_report_the_newest_run_counts_whole(two_runs: sqlite3.Connection) -> None:
    before = compute_all(two_runs)
    set_run_selection(two_runs, "report")
    assert run_selection(two_runs) == "report"
    assert counting(two_runs) == {"c=s1-ins": ("second", None), "c=s2-ins": ("second", "0")}
    # Other reports and kinds the second run never judged keep the first run.
    beta = two_runs.execute(
        "SELECT count(*), min(r.ext_id) FROM judgment j JOIN judge_run r ON r.id = j.run_id "
        "JOIN report p ON p.id = j.report_id WHERE p.ext_id = 't1-beta' AND j.current = 1"
    ).fetchone()
    assert beta[0] > 0 and beta[1] == "r1"
    after = compute_all(two_runs)
    assert after.reports != before.reports
    # The cache is the recompute of the chosen verdicts.
    cache = cached(two_runs)
    assert cache.reports == after.reports and cache.systems == after.systems
    set_run_selection(two_runs, "subject")
    assert counting(two_runs)["c=s1-ins"] == ("r1", "1")
    assert compute_all(two_runs).reports == before.reports


def test_an_unknown_selection_is_refused(two_runs: sqlite3.Connection) -> None:
    with pytest.raises(ValueError, match=r"subject \| report"):
        set_run_selection(two_runs, "newest")
    assert run_selection(two_runs) == "subject"


def test_the_command_line_sets_and_shows_it(sample_db: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(gavel, ["options", "--db", str(sample_db), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    assert '"option": "run_selection"' in shown.stdout and '"value": "subject"' in shown.stdout
    done = runner.invoke(
        gavel, ["options", "run_selection=report", "--db", str(sample_db), "--format", "csv"]
    )
    assert done.exit_code == 0, done.output
    assert ",run_selection,report,subject," in done.stdout
    bad = runner.invoke(gavel, ["options", "run_selection=newest", "--db", str(sample_db)])
    assert bad.exit_code == 2 and "subject | report" in bad.stderr
