"""Damaged, read-only and size-limited database files are met with one line that names the file
and what to do, and an exit code other than 0 — never a traceback, and nothing acknowledged
that was not stored. Commands that only read work on a read-only database."""

from __future__ import annotations

import random
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import store.db.connection as connection
from store.db.connection import EXIT_DAMAGED, EXIT_UNWRITABLE
from store.sqlite.tx import transaction
from tui.cli import main

ROOT = Path(__file__).resolve().parent.parent


def events(path: Path) -> int:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM review_event").fetchone()[0])
    finally:
        conn.close()


def first_claim(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(
            conn.execute("SELECT id FROM judgment WHERE kind = 'claim' LIMIT 1").fetchone()[0]
        )
    finally:
        conn.close()


def checkpointed(source: Path, target: Path) -> Path:
    conn = sqlite3.connect(source)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    shutil.copy(source, target)
    return target


COMMANDS = (
    ["scores"],
    ["verdicts", "--report", "t01-atlas-dr"],
    ["conflicts"],
    ["decide", "CLAIM", "incorrect", "--rationale", "x"],
)


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_a_damaged_database_gets_one_line_and_a_non_zero_exit(
    damage: str, sample_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claim = first_claim(sample_db)
    path = checkpointed(sample_db, tmp_path / "gavel.db")
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 3]
    else:  # bytes flipped across the schema and the first tables
        rng = random.Random(3)
        for _ in range(300):
            data[rng.randrange(4096, len(data) // 2)] ^= 0xFF
    path.write_bytes(bytes(data))
    for command in COMMANDS:
        argv = ["--db", str(path), *(claim if a == "CLAIM" else a for a in command)]
        assert main(argv) == EXIT_DAMAGED, command
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert err[0].startswith(f"gavel: {path}: the database is damaged")
        assert "docs/backup.md" in err[0] and "PRAGMA integrity_check" in err[0]


def test_read_only_commands_work_on_a_read_only_database_and_writes_say_why_not(
    sample_db: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    claim = first_claim(sample_db)
    path = checkpointed(sample_db, tmp_path / "gavel.db")
    before = events(path)
    # As this process may not write it (a read-only disk or someone else's file; the test
    # runs as a user who may write anything, so it is told).
    monkeypatch.setattr(connection, "writable", lambda p: False)
    assert main(["--db", str(path), "scores"]) == 0
    assert main(["--db", str(path), "verdicts", "--report", "t01-atlas-dr"]) == 0
    capsys.readouterr()
    assert main(["--db", str(path), "decide", claim, "incorrect", "--rationale", "x"]) == (
        EXIT_UNWRITABLE
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"gavel: {path}: the database is read-only")
    assert "nothing was changed" in err[0]
    assert events(path) == before


def test_a_writable_check_asks_for_the_file_and_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "gavel.db"
    assert connection.writable(path)  # not there yet: connect makes it
    path.write_bytes(b"")
    denied: set[Path] = set()
    monkeypatch.setattr(connection.os, "access", lambda p, mode: Path(p) not in denied)
    assert connection.writable(path)
    denied.add(tmp_path)  # the folder: the write-ahead log cannot be made
    assert not connection.writable(path)
    for side in ("gavel.db-wal", "gavel.db-shm"):
        (tmp_path / side).write_bytes(b"")
    assert connection.writable(path)  # already there, writable
    denied.add(path)
    assert not connection.writable(path)


def test_a_file_size_limit_is_one_line_and_nothing_is_acknowledged(tmp_path: Path) -> None:
    limit = 300_000

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui.cli",
            "--db",
            str(tmp_path / "gavel.db"),
            "import",
            str(ROOT / "sample_data" / "dailyreport"),
        ],
        cwd=ROOT,
        preexec_fn=small_files,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_UNWRITABLE, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "the disk refused a write" in lines[0] and "ulimit -f" in lines[0]
    assert "Traceback" not in done.stderr and "cannot rollback" not in done.stderr
    assert "imported" not in done.stdout


def test_an_error_that_ended_the_transaction_inside_sqlite_is_the_one_raised(
    tmp_path: Path,
) -> None:
    conn = connection.connect(tmp_path / "gavel.db")
    with pytest.raises(ValueError, match="the real error"), transaction(conn):
        conn.execute("ROLLBACK")  # as SQLite does itself on a full disk
        raise ValueError("the real error")
    assert not conn.in_transaction
    conn.close()
