"""DeepResearch Bench II through the generic workflow, from the command line on the bundled
sample: a review plan drawn over its verdicts, decisions on the draws, corrected estimates of
its headline metrics, judge-vs-human agreement and the gold export — none of which knows the
benchmark's name."""

from __future__ import annotations

import io
import json
import sqlite3
from contextlib import redirect_stdout
from pathlib import Path

from tui.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "drb2"
SUITE = "drb2-sample-2026-11"


def run(*args: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(list(args)) == 0
    return out.getvalue()


def test_plan_estimate_agreement_and_gold_export(tmp_path: Path) -> None:
    db = str(tmp_path / "drb2.db")
    run("import", str(SAMPLE), "--db", db)
    run("plan", "new", "--budget", "12", "--seed", "7", "--db", db, "--reviewer", "ana")
    plan = json.loads(run("plan", "export", "p1", "--db", db))
    assert plan["plan"]["frameworks"] == ["drb2"] and len(plan["draws"]) == 12
    conn = sqlite3.connect(db)
    decided = 0
    for draw in plan["draws"]:
        report, kind, subject = draw["target"].split("/", 1)[1].split("/")
        jid = conn.execute(
            """SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id
               WHERE r.ext_id = ? AND j.kind = ? AND j.subject = ? AND j.current = 1""",
            (report, kind, subject),
        ).fetchone()[0]
        # The reviewer overrules every satisfied item as not mentioned, confirms the rest.
        # (-1 reads as an option on a command line: its alias "blocked" does not.)
        value = {"1": "0", "-1": "blocked"}.get(draw["judge"], draw["judge"])
        run("decide", str(jid), value, "--rationale", "read it", "--db", db, "--reviewer", "ana")
        decided += 1
    conn.close()
    estimate = json.loads(run("estimate", "--plan", "p1", "--format", "json", "--db", db))
    text = json.dumps(estimate)
    assert '"total"' in text and "harbor-dr" in text and "lumen-search" in text
    agreement = json.loads(run("agreement", "--format", "json", "--db", db))
    assert "drb2_item" in json.dumps(agreement)
    gold = tmp_path / "gold.jsonl"
    run("export", "gold", "-o", str(gold), "--db", db)
    rows = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == decided and {r["kind"] for r in rows} == {"drb2_item"}
