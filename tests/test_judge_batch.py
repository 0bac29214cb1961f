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

from store.db.connection import connect
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
    return main(
        [
            "judge",
            "--db",
            str(db),
            "--base-url",
            srv.url + "/v1",
            "--model",
            "fake-judge",
            "--sources",
            "stored",
            "--poll",
            "0.01",
            *extra,
        ]
    )


def selection() -> list[str]:
    out: list[str] = []
    for report in REPORTS:
        out += ["--report", report]
    return out


def run_state(db: Path, run: str) -> dict[str, object]:
    conn = sqlite3.connect(db)
    usage = json.loads(
        conn.execute("SELECT usage FROM judge_run WHERE ext_id = ?", (run,)).fetchone()[0]
    )
    conn.close()
    return dict(usage)


def verdicts(db: Path, run: str) -> list[tuple[str, str, str, str | None]]:
    conn = connect(db)
    rows = conn.execute(
        """SELECT r.ext_id, j.kind, j.subject, j.value FROM judgment j
           JOIN judge_run jr ON jr.id = j.run_id JOIN report r ON r.id = j.report_id
           WHERE jr.ext_id = ? ORDER BY 1, 2, 3""",
        (run,),
    ).fetchall()
    conn.close()
    return [tuple(r) for r in rows]


def test_a_batch_run_submitted_then_resumed_equals_a_direct_run(
    sample_db: Path, tmp_path: Path, batch_server: tuple[BatchServer, FakeJudge, Loopback]
) -> None:
    import shutil

    server, judge, srv = batch_server
    direct_db = tmp_path / "direct.db"
    shutil.copy(sample_db, direct_db)
    assert judge_cli(direct_db, srv, *selection(), "--run-id", "direct") == 0
    direct_calls = judge.count
    assert direct_calls > 0

    judge.count = 0
    assert judge_cli(sample_db, srv, *selection(), "--run-id", "b", "--batch", "--no-wait") == 0
    state = run_state(sample_db, "b")
    assert state["status"] == "waiting"
    assert judge.count == 0  # nothing answered yet
    written = sample_db.parent / "gavel-batches" / "gavel-b-round1.jsonl"
    lines = [json.loads(line) for line in written.read_text().splitlines()]
    assert lines and {line["url"] for line in lines} == {"/v1/chat/completions"}
    assert len(lines) == state["batch"]["batches"][0]["requests"]  # type: ignore[index]
    assert server.files["file-1"][1] == written.read_bytes()  # the file is what was sent
    while run_state(sample_db, "b")["status"] == "waiting":
        assert (
            main(["judge", "--db", str(sample_db), "--resume", "b", "--no-wait", "--poll", "0.01"])
            == 0
        )
    state = run_state(sample_db, "b")
    assert state["status"] == "complete"
    batch = state["batch"]
    assert isinstance(batch, dict)
    # Every request the direct run made was made once through the batches, no more.
    assert server.lines_answered == direct_calls == judge.count
    assert len(set(server.custom_ids)) == len(server.custom_ids)
    assert verdicts(sample_db, "b") == verdicts(direct_db, "direct")
    assert state["batch_requests"] == direct_calls


# -- interrupted, resumed, partial: counted ------------------------------------------------------


def direct_run(
    sample_db: Path, tmp_path: Path, srv: Loopback, judge: FakeJudge
) -> tuple[Path, int]:
    """The same selection judged directly: the reference for verdicts and request counts."""
    import shutil

    db = tmp_path / "direct.db"
    shutil.copy(sample_db, db)
    assert judge_cli(db, srv, *selection(), "--run-id", "direct") == 0
    count = judge.count
    judge.count = 0
    return db, count


def prepared(db: Path, srv: Loopback, run: str):  # type: ignore[no-untyped-def]
    from store.runs.judging import JudgeRequest, Selection, prepare_judge

    conn = connect(db)
    request = JudgeRequest(
        model="fake-judge",
        base_url=srv.url + "/v1",
        sources="stored",
        selection=Selection(reports=REPORTS),
        run_id=run,
        batch=True,
    )
    return conn, prepare_judge(conn, request, KEY)


def resume_until_done(db: Path) -> None:
    for _ in range(20):
        if run_state(db, "b")["status"] == "complete":
            return
        assert main(["judge", "--db", str(db), "--resume", "b", "--poll", "0.01"]) in (0, 130)
    raise AssertionError("the batch run never completed")


def test_a_batch_run_interrupted_while_waiting_loses_nothing_and_pays_nothing_twice(
    sample_db: Path, tmp_path: Path, batch_server: tuple[BatchServer, FakeJudge, Loopback]
) -> None:
    import threading

    from store.runs.judging import run_judge

    server, judge, srv = batch_server
    direct_db, direct_calls = direct_run(sample_db, tmp_path, srv, judge)
    server.polls = 10**9  # the provider takes its time …
    conn, ready = prepared(sample_db, srv, "b")
    stop = threading.Event()

    def interrupt(tally: object) -> None:
        if getattr(tally, "phase", "").startswith("batch"):
            stop.set()  # … and the user presses ctrl+c

    result = run_judge(conn, ready, stop=stop, progress=interrupt, poll_seconds=0.01)
    conn.close()
    assert result.status == "interrupted"
    state = run_state(sample_db, "b")
    assert state["status"] == "interrupted" and state["batch"]["round"] == 1  # type: ignore[index]
    assert server.lines_answered == 0
    server.polls = 1  # the batch ends; resume carries on
    resume_until_done(sample_db)
    state = run_state(sample_db, "b")
    assert server.lines_answered == direct_calls == judge.count  # nothing twice, nothing lost
    assert len(set(server.custom_ids)) == len(server.custom_ids) == direct_calls
    assert verdicts(sample_db, "b") == verdicts(direct_db, "direct")
    rounds = state["batch"]["round"]  # type: ignore[index]
    print(
        f"batch interrupt/resume: {direct_calls} requests direct, {server.lines_answered} "
        f"answered in {rounds} batch rounds, {len(server.batches)} batches created"
    )
    assert len(server.batches) == rounds


def test_a_crash_between_upload_and_batch_creation_submits_the_file_once(
    sample_db: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    batch_server: tuple[BatchServer, FakeJudge, Loopback],
) -> None:
    from reviewer.judge import batch as batch_module

    server, judge, srv = batch_server
    direct_db, direct_calls = direct_run(sample_db, tmp_path, srv, judge)
    real_create = batch_module.BatchApi.create
    calls = {"n": 0}

    async def created_then_lost(self, file_id, metadata):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        await real_create(self, file_id, metadata)  # the provider has it …
        if calls["n"] == 1:
            raise batch_module.BatchApiError("creating the batch failed: connection reset")
        return await real_create(self, file_id, metadata)

    monkeypatch.setattr(batch_module.BatchApi, "create", created_then_lost)
    assert judge_cli(sample_db, srv, *selection(), "--run-id", "b", "--batch") == 130
    monkeypatch.setattr(batch_module.BatchApi, "create", real_create)
    resume_until_done(sample_db)
    # The lost batch was found by its metadata, not created again: one batch per round.
    rounds = run_state(sample_db, "b")["batch"]["round"]  # type: ignore[index]
    assert len(server.batches) == rounds
    assert server.lines_answered == direct_calls
    assert verdicts(sample_db, "b") == verdicts(direct_db, "direct")


def test_failed_and_expired_items_are_asked_again_and_refused_ones_become_judge_errors(
    sample_db: Path, tmp_path: Path, batch_server: tuple[BatchServer, FakeJudge, Loopback]
) -> None:
    server, judge, srv = batch_server
    direct_db, direct_calls = direct_run(sample_db, tmp_path, srv, judge)
    server.fail_first = 2  # the first round: 2 lines error …
    server.expire_after = 5  # … and it expires after 5 lines
    assert judge_cli(sample_db, srv, *selection(), "--run-id", "b", "--batch") == 0
    state = run_state(sample_db, "b")
    assert state["status"] == "complete"
    assert server.lines_answered == direct_calls  # retried lines paid once, when answered
    assert verdicts(sample_db, "b") == verdicts(direct_db, "direct")
    first = state["batch"]["batches"][0]  # type: ignore[index]
    assert first["status"] == "expired" and first["retried"] > 0

    server.refuse_first = 1  # a 400: not retryable
    assert (
        judge_cli(
            sample_db,
            srv,
            "--report",
            "t02-kestrel",
            "--only",
            "ins,rat",
            "--run-id",
            "r",
            "--batch",
        )
        == 1  # judge errors: the run is incomplete, never "complete"
    )
    assert run_state(sample_db, "r")["status"] == "incomplete"
    conn = sqlite3.connect(sample_db)
    errors = conn.execute(
        "SELECT count(*) FROM judgment j JOIN judge_run r ON r.id = j.run_id "
        "WHERE r.ext_id = 'r' AND j.error IS NOT NULL"
    ).fetchone()[0]
    conn.close()
    assert errors > 0  # recorded as judge errors


@pytest.mark.parametrize(
    ("framework", "report"),
    [
        ("dr3", "pipit:port-shore-power"),  # claims extracted, then their support
        ("claims_f1", "peer-chorusalp-kite-search"),  # predictions matched one after another
    ],
)
def test_other_frameworks_through_batches_equal_their_direct_runs(
    framework: str, report: str, sample_db: Path, tmp_path: Path
) -> None:
    import shutil

    from tests.fake_judges import BenchJudge

    judge = BenchJudge()
    server = BatchServer(judge)
    with serving(server) as srv:
        direct = tmp_path / "direct.db"
        shutil.copy(sample_db, direct)
        base = ["--framework", framework, "--report", report]
        assert judge_cli(direct, srv, *base, "--run-id", "direct") == 0
        calls = judge.count
        judge.count = 0
        assert judge_cli(sample_db, srv, *base, "--run-id", "b", "--batch") == 0
    state = run_state(sample_db, "b")
    assert state["status"] == "complete"
    assert server.lines_answered == calls == judge.count
    assert verdicts(sample_db, "b") == verdicts(direct, "direct")
    assert state["batch"]["round"] >= 2  # type: ignore[index]


def test_a_round_beyond_one_batch_s_limits_goes_in_several_batches(
    sample_db: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    batch_server: tuple[BatchServer, FakeJudge, Loopback],
) -> None:
    from reviewer.judge import batch as batch_module

    server, judge, srv = batch_server
    direct_db, direct_calls = direct_run(sample_db, tmp_path, srv, judge)
    monkeypatch.setattr(batch_module, "MAX_BATCH_REQUESTS", 7)  # OpenAI's is 50,000
    assert judge_cli(sample_db, srv, *selection(), "--run-id", "b", "--batch") == 0
    batches = run_state(sample_db, "b")["batch"]["batches"]  # type: ignore[index]
    assert max(b["requests"] for b in batches) <= 7 and len(batches) > 2
    assert {b["part"] for b in batches} > {1}
    assert server.lines_answered == direct_calls
    assert verdicts(sample_db, "b") == verdicts(direct_db, "direct")
