"""Exports: byte-identical determinism, provenance of every verdict, streaming records."""

from __future__ import annotations

import csv
import inspect
import io
import json
import sqlite3
from pathlib import Path

import pytest

from reviewer.logfile import read_events
from store.db.connection import connect
from store.exports.files import (
    GT_COLUMNS,
    SCORE_COLUMNS,
    VERDICT_COLUMNS,
    gt_expansion_records,
    score_records,
    verdict_records,
    write_export,
)
from store.imports.from_path import build_demo
from store.reviewlog.events import ReviewLog, trust_adjudicator, trusted_adjudicators
from store.reviews.merge import merge_events, write_log
from store.reviews.proposals import accept, propose
from store.scores.cache import update_scores
from tests.score_rows import all_scores
from tui.cli import main
from tui.paths import sample_data_dir

KINDS = ("verdicts", "scores", "gt-expansions")


def jid(conn: sqlite3.Connection, report: str, subject: str) -> int:
    row = conn.execute(
        "SELECT j.id FROM judgment j JOIN report r ON r.id = j.report_id "
        "WHERE r.ext_id = ? AND j.subject = ?",
        (report, subject),
    ).fetchone()
    assert row is not None
    return int(row[0])


def export(conn: sqlite3.Connection, kind: str, fmt: str = "jsonl") -> bytes:
    out = io.StringIO()
    write_export(conn, kind, out, fmt)
    return out.getvalue().encode("utf-8")


def review(conn: sqlite3.Connection) -> None:
    """A few decisions of every provenance, a rating and an accepted expansion."""
    ana, ben, cleo = (ReviewLog(conn, n) for n in ("ana", "ben", "cleo"))
    touched = [
        ana.decide(jid(conn, "t01-atlas-dr", "k=c7"), "correct", "opening deposit", "other"),
        ben.decide(jid(conn, "t01-atlas-dr", "k=c7"), "correct", "same"),
        ana.decide(jid(conn, "t05-kestrel", "k=c2"), "incorrect", "in-state only"),
        ben.decide(jid(conn, "t05-kestrel", "k=c2"), "correct", "census line"),
        ana.decide(jid(conn, "t04-kestrel", "c=s8-rat"), "0", "over budget"),
        ben.decide(jid(conn, "t04-kestrel", "c=s8-rat"), "0.5", "weak"),
        cleo.decide(jid(conn, "t04-kestrel", "c=s8-rat"), "0", "by its prices", adjudicate=True),
        ana.decide(jid(conn, "t03-atlas-dr", "c=s8-ins"), "1", "four points"),
        ana.rate(
            int(conn.execute("SELECT id FROM report WHERE ext_id = 't01-kestrel'").fetchone()[0]),
            3,
            "fine",
        ),
    ]
    update_scores(conn, [r.report_id or 0 for r in touched])
    made = propose(
        conn,
        "ana",
        1,
        None,
        "cascade",
        "new_rubric",
        {"subtask": "s3", "dimension": "ins", "text": "Says if the rate is fixed"},
        None,
        "users compare fixed and variable rates",
    )
    accept(conn, "maya", made.proposal.uuid, "yes")


@pytest.fixture
def reviewed(sample_db: Path) -> sqlite3.Connection:
    conn = connect(sample_db)
    review(conn)
    return conn


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_the_same_database_exports_the_same_bytes(
    reviewed: sqlite3.Connection, kind: str, fmt: str
) -> None:
    first = export(reviewed, kind, fmt)
    assert first and first == export(reviewed, kind, fmt)


def test_two_databases_built_the_same_way_export_the_same_bytes(
    reviewed: sqlite3.Connection, tmp_path: Path
) -> None:
    # The second database: the sample data imported from scratch, then the first one's log.
    other = connect(tmp_path / "other.db")
    build_demo(other, sample_data_dir())
    for name, key in trusted_adjudicators(reviewed):  # the same team's adjudicators
        trust_adjudicator(other, name, key, "the team")
    log = io.StringIO()
    write_log(reviewed, log)
    merge_events(other, read_events(io.StringIO(log.getvalue()), "log"), "log")
    for kind in KINDS:
        for fmt in ("jsonl", "csv"):
            assert export(other, kind, fmt) == export(reviewed, kind, fmt), (kind, fmt)
    other.close()


def test_verdict_provenance(reviewed: sqlite3.Connection) -> None:
    records = {
        f"{r['report']}/{r['run']}/{r['kind']}/{r['subject']}": r for r in verdict_records(reviewed)
    }
    assert len(records) == reviewed.execute("SELECT count(*) FROM judgment").fetchone()[0]
    prefix = "judge-2026-11-05"
    # Each row names its subject portably, without the run: decisions are on subjects.
    assert (
        records[f"t01-atlas-dr/{prefix}/claim/k=c7"]["target"]
        == "s:dailyreport-sample-2026-11/t01-atlas-dr/claim/k=c7"
    )

    unanimous = records[f"t01-atlas-dr/{prefix}/claim/k=c7"]
    assert (
        unanimous["provenance"],
        unanimous["judge_value"],
        unanimous["effective_value"],
        unanimous["decided_by"],
    ) == ("unanimous", "incorrect", "correct", "ana;ben")
    assert [d["reviewer"] for d in unanimous["decisions"]] == ["ana", "ben"]

    conflict = records[f"t05-kestrel/{prefix}/claim/k=c2"]
    assert (conflict["provenance"], conflict["effective_value"], conflict["decided_by"]) == (
        "conflict",
        "correct",
        None,
    )  # still the judge's value
    assert {(d["reviewer"], d["value"]) for d in conflict["decisions"]} == {
        ("ana", "incorrect"),
        ("ben", "correct"),
    }

    adjudicated = records[f"t04-kestrel/{prefix}/rat/c=s8-rat"]
    assert (
        adjudicated["provenance"],
        adjudicated["effective_value"],
        adjudicated["decided_by"],
        adjudicated["rationale"].split("\n")[0],
    ) == ("adjudicated", "0", "cleo", "by its prices")
    assert [d["action"] for d in adjudicated["decisions"]] == ["override", "override", "adjudicate"]

    single = records[f"t03-atlas-dr/{prefix}/ins/c=s8-ins"]
    assert (
        single["provenance"],
        single["judge_value"],
        single["effective_value"],
        single["decided_by"],
        single["rationale"],
        single["dimension"],
    ) == ("single", "0", "1", "ana", "four points", "ins")
    assert single["decided_at"] is not None and single["framework"] == "cascade"

    judge_only = records[f"t01-kestrel/{prefix}/claim/k=c1"]
    assert (judge_only["provenance"], judge_only["decisions"], judge_only["rationale"]) == (
        "judge-only",
        [],
        None,
    )
    assert judge_only["effective_value"] == judge_only["judge_value"]
    counts: dict[str, int] = {}
    for record in records.values():
        counts[record["provenance"]] = counts.get(record["provenance"], 0) + 1
    assert {k: v for k, v in counts.items() if k != "judge-only"} == {
        "unanimous": 1,
        "conflict": 1,
        "adjudicated": 1,
        "single": 1,
    }


def test_score_records_pair_both_variants(reviewed: sqlite3.Connection) -> None:
    rows = list(score_records(reviewed))
    n_scores = reviewed.execute(f"SELECT count(*) FROM {all_scores(reviewed)}").fetchone()[0]
    assert 2 * len(rows) == n_scores  # every score, both variants
    t04 = next(r for r in rows if r["report"] == "t04-kestrel" and r["metric"] == "Rat")
    # rat of s8 overturned from 1 to 0 by adjudication
    assert t04["judge"] is not None and t04["adjudicated"] is not None
    assert t04["delta"] == pytest.approx(t04["adjudicated"] - t04["judge"]) and t04["delta"] < 0
    systems = [r for r in rows if r["scope"] == "system"]
    daily = {r["system"] for r in systems if r["suite"] == "dailyreport-sample-2026-11"}
    assert daily == {"atlas-dr", "kestrel", "juniper"}
    assert rows.index(systems[0]) > max(i for i, r in enumerate(rows) if r["scope"] == "report")


def test_gold_diff_header_and_items(reviewed: sqlite3.Connection) -> None:
    header, item = list(gt_expansion_records(reviewed))
    assert (
        header["type"],
        header["format"],
        header["items"],
        header["new_items"],
        header["alias_or_evidence"],
    ) == ("gold_diff", "gavel-gold-diff", 1, 1, 0)
    assert header["gt_version"].startswith("2026-11+gt.1.")
    assert item["gt_version"] == header["gt_version"]
    assert item["item"] == {
        "subtask": "s3",
        "dimension": "ins",
        "text": "Says if the rate is fixed",
        "explanation": "",
    }
    assert (item["effect"], item["provenance"]["accepted_by"]) == ("new_item", "maya")


def test_exports_are_generators_not_lists(reviewed: sqlite3.Connection) -> None:
    for make in (verdict_records, score_records, gt_expansion_records):
        stream = make(reviewed)
        assert inspect.isgenerator(stream)
        assert isinstance(next(stream), dict)
        stream.close()


def test_csv_columns_and_command_line(
    reviewed: sqlite3.Connection, sample_db: Path, tmp_path: Path
) -> None:
    for kind, columns in (
        ("verdicts", VERDICT_COLUMNS),
        ("scores", SCORE_COLUMNS),
        ("gt-expansions", GT_COLUMNS),
    ):
        rows = list(csv.reader(io.StringIO(export(reviewed, kind, "csv").decode())))
        assert tuple(rows[0]) == columns
        assert all(len(r) == len(columns) for r in rows)
    target = tmp_path / "verdicts.jsonl"
    reviewed.close()
    assert main(["export", "verdicts", "--db", str(sample_db), "-o", str(target)]) == 0
    again = tmp_path / "again.jsonl"
    assert main(["export", "verdicts", "--db", str(sample_db), "-o", str(again)]) == 0
    assert target.read_bytes() == again.read_bytes()
    first = json.loads(target.read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == set(VERDICT_COLUMNS)
    assert not list(tmp_path.glob(".verdicts.jsonl.*"))  # no temporary file left behind
