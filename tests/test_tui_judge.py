"""Re-judging any framework from the workstation (Pilot): ``J`` on a verdict of RACE, FACT,
DR3-Eval, LiveDRBench or DR. Bench runs that framework's judge in a worker, writing through the
single writer; the candidate shows beside the current verdict; ``R`` lists it with its
agreement with the human labels; ``a`` previews and activates it; the scores follow."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.db.connection import connect
from store.reviewlog.events import ReviewLog
from tests.fake_judges import BenchJudge
from tests.loopback import serving
from tests.score_rows import all_scores
from tests.tui_helpers import make_app, open_report, ready, select_judgment, wait_for
from tui.cli import main
from tui.screens.modals import ConfirmDialog
from tui.screens.report import ReportScreen
from tui.screens.runs import RunsScreen

SIZE = (170, 48)
FIXTURES = Path(__file__).parent / "fixtures"

# framework -> (report, kind of the verdict J is pressed on, a human value for one of them)
CASES: dict[str, tuple[str, str, str]] = {
    "race": ("agent-b:1", "race_target", "9"),
    "fact": ("agent-b:1", "fact", "unsupported"),
    "dr3": ("pipit:port-shore-power", "dr3_checklist", "true"),
    "claims_f1": ("peer-chorusalp-kite-search", "cf1_match", "1"),
    "drbench": ("04901-lantern-search", "drb_relevance", "5"),
}


@pytest.fixture(scope="module")
def all_benchmarks(sample_db_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tui-bench") / "all.db"
    shutil.copy(sample_db_template, path)
    assert main(["import", str(FIXTURES / "drb_mini"), "--format", "drb", "--db", str(path)]) == 0
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # copies of the file must hold it all
    conn.close()
    return path


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[BenchJudge]:
    judge = BenchJudge(harsh=True)
    with serving(judge) as server:
        monkeypatch.setenv("GAVEL_API_KEY", "test-key-not-secret")
        monkeypatch.setenv("GAVEL_MODEL", "fake-judge")
        monkeypatch.setenv("GAVEL_BASE_URL", server.url + "/v1")
        yield judge


def _label(db: Path, report: str, kind: str, value: str) -> None:
    conn = connect(db)
    jid = conn.execute(
        """SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id
           WHERE r.ext_id = ? AND j.kind = ? AND j.current = 1 AND j.value IS NOT NULL
           ORDER BY j.id LIMIT 1""",
        (report, kind),
    ).fetchone()[0]
    ReviewLog(conn, "ana").decide(jid, value, "checked")
    conn.close()


def _scores(db: Path, framework: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    rows = conn.execute(
        f"SELECT scope, metric, value FROM {all_scores(conn)} "
        "WHERE framework = ? AND "
        "variant = 'judge' ORDER BY 1, 2",
        (framework,),
    ).fetchall()
    conn.close()
    return rows


@pytest.mark.parametrize("framework", sorted(CASES))
async def test_j_judges_any_framework_and_r_activates_the_candidate(
    framework: str, all_benchmarks: Path, tmp_path: Path, model: BenchJudge
) -> None:
    report, kind, gold = CASES[framework]
    db = tmp_path / "bench.db"
    shutil.copy(all_benchmarks, db)
    _label(db, report, kind, gold)
    before = _scores(db, framework)
    app = make_app(db)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await open_report(pilot, report)
        judgment = await select_judgment(pilot, lambda j: j.kind == kind)
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        await pilot.press("J")
        key = (judgment.kind, judgment.subject)
        # The screen reloads when the worker says the run is done (other commits may reload
        # it earlier): wait for the candidate to show beside the current verdict.
        await wait_for(
            pilot,
            lambda: any(r.run.startswith("rejudge-") for r in screen.runs.get(key) or ()),
            limit=60,
        )
        await pilot.pause()
        assert model.count > 0
        runs = screen.runs[key]
        new = next(r for r in runs if r.run.startswith("rejudge-"))
        assert not new.active  # a candidate, beside the current verdict
        assert _scores(db, framework) == before  # nothing moved yet

        await pilot.press("escape")  # back to the queue, where R lives
        await pilot.press("R")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen) and bool(app.screen.rows))
        runs_screen = app.screen
        assert isinstance(runs_screen, RunsScreen)
        row = next(i for i, r in enumerate(runs_screen.rows) if r["run"] == new.run)
        assert runs_screen.rows[row]["state"] == "candidate"
        assert runs_screen.rows[row]["gold"].startswith(("0/1", "1/1"))  # the labelled one
        runs_screen.query_one("#runs-table").move_cursor(row=row)  # type: ignore[attr-defined]
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmDialog), limit=30)
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: any(f"{new.run} activated" in str(n.message) for n in app._notifications),
            limit=30,
        )
    conn = sqlite3.connect(db)
    assert (
        conn.execute("SELECT max(active) FROM judge_run WHERE ext_id = ?", (new.run,)).fetchone()[0]
        > 0
    )
    conn.close()
    assert _scores(db, framework) != before  # rescored by the activated run
