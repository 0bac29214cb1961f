"""The gold export: one row per resolved subject, typed, with every run's value and the
decisions' provenance; JSONL, CSV and Parquet, loadable by pandas and Hugging Face datasets."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from reviewer.frameworks.dailyreport.judge_pipeline import ReportOutcome
from reviewer.logfile import read_events
from reviewer.models import JudgeRun, Judgment
from store.db.connection import connect
from store.exports.files import write_export, write_parquet
from store.exports.gold import gold_records, gold_summary
from store.imports.loader import import_bundle
from store.reviewlog.conflicts import adjudicate
from store.reviewlog.events import ReviewLog, trust_adjudicator, trusted_adjudicators
from store.reviews.merge import merge_events, write_log
from store.runs.records import create_run, finish_run, write_outcome
from store.scores.cache import rebuild_scores
from tests.builders import tiny_bundle


def jid(conn: sqlite3.Connection, report: str, subject: str) -> int:
    return int(
        conn.execute(
            "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
            "WHERE r.ext_id = ? AND j.subject = ? AND j.current = 1",
            (report, subject),
        ).fetchone()[0]
    )


@pytest.fixture
def labelled(tiny_db: sqlite3.Connection) -> sqlite3.Connection:
    """ana and ben on the tiny bundle, plus a second (candidate) judge run."""
    conn = tiny_db
    ana, ben = ReviewLog(conn, "ana"), ReviewLog(conn, "ben")
    ana.decide(jid(conn, "t1-alpha", "c=s2-ins"), "0.5", "only partly", "misread-rubric")
    ana.decide(jid(conn, "t1-alpha", "k=c1"), "incorrect", "4.1 million")
    ben.decide(jid(conn, "t1-alpha", "k=c1"), "correct", "4.2 on the page")  # conflict ...
    adjudicate(conn, "cleo", jid(conn, "t1-alpha", "k=c1"), "incorrect", "the 2025 report")
    ana.decide(jid(conn, "t1-beta", "k=c3"), "unknown", "page gone")
    ben.decide(jid(conn, "t1-beta", "k=c3"), "unknown", "agree")
    ana.flag(jid(conn, "t1-beta", "k=c3"), True, "ask the maintainers")
    ana.decide(jid(conn, "t1-beta", "k=c2"), "correct", "")
    ben.decide(jid(conn, "t1-beta", "k=c2"), "incorrect", "")  # stays a conflict
    suite = conn.execute("SELECT id FROM suite").fetchone()[0]
    rows = create_run(conn, [suite], JudgeRun(id="second", model="m2"))
    rid = conn.execute("SELECT id FROM report WHERE ext_id = 't1-alpha'").fetchone()[0]
    write_outcome(
        conn,
        rows[suite],
        rid,
        ReportOutcome(
            "t1-alpha",
            [Judgment(run="second", report="t1-alpha", kind="ins", criterion="s2-ins", value=1)],
            [],
        ),
    )
    finish_run(conn, rows.values(), {"status": "complete"}, [rid])
    rebuild_scores(conn)
    return conn


def test_one_typed_row_per_resolved_subject(labelled: sqlite3.Connection) -> None:
    rows = {(r["report"], r["subject"]): r for r in gold_records(labelled)}
    # Three resolved subjects; beta's c2 is a conflict and not gold.
    assert set(rows) == {("t1-alpha", "c=s2-ins"), ("t1-alpha", "k=c1"), ("t1-beta", "k=c3")}
    summary = gold_summary(labelled)
    assert (summary.resolved, summary.conflicts) == (3, 1)
    s2 = rows[("t1-alpha", "c=s2-ins")]
    assert (
        s2["human_value"],
        s2["human_value_number"],
        s2["judge_value"],
        s2["judge_value_number"],
        s2["judge_agrees"],
    ) == ("0.5", 0.5, "1", 1.0, False)
    assert s2["subject_text"] == "c" and s2["dimension"] == "ins" and s2["scale"] == "ternary"
    # Every judge run on the subject, side by side; the candidate does not count.
    assert [(j["run"], j["value"], j["active"], j["current"]) for j in s2["judges"]] == [
        ("r1", "1", True, True),
        ("second", "1", False, False),
    ]
    assert s2["reasons"] == ["misread-rubric"] and s2["status"] == "single"
    c1 = rows[("t1-alpha", "k=c1")]
    assert (c1["status"], c1["human_value"], c1["adjudicated_by"]) == (
        "adjudicated",
        "incorrect",
        "cleo",
    )
    assert c1["reviewers"] == ["ana", "ben"]
    assert c1["subject_text"] == "Riders took 4.2 million trips in 2025"
    assert c1["human_value_number"] == 0.0
    c3 = rows[("t1-beta", "k=c3")]
    assert (c3["status"], c3["flagged"], c3["flag_note"]) == (
        "unanimous",
        True,
        "ask the maintainers",
    )
    assert {r["gold_version"] for r in rows.values()} == {summary.version}


def test_formats_load_in_pandas_and_datasets(labelled: sqlite3.Connection, tmp_path: Path) -> None:
    import pandas as pd
    from datasets import Dataset

    path = tmp_path / "gold.parquet"
    assert write_parquet(labelled, "gold", path) == 3
    frame = pd.read_parquet(path)
    assert len(frame) == 3 and frame["human_value_number"].dtype == "float64"
    assert frame["flagged"].dtype == bool
    assert sorted(frame["human_value"]) == ["0.5", "incorrect", "unknown"]
    dataset = Dataset.from_parquet(str(path))
    assert dataset.num_rows == 3
    first = dataset[0]
    assert isinstance(first["judges"], list) and "run" in first["judges"][0]
    assert isinstance(first["human_value_number"], float)
    jsonl = io.StringIO()
    write_export(labelled, "gold", jsonl, "jsonl")
    lines = [json.loads(line) for line in jsonl.getvalue().splitlines()]
    assert [line["subject"] for line in lines] == list(frame["subject"])
    table = io.StringIO()
    write_export(labelled, "gold", table, "csv")
    parsed = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert len(parsed) == 3 and json.loads(parsed[0]["judges"])[0]["run"] == "r1"


def test_two_databases_with_the_same_decisions_export_the_same_gold(
    labelled: sqlite3.Connection, tmp_path: Path
) -> None:
    other = connect(tmp_path / "other.db")
    import_bundle(other, tiny_bundle(), "h")
    rebuild_scores(other)
    for name, key in trusted_adjudicators(labelled):  # the same team's adjudicators
        trust_adjudicator(other, name, key, "the team")
    log = io.StringIO()
    write_log(labelled, log)
    merge_events(other, read_events(io.StringIO(log.getvalue()), "log"), "log")
    assert gold_summary(other).version == gold_summary(labelled).version
    mine = [{k: v for k, v in r.items() if k != "judges"} for r in gold_records(labelled)]
    theirs = [{k: v for k, v in r.items() if k != "judges"} for r in gold_records(other)]
    assert mine == theirs  # only the judge runs differ (no "second" run)
    other.close()


def test_the_command_line_writes_gold_as_parquet(
    labelled: sqlite3.Connection, tmp_path: Path
) -> None:
    import pandas as pd
    from click.testing import CliRunner

    from tui.cli.group import gavel

    target = tmp_path / "gold.parquet"
    db = str(tmp_path / "gavel.db")
    done = CliRunner().invoke(
        gavel, ["export", "gold", "--format", "parquet", "-o", str(target), "--db", db]
    )
    assert done.exit_code == 0 and "wrote 3 gold records" in done.stderr
    assert len(pd.read_parquet(target)) == 3
    refused = CliRunner().invoke(gavel, ["export", "gold", "--format", "parquet", "--db", db])
    assert refused.exit_code == 2 and "-o" in refused.stderr
