"""Gold labels are about subjects: properties over random histories.

Two reviewers' databases start from the same bundle; random steps add judge runs (candidates,
some answering garbage), activate or retire them, decide, adjudicate, flag, undo, redo, and
exchange logs. Whatever happened:

* the derived state equals a replay of the log from scratch, and the score cache a full
  recompute;
* a human decision is about its subject: both databases give every subject the same decision
  once they hold the same log, though their judge runs differ;
* adding a candidate run never moves a score; every judgment of a decided subject, in any run,
  has the decision as its effective value;
* a judgment that errored never replaces a valid verdict of an active run on the same subject.
"""

from __future__ import annotations

import io
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewer.frameworks.dailyreport.judge_pipeline import ReportOutcome
from reviewer.logfile import read_events
from reviewer.models import JudgeRun, Judgment
from reviewer.registry import get_kind
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.reviewlog.events import ReviewLog, rebuild_state, trust_adjudicator
from store.reviews.merge import merge_events, write_log
from store.runs.records import create_run, finish_run, set_active, write_outcome
from store.scores.cache import cached, compute_all, rebuild_scores, update_scores
from tests.builders import tiny_bundle
from tests.score_rows import all_scores

CRITERIA = ("s1-ins", "s2-ins", "s3-ins", "s4-ins", "s2-rat")
REVIEWERS = ("ana", "ben")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gold") / "tiny.db"
    conn = connect(path)
    import_bundle(conn, tiny_bundle(), "h")
    rebuild_scores(conn)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


Step = tuple[str, int, int, int]
"""(action, database or reviewer, pick, value pick)."""

STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "decide",
                "decide",
                "decide",
                "undo",
                "redo",
                "adjudicate",
                "flag",
                "run",
                "garbage",
                "activate",
                "retire",
                "sync",
            ]
        ),
        st.integers(0, 3),
        st.integers(0, 10_000),
        st.integers(0, 10),
    ),
    min_size=1,
    max_size=16,
)


def derived(conn: sqlite3.Connection) -> tuple[object, ...]:
    return (
        conn.execute("SELECT * FROM event_live ORDER BY uuid").fetchall(),
        conn.execute("SELECT * FROM decision ORDER BY subject_id").fetchall(),
        conn.execute("SELECT * FROM flag ORDER BY subject_id").fetchall(),
        conn.execute("SELECT * FROM report_rating ORDER BY report_id").fetchall(),
    )


def decisions_by_target(conn: sqlite3.Connection) -> dict[str, tuple[object, ...]]:
    return {
        t: (v, s)
        for t, v, s in conn.execute(
            "SELECT s.target, d.value, d.status FROM decision d "
            "JOIN subject s ON s.id = d.subject_id"
        )
    }


def scores(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return conn.execute(
        f"SELECT * FROM {all_scores(conn)} ORDER BY scope, framework, variant, metric"
    ).fetchall()


def add_run(conn: sqlite3.Connection, name: str, pick: int, garbage: bool) -> None:
    """A candidate judge run over some criteria of both reports; a garbage run's every
    answer failed (value None, an error), as a model answering nonsense gives."""
    suite = conn.execute("SELECT id FROM suite").fetchone()[0]
    rows = create_run(conn, [suite], JudgeRun(id=name, model="m", created_at="2026-11-20"))
    chosen = [c for i, c in enumerate(CRITERIA) if (pick >> i) & 1] or list(CRITERIA[:1])
    ids = []
    for n, system in enumerate(("alpha", "beta")):
        report = f"t1-{system}"
        rid = conn.execute("SELECT id FROM report WHERE ext_id = ?", (report,)).fetchone()[0]
        ids.append(rid)
        judgments = [
            Judgment(
                run=name,
                report=report,
                kind=c.split("-")[1],
                criterion=c,
                value=None if garbage else ("0", "0.5", "1")[(pick + n + i) % 3],
                error="unparseable reply" if garbage else None,
            )
            for i, c in enumerate(chosen)
        ]
        write_outcome(conn, rows[suite], rid, ReportOutcome(report, judgments, []))
    finish_run(conn, rows.values(), {"status": "complete"}, ids)


def apply(conn: sqlite3.Connection, step: Step, runs: list[str]) -> None:
    action, who, pick, value_pick = step
    log = ReviewLog(conn, REVIEWERS[who % 2])
    if action in ("run", "garbage"):
        before = scores(conn)
        name = f"run{len(runs)}-{pick}"
        add_run(conn, name, pick, action == "garbage")
        runs.append(name)
        assert scores(conn) == before  # a candidate never moves a score
        return
    if action in ("activate", "retire"):
        if runs:
            set_active(conn, runs[pick % len(runs)], action == "activate")
        return
    judgments = conn.execute(
        "SELECT id, kind FROM judgment WHERE current = 1 ORDER BY id"
    ).fetchall()
    judgment, kind_name = judgments[pick % len(judgments)]
    kind = get_kind(kind_name)
    assert kind is not None
    value = kind.scale.choices[value_pick % len(kind.scale.choices)].code
    if action in ("decide", "adjudicate"):
        recorded = log.decide(judgment, value, "because", adjudicate=action == "adjudicate")
    elif action == "flag":
        recorded = log.flag(judgment, value_pick % 2 == 0, "look")
    elif action == "undo":
        recorded = log.undo()
    else:
        recorded = log.redo()
    if recorded is not None and recorded.report_id is not None:
        update_scores(conn, [recorded.report_id])


def log_text(conn: sqlite3.Connection) -> str:
    out = io.StringIO()
    write_log(conn, out)
    return out.getvalue()


def merge(target: sqlite3.Connection, source: sqlite3.Connection) -> None:
    merge_events(target, read_events(io.StringIO(log_text(source)), "log"), "log")


def check(conn: sqlite3.Connection, folder: Path, name: str) -> None:
    incremental = derived(conn)
    replay_path = folder / f"{name}-replay.db"
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(folder / f"{name}.db", replay_path)
    replay = connect(replay_path)
    rebuild_state(replay)
    assert derived(replay) == incremental  # a replay of the log from scratch
    replay.close()
    full, cache = compute_all(conn), cached(conn)
    for key, value in full.reports.items():
        assert cache.reports.get(key, {}) == pytest.approx(value, nan_ok=True), key
    # Every judgment of a decided subject, in every run, takes the decision as its effective
    # value; a conflict leaves each judgment its own.
    for judge, effective, decided, status in conn.execute(
        """SELECT j.value,
                      CASE WHEN d.status IS NULL OR d.status = 'conflict' THEN j.value
                           ELSE d.value END, d.value, d.status
               FROM judgment j LEFT JOIN decision d ON d.subject_id = j.subject_id"""
    ):
        assert effective == (decided if status not in (None, "conflict") else judge)
    # Per-subject fallback: a current judgment that errored has no valid verdict from any
    # active run on the same subject.
    assert (
        conn.execute(
            """SELECT count(*) FROM judgment j JOIN judge_run r ON r.id = j.run_id
           WHERE j.current = 1 AND j.value IS NULL AND EXISTS (
               SELECT 1 FROM judgment o JOIN judge_run ro ON ro.id = o.run_id
               WHERE o.subject_id = j.subject_id AND o.value IS NOT NULL AND ro.active > 0)"""
        ).fetchone()[0]
        == 0
    )


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_decisions_are_about_subjects_in_any_history(template: Path, steps: list[Step]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        dbs = []
        for name in ("a", "b"):
            shutil.copy(template, folder / f"{name}.db")
            dbs.append(connect(folder / f"{name}.db"))
            for reviewer in REVIEWERS:  # one team: both hold the same adjudicators
                trust_adjudicator(dbs[-1], reviewer, ReviewLog(dbs[-1], reviewer).key, "team")
        runs: list[list[str]] = [[], []]
        for step in steps:
            if step[0] == "sync":
                source, target = (dbs[0], dbs[1]) if step[1] % 2 == 0 else (dbs[1], dbs[0])
                merge(target, source)
            else:
                index = step[2] % 2
                apply(dbs[index], step, runs[index])
        merge(dbs[0], dbs[1])
        merge(dbs[1], dbs[0])
        # Same log, different judge runs: the same decision on every subject.
        assert decisions_by_target(dbs[0]) == decisions_by_target(dbs[1])
        for conn, name in zip(dbs, ("a", "b"), strict=True):
            check(conn, folder, name)
            conn.close()


def test_a_run_of_garbage_answers_changes_nothing_until_activated_and_then_falls_back(
    template: Path, tmp_path: Path
) -> None:
    """The D1 situation: a model answering garbage. Its run is a candidate, so every system
    score stays put; activated, its errors never replace the valid verdicts of the imported
    run, subject by subject."""
    shutil.copy(template, tmp_path / "d1.db")
    conn = connect(tmp_path / "d1.db")
    before = scores(conn)
    add_run(conn, "garbage", (1 << len(CRITERIA)) - 1, garbage=True)
    assert scores(conn) == before
    set_active(conn, "garbage", True)
    assert scores(conn) == before  # every subject falls back to a valid verdict
    current_errors = conn.execute(
        "SELECT count(*) FROM judgment WHERE current = 1 AND error IS NOT NULL"
    ).fetchone()[0]
    assert current_errors == 0
    # A valid run activated afterwards does count, where it judged.
    add_run(conn, "good", 0b00001, garbage=False)  # s1-ins only
    set_active(conn, "good", True)
    runs = dict(
        conn.execute(
            """SELECT j.subject, group_concat(DISTINCT r.ext_id) FROM judgment j
           JOIN judge_run r ON r.id = j.run_id WHERE j.current = 1 AND j.kind = 'ins'
           GROUP BY j.subject"""
        )
    )
    assert runs == {"c=s1-ins": "good", "c=s2-ins": "r1", "c=s3-ins": "r1", "c=s4-ins": "r1"}
    conn.close()
