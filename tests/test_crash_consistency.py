"""A process killed (SIGKILL: no cleanup, no atexit) at each point of a write leaves a database
whose decisions are those it reported committed and whose scores equal a full recompute; a
command that waits on another process's lock gives up with a message naming the holder.

Each crash runs the real command line in a subprocess with one function replaced by a
``kill -9`` of the process itself, so the kill lands exactly between two steps.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from store.db.connection import connect
from store.imports.from_path import import_path
from store.scores.cache import cached, compute_all, ensure_scores
from tests.conftest import PROJECT
from tui.paths import sample_data_dir

KILL_AT = """
import importlib, os, signal, sys
module, _, attr = sys.argv[1].partition(":")
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
setattr(importlib.import_module(module), attr, die)
for setting in filter(None, os.environ.get("KILL_TEST_SET", "").split(",")):
    name, _, value = setting.partition("=")
    module, _, attr = name.partition(":")
    setattr(importlib.import_module(module), attr, int(value))
from tui.cli import main
sys.argv = ["gavel", *sys.argv[2:]]
main()
"""


def gavel(
    *args: str | Path,
    kill_at: str | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``gavel ARGS`` in a fresh interpreter; with ``kill_at`` ("module:function") the process
    kills itself with SIGKILL when that function is called."""
    command = (
        [sys.executable, "-c", KILL_AT, kill_at] if kill_at else [sys.executable, "-m", "tui.cli"]
    )
    return subprocess.run(
        [*command, *map(str, args)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def killed(result: subprocess.CompletedProcess[str]) -> bool:
    return result.returncode == -9


def events(db: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT uuid, action FROM review_event ORDER BY seq").fetchall()
    finally:
        conn.close()


def assert_consistent(db: Path) -> sqlite3.Connection:
    """Open as the next command would (repairing what a crash recorded as behind) and check
    that the score cache equals a recompute from scratch."""
    conn = connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    ensure_scores(conn)
    full, cache = compute_all(conn), cached(conn)
    assert cache.reports == full.reports
    assert cache.systems == full.systems
    return conn


def a_claim(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(
            conn.execute(
                """SELECT j.id FROM judgment j LEFT JOIN decision d ON d.subject_id = j.subject_id
               WHERE j.kind = 'claim' AND j.value = 'correct' AND j.current = 1
                 AND d.subject_id IS NULL ORDER BY j.id LIMIT 1"""
            ).fetchone()[0]
        )
    finally:
        conn.close()


def test_a_decision_killed_before_its_scores_is_not_committed_without_them(sample_db: Path) -> None:
    judgment = a_claim(sample_db)
    before = events(sample_db)
    result = gavel(
        "decide",
        judgment,
        "incorrect",
        "--rationale",
        "r",
        "--db",
        sample_db,
        kill_at="store.reviews.decisions:update_scores",
    )
    assert killed(result) and "committed" not in result.stdout
    # Never reported, and not half-stored: the event and its scores commit together.
    assert events(sample_db) == before
    assert_consistent(sample_db).close()
    again = gavel("decide", judgment, "incorrect", "--rationale", "r", "--db", sample_db)
    assert again.returncode == 0, again.stderr
    assert len(events(sample_db)) == len(before) + 1
    assert_consistent(sample_db).close()


def test_a_decision_killed_after_its_commit_is_there_with_its_scores(sample_db: Path) -> None:
    judgment = a_claim(sample_db)
    before = events(sample_db)
    result = gavel(
        "decide",
        judgment,
        "incorrect",
        "--rationale",
        "r",
        "--db",
        sample_db,
        kill_at="tui.cli.decisions:emit",
    )
    assert killed(result) and "committed" in result.stdout
    assert len(events(sample_db)) == len(before) + 1
    conn = assert_consistent(sample_db)
    assert conn.execute(
        "SELECT d.value FROM decision d JOIN judgment j ON j.subject_id = "
        "d.subject_id WHERE j.id = ?",
        (judgment,),
    ).fetchone() == ("incorrect",)
    conn.close()


def test_undo_and_rate_killed_before_their_scores_change_nothing(sample_db: Path) -> None:
    judgment = a_claim(sample_db)
    assert (
        gavel("decide", judgment, "incorrect", "--rationale", "r", "--db", sample_db).returncode
        == 0
    )
    before = events(sample_db)
    for args in (("undo",), ("rate", "t01-atlas-dr", "2")):
        result = gavel(*args, "--db", sample_db, kill_at="store.reviews.decisions:update_scores")
        assert killed(result), result.stderr
        assert events(sample_db) == before
    assert_consistent(sample_db).close()


def fresh_db(tmp_path: Path) -> Path:
    db = tmp_path / "fresh.db"
    connect(db).close()
    return db


def test_an_import_killed_before_its_scores_leaves_nothing_and_imports_again(
    tmp_path: Path,
) -> None:
    db = fresh_db(tmp_path)
    bundle = sample_data_dir() / "dailyreport"
    result = gavel("import", bundle, "--db", db, kill_at="store.imports.from_path:rebuild_scores")
    assert killed(result)
    conn = assert_consistent(db)
    assert conn.execute("SELECT count(*) FROM suite").fetchone()[0] == 0
    conn.close()
    again = gavel("import", bundle, "--db", db)
    assert again.returncode == 0 and "imported suite" in again.stdout, again.stdout
    assert_consistent(db).close()


def test_an_import_killed_after_its_commit_has_its_scores(tmp_path: Path) -> None:
    db = fresh_db(tmp_path)
    bundle = sample_data_dir() / "dailyreport"
    result = gavel("import", bundle, "--db", db, kill_at="tui.cli.importing:print")
    assert killed(result)
    conn = assert_consistent(db)
    assert conn.execute("SELECT count(*) FROM suite").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM report_score").fetchone()[0] > 0
    conn.close()
    assert "nothing to do" in gavel("import", bundle, "--db", db).stdout


def test_an_import_committed_without_scores_is_repaired_on_the_next_open(tmp_path: Path) -> None:
    """A writer that imports and rescores in two steps (or a process killed between them)
    leaves a "scores behind" mark; the next open rebuilds."""
    from store.imports.loader import import_bundle
    from tests.builders import tiny_bundle

    db = tmp_path / "gavel.db"
    conn = connect(db)
    import_bundle(conn, tiny_bundle(), "h")  # no rebuild_scores: killed here
    assert conn.execute("SELECT count(*) FROM score").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM report_score").fetchone()[0] == 0
    conn.close()
    assert gavel("scores", "--db", db).returncode == 0  # any command opens and repairs
    assert_consistent(db).close()
    # The same state as older releases left it (no mark, a suite without scores): a re-import
    # of the same files rebuilds instead of saying there is nothing to do.
    conn = connect(db)
    import_path(conn, sample_data_dir() / "dailyreport")
    suite = conn.execute(
        "SELECT id FROM suite WHERE ext_id = ?", ("dailyreport-sample-2026-11",)
    ).fetchone()[0]
    conn.execute(
        "DELETE FROM report_score WHERE report_id IN (SELECT r.id FROM report r "
        "JOIN system y ON y.id = r.system_id WHERE y.suite_id = ?)",
        (suite,),
    )
    redone = import_path(conn, sample_data_dir() / "dailyreport")
    assert not redone.created and redone.repaired
    conn.close()
    assert_consistent(db).close()


@pytest.mark.parametrize(
    "kill_at",
    [
        "store.reviews.merge:update_scores",  # a small merge
        "store.reviews.merge:rebuild_scores",  # beyond INCREMENTAL_LIMIT
    ],
)
def test_a_merge_killed_before_its_scores_adds_nothing(
    sample_db: Path, tmp_path: Path, kill_at: str
) -> None:
    whole = kill_at.endswith("rebuild_scores")
    env = {"KILL_TEST_SET": "store.reviews.merge:INCREMENTAL_LIMIT=0"} if whole else None
    other = tmp_path / "ben.db"
    shutil.copy(sample_db, other)
    judgment = a_claim(other)
    assert (
        gavel(
            "decide", judgment, "incorrect", "--rationale", "r", "--db", other, "--reviewer", "ben"
        ).returncode
        == 0
    )
    before = events(sample_db)
    result = gavel("merge", other, "--db", sample_db, kill_at=kill_at, env=env)
    assert killed(result)
    assert events(sample_db) == before
    assert_consistent(sample_db).close()
    assert gavel("merge", other, "--db", sample_db).returncode == 0
    assert len(events(sample_db)) == len(before) + 1
    assert_consistent(sample_db).close()


def test_a_rebuild_killed_half_way_leaves_the_database_as_it_was(sample_db: Path) -> None:
    judgment = a_claim(sample_db)
    assert (
        gavel("decide", judgment, "incorrect", "--rationale", "r", "--db", sample_db).returncode
        == 0
    )
    # Derived state gone astray (what `gavel rebuild` is for): decisions lost, scores not.
    conn = connect(sample_db)
    conn.execute("DELETE FROM decision")
    conn.close()
    result = gavel("rebuild", "--db", sample_db, kill_at="tui.cli.scores:rebuild_scores")
    assert killed(result)
    conn = connect(sample_db)
    # Rolled back whole: no half where decisions are rebuilt and scores still from before.
    assert conn.execute("SELECT count(*) FROM decision").fetchone()[0] == 0
    conn.close()
    assert gavel("rebuild", "--db", sample_db).returncode == 0
    conn = assert_consistent(sample_db)
    assert conn.execute("SELECT count(*) FROM decision").fetchone()[0] == 1
    conn.close()


def test_update_scores_reads_its_inputs_under_the_write_lock(
    tiny_db: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inputs read before the lock may be another writer's past: the scores written from them
    would overwrite that writer's fresher ones."""
    import store.scores.cache as scores

    seen: list[bool] = []
    real = scores.load_inputs

    def spy(conn: sqlite3.Connection, *args: object, **kwargs: object) -> object:
        seen.append(conn.in_transaction)
        return real(conn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scores, "load_inputs", spy)
    report = tiny_db.execute("SELECT min(id) FROM report").fetchone()[0]
    scores.update_scores(tiny_db, [report])
    assert seen == [True]


# -- a database another process keeps busy ----------------------------------------------------

LONG_WRITER = """
import sys
from store.db.connection import connect
from store.sqlite.tx import transaction
from store.sqlite.writelock import announced
conn = connect(sys.argv[1])
with transaction(conn), announced(conn, "import runs/big-run"):
    print("locked", flush=True)
    sys.stdin.readline()
"""

PLAIN_WRITER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
"""


@pytest.mark.parametrize(
    ("writer", "named"), [(LONG_WRITER, "import runs/big-run, pid"), (PLAIN_WRITER, "pid")]
)
def test_the_command_line_gives_up_on_a_busy_database_naming_the_holder(
    sample_db: Path, writer: str, named: str
) -> None:
    judgment = a_claim(sample_db)
    before = events(sample_db)
    holder = subprocess.Popen(
        [sys.executable, "-c", writer, str(sample_db)],
        cwd=PROJECT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        result = gavel(
            "decide",
            judgment,
            "incorrect",
            "--rationale",
            "r",
            "--db",
            sample_db,
            env={"GAVEL_BUSY_TIMEOUT": "0.3"},
        )
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 75
    assert "Traceback" not in result.stderr
    assert "database busy (held by " in result.stderr and named in result.stderr
    assert f"pid {holder.pid}" in result.stderr
    assert "nothing changed" in result.stderr
    assert events(sample_db) == before
