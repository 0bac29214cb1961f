"""Analytics-ready exports: every export as typed Parquet from the command line, the Hugging
Face dataset folder (loads with `datasets`, its card names every column's role), and the DuckDB
analyses of docs/analytics.md run as written."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from pathlib import Path

import pytest

from store.db.connection import connect
from store.exports.files import EXPORTS, write_export
from store.exports.hfdataset import COLUMNS, CONFIGS, DATA_FILE
from tests.test_exports import review
from tui.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "analytics.md"


@pytest.fixture
def reviewed(sample_db: Path) -> Path:
    conn = connect(sample_db)
    review(conn)
    conn.close()
    return sample_db


def csv_rows(conn: sqlite3.Connection, kind: str) -> list[dict[str, str]]:
    out = io.StringIO()
    write_export(conn, kind, out, "csv")
    return list(csv.DictReader(io.StringIO(out.getvalue())))


@pytest.mark.parametrize("kind", list(EXPORTS))
def test_every_export_writes_typed_parquet(reviewed: Path, tmp_path: Path, kind: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = tmp_path / f"{kind}.parquet"
    assert (
        main(["--db", str(reviewed), "export", kind, "--format", "parquet", "-o", str(target)]) == 0
    )
    table = pq.read_table(target)
    conn = connect(reviewed)
    expected = csv_rows(conn, kind)
    conn.close()
    assert table.column_names == list(EXPORTS[kind][2])
    assert table.num_rows == len(expected) > 0
    types = dict(zip(table.column_names, table.schema.types, strict=True))
    if kind == "scores":
        assert types["judge"] == pa.float64() and types["n_judge"] == pa.int64()
        assert types["part"] == pa.bool_()
    if kind == "verdicts":
        assert types["judgment"] == pa.int64() and pa.types.is_list(types["decisions"])
    if kind == "gt-expansions":
        assert pa.types.is_list(types["span"])
        assert json.loads(table.column("item")[0].as_py())  # the item, as JSON text
    rows = table.to_pylist()
    for got, want in zip(rows, expected, strict=True):  # same rows, same order
        for column in ("target", "suite", "report", "metric", "task"):
            if column in want:
                assert (got[column] or "") == want[column]


def test_an_empty_export_keeps_its_columns(sample_db: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    target = tmp_path / "gt.parquet"
    assert (
        main(
            [
                "--db",
                str(sample_db),
                "export",
                "gt-expansions",
                "--format",
                "parquet",
                "-o",
                str(target),
            ]
        )
        == 0
    )
    table = pq.read_table(target)
    assert table.num_rows == 0 and table.column_names == list(EXPORTS["gt-expansions"][2])


def test_the_dataset_folder_loads_and_its_card_names_every_column(
    reviewed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    from datasets import Dataset, load_dataset

    folder = tmp_path / "release"
    assert main(["--db", str(reviewed), "export", "--to-hub-dataset", str(folder)]) == 0
    card = (folder / "README.md").read_text(encoding="utf-8")
    for kind, config in CONFIGS.items():
        assert (folder / config / DATA_FILE).is_file()
        assert f"config_name: {config}" in card
        for column in EXPORTS[kind][2]:
            role = COLUMNS[kind][column][0]
            assert f"| `{column}` | {role} |" in card
    for role in ("judge-only", "human", "adjudicated", "provenance"):
        assert f"**{role}**" in card
    assert "gold version: `gold-" in card and "dailyreport-sample-2026-11" in card

    gold = load_dataset(str(folder), "gold")["train"]
    conn = connect(reviewed)
    n_gold = len(csv_rows(conn, "gold"))
    conn.close()
    assert gold.num_rows == n_gold and "human_value" in gold.column_names
    plain = load_dataset("parquet", data_dir=str(folder / "verdicts"))["train"]
    assert "effective_value" in plain.column_names and plain.num_rows > n_gold
    scores = Dataset.from_parquet(str(folder / "scores" / DATA_FILE))
    assert {"judge", "adjudicated", "delta"} <= set(scores.column_names)

    # Deterministic: the same database writes the same bytes.
    again = tmp_path / "again"
    assert main(["--db", str(reviewed), "export", "--to-hub-dataset", str(again)]) == 0
    for path in folder.rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (again / path.relative_to(folder)).read_bytes(), path


def test_an_empty_configuration_is_left_out_of_the_folder(sample_db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "release"
    assert main(["--db", str(sample_db), "export", "--to-hub-dataset", str(folder)]) == 0
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert not (folder / "gt_expansions").exists()
    assert "config_name: gt_expansions" not in card and "0 (not included" in card
    assert (
        main(["--db", str(sample_db), "export", "--to-hub-dataset", str(folder), "gold"]) == 2
    )  # one or the other


def analyses() -> dict[str, str]:
    """The SQL blocks of docs/analytics.md, by their ``-- analysis: NAME`` line."""
    text = DOC.read_text(encoding="utf-8")
    found = {}
    for block in re.findall(r"```sql\n(.*?)```", text, flags=re.S):
        name = re.search(r"-- analysis: ([\w-]+)", block)
        assert name is not None, block
        found[name.group(1)] = block
    return found


def run_analysis(name: str, folder: Path, db: Path) -> list[tuple[object, ...]]:
    """Run one documented analysis as written, on this export and database."""
    import duckdb

    sql = analyses()[name].replace("'release/", f"'{folder}/").replace("'gavel.db'", f"'{db}'")
    statements = [
        s
        for s in sql.split(";")
        if any(line.strip() and not line.strip().startswith("--") for line in s.splitlines())
    ]
    con = duckdb.connect()
    try:
        for statement in statements[:-1]:
            con.execute(statement)
        return list(con.execute(statements[-1]).fetchall())
    finally:
        con.close()


@pytest.fixture
def release(reviewed: Path, tmp_path: Path) -> Path:
    pytest.importorskip("duckdb", reason="duckdb is not installed")
    folder = tmp_path / "release"
    assert main(["--db", str(reviewed), "export", "--to-hub-dataset", str(folder)]) == 0
    return folder


def test_the_documented_duckdb_analyses_of_the_parquet_run(reviewed: Path, release: Path) -> None:
    assert {"judge-accuracy", "system-deltas", "override-reasons"} <= set(analyses())
    conn = connect(reviewed)
    gold = [json.loads(line) for line in _jsonl(conn, "gold")]
    scores = [json.loads(line) for line in _jsonl(conn, "scores")]
    conn.close()
    accuracy = run_analysis("judge-accuracy", release, reviewed)
    judged = [g for g in gold if g["judge_agrees"] is not None]
    assert sum(row[2] for row in accuracy) == len(judged) > 0
    assert {(row[0], row[1]) for row in accuracy} == {(g["framework"], g["kind"]) for g in judged}
    deltas = run_analysis("system-deltas", release, reviewed)
    moved = [s for s in scores if s["scope"] == "system" and not s["part"] and s["delta"]]
    assert len(deltas) == min(20, len(moved)) > 0
    assert abs(deltas[0][6]) == pytest.approx(round(max(abs(s["delta"]) for s in moved), 4))


def test_the_documented_duckdb_analysis_of_the_sqlite_file_runs(
    reviewed: Path, release: Path
) -> None:
    import duckdb

    conn = connect(reviewed)
    overrides = conn.execute(
        "SELECT count(*) FROM review_event WHERE action = 'override'"
    ).fetchone()[0]
    # The query itself, on the same data through SQLite (its dialect covers this one), so a
    # machine without the extension still checks what the document says.
    select = analyses()["override-reasons"].split("READ_ONLY);")[1].replace("g.", "")
    assert sum(row[1] for row in conn.execute(select)) == overrides > 0
    conn.close()
    try:
        reasons = run_analysis("override-reasons", release, reviewed)
    except duckdb.Error as exc:  # the extension is a download away; often offline
        pytest.skip(
            f"DuckDB's sqlite extension cannot be installed here ({str(exc)[:100]}…); "
            "the query was checked through SQLite"
        )
    assert sum(row[1] for row in reasons) == overrides


def _jsonl(conn: sqlite3.Connection, kind: str) -> list[str]:
    out = io.StringIO()
    write_export(conn, kind, out, "jsonl")
    return out.getvalue().splitlines()


def test_the_review_log_exports_as_parquet_too(reviewed: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from store.hub.server import EVENT_FIELDS

    target = tmp_path / "log.parquet"
    assert (
        main(["--db", str(reviewed), "log", "export", "--format", "parquet", "-o", str(target)])
        == 0
    )
    table = pq.read_table(target)
    conn = connect(reviewed)
    events = conn.execute("SELECT uuid, action FROM review_event ORDER BY seq").fetchall()
    conn.close()
    assert table.column_names == list(EVENT_FIELDS)
    assert [(r["uuid"], r["action"]) for r in table.to_pylist()] == events
