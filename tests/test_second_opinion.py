"""``gavel judge --second-opinion``: a seeded share of the active run's reports re-judged by
another model over real HTTP (a loopback fake), its cost shown first, and its disagreements
with the counting verdicts raised as suspicion flags."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.db.connection import connect
from store.runs.judging import draw_second_opinion
from tests.loopback import FakeJudge, Loopback, serving
from tui.cli import main


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GAVEL_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def fake() -> Iterator[tuple[FakeJudge, Loopback]]:
    judge = FakeJudge(ins_score=0.5, rat_score=1.0)
    with serving(judge) as srv:
        yield judge, srv


def second(db: Path, srv: Loopback, *extra: str) -> int:
    return main(
        [
            "judge",
            "--db",
            str(db),
            "--base-url",
            srv.url + "/v1",
            "--second-opinion",
            "gpt-4o-mini",
            "--only",
            "ins",
            "--sources",
            "none",
            *extra,
        ]
    )


def test_the_draw_is_seeded_and_a_share_of_the_active_reports(sample_db: Path) -> None:
    conn = connect(sample_db)
    a = draw_second_opinion(conn, "cascade", 0.25, 7)
    b = draw_second_opinion(conn, "cascade", 0.25, 7)
    c = draw_second_opinion(conn, "cascade", 0.25, 8)
    assert a == b and a.reports != c.reports
    assert a.population == 24 and len(a.reports) == 6  # ceil(0.25 * 24)
    flagged = draw_second_opinion(conn, "cascade", 0.25, 7, flagged=True)
    weights = dict(
        conn.execute(
            """SELECT s.report_id, sum(x.weight) FROM suspicion x
               JOIN subject s ON s.id = x.subject_id JOIN report r ON r.id = s.report_id
               JOIN system y ON y.id = r.system_id JOIN suite u ON u.id = y.suite_id
               WHERE u.frameworks LIKE '%cascade%' GROUP BY 1"""
        ).fetchall()
    )
    chosen = min(weights[r] for r in flagged.reports)
    left = [w for r, w in weights.items() if r not in flagged.reports]
    assert all(w <= chosen for w in left)  # the heaviest flags first


def test_dry_run_prints_the_estimate_and_sends_nothing(
    sample_db: Path, fake: tuple[FakeJudge, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    judge, srv = fake
    assert second(sample_db, srv, "--share", "0.25", "--seed", "3", "--dry-run") == 0
    captured = capsys.readouterr()
    assert "second opinion on 6 of 24 reports (share 0.25, at random, seed 3)" in captured.err
    assert judge.count == 0
    assert "$" in captured.out  # gpt-4o-mini has a list price: the estimate is in dollars


def test_without_yes_a_pipe_sends_nothing(
    sample_db: Path, fake: tuple[FakeJudge, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    judge, srv = fake
    assert second(sample_db, srv, "--share", "0.25", "--seed", "3") == 1
    err = capsys.readouterr().err
    assert "estimated cost $" in err and "nothing sent" in err
    assert judge.count == 0


def _plant(conn: sqlite3.Connection, report: int) -> tuple[int, int]:
    """A silent error in the counting run: one ins verdict set to 1 with a matching
    explanation (the fake second judge says 0.5 everywhere); another set to 0.5."""
    rows = conn.execute(
        """SELECT id, subject_id FROM judgment WHERE report_id = ? AND kind = 'ins'
           AND current = 1 ORDER BY id LIMIT 2""",
        (report,),
    ).fetchall()
    with conn:
        conn.execute(
            "UPDATE judgment SET value = '1', explanation = 'fully met' WHERE id = ?",
            (rows[0][0],),
        )
        conn.execute("UPDATE judgment SET value = '0.5' WHERE id = ?", (rows[1][0],))
    return rows[0][1], rows[1][1]


def test_disagreements_of_the_second_opinion_become_flags(
    sample_db: Path, fake: tuple[FakeJudge, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    judge, srv = fake
    conn = connect(sample_db)
    draw = draw_second_opinion(conn, "cascade", 0.25, 3)
    wrong, right = _plant(conn, draw.reports[0])
    assert second(sample_db, srv, "--share", "0.25", "--seed", "3", "--yes", "--run-id", "so") == 0
    err = capsys.readouterr().err
    assert "estimated cost $" in err
    assert judge.count > 0 and set(judge.steps) == {"ins"}
    judged = {
        rid
        for (rid,) in conn.execute(
            "SELECT DISTINCT j.report_id FROM judgment j JOIN judge_run r ON r.id = j.run_id "
            "WHERE r.ext_id = 'so'"
        )
    }
    assert judged == set(draw.reports)
    active = conn.execute("SELECT max(active) FROM judge_run WHERE ext_id = 'so'").fetchone()[0]
    assert active == 0  # a candidate: it changes no score
    rules = {
        subject: reason
        for subject, reason in conn.execute(
            "SELECT subject_id, reason FROM suspicion WHERE rule = 'runs'"
        )
    }
    assert wrong in rules and "so" in rules[wrong]  # the silent error is caught
    assert right not in rules  # agreement raises nothing


def test_nothing_to_draw_exits_one_and_sends_nothing(
    sample_db: Path, fake: tuple[FakeJudge, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    judge, srv = fake
    assert main(["runs", "retire", "judge-2026-11-05", "--db", str(sample_db)]) == 0
    assert second(sample_db, srv, "--yes") == 1
    assert "nothing to re-judge" in capsys.readouterr().err
    assert judge.count == 0
