"""`gavel judge` end to end: the sample data judged by a fake model on a loopback
chat-completions server, with the cache, ctrl+c, fetched citations, claim extraction, dry runs
and judge errors. No test needs the internet."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewer.models import Bundle, Claim, Criterion, Report, Subtask, Suite, System, Task
from store.db.connection import connect
from store.imports.loader import import_bundle
from store.scores.cache import cached, compute_all, rebuild_scores
from tests.loopback import FakeJudge, Loopback, Request, Response, chat, serving
from tests.score_rows import all_scores
from tui.cli import main

KEY = "sk-live-0123456789abcdef-must-not-leak"
UNREACHABLE = "https://www.riverton-gazette.example/2026/10/03/rivpass-app-crash-first-day"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAVEL_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def fake() -> Iterator[tuple[FakeJudge, Loopback]]:
    judge = FakeJudge(ins_score=0.5, rat_score=1.0)
    with serving(judge) as srv:
        yield judge, srv


def judge_cli(db: Path, srv: Loopback, *extra: str) -> int:
    # The cited pages are on a loopback server: fetching them needs the opt-in.
    return main(
        [
            "judge",
            "--db",
            str(db),
            "--base-url",
            srv.url + "/v1",
            "--model",
            "fake-judge",
            "--concurrency",
            "8",
            "--allow-private-hosts",
            *extra,
        ]
    )


def cascade_reports(conn: sqlite3.Connection) -> list[int]:
    return [
        rid
        for (rid,) in conn.execute(
            """SELECT r.id FROM report r JOIN system y ON y.id = r.system_id
           JOIN suite s ON s.id = y.suite_id WHERE s.frameworks LIKE '%cascade%'"""
        )
    ]


def run_row(conn: sqlite3.Connection, run: str) -> tuple[int, dict[str, object]]:
    row_id, usage = conn.execute(
        "SELECT id, usage FROM judge_run WHERE ext_id = ?", (run,)
    ).fetchone()
    return row_id, json.loads(usage)


def assert_cache_consistent(conn: sqlite3.Connection) -> None:
    full = compute_all(conn)
    cache = cached(conn)
    for key, scores in full.reports.items():
        assert cache.reports.get(key, {}) == pytest.approx(scores, nan_ok=True), key


def test_judge_the_sample_data_then_rerun_from_the_cache(
    sample_db: Path,
    fake: tuple[FakeJudge, Loopback],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    judge, srv = fake
    caplog.set_level("DEBUG")
    assert judge_cli(sample_db, srv, "--sources", "stored", "--run-id", "rerun-1") == 0
    out = capsys.readouterr().out
    assert "judge run rerun-1 (cascade): complete, 24 of 24 reports" in out
    conn = connect(sample_db)
    reports = cascade_reports(conn)
    assert len(reports) == 24
    row, usage = run_row(conn, "rerun-1")
    assert usage["status"] == "complete" and usage["requests"] == judge.count
    # Every ins and rat criterion of every report is re-judged (204 and 42 in the sample).
    kinds = Counter(
        k for (k,) in conn.execute("SELECT kind FROM judgment WHERE run_id = ?", (row,))
    )
    assert kinds["ins"] == 204 and kinds["rat"] == 42 and kinds["consistency"] > 0
    assert (
        conn.execute(
            "SELECT count(*) FROM judgment WHERE run_id = ? AND error IS NOT NULL", (row,)
        ).fetchone()[0]
        == 0
    )

    # A new run is a candidate: nothing it says counts, every score is as before ...
    def current() -> dict[str, str]:
        return dict(
            conn.execute(
                """SELECT j.kind, group_concat(DISTINCT r.ext_id) FROM judgment j
               JOIN judge_run r ON r.id = j.run_id WHERE j.current = 1 AND j.report_id IN
               (SELECT id FROM report WHERE ext_id LIKE 't0%') GROUP BY j.kind"""
            )
        )

    assert set(current().values()) == {"judge-2026-11-05"}
    assert "activate" in out  # the summary says how to make it count
    # ... until it is activated.
    assert main(["runs", "activate", "rerun-1", "--yes", "--db", str(sample_db)]) == 0
    capsys.readouterr()
    # The new run is current for what it judged; the sample's claim verdicts stay in force.
    current_runs = dict(
        conn.execute(
            """SELECT j.kind, group_concat(DISTINCT r.ext_id) FROM judgment j
           JOIN judge_run r ON r.id = j.run_id WHERE j.current = 1 AND j.report_id IN
           (SELECT id FROM report WHERE ext_id LIKE 't0%') GROUP BY j.kind"""
        )
    )
    assert current_runs["ins"] == "rerun-1" and current_runs["rat"] == "rerun-1"
    assert current_runs["claim"] == "judge-2026-11-05"

    # The verdicts are listed, and the score cache follows them.
    assert (
        main(
            ["verdicts", "--db", str(sample_db), "--all-runs", "--kind", "ins", "--format", "json"]
        )
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert Counter(r["run"] for r in rows) == {"judge-2026-11-05": 204, "rerun-1": 204}
    for rid in reports:
        # ins_k = 0.5 for every subtask, so Ins = mean = 0.5; Rat = Σ ins·rat / Σ ins
        # = 0.5·1 / 0.5 = 1 wherever a rat rubric exists.
        ins, rat = (
            conn.execute(
                f"SELECT value FROM {all_scores(conn)} WHERE scope = ? "
                "AND framework = 'cascade' AND variant = 'judge' AND metric = ?",
                (f"report:{rid}", m),
            ).fetchone()[0]
            for m in ("Ins", "Rat")
        )
        assert ins == pytest.approx(0.5)
        assert rat is None or rat == pytest.approx(1.0)
    assert_cache_consistent(conn)

    # A page stored as unreachable gives 'unknown' without any model call about it.
    unknown = conn.execute(
        """SELECT j.value, j.explanation FROM judgment j JOIN reference rf
           ON rf.report_id = j.report_id AND rf.idx = j.ref_idx
           WHERE j.run_id = ? AND rf.url = ?""",
        (row, UNREACHABLE),
    ).fetchall()
    assert unknown and all(
        v == "unknown" and e.startswith("Not sent to the model") for v, e in unknown
    )
    consistency_bodies = [
        r.body.decode() for r in srv.requests if b"check statements against a reference" in r.body
    ]
    assert consistency_bodies and not any(UNREACHABLE in b for b in consistency_bodies)

    # Re-running is free: zero HTTP requests, a second run with the same verdicts.
    before = judge.count
    assert judge_cli(sample_db, srv, "--sources", "stored", "--run-id", "rerun-2") == 0
    out = capsys.readouterr().out
    assert judge.count == before
    assert (
        "requests: 0 (batch 0, retries 0, repair requests 0, local repairs 0), "
        f"cache hits: {before}"
    ) in out
    row2, usage2 = run_row(conn, "rerun-2")
    assert usage2["requests"] == 0 and usage2["cache_hits"] == before

    def values(run_row_id: int) -> Counter[tuple[str, str | None]]:
        return Counter(
            conn.execute(
                "SELECT kind, value FROM judgment WHERE run_id = ?", (run_row_id,)
            ).fetchall()
        )

    assert values(row2) == values(row)

    # The API key is nowhere: not in any database page, WAL, log record or output.
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    for path in sample_db.parent.glob(sample_db.name + "*"):
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in caplog.text and KEY not in out
    conn.close()


def test_ctrl_c_keeps_every_finished_report(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupt(number: int) -> None:
        if number == 30:
            os.kill(os.getpid(), signal.SIGINT)

    judge = FakeJudge(on_request=interrupt)
    with serving(judge) as srv:
        code = main(
            [
                "judge",
                "--db",
                str(sample_db),
                "--base-url",
                srv.url + "/v1",
                "--model",
                "fake-judge",
                "--concurrency",
                "2",
                "--sources",
                "stored",
                "--run-id",
                "stopped",
            ]
        )
        assert code == 130
        conn = connect(sample_db)
        row, usage = run_row(conn, "stopped")
        assert usage["status"] == "interrupted"
        finished = usage["reports"]
        assert isinstance(finished, int) and 0 < finished < 24
        judged = [
            rid
            for (rid,) in conn.execute(
                "SELECT DISTINCT report_id FROM judgment WHERE run_id = ?", (row,)
            )
        ]
        assert len(judged) == finished
        # Each kept report is complete: one ins verdict per ins criterion of its task.
        for rid in judged:
            expected = conn.execute(
                """SELECT count(*) FROM criterion c JOIN report r ON r.task_id = c.task_id
                   WHERE r.id = ? AND c.dimension = 'ins'""",
                (rid,),
            ).fetchone()[0]
            got = conn.execute(
                "SELECT count(*) FROM judgment WHERE run_id = ? AND report_id = ? AND kind = 'ins'",
                (row, rid),
            ).fetchone()[0]
            assert got == expected
        assert_cache_consistent(conn)
        # Running again reuses every reply finished before the interruption.
        sent = judge.count
        judge.on_request = None
        assert (
            main(
                [
                    "judge",
                    "--db",
                    str(sample_db),
                    "--base-url",
                    srv.url + "/v1",
                    "--model",
                    "fake-judge",
                    "--sources",
                    "stored",
                    "--run-id",
                    "resumed",
                ]
            )
            == 0
        )
        _, resumed = run_row(conn, "resumed")
        assert resumed["cache_hits"] >= sent - 2 * 2  # at most the in-flight ones were lost
        assert resumed["reports"] == 24
        conn.close()
    capsys.readouterr()


# -- a small bundle whose references point at a loopback web server ------------------------------

MARKDOWN = """# Harbour ferry, 2026

The ferry carried 1.8 million passengers in 2026 [1]. Fares rose to 42 kr [2].
A new pier opened in May 2026 [3]. The timetable has 64 daily sailings [4].

The fare rise is reasonable because fuel costs grew faster than fares.

## References
[1] Annual report_Harbour Lines {base}/annual
[2] Fares_Harbour Lines {base}/old-fares
[3] Pier opening_Local News {base}/gone
[4] Timetable_Harbour Lines {base}/timetable.pdf
"""

PAGES = {
    "/annual": "<html><head><title>Annual report</title></head><body><p>In 2026 the ferry "
    "carried 1.8 million passengers.</p></body></html>",
    "/fares": "<p>Single fare: 42 kr from 1 March 2026.</p>",
}


def web(request: Request) -> Response:
    if request.path == "/old-fares":
        return Response(301, b"", {"Location": "/fares"})
    if request.path in PAGES:
        return Response(200, PAGES[request.path].encode(), {"Content-Type": "text/html"})
    if request.path == "/timetable.pdf":
        return Response(200, b"%PDF-1.7", {"Content-Type": "application/pdf"})
    return Response(404, b"not here", {"Content-Type": "text/plain"})


def ferry_bundle(base: str) -> Bundle:
    markdown = MARKDOWN.format(base=base)
    task = Task(
        id="ferry",
        prompt="How did the harbour ferry do in 2026?",
        metadata={"cur_date": "2026-12-01"},
        subtasks=[
            Subtask(id="s1", text="Passenger numbers and fares", importance="P0"),
            Subtask(id="s2", text="Explain the fare change", importance="P1"),
        ],
        criteria=[
            Criterion(
                id="s1-ins",
                subtask="s1",
                framework="cascade",
                dimension="ins",
                text="Gives 2026 passengers and the fare",
            ),
            Criterion(
                id="s1-fac",
                subtask="s1",
                framework="cascade",
                dimension="fac",
                text="Are the passenger and fare figures right?",
            ),
            Criterion(
                id="s2-ins",
                subtask="s2",
                framework="cascade",
                dimension="ins",
                text="Explains the fare change",
            ),
            Criterion(
                id="s2-rat",
                subtask="s2",
                framework="cascade",
                dimension="rat",
                text="Is the explanation of the fare change reasoned?",
            ),
        ],
    )
    claims = [
        Claim(id="c1", subtask="s1", fact="The ferry carried 1.8 million passengers in 2026"),
        Claim(id="c2", subtask="s1", fact="Fares rose to 42 kr"),
        Claim(id="c3", subtask="s1", fact="A new pier opened in May 2026"),
        Claim(id="c4", subtask="s1", fact="The timetable has 64 daily sailings"),
    ]
    return Bundle(
        suite=Suite(id="ferry-suite", name="Ferry", frameworks=["cascade"]),
        tasks=[task],
        systems=[System(id="a"), System(id="b")],
        reports=[
            Report(id=f"ferry-{s}", task="ferry", system=s, markdown=markdown, claims=claims)
            for s in ("a", "b")
        ],
    )


@pytest.fixture
def ferry(tmp_path: Path) -> Iterator[tuple[Path, Loopback]]:
    with serving(web) as site:
        db = tmp_path / "ferry.db"
        conn = connect(db)
        import_bundle(conn, ferry_bundle(site.url), "ferry-hash")
        rebuild_scores(conn)
        conn.close()
        yield db, site


def test_fetches_each_cited_page_once_and_judges_against_it(
    ferry: tuple[Path, Loopback],
    fake: tuple[FakeJudge, Loopback],
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, site = ferry
    _, srv = fake
    assert (
        judge_cli(
            db, srv, "--only", "ins,consistency,rat", "--run-id", "live", "--fetch-timeout", "5"
        )
        == 0
    )
    assert "pages fetched: 4 (2 unusable" in capsys.readouterr().out
    # Two reports cite the same four URLs: each is fetched once (the redirect adds a hop).
    assert [
        site.count(p) for p in ("/annual", "/old-fares", "/fares", "/gone", "/timetable.pdf")
    ] == [1, 1, 1, 1, 1]
    conn = connect(db)
    row, _ = run_row(conn, "live")
    fetches = {
        url.rsplit("/", 1)[1]: (error, sha, text)
        for url, error, sha, text in conn.execute(
            "SELECT url, error, sha256, text FROM page_fetch WHERE run_id = ?", (row,)
        )
    }
    assert fetches["gone"][0] == "HTTP 404 Not Found"
    assert fetches["timetable.pdf"][0] == "unsupported content type: PDF (no text extraction)"
    annual_text = fetches["annual"][2]
    assert annual_text == "In 2026 the ferry carried 1.8 million passengers."
    verdicts = {
        (rep, ref): (value, sha, expl)
        for rep, ref, value, sha, expl in conn.execute(
            """SELECT r.ext_id, j.ref_idx, j.value, j.source_sha256, j.explanation
           FROM judgment j JOIN report r ON r.id = j.report_id
           WHERE j.run_id = ? AND j.kind = 'consistency'""",
            (row,),
        )
    }
    for report in ("ferry-a", "ferry-b"):
        # [1] and [2]: the fake finds the claim's numbers on the page; the verdict names the
        # hash of the text it saw.
        assert verdicts[(report, 1)][:2] == (
            "support",
            hashlib.sha256(annual_text.encode()).hexdigest(),
        )
        assert verdicts[(report, 2)][0] == "support"
        for ref in (3, 4):
            value, _, explanation = verdicts[(report, ref)]
            assert value == "unknown" and explanation.startswith("Not sent to the model")
    bodies = [r.body.decode() for r in srv.requests if b"check statements" in r.body]
    assert len(bodies) == 4  # two usable pages × two reports
    assert not any("/gone" in b or "timetable.pdf" in b for b in bodies)
    conn.close()


def test_fetch_keeps_each_cited_page_for_a_later_judge_run(
    ferry: tuple[Path, Loopback],
    fake: tuple[FakeJudge, Loopback],
    capsys: pytest.CaptureFixture[str],
) -> None:
    db, site = ferry
    _, srv = fake
    assert (
        main(
            [
                "fetch",
                "--db",
                str(db),
                "--fetch-timeout",
                "5",
                "--format",
                "json",
                "--allow-private-hosts",
            ]
        )
        == 0
    )
    pages = {p["url"].rsplit("/", 1)[1]: p for p in json.loads(capsys.readouterr().out)}
    assert sorted(pages) == ["annual", "gone", "old-fares", "timetable.pdf"]
    assert pages["gone"]["error"] == "HTTP 404 Not Found" and pages["annual"]["error"] == ""
    conn = connect(db)
    assert conn.execute("SELECT count(*) FROM page_fetch WHERE run_id IS NULL").fetchone()[0] == 4
    conn.close()
    # Judging against the stored pages fetches nothing again.
    assert (
        judge_cli(db, srv, "--only", "consistency", "--sources", "stored", "--run-id", "stored")
        == 0
    )
    capsys.readouterr()
    assert site.count("/annual") == 1


def test_extraction_adds_claims_with_fresh_ids(
    ferry: tuple[Path, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    db, _ = ferry
    judge = FakeJudge(rewrite=True)
    with serving(judge) as srv:
        assert (
            judge_cli(
                db,
                srv,
                "--only",
                "claims",
                "--report",
                "ferry-a",
                "--run-id",
                "x1",
                "--sources",
                "stored",
            )
            == 0
        )
        assert (
            judge_cli(
                db,
                srv,
                "--only",
                "claims",
                "--report",
                "ferry-a",
                "--run-id",
                "x2",
                "--sources",
                "stored",
            )
            == 0
        )
    capsys.readouterr()
    conn = connect(db)
    markdown = conn.execute("SELECT markdown FROM report WHERE ext_id = 'ferry-a'").fetchone()[0]
    rows = conn.execute(
        """SELECT c.id, c.ext_id, c.fact, c.span_start, c.span_end, c.citations, c.metadata,
                  s.ext_id, k.ext_id FROM claim c JOIN report r ON r.id = c.report_id
           LEFT JOIN subtask s ON s.id = c.subtask_id LEFT JOIN criterion k
           ON k.id = c.criterion_id WHERE r.ext_id = 'ferry-a' ORDER BY c.id"""
    ).fetchall()
    imported = [r for r in rows if not r[1].startswith("jc")]
    extracted = [r for r in rows if r[1].startswith("jc")]
    assert [r[1] for r in imported] == ["c1", "c2", "c3", "c4"]
    # One fac criterion, two claims a run (the second reworded, so found by the matching
    # call): jc1, jc2 from run x1 and jc3, jc4 from run x2, with new row ids.
    assert [r[1] for r in extracted] == ["jc1", "jc2", "jc3", "jc4"]
    assert min(r[0] for r in extracted) > max(r[0] for r in imported)
    for _, ext, fact, start, end, citations, metadata, subtask, criterion in extracted:
        meta = json.loads(metadata)
        assert meta["gavel_judge_run"] == ("x1" if ext in ("jc1", "jc2") else "x2")
        assert (subtask, criterion) == ("s1", "s1-fac")
        assert start is not None and markdown[start:end] == fact  # located, verbatim
        assert json.loads(citations)  # its markers were read
    located = {json.loads(r[6])["located_by"] for r in extracted}
    assert located == {"text", "judge"}
    assert (
        conn.execute(
            "SELECT count(*) FROM judgment WHERE run_id IN "
            "(SELECT id FROM judge_run WHERE ext_id IN ('x1', 'x2'))"
        ).fetchone()[0]
        == 0
    )
    conn.close()


def test_dry_run_sends_nothing_and_counts_cached_calls(
    sample_db: Path, fake: tuple[FakeJudge, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    judge, srv = fake
    runs_before = connect(sample_db).execute("SELECT count(*) FROM judge_run").fetchone()[0]
    args = ("--task", "t01", "--only", "ins,rat", "--sources", "stored")
    assert judge_cli(sample_db, srv, *args, "--dry-run", "--format", "json") == 0
    plan = json.loads(capsys.readouterr().out)[0]
    steps = {s["step"]: s for s in plan["steps"]}
    # t01 has 3 reports, one ins call each and one rat criterion each.
    assert (steps["ins"]["calls"], steps["rat"]["calls"]) == (3, 3)
    assert steps["ins"]["cached"] == 0 and plan["input_tokens"] > 0
    assert judge.count == 0
    conn = connect(sample_db)
    assert conn.execute("SELECT count(*) FROM judge_run").fetchone()[0] == runs_before
    assert judge_cli(sample_db, srv, *args) == 0
    capsys.readouterr()
    assert judge_cli(sample_db, srv, *args, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "nothing was sent." in out
    assert judge_cli(sample_db, srv, *args, "--dry-run", "--format", "json") == 0
    steps = {s["step"]: s for s in json.loads(capsys.readouterr().out)[0]["steps"]}
    assert steps["ins"]["cached"] == 3 and steps["rat"]["cached"] == 3
    conn.close()


def test_selection_and_limit(
    sample_db: Path, fake: tuple[FakeJudge, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    _, srv = fake
    assert (
        judge_cli(
            sample_db,
            srv,
            "--limit",
            "2",
            "--only",
            "ins",
            "--sources",
            "stored",
            "--run-id",
            "two",
        )
        == 0
    )
    assert (
        judge_cli(
            sample_db,
            srv,
            "--system",
            "kestrel",
            "--only",
            "ins",
            "--sources",
            "stored",
            "--run-id",
            "kestrel-only",
        )
        == 0
    )
    capsys.readouterr()
    conn = connect(sample_db)
    judged = {
        run: {
            r
            for (r,) in conn.execute(
                """SELECT DISTINCT r.ext_id FROM judgment j JOIN report r ON r.id = j.report_id
           JOIN judge_run jr ON jr.id = j.run_id WHERE jr.ext_id = ?""",
                (run,),
            )
        }
        for run in ("two", "kestrel-only")
    }
    assert judged["two"] == {"t01-atlas-dr", "t01-kestrel"}
    assert judged["kestrel-only"] == {f"t0{n}-kestrel" for n in range(1, 9)}
    kinds = {
        k
        for (k,) in conn.execute(
            "SELECT DISTINCT kind FROM judgment j JOIN judge_run jr ON jr.id = j.run_id "
            "WHERE jr.ext_id = 'kestrel-only'"
        )
    }
    assert kinds == {"ins"}
    conn.close()
    assert (
        main(
            [
                "judge",
                "--db",
                str(sample_db),
                "--base-url",
                srv.url + "/v1",
                "--model",
                "m",
                "--system",
                "nobody",
            ]
        )
        == 2
    )
    assert "no system 'nobody'" in capsys.readouterr().err


def test_unusable_replies_become_judge_errors(
    sample_db: Path, fake: tuple[FakeJudge, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    judge, srv = fake
    judge.script.extend([chat("the report is fine"), chat("still no JSON, sorry")])
    # Every call of the run failed: the run is ``failed`` and the command exits 1.
    assert (
        judge_cli(
            sample_db,
            srv,
            "--report",
            "t01-atlas-dr",
            "--only",
            "ins",
            "--sources",
            "stored",
            "--run-id",
            "broken",
        )
        == 1
    )
    captured = capsys.readouterr()
    assert "judge errors: 8" in captured.out
    assert "every model call failed" in captured.err
    conn = connect(sample_db)
    rows = conn.execute(
        """SELECT value, error FROM judgment j JOIN judge_run r ON r.id = j.run_id
           WHERE r.ext_id = 'broken'"""
    ).fetchall()
    assert len(rows) == 8
    assert all(v is None and e.startswith("invalid reply") for v, e in rows)
    _, usage = run_row(conn, "broken")
    assert usage["errors"] == 1 and usage["repair_requests"] == 1
    assert conn.execute("SELECT count(*) FROM judge_cache").fetchone()[0] == 0
    assert_cache_consistent(conn)
    conn.close()


def test_a_crash_keeps_finished_reports_and_marks_the_run_failed(
    sample_db: Path,
    fake: tuple[FakeJudge, Loopback],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import store.runs.judging as cmd

    _, srv = fake
    real = cmd.write_outcome
    calls: list[int] = []

    def fragile(conn: sqlite3.Connection, run_row: int, report_id: int, outcome: object) -> object:
        calls.append(report_id)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real(conn, run_row, report_id, outcome)  # type: ignore[arg-type]

    monkeypatch.setattr(cmd, "write_outcome", fragile)
    with pytest.raises(BaseException, match=r"disk on fire|unhandled errors"):
        judge_cli(
            sample_db,
            srv,
            "--task",
            "t01",
            "--only",
            "ins",
            "--sources",
            "stored",
            "--concurrency",
            "1",
            "--run-id",
            "crashed",
        )
    capsys.readouterr()
    conn = connect(sample_db)
    row, usage = run_row(conn, "crashed")
    assert usage["status"] == "failed" and usage["reports"] == 1
    assert (
        conn.execute(
            "SELECT count(DISTINCT report_id) FROM judgment WHERE run_id = ?", (row,)
        ).fetchone()[0]
        == 1
    )
    assert_cache_consistent(conn)
    conn.close()


def test_the_caller_decides_where_each_report_goes_and_can_stop_the_run(
    sample_db: Path, fake: tuple[FakeJudge, Loopback]
) -> None:
    """What the workstation relies on: outcomes handed to its sink (its writer thread), and a
    stop it can set from another thread."""
    import threading

    from reviewer.frameworks.dailyreport.judge_pipeline import ReportOutcome
    from store.runs.judging import JudgeRequest, Selection, prepare_judge, run_judge
    from store.runs.records import write_outcome

    _, srv = fake
    conn = connect(sample_db)
    writer = connect(sample_db)
    request = JudgeRequest(
        model="fake-judge",
        base_url=srv.url + "/v1",
        selection=Selection(tasks=("t01",)),
        steps=frozenset({"ins"}),
        sources="stored",
        run_id="sunk",
    )
    prepared = prepare_judge(conn, request, api_key=KEY)
    seen: list[tuple[int, int]] = []

    def sink(report_id: int, run_row: int, outcome: ReportOutcome) -> None:
        seen.append((report_id, run_row))
        write_outcome(writer, run_row, report_id, outcome)

    result = run_judge(conn, prepared, sink=sink)
    assert result.status == "complete" and result.usage["reports"] == len(prepared.loaded)
    assert sorted(r for r, _ in seen) == sorted(prepared.report_ids)
    row, usage = run_row(conn, "sunk")
    assert {r for _, r in seen} == {row} and usage["status"] == "complete"
    assert_cache_consistent(conn)

    stop = threading.Event()
    stop.set()
    stopped = run_judge(conn, prepare_judge(conn, request, api_key=KEY), sink=sink, stop=stop)
    assert stopped.status == "interrupted" and stopped.usage["reports"] == 0
    conn.close()
    writer.close()


# -- bounds on a run: ctrl+c, a dead process, a run that only failed, huge explanations ---------


def test_ctrl_c_stops_a_stalled_run_within_two_seconds(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import threading
    import time

    seen = threading.Event()

    def stall(request: Request) -> Response:
        seen.set()
        return Response(200, b"{}", {"Content-Type": "application/json"}, delay=30.0)

    def interrupt() -> None:
        seen.wait(10)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGINT)

    with serving(stall) as srv:
        threading.Thread(target=interrupt, daemon=True).start()
        started = time.monotonic()
        code = main(
            [
                "judge",
                "--db",
                str(sample_db),
                "--base-url",
                srv.url + "/v1",
                "--model",
                "fake-judge",
                "--sources",
                "stored",
                "--run-id",
                "stalled",
                "--report",
                "t01-atlas-dr",
            ]
        )
        stopped = time.monotonic() - started
    assert code == 130
    assert stopped < 3.5  # ctrl+c 0.3 s after the stall: not the 30 s
    conn = connect(sample_db)
    _, usage = run_row(conn, "stalled")
    conn.close()
    assert usage["status"] == "interrupted"
    capsys.readouterr()


def test_a_run_whose_process_died_is_marked_interrupted(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket
    import subprocess
    import sys

    from reviewer.models import JudgeRun
    from store.runs.records import create_run, mark_stale_runs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    conn = connect(sample_db)
    suite = conn.execute("SELECT id FROM suite LIMIT 1").fetchone()[0]
    rows = create_run(conn, [suite], JudgeRun(id="orphan", model="m"))
    other = create_run(conn, [suite], JudgeRun(id="far-away", model="m"))
    for row, usage in (
        (
            rows[suite],
            {
                "status": "running",
                "host": socket.gethostname(),
                "pid": dead.pid,
                "heartbeat": "2026-01-01T00:00:00Z",
            },
        ),
        (
            other[suite],
            {
                "status": "running",
                "host": "elsewhere.example",
                "pid": 1,
                "heartbeat": "2000-01-01T00:00:00Z",
            },
        ),
    ):
        conn.execute("UPDATE judge_run SET usage = ? WHERE id = ?", (json.dumps(usage), row))
    conn.commit()
    alive = create_run(conn, [suite], JudgeRun(id="alive", model="m"))  # this process
    assert alive
    assert main(["runs", "--db", str(sample_db), "--format", "json"]) == 0  # marks them
    listed = {r["run"]: r["status"] for r in json.loads(capsys.readouterr().out)}
    assert mark_stale_runs(conn) == []  # already marked
    assert listed["orphan"] == listed["far-away"] == "interrupted"
    assert listed["alive"] == "running"
    _, usage = run_row(conn, "orphan")
    assert f"process {dead.pid}" in str(usage["interrupted"])
    conn.close()


def test_a_run_whose_every_call_failed_exits_non_zero(
    sample_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.loopback import error

    with serving(lambda request: error(500, "down")) as srv:
        code = main(
            [
                "judge",
                "--db",
                str(sample_db),
                "--base-url",
                srv.url + "/v1",
                "--model",
                "fake-judge",
                "--sources",
                "stored",
                "--run-id",
                "down",
                "--report",
                "t01-atlas-dr",
                "--only",
                "ins",
                "--max-retries",
                "0",
            ]
        )
    assert code == 1
    assert "every model call failed" in capsys.readouterr().err
    conn = connect(sample_db)
    _, usage = run_row(conn, "down")
    conn.close()
    assert usage["status"] == "failed"


def test_explanations_are_capped_in_the_database(
    sample_db: Path, fake: tuple[FakeJudge, Loopback]
) -> None:
    judge, srv = fake
    criteria = [{"id": n, "score": 1, "explanation": "why " * 50_000} for n in range(1, 9)]
    judge.script.append(chat(json.dumps({"scores": criteria})))
    assert (
        judge_cli(
            sample_db,
            srv,
            "--report",
            "t01-atlas-dr",
            "--only",
            "ins",
            "--sources",
            "stored",
            "--run-id",
            "verbose",
        )
        == 0
    )
    conn = connect(sample_db)
    longest = conn.execute(
        "SELECT max(length(explanation)), max(length(raw)) FROM judgment j JOIN judge_run r "
        "ON r.id = j.run_id WHERE r.ext_id = 'verbose'"
    ).fetchone()
    conn.close()
    assert longest[0] <= 4_100 and longest[1] <= 20_000
