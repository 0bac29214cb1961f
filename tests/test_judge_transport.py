"""A reply that breaks while it is read (a chunked body cut short) is a transport error: retried
like a 5xx, a judge error when the retries run out, and a run with any report not judged in
full is never called complete and exits non-zero."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from reviewer.frameworks.dailyreport.judge_prompts import ins_prompt
from reviewer.frameworks.dailyreport.judge_replies import InsReply
from reviewer.judge.client import ChatClient, ClientConfig
from tests.fake_judges import BenchJudge
from tests.loopback import Loopback, Request, Response, chat, serving
from tui.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
VALID = json.dumps({"scores": [{"id": 1, "score": 1, "explanation": "all five rates given"}]})


def broken() -> Response:
    """A chunked reply that announces a chunk and closes before sending it whole."""
    return Response(
        200,
        b'400\r\n{"id": "chatcmpl-cut", "choices": [',
        {"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
        stream=True,
    )


class Breaking:
    """Breaks the first ``n`` replies (all of them with n = -1), then answers with ``inner``."""

    def __init__(self, inner: object, n: int) -> None:
        self.inner = inner
        self.n = n
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        with self.lock:
            if self.n != 0:
                self.n -= 1
                return broken()
        assert callable(self.inner)
        response: Response = self.inner(request)
        return response


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


def config(srv: Loopback, **kw: object) -> ClientConfig:
    return ClientConfig(
        base_url=srv.url + "/v1",
        model="judge-x",
        timeout=5.0,
        jitter=0.0,
        backoff_base=0.5,
        **kw,  # type: ignore[arg-type]
    )


def prompt():  # type: ignore[no-untyped-def]
    return ins_prompt("question", "the document", [(1, "gives all five rates", "")], "2026-11-04")


async def test_a_reply_that_breaks_off_is_retried_like_a_5xx() -> None:
    with serving(Breaking(lambda request: chat(VALID), 2)) as srv:
        sleeps = Sleeps()
        async with ChatClient(config(srv), prompt_version="v", sleep=sleeps) as client:
            result = await client.complete(prompt(), InsReply)
    assert result.value is not None and result.error is None
    assert sleeps.delays == [0.5, 1.0] and client.usage.retries == 2
    assert srv.count() == 3


async def test_a_reply_that_always_breaks_off_is_a_judge_error() -> None:
    with serving(Breaking(lambda request: chat(VALID), -1)) as srv:
        async with ChatClient(
            config(srv, max_retries=2), prompt_version="v", sleep=Sleeps()
        ) as client:
            result = await client.complete(prompt(), InsReply)
    assert result.value is None
    assert result.error is not None and "the reply broke off" in result.error
    assert "gave up after 3 attempts" in result.error
    assert client.usage.errors == 1 and srv.count() == 3


@pytest.fixture
def drb_db(sample_db_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GAVEL_API_KEY", "sk-transport-not-secret")
    path = tmp_path / "bench.db"
    shutil.copy(sample_db_template, path)
    assert main(["import", str(FIXTURES / "drb_mini"), "--format", "drb", "--db", str(path)]) == 0
    return path


def judge(db: Path, srv: Loopback, run: str, *extra: str) -> int:
    return main(
        [
            "judge",
            "--db",
            str(db),
            "--framework",
            "drbench",
            "--report",
            "04901-lantern-search",
            "--only",
            "relevance",
            "--model",
            "fake-judge",
            "--base-url",
            srv.url + "/v1",
            "--run-id",
            run,
            "--max-retries",
            "1",
            *extra,
        ]
    )


def run_status(db: Path, run: str) -> tuple[str, int]:
    conn = sqlite3.connect(db)
    usage = json.loads(
        conn.execute("SELECT usage FROM judge_run WHERE ext_id = ?", (run,)).fetchone()[0]
    )
    conn.close()
    return str(usage["status"]), int(usage["judge_errors"])


def test_a_run_whose_replies_break_off_is_not_complete_and_exits_non_zero(
    drb_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(Breaking(BenchJudge(), -1)) as srv:
        assert judge(drb_db, srv, "cut") == 1
    out, err = capsys.readouterr()
    status, errors = run_status(drb_db, "cut")
    assert status == "failed" and errors > 0  # every call failed: judge errors, not silence
    assert "complete" not in out
    assert "every model call failed" in err


def test_a_run_with_a_call_not_answered_is_incomplete_and_exits_non_zero(
    drb_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge_model = BenchJudge()
    with serving(judge_model) as srv:
        assert judge(drb_db, srv, "whole", "--no-cache") == 0
        first = srv.requests[0].json()["messages"][-1]["content"]
    assert judge_model.count >= 2 and run_status(drb_db, "whole") == ("complete", 0)
    capsys.readouterr()
    inner = BenchJudge()

    def one_breaks(request: Request) -> Response:
        """The call that asked ``first`` breaks off every time; the others answer."""
        if request.json()["messages"][-1]["content"] == first:
            return broken()
        return inner(request)

    with serving(one_breaks) as srv:
        code = judge(drb_db, srv, "partial", "--no-cache")
    out, err = capsys.readouterr()
    status, errors = run_status(drb_db, "partial")
    assert (code, status, errors) == (1, "incomplete", 1), (out, err)
    assert ": incomplete," in out and "complete," not in out.replace("incomplete,", "")
    assert "is incomplete: 1 judge errors" in err


def test_one_reports_calls_run_concurrently_up_to_the_limit(drb_db: Path) -> None:
    """A slow or rate-limited call must not hold back the report's other calls."""
    inner = BenchJudge()

    def slow(request: Request) -> Response:
        response = inner(request)
        response.delay = 0.5
        return response

    with serving(slow) as srv:
        assert judge(drb_db, srv, "wide", "--no-cache", "--concurrency", "10") == 0
    assert inner.count >= 3
    assert 1 < srv.max_in_flight <= 10  # not one at a time; bounded by --concurrency
