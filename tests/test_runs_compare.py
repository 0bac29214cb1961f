"""Judge runs side by side: listing, (de)activation with recomputed scores, per-run scores,
verdict agreement between runs and the mean ± sd of system scores over runs (DailyReport
Table 4). Runs are written through the store with hand-chosen values on the tiny bundle."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pytest

from reviewer.frameworks.dailyreport.judge_pipeline import ReportOutcome
from reviewer.judge.compare import ItemVerdict, agreement_by_kind, mean_sd
from reviewer.models import Claim, JudgeRun, Judgment
from store.runs.records import create_run, finish_run, run_scores, set_active, write_outcome
from store.scores.cache import cached, compute_all
from tests.builders import TINY_MARKDOWN
from tests.score_rows import all_scores
from tui.cli import main

CRITERIA = ("s1-ins", "s2-ins", "s3-ins", "s4-ins")
INS = {
    "A": {"alpha": (1, 1, 1, 1), "beta": (1, 0.5, 1, 0)},
    "B": {"alpha": (1, 1, 0.5, 1), "beta": (1, 0.5, 1, 1)},
    "C": {"alpha": (1, 0.5, 0.5, 1), "beta": (0.5, 0.5, 1, 0)},
}
RAT = {"A": {"alpha": 1, "beta": 0}, "B": {"alpha": 1, "beta": 0.5}, "C": {"alpha": 1, "beta": 0}}


def add_run(conn: sqlite3.Connection, run: str, day: int) -> None:
    suite = conn.execute("SELECT id FROM suite WHERE ext_id = 'tiny'").fetchone()[0]
    rows = create_run(
        conn,
        [suite],
        JudgeRun(
            id=run,
            model=f"model-{run}",
            prompt_version="gavel-dailyreport-1",
            created_at=f"2026-11-{day:02d}T00:00:00Z",
        ),
    )
    ids = []
    for system in ("alpha", "beta"):
        report = f"t1-{system}"
        rid = conn.execute("SELECT id FROM report WHERE ext_id = ?", (report,)).fetchone()[0]
        ids.append(rid)
        judgments = [
            Judgment(run=run, report=report, kind="ins", criterion=c, value=v)
            for c, v in zip(CRITERIA, INS[run][system], strict=True)
        ]
        judgments.append(
            Judgment(run=run, report=report, kind="rat", criterion="s2-rat", value=RAT[run][system])
        )
        claims: list[Claim] = []
        if run == "B" and system == "alpha":
            # B re-extracted the station claim under a new id and judged it differently.
            start = TINY_MARKDOWN.index("The network has 310 stations")
            claims.append(
                Claim(
                    id="jc1",
                    subtask="s3",
                    fact="The network has 310 stations",
                    span=(start, start + 28),
                    citations=[2],
                    metadata={"gavel_judge_run": "B"},
                )
            )
            judgments.append(
                Judgment(
                    run=run, report=report, kind="consistency", claim="jc1", ref=2, value="conflict"
                )
            )
        elif system == "alpha":
            judgments.append(
                Judgment(
                    run=run, report=report, kind="consistency", claim="c2", ref=2, value="support"
                )
            )
        write_outcome(conn, rows[suite], rid, ReportOutcome(report, judgments, claims))
    finish_run(
        conn,
        rows.values(),
        {
            "status": "complete",
            "requests": 3,
            "prompt_tokens": 1000,
            "completion_tokens": 100,
            "cost_usd": 0.0012,
        },
        ids,
    )


@pytest.fixture
def runs_db(tiny_db: sqlite3.Connection, tmp_path: Path) -> Path:
    for run, day in (("A", 10), ("B", 11), ("C", 12)):
        add_run(tiny_db, run, day)
        set_active(tiny_db, run, True)  # each a candidate until activated, in turn
    return tmp_path / "gavel.db"


def report_score(
    conn: sqlite3.Connection, report: str, metric: str, variant: str = "judge"
) -> float | None:
    row = conn.execute(
        f"""SELECT s.value FROM {all_scores(conn)} s JOIN report r ON s.scope = 'report:' || r.id
           WHERE r.ext_id = ? AND s.framework = 'cascade' AND s.metric = ?
           AND s.variant = ?""",
        (report, metric, variant),
    ).fetchone()
    return None if row is None else row[0]


def consistent(conn: sqlite3.Connection) -> bool:
    full, cache = compute_all(conn), cached(conn)
    return all(cache.reports.get(k) == pytest.approx(v) for k, v in full.reports.items())


def test_runs_lists_every_run(runs_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "--db", str(runs_db), "--format", "json"]) == 0
    rows = {r["run"]: r for r in json.loads(capsys.readouterr().out)}
    assert list(rows) == ["r1", "A", "B", "C"]
    assert rows["B"]["model"] == "model-B"
    assert rows["B"]["prompt_version"] == "gavel-dailyreport-1"
    assert rows["B"]["reports"] == 2 and rows["B"]["claims"] == 1
    assert rows["B"]["judgments"] == "consistency:1 ins:8 rat:2"
    assert rows["B"]["active"] == "yes" and rows["B"]["status"] == "complete"
    assert rows["B"]["cost_usd"] == 0.0012 and rows["B"]["tokens"] == "1,000/100"
    assert rows["r1"]["status"] == "imported"


def test_deactivating_the_newest_run_brings_the_previous_back(
    runs_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from store.db.connection import connect

    conn = connect(runs_db)
    # C is newest: Ins(alpha) = mean(1, 0.5, 0.5, 1) = 0.75.
    assert report_score(conn, "t1-alpha", "Ins") == pytest.approx(0.75)
    assert main(["runs", "deactivate", "C", "--db", str(runs_db)]) == 0
    # B is current again: Ins(alpha) = (1 + 1 + 0.5 + 1) / 4 = 0.875, in both variants.
    assert report_score(conn, "t1-alpha", "Ins") == pytest.approx(0.875)
    assert report_score(conn, "t1-alpha", "Ins", "adjudicated") == pytest.approx(0.875)
    # Rat(beta) under B: Σ ins·rat / Σ ins over s2 = 0.5·0.5 / 0.5 = 0.5.
    assert report_score(conn, "t1-beta", "Rat") == pytest.approx(0.5)
    assert consistent(conn)
    assert main(["runs", "deactivate", "B", "--db", str(runs_db)]) == 0
    assert report_score(conn, "t1-alpha", "Ins") == pytest.approx(1.0)  # A: all 1
    assert main(["runs", "activate", "C", "--yes", "--db", str(runs_db)]) == 0
    assert report_score(conn, "t1-alpha", "Ins") == pytest.approx(0.75)
    assert consistent(conn)
    assert main(["runs", "activate", "nope", "--yes", "--db", str(runs_db)]) == 2
    assert "no judge run 'nope'" in capsys.readouterr().err
    conn.close()


def test_run_scores_use_only_that_run(runs_db: Path) -> None:
    from store.db.connection import connect

    conn = connect(runs_db)
    a = run_scores(conn, "A")
    b = run_scores(conn, "B")
    # Ins per system (one report each): A alpha 1, beta (1+0.5+1+0)/4 = 0.625;
    # B alpha 0.875, beta (1+0.5+1+1)/4 = 0.875.
    assert a.systems[("alpha", "cascade")]["Ins"].value == pytest.approx(1.0)
    assert a.systems[("beta", "cascade")]["Ins"].value == pytest.approx(0.625)
    assert b.systems[("beta", "cascade")]["Ins"].value == pytest.approx(0.875)
    # Kinds a run did not judge come from the current judgments: the claim verdicts of r1
    # (alpha: c1 correct on s1 → fac_s1 = 1; c2, c3 correct on s3 → fac_s3 = 1), so
    # Fac(alpha) under B = (1·1 + 0.5·1) / (1 + 0.5) = 1.
    assert b.systems[("alpha", "cascade")]["Fac"].value == pytest.approx(1.0)
    # B's consistency on its own claim counts for B: 0 of 1 pairs support.
    assert (
        b.reports[
            (
                conn.execute("SELECT id FROM report WHERE ext_id = 't1-alpha'").fetchone()[0],
                "cascade",
            )
        ]["Refer_Claim_Consistency"]
        == 0.0
    )
    conn.close()


def test_agreement_between_two_runs_by_hand() -> None:
    a = [
        ItemVerdict("ins", (1, c), v)
        for c, v in enumerate(["1", "1", "1", "1", "1", "0.5", "1", "0"])
    ]
    b = [
        ItemVerdict("ins", (1, c), v)
        for c, v in enumerate(["1", "1", "0.5", "1", "1", "0.5", "1", "1"])
    ]
    b.append(ItemVerdict("ins", (2, 0), "1"))
    a.append(ItemVerdict("ins", (3, 0), None))
    (ins,) = agreement_by_kind(a, b)
    assert ins.n == 8 and ins.only_b == 1 and ins.failed_a == 1
    assert ins.accuracy.value == pytest.approx(6 / 8)
    # p_o = 6/8; marginals a: 0→1, 0.5→1, 1→6; b: 0→0, 0.5→2, 1→6;
    # p_e = (1·0 + 1·2 + 6·6) / 64 = 38/64; κ = (48/64 − 38/64) / (26/64) = 10/26 = 5/13.
    assert ins.kappa is not None and ins.kappa.value == pytest.approx(5 / 13)
    assert ins.confusion is not None
    assert ins.confusion.labels == ("0", "0.5", "1")
    assert ins.confusion.counts == ((0, 0, 1), (0, 1, 0), (0, 1, 5))


def test_mean_and_standard_deviation_over_runs() -> None:
    # Ins(alpha) over A, B, C: 1, 0.875, 0.75 → mean 0.875; squared deviations sum to
    # 2 × 0.125² = 0.03125: sample sd √(0.03125/2) = 0.125, population √(0.03125/3).
    sample = mean_sd([1.0, 0.875, 0.75])
    assert sample.mean == pytest.approx(0.875) and sample.sd == pytest.approx(0.125)
    population = mean_sd([1.0, 0.875, 0.75], "population")
    assert population.sd == pytest.approx(math.sqrt(0.03125 / 3))
    assert mean_sd([0.5, None]).sd is None and mean_sd([]).mean is None


def test_gavel_compare_two_and_three_runs(
    runs_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "--db", str(runs_db), "A", "B", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)[0]
    agreement = {r["kind"]: r for r in result["agreement"]}
    # ins, A vs B: the eight pairs of test_agreement_between_two_runs_by_hand.
    assert agreement["ins"]["n"] == 8
    assert agreement["ins"]["accuracy"] == pytest.approx(0.75)
    assert agreement["ins"]["kappa"] == pytest.approx(5 / 13)
    # rat: alpha 1/1 agree, beta 0 vs 0.5 → 1 of 2.
    assert agreement["rat"]["accuracy"] == pytest.approx(0.5)
    # The same claim under two ids (c2 in A, jc1 in B) is matched by its fact.
    assert agreement["consistency"]["n"] == 1
    assert agreement["consistency"]["accuracy"] == 0.0
    confusion = {c["kind"]: c for c in result["confusion"]}
    assert confusion["ins"]["counts"] == [[0, 0, 1], [0, 1, 0], [0, 1, 5]]
    diffs = {(r["system"], r["metric"]): r for r in result["score_differences"]}
    assert diffs[("alpha", "Ins")]["delta"] == pytest.approx(0.875 - 1.0)
    assert diffs[("beta", "Ins")]["delta"] == pytest.approx(0.875 - 0.625)
    assert diffs[("beta", "Rat")]["a"] == 0.0 and diffs[("beta", "Rat")]["b"] == 0.5

    assert main(["compare", "--db", str(runs_db), "A", "B", "C", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)[0]
    spread = {(r["system"], r["metric"]): r for r in result["robustness"]}
    assert spread[("alpha", "Ins")]["mean"] == pytest.approx(0.875)
    assert spread[("alpha", "Ins")]["sd"] == pytest.approx(0.125)
    # beta: 0.625, 0.875, (0.5+0.5+1+0)/4 = 0.5 → mean 2/3; squared deviations
    # (1/24)² + (5/24)² + (4/24)² = 42/576; sample sd √(42/576 / 2).
    assert spread[("beta", "Ins")]["mean"] == pytest.approx(2 / 3)
    assert spread[("beta", "Ins")]["sd"] == pytest.approx(math.sqrt(42 / 576 / 2))
    assert spread[("beta", "Ins")]["runs"] == 3
    assert len({(r["a"], r["b"]) for r in result["agreement"]}) == 3  # every pair
    assert result["score_differences"] == []

    assert main(["compare", "--db", str(runs_db), "A", "B"]) == 0
    table = capsys.readouterr().out
    assert "verdict agreement between runs" in table and "robustness over 2 runs" in table
    assert main(["compare", "--db", str(runs_db), "A"]) == 2
    assert "two or more different runs" in capsys.readouterr().err
