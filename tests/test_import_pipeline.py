"""A pipelined import (read in a forked child, written here) stores exactly what the serial
import stores, fails with the same error on bad input, and survives a child that fails."""

from __future__ import annotations

import os
import pickle
import sqlite3
from pathlib import Path

import pytest

import store.import_pipeline as pipeline
import store.importer as importer
from reviewer.errors import InputError
from reviewer.formats.native import bundle_records, iter_records
from store.db import connect
from store.forked import spare_core
from store.importer import import_records
from tests.builders import tiny_bundle
from tests.test_import_subjects import _repeat_next_to

pytestmark = pytest.mark.skipif(not spare_core(), reason="the pipeline needs fork and 2 cores")

STAMPED = {"suite": "imported_at"}
"""The one column the clock writes."""


def _import(folder: Path, db: Path, pipelined: bool) -> None:
    conn = connect(db)
    suite, records = iter_records(folder)
    import_records(conn, suite, records, "h", load=pipeline.load if pipelined else None)
    conn.close()


def _contents(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows, the suite's import time left out (it is the clock's)."""
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%fts_%'")]
        out = {}
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            kept = [c for c in columns if STAMPED.get(table) != c]
            out[table] = conn.execute(
                f"SELECT {', '.join(kept)} FROM {table} ORDER BY {kept[0]}").fetchall()
        word = conn.execute("SELECT fact FROM claim ORDER BY id").fetchone()[0].split()[0]
        out["search"] = conn.execute(
            "SELECT rowid FROM claim_fts WHERE claim_fts MATCH ? ORDER BY rowid",
            (f'"{word}"',)).fetchall()
        return out


def test_a_pipelined_import_stores_what_the_serial_import_stores(
        synthetic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Small batches: many messages through the pipe, a report's verdicts across batches.
    monkeypatch.setattr(importer, "BATCH_ROWS", 97)
    _import(synthetic, tmp_path / "serial.db", pipelined=False)
    reader = tmp_path / "reader.pid"
    real = pipeline._read

    def counted(*args: object) -> None:
        reader.write_text(str(os.getpid()))     # (a list would be the child's own copy)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "_read", counted)
    _import(synthetic, tmp_path / "pipelined.db", pipelined=True)
    assert reader.exists() and int(reader.read_text()) != os.getpid(), \
        "the reading did not run in a child"
    serial, pipelined = _contents(tmp_path / "serial.db"), _contents(tmp_path / "pipelined.db")
    assert serial["judgment"] and serial["subject"] and serial["suspicion"]
    assert serial["search"]
    assert pipelined == serial


def test_bad_input_fails_the_same_way_and_imports_nothing(synthetic: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for path in synthetic.iterdir():
        text = path.read_text(encoding="utf-8")
        if path.name == "judgments.jsonl":
            lines = text.splitlines(keepends=True)
            lines[40] = lines[40].replace('"kind":', '"kinds":', 1)
            text = "".join(lines)
        (broken / path.name).write_text(text, encoding="utf-8")
    errors = []
    for pipelined in (False, True):
        db = tmp_path / f"{pipelined}.db"
        with pytest.raises(InputError) as caught:
            _import(broken, db, pipelined)
        errors.append(str(caught.value))
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM suite").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM judgment").fetchone()[0] == 0
    assert errors[0] == errors[1]
    assert "judgments.jsonl:41" in errors[1]


def test_a_repeated_verdict_found_by_the_writer_names_its_line(
        conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    """The repeat shows when the writing process inserts the child's batch: it names the
    line from the places the child sent along."""
    monkeypatch.setattr(importer, "BATCH_ROWS", 5)
    bundle = tiny_bundle()
    line = _repeat_next_to(bundle, 2)
    with pytest.raises(InputError) as caught:
        import_records(conn, bundle.suite, bundle_records(bundle), "h", load=pipeline.load)
    assert (caught.value.file, caught.value.line, caught.value.field) == (
        "judgments.jsonl", line, "kind")
    assert conn.execute("SELECT count(*) FROM judgment").fetchone()[0] == 0


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_a_child_that_fails_is_read_again_here(
        synthetic: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Half-way through, the child raises something that is not bad input, or dies: its rows
    are rolled back and the reading is done again in this process, to the same result."""
    monkeypatch.setattr(importer, "BATCH_ROWS", 97)
    _import(synthetic, tmp_path / "serial.db", pipelined=False)
    parent = os.getpid()
    real = importer.Loader.add
    seen = [0]

    def add(self: importer.Loader, *args: object) -> None:
        seen[0] += 1
        if os.getpid() != parent and seen[0] == 500:
            if how == "dies":
                os._exit(9)
            raise RuntimeError("not bad input")
        real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importer.Loader, "add", add)
    _import(synthetic, tmp_path / "pipelined.db", pipelined=True)
    assert _contents(tmp_path / "pipelined.db") == _contents(tmp_path / "serial.db")


def test_an_input_error_crosses_a_pipe_whole() -> None:
    from reviewer.formats.jsonl import NotJSON

    error = InputError(Path("judgments.jsonl"), "no such report", line=7, field="report")
    back = pickle.loads(pickle.dumps(error))
    assert (back.file, back.message, back.line, back.field) == (
        "judgments.jsonl", "no such report", 7, "report")
    assert str(back) == str(error)
    assert type(pickle.loads(pickle.dumps(NotJSON("a.jsonl", "not JSON", line=2)))) is NotJSON


def test_only_large_bundles_are_pipelined_unless_asked(
        synthetic: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pipeline.ENVIRONMENT, raising=False)
    assert not pipeline.worth_pipelining(synthetic)
    monkeypatch.setattr(pipeline, "PIPELINE_FROM_BYTES", 1)
    assert pipeline.worth_pipelining(synthetic)
    monkeypatch.setenv(pipeline.ENVIRONMENT, "never")
    assert not pipeline.worth_pipelining(synthetic)
    monkeypatch.setenv(pipeline.ENVIRONMENT, "always")
    monkeypatch.setattr(pipeline, "PIPELINE_FROM_BYTES", 1 << 40)
    assert pipeline.worth_pipelining(synthetic)
