"""Judging through the Batch API against a loopback server implementing the files and batches
endpoints: a run submitted, the process gone, resumed later, every reply ingested into the same
run under the same cache keys; partial, failed and expired batches; and the request counts that
show nothing is lost and nothing paid for twice."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.db import connect
from tests.loopback import BatchServer, FakeJudge, Loopback, serving
from tui.cli import main

KEY = "sk-batch-0123456789-must-not-leak"
REPORTS = ("t01-atlas-dr", "t01-kestrel", "t02-atlas-dr")


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAVEL_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def batch_server() -> Iterator[tuple[BatchServer, FakeJudge, Loopback]]:
    judge = FakeJudge(ins_score=0.5, rat_score=1.0)
    server = BatchServer(judge)
    with serving(server) as srv:
        yield server, judge, srv


def judge_cli(db: Path, srv: Loopback, *extra: str) -> int:
    return main(["judge", "--db", str(db), "--base-url", srv.url + "/v1", "--model",
                 "fake-judge", "--sources", "stored", "--poll", "0.01", *extra])


def selection() -> list[str]:
    out: list[str] = []
    for report in REPORTS:
        out += ["--report", report]
    return out


def run_state(db: Path, run: str) -> dict[str, object]:
    conn = sqlite3.connect(db)
    usage = json.loads(conn.execute("SELECT usage FROM judge_run WHERE ext_id = ?",
                                    (run,)).fetchone()[0])
    conn.close()
    return dict(usage)


def verdicts(db: Path, run: str) -> list[tuple[str, str, str, str | None]]:
    conn = connect(db)
    rows = conn.execute(
        """SELECT r.ext_id, j.kind, j.subject, j.value FROM judgment j
           JOIN judge_run jr ON jr.id = j.run_id JOIN report r ON r.id = j.report_id
           WHERE jr.ext_id = ? ORDER BY 1, 2, 3""", (run,)).fetchall()
    conn.close()
    return [tuple(r) for r in rows]


def test_a_batch_run_submitted_then_resumed_equals_a_direct_run(
        sample_db: Path, tmp_path: Path,
        batch_server: tuple[BatchServer, FakeJudge, Loopback]) -> None:
    import shutil

    server, judge, srv = batch_server
    direct_db = tmp_path / "direct.db"
    shutil.copy(sample_db, direct_db)
    assert judge_cli(direct_db, srv, *selection(), "--run-id", "direct") == 0
    direct_calls = judge.count
    assert direct_calls > 0

    judge.count = 0
    assert judge_cli(sample_db, srv, *selection(), "--run-id", "b", "--batch",
                     "--no-wait") == 0
    state = run_state(sample_db, "b")
    assert state["status"] == "waiting"
    assert judge.count == 0                               # nothing answered yet
    while run_state(sample_db, "b")["status"] == "waiting":
        assert main(["judge", "--db", str(sample_db), "--resume", "b", "--no-wait",
                     "--poll", "0.01"]) == 0
    state = run_state(sample_db, "b")
    assert state["status"] == "complete"
    batch = state["batch"]
    assert isinstance(batch, dict)
    # Every request the direct run made was made once through the batches, no more.
    assert server.lines_answered == direct_calls == judge.count
    assert len(set(server.custom_ids)) == len(server.custom_ids)
    assert verdicts(sample_db, "b") == verdicts(direct_db, "direct")
    assert state["batch_requests"] == direct_calls
