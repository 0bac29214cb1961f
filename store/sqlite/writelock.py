"""Who holds a database's write lock, so that whoever waits for it can say for whom.

SQLite says only "database is locked". A reviewer whose decision waits, or a command that gives
up, should be told what it waits for ("an import of runs/big, pid 4242, for 40 s"), because the
answer decides what to do: wait, or ask a colleague to stop their rebuild.

Two sources, best first:

* the *holder note*: long writers (import, rebuild, merge, options, judge-run writes, run
  activation) write ``<database>-writer`` — a small JSON file beside ``-wal`` and ``-shm`` with
  their pid, what they do and since when — once they hold the lock, and remove it before they
  commit. It is a file, not a table, because reading a table the holder is writing is exactly
  what cannot tell us anything: the note must be readable without the lock, by anyone. A note
  whose process is gone (killed) is ignored.
* the kernel's lock table (Linux ``/proc/locks``): SQLite in WAL mode takes its write lock as a
  POSIX lock on byte 120 of the ``-shm`` file, so the pid holding that byte is the writer, even
  one that wrote no note (another reviewer's decision, a plain ``sqlite3`` shell).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

NOTE_SUFFIX = "-writer"
WAL_WRITE_LOCK_BYTE = 120
"""SQLite's WALINDEX_LOCK_OFFSET: slot 0 of the -shm lock bytes is the write lock."""


@dataclass(frozen=True, slots=True)
class Holder:
    pid: int
    command: str
    since: str | None = None
    """ISO time the holder took the lock (only known from a note)."""

    def describe(self, now: float | None = None) -> str:
        text = f"{self.command}, pid {self.pid}"
        if self.since:
            with suppress(ValueError):
                started = datetime.fromisoformat(self.since).timestamp()
                text += f", for {max(0, round((now or time.time()) - started))} s"
        return text


def is_busy(exc: BaseException) -> bool:
    """Whether an error is SQLite giving up on another connection's lock."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def database_path(conn: sqlite3.Connection) -> Path | None:
    """The file of the connection's main database (None in memory)."""
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main" and file:
            return Path(file)
    return None


def note_path(database: Path) -> Path:
    return database.with_name(database.name + NOTE_SUFFIX)


@contextmanager
def announced(conn: sqlite3.Connection, command: str) -> Iterator[None]:
    """Inside a write transaction (the lock is held): a holder note for the block's length.

    The note is a courtesy to waiters, never needed for correctness: failing to write it
    (read-only folder) changes nothing else.
    """
    path = database_path(conn)
    note = note_path(path) if path is not None else None
    written = False
    if note is not None:
        body = {
            "pid": os.getpid(),
            "command": command,
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        try:
            note.write_text(json.dumps(body), encoding="utf-8")
            written = True
        except OSError:
            pass
    try:
        yield
    finally:
        if written and note is not None:
            with suppress(OSError):
                note.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _from_note(database: Path) -> Holder | None:
    try:
        data = json.loads(note_path(database).read_text(encoding="utf-8"))
        holder = Holder(int(data["pid"]), str(data["command"]), str(data.get("since") or ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return holder if _alive(holder.pid) else None


def _command_line(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "another process"
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    if not words:
        return "another process"
    # python -m tui.cli decide … / .venv/bin/gavel decide …: the program's own name first.
    if len(words) > 1 and Path(words[0]).name.startswith("python"):
        words = words[1:]
    words[0] = Path(words[0]).name
    text = " ".join(" ".join(words).split())
    return text if len(text) <= 80 else text[:79] + "…"


def _from_kernel(database: Path) -> Holder | None:
    """The pid holding SQLite's WAL write lock, from ``/proc/locks`` (Linux only)."""
    try:
        shm = os.stat(database.with_name(database.name + "-shm"))
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 8 or "->" in fields or fields[1] != "POSIX" or fields[3] != "WRITE":
            continue
        pid, device_inode, start, end = fields[4], fields[5], fields[6], fields[7]
        inode = device_inode.rsplit(":", 1)[-1]
        if inode != str(shm.st_ino) or start != str(WAL_WRITE_LOCK_BYTE):
            continue
        if end not in (str(WAL_WRITE_LOCK_BYTE), "EOF") or not pid.isdigit():
            continue
        return Holder(int(pid), _command_line(int(pid)))
    return None


def lock_holder(database: Path) -> Holder | None:
    """Who holds the write lock of ``database`` now, if that can be found out."""
    holder = _from_note(database)
    if holder is not None:
        return holder
    if sys.platform.startswith("linux"):
        return _from_kernel(database)
    return None


def describe_holder(database: Path | None) -> str:
    """ "held by …" text for a waiting message."""
    holder = lock_holder(database) if database is not None else None
    return f"held by {holder.describe()}" if holder else "held by another process"
