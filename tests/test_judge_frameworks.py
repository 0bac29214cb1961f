"""Every framework's judge, end to end from the command line, against a loopback model that
answers each benchmark's published prompts: a candidate run is produced, validated against the
human labels on the subjects it judged, activated, and the scores follow it (equal to a full
recompute). Also the prompt fences, the pages a run judges against, and what each pipeline
parses out of its replies."""

from __future__ import annotations

import io
import json
import re
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from store.scores.cache import cached, compute_all
from tests.fake_judges import BenchJudge
from tests.loopback import Loopback, serving
from tui.cli import main

FIXTURES = Path(__file__).parent / "fixtures"

# framework -> (report, kind to label, a human value, extra judge options)
CASES: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "race": ("agent-b:1", "race_target", "9", ()),
    "fact": ("agent-b:1", "fact", "unsupported", ("--only", "validate")),
    "dr3": ("pipit:port-shore-power", "dr3_checklist", "true", ()),
    "claims_f1": ("peer-chorusalp-kite-search", "cf1_match", "1", ()),
    "drbench": ("04901-lantern-search", "drb_qsr", "yes", ("--only", "qsr,relevance")),
}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GAVEL_API_KEY", "sk-frameworks-not-secret")


@pytest.fixture(scope="module")
def all_benchmarks(sample_db_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample data plus the DeepResearch Bench fixture, imported once."""
    path = tmp_path_factory.mktemp("bench") / "all.db"
    shutil.copy(sample_db_template, path)
    assert main(["import", str(FIXTURES / "drb_mini"), "--format", "drb", "--db", str(path)]) == 0
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # copies of the file must hold it all
    conn.close()
    return path


@pytest.fixture
def db(all_benchmarks: Path, tmp_path: Path) -> Path:
    target = tmp_path / "bench.db"
    shutil.copy(all_benchmarks, target)
    return target


@pytest.fixture
def model() -> Iterator[tuple[BenchJudge, Loopback]]:
    judge = BenchJudge()
    with serving(judge) as srv:
        yield judge, srv


@pytest.fixture
def harsh() -> Iterator[tuple[BenchJudge, Loopback]]:
    """A judge that disagrees with the imported one (so activating it moves scores)."""
    judge = BenchJudge(harsh=True)
    with serving(judge) as srv:
        yield judge, srv


def label(db: Path, report: str, kind: str, value: str, n: int = 2) -> list[int]:
    """A human decides ``n`` of the report's current verdicts of ``kind``: the gold."""
    conn = connect(db)
    ids = [
        jid
        for (jid,) in conn.execute(
            """SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id
           WHERE r.ext_id = ? AND j.kind = ? AND j.current = 1 AND j.value IS NOT NULL
           ORDER BY j.id LIMIT ?""",
            (report, kind, n),
        )
    ]
    assert ids, f"no {kind} verdicts on {report}"
    log = ReviewLog(conn, "ana")
    for jid in ids:
        log.decide(jid, value, "checked against the sources")
    conn.close()
    return ids


def headlines(db: Path, framework: str) -> dict[tuple[str, str], float | None]:
    conn = sqlite3.connect(db)
    rows = conn.execute(
        """SELECT y.ext_id, s.metric, s.value FROM score s JOIN system y
           ON s.scope = 'system:' || y.id WHERE s.framework = ? AND s.variant = 'judge'""",
        (framework,),
    ).fetchall()
    conn.close()
    return {(system, metric): value for system, metric, value in rows}


def cli_json(*args: str) -> object:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(list(args)) == 0
    return json.loads(out.getvalue())


def assert_scores_rebuild(db: Path) -> None:
    conn = connect(db)
    full = compute_all(conn)
    cache = cached(conn)
    for key, scores in full.reports.items():
        assert cache.reports.get(key, {}) == pytest.approx(scores, nan_ok=True), key
    conn.close()


@pytest.mark.parametrize("framework", sorted(CASES))
def test_a_candidate_run_is_validated_against_gold_activated_and_rescored(
    framework: str, db: Path, harsh: tuple[BenchJudge, Loopback]
) -> None:
    report, kind, gold, extra = CASES[framework]
    judge, srv = harsh
    labelled = label(db, report, kind, gold)
    before = headlines(db, framework)
    run = f"cand-{framework}"
    assert (
        main(
            [
                "judge",
                "--db",
                str(db),
                "--framework",
                framework,
                "--report",
                report,
                "--model",
                "fake-judge",
                "--base-url",
                srv.url + "/v1",
                "--sources",
                "stored",
                "--run-id",
                run,
                *extra,
            ]
        )
        == 0
    )
    assert judge.count > 0
    conn = sqlite3.connect(db)
    usage = json.loads(
        conn.execute("SELECT usage FROM judge_run WHERE ext_id = ?", (run,)).fetchone()[0]
    )
    version = conn.execute(
        "SELECT prompt_version FROM judge_run WHERE ext_id = ?", (run,)
    ).fetchone()[0]
    conn.close()
    assert usage["status"] == "complete" and usage["framework"] == framework
    assert usage["judgments"].get(kind), usage["judgments"]
    assert version and version != "gavel-dailyreport-2"
    # A candidate: nothing moved yet.
    assert headlines(db, framework) == before

    preview = cli_json("runs", "activate", run, "--preview", "--format", "json", "--db", str(db))
    assert isinstance(preview, list)
    gold_seen = preview[0]["gold"]
    assert gold_seen["n"] >= len(labelled), gold_seen  # validated on the human labels
    assert main(["runs", "activate", run, "--yes", "--db", str(db)]) == 0
    after = headlines(db, framework)
    assert after != before  # rescored by the new verdicts
    assert_scores_rebuild(db)


def test_race_scores_both_articles_side_by_side(
    db: Path, model: tuple[BenchJudge, Loopback]
) -> None:
    judge, srv = model
    assert (
        main(
            [
                "judge",
                "--db",
                str(db),
                "--framework",
                "race",
                "--report",
                "agent-a:2",
                "--model",
                "fake-judge",
                "--base-url",
                srv.url + "/v1",
                "--run-id",
                "side",
            ]
        )
        == 0
    )
    conn = sqlite3.connect(db)
    kinds = dict(
        conn.execute(
            "SELECT j.kind, count(*) FROM judgment j JOIN judge_run r ON r.id = j.run_id "
            "WHERE r.ext_id = 'side' AND j.error IS NULL GROUP BY j.kind"
        ).fetchall()
    )
    conn.close()
    assert kinds == {"race_target": 8, "race_reference": 8}  # 4 dimensions × 2 criteria
    assert judge.steps == ["race"]  # cleaned texts: no clean call


def test_fact_extracts_statements_and_judges_them_against_the_stored_pages(
    db: Path, model: tuple[BenchJudge, Loopback]
) -> None:
    judge, srv = model
    assert (
        main(
            [
                "judge",
                "--db",
                str(db),
                "--framework",
                "fact",
                "--report",
                "agent-a:1",
                "--model",
                "fake-judge",
                "--base-url",
                srv.url + "/v1",
                "--sources",
                "stored",
                "--run-id",
                "stmts",
            ]
        )
        == 0
    )
    conn = sqlite3.connect(db)
    rows = conn.execute(
        """SELECT c.ext_id, c.url, j.value FROM judgment j JOIN judge_run r ON r.id = j.run_id
           JOIN claim c ON c.id = j.claim_id WHERE r.ext_id = 'stmts' ORDER BY c.ext_id"""
    ).fetchall()
    conn.close()
    assert [r[0] for r in rows] == ["jf1", "jf2", "jf3"]
    by_url = {url: value for _, url, value in rows}
    assert by_url["https://ports.example/veldhaven-2025"] == "supported"  # 39% on the page
    assert by_url["https://shipping.example/retrofit-costs"] == "unsupported"  # 1.2 is not
    assert judge.steps.count("extract") == 1 and judge.steps.count("validate") == 3


def test_prompts_fence_untrusted_text_with_a_per_request_token(
    db: Path, model: tuple[BenchJudge, Loopback]
) -> None:
    _, srv = model
    assert (
        main(
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
                "fenced",
            ]
        )
        == 0
    )
    bodies = [r.json() for r in srv.requests]
    tokens = set()
    for body in bodies:
        user = body["messages"][-1]["content"]
        system = body["messages"][0]["content"]
        found = re.search(r"<<report-([0-9a-f]{12})>>", user)
        assert found, user[:200]
        tokens.add(found.group(1))
        assert f"-{found.group(1)}" in system  # the rule names the token
        assert "\x1b" not in user
    assert len(tokens) == 1  # one report, one token: the same request is the same cache key


def test_migrate_judge_validates_on_the_labelled_reports_then_judges_the_rest(
    db: Path, model: tuple[BenchJudge, Loopback], capsys: pytest.CaptureFixture[str]
) -> None:
    judge, srv = model
    source = "agent-b:race_judgements"  # imported: judged agent-b's 2 reports
    label(db, "agent-b:1", "race_target", "8")
    base = [
        "migrate-judge",
        "--db",
        str(db),
        "--from",
        source,
        "--model",
        "gpt-4o-mini",
        "--base-url",
        srv.url + "/v1",
        "--run-id",
        "mig",
    ]
    plan = cli_json(*base, "--dry-run", "--format", "json")
    assert isinstance(plan, list)
    phases = {p["phase"]: p for p in plan[0]["phases"]}
    assert plan[0]["framework"] == "race" and plan[0]["steps"] == ["race"]
    assert phases["labelled reports"]["reports"] == 1 and phases["every report"]["reports"] == 2
    cost = phases["every report"]["cost_usd"]
    assert cost > 0 and phases["every report"]["batch_cost_usd"] == pytest.approx(cost / 2)
    assert judge.count == 0  # a dry run sends nothing
    capsys.readouterr()

    assert main([*base, "--yes"]) == 0
    out = capsys.readouterr().out
    assert "labelled phase: candidate run mig-gold" in out
    assert "agree" in out  # the agreement with the human labels
    # One call for the labelled report, one more for the other: the first is not paid twice.
    assert judge.count == 2
    conn = sqlite3.connect(db)
    runs = dict(
        conn.execute("SELECT ext_id, active FROM judge_run WHERE ext_id LIKE 'mig%'").fetchall()
    )
    reports = conn.execute(
        "SELECT count(DISTINCT j.report_id) FROM judgment j JOIN judge_run r ON "
        "r.id = j.run_id WHERE r.ext_id = 'mig'"
    ).fetchone()[0]
    conn.close()
    assert runs == {"mig-gold": 0, "mig": 0}  # both candidates
    assert reports == 2


def test_migrate_judge_stops_after_the_labelled_phase_unless_confirmed(
    db: Path, model: tuple[BenchJudge, Loopback]
) -> None:
    judge, srv = model
    label(db, "agent-b:1", "race_target", "8")
    assert (
        main(
            [
                "migrate-judge",
                "--db",
                str(db),
                "--from",
                "agent-b:race_judgements",
                "--model",
                "m",
                "--base-url",
                srv.url + "/v1",
                "--run-id",
                "half",
            ]
        )
        == 0
    )
    assert judge.count == 1
    conn = sqlite3.connect(db)
    assert [
        r for (r,) in conn.execute("SELECT ext_id FROM judge_run WHERE ext_id LIKE 'half%'")
    ] == ["half-gold"]
    conn.close()
