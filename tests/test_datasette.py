"""gavel.db as Datasette and sqlite-utils read it: the canned queries run on a real database
(the sample data, reviewed) and give what the workstation and the gold export give."""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from store.db.connection import connect
from store.db.datasette import QUERIES, SEARCH, main, metadata
from store.exports.gold import gold_records
from store.reviewlog.conflicts import adjudicate
from store.reviewlog.events import ReviewLog
from store.views.screens import queue_rows
from tests.oracles import LazyModule

sqlite_utils = LazyModule("sqlite_utils")  # pandas comes with it: not at collection


def _verdicts(conn: sqlite3.Connection, kind: str, n: int) -> list[tuple[int, str]]:
    """The first ``n`` verdicts in force of a kind with a value: (id, value)."""
    return [
        (int(jid), str(value))
        for jid, value in conn.execute(
            "SELECT id, value FROM judgment WHERE current = 1 AND kind = ? "
            "AND value IS NOT NULL ORDER BY id LIMIT ?",
            (kind, n),
        )
    ]


def _other(value: str, scale: tuple[str, ...]) -> str:
    return next(v for v in scale if v != value)


@pytest.fixture
def reviewed(sample_db: Path) -> Iterator[Path]:
    """The sample data with a little of everything a review leaves: overrides with reasons,
    confirmations, a unanimous override, an adjudicated conflict, an open conflict, a flag
    with a note and overall ratings."""
    conn = connect(sample_db)
    ana, ben = ReviewLog(conn, "ana"), ReviewLog(conn, "ben")
    ins = _verdicts(conn, "ins", 4)
    claims = _verdicts(conn, "claim", 5)
    three = ("0", "0.5", "1")
    claim_scale = ("correct", "incorrect", "unknown")
    ana.decide(ins[0][0], _other(ins[0][1], three), "only partly", "misread-rubric")
    ana.decide(ins[1][0], ins[1][1], "")  # a confirmation
    ana.decide(ins[2][0], _other(ins[2][1], three), "not covered")
    ben.decide(ins[2][0], _other(ins[2][1], three), "agree")  # unanimous override
    first, second = _other(claims[0][1], claim_scale), claims[0][1]
    ana.decide(claims[0][0], first, "4.1 million")
    ben.decide(claims[0][0], second, "4.2 on the page")
    adjudicate(conn, "cleo", claims[0][0], first, "the 2025 report")
    ana.decide(claims[1][0], _other(claims[1][1], claim_scale), "")
    ben.decide(claims[1][0], claims[1][1], "")  # stays a conflict
    ana.decide(claims[2][0], claims[2][1], "checked the source")
    ana.flag(claims[2][0], True, "ask the maintainers")
    ben.flag(claims[3][0], True, "odd citation")  # flagged, undecided
    rid = conn.execute("SELECT report_id FROM judgment WHERE id = ?", (ins[0][0],)).fetchone()[0]
    ana.rate(rid, 3, "overall")
    conn.close()
    yield sample_db


def _rows(db: sqlite_utils.Database, name: str) -> list[dict[str, Any]]:
    return list(db.query(QUERIES[name]["sql"]))


def test_every_canned_query_runs_on_a_reviewed_database(reviewed: Path) -> None:
    db = sqlite_utils.Database(reviewed)
    for name, query in QUERIES.items():
        assert query["title"] and query["description"], name
        assert _rows(db, name), name  # every query finds rows on the reviewed sample


def test_the_review_queue_counts_as_the_workstation_does(reviewed: Path) -> None:
    conn = sqlite3.connect(reviewed)
    expected = {
        row.report_id: (
            row.status,
            row.total,
            row.decided,
            row.differs,
            row.conflicts,
            row.flags,
            row.suspects,
        )
        for row in queue_rows(conn)
    }
    ratings = {row.report_id: row.rated for row in queue_rows(conn) if row.rated}
    rows = _rows(sqlite_utils.Database(reviewed), "review_queue")
    got = {
        r["report_id"]: (
            r["status"],
            r["verdicts"],
            r["decided"],
            r["judge_overruled"],
            r["conflicts"],
            r["flags"],
            r["suspicious_undecided"],
        )
        for r in rows
    }
    assert got == expected
    assert len(rows) == len(got)  # one row per report
    assert (
        {r["report_id"]: r["ratings"] for r in rows if r["ratings"]}
        == ratings
        == {next(iter(ratings)): "ana:3"}
    )
    # The review so far: six verdicts decided in force, in five reports at most.
    assert sum(r["decided"] for r in rows) == 6
    assert sum(r["conflicts"] for r in rows) == 1
    assert sum(r["judge_overruled"] for r in rows) == 3
    assert sum(r["flags"] for r in rows) == 2
    # Unfinished reports first, and among them the most suspicious first.
    suspicion = [r["suspicious_undecided"] for r in rows if r["status"] != "done"]
    assert suspicion == sorted(suspicion, reverse=True) and suspicion[0] > 0


def test_the_gold_labels_are_the_gold_export_s(reviewed: Path) -> None:
    conn = sqlite3.connect(reviewed)
    fields = ("target", "suite", "task", "system", "report", "kind", "subject", "status")
    expected = [
        (
            *(record[f] for f in fields),
            record["human_value"],
            record["judge_value"],
            record["judge_agrees"],
            record["flagged"],
            record["flag_note"],
        )
        for record in gold_records(conn)
    ]
    rows = _rows(sqlite_utils.Database(reviewed), "gold_labels")
    got = [
        (
            *(r[f] for f in fields),
            r["human_value"],
            r["judge_value"],
            None if r["judge_agrees"] is None else bool(r["judge_agrees"]),
            bool(r["flagged"]),
            r["flag_note"],
        )
        for r in rows
    ]
    assert got == expected
    # Five labels: two overrides (one unanimous), a confirmation, a confirmation with a flag,
    # and the adjudicated conflict; the open conflict is not gold.
    assert len(got) == 5
    assert {r["status"] for r in rows} == {"single", "unanimous", "adjudicated"}
    assert [r["flag_note"] for r in rows if r["flagged"]] == ["ask the maintainers"]


def test_the_disagreements_are_the_labels_that_overrule_the_judge(reviewed: Path) -> None:
    conn = sqlite3.connect(reviewed)
    overruled = {
        record["target"]: (record["judge_value"], record["human_value"])
        for record in gold_records(conn)
        if record["judge_agrees"] is False
    }
    rows = _rows(sqlite_utils.Database(reviewed), "judge_vs_human")
    assert {r["target"]: (r["judge_value"], r["human_value"]) for r in rows} == overruled
    assert len(rows) == len(overruled) == 3
    by_status = {r["status"]: r for r in rows}
    assert set(by_status) == {"single", "unanimous", "adjudicated"}
    single = by_status["single"]
    assert (single["decided_by"], single["rationale"], single["reason"]) == (
        "ana",
        "only partly",
        "misread-rubric",
    )
    assert single["what"] and single["judge_explanation"] is not None
    assert by_status["adjudicated"]["decided_by"] == "cleo"
    assert by_status["unanimous"]["reviewers"] == 2


def test_a_new_database_s_search_indexes_are_found_by_sqlite_utils(sample_db: Path) -> None:
    db = sqlite_utils.Database(sample_db)
    for table, fts in SEARCH.items():
        assert db.table(table).detect_fts() == fts
    # sqlite-utils' own search reads the same index the workstation's search does.
    from store.sqlite.fts import search_reports

    conn = sqlite3.connect(sample_db)
    found = {int(row["id"]) for row in db.table("report").search("Fennick", columns=["id"])}
    assert found and found == search_reports(conn, "Fennick")


def test_the_metadata_is_named_for_the_database_and_describes_it(
    reviewed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main([str(Path("runs") / "team.db")]) == 0
    written = json.loads(out.getvalue())
    assert written == json.loads(json.dumps(metadata("team")))
    database = written["databases"]["team"]
    assert set(database["queries"]) == {"review_queue", "judge_vs_human", "gold_labels"}
    db = sqlite_utils.Database(reviewed)
    tables = set(db.table_names())
    for name, settings in database["tables"].items():
        assert name in tables, name  # every table it describes exists
        if "label_column" in settings:
            assert settings["label_column"] in db.table(name).columns_dict, name
        if "fts_table" in settings:
            assert settings["fts_table"] in tables and settings["fts_pk"] == "id", name
