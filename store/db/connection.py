"""Opening a Gavel database: one connection per owner and thread, set up the same way."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from store.db.schema import migrate

DEFAULT_DB = "gavel.db"


def default_path() -> Path:
    """``$GAVEL_DB`` if set, else ``gavel.db`` in the current folder."""
    return Path(os.environ.get("GAVEL_DB") or DEFAULT_DB)


def busy_timeout() -> float:
    """Seconds a write waits for another process's lock before giving up: ``$GAVEL_BUSY_TIMEOUT``
    (scripts that would rather fail fast, tests), else 30."""
    try:
        return max(0.0, float(os.environ.get("GAVEL_BUSY_TIMEOUT") or 30))
    except ValueError:
        return 30.0


def connect(path: str | Path, *, migrate_schema: bool = True) -> sqlite3.Connection:
    """A connection in autocommit mode with WAL, foreign keys and full-sync commits.

    ``synchronous=FULL`` makes a committed decision survive power loss, not only a killed
    process: the non-negotiable is that a decision on screen is never lost.
    """
    wait = busy_timeout()
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=True, timeout=wait)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
    conn.execute("PRAGMA cache_size = -65536")
    conn.execute("PRAGMA temp_store = MEMORY")
    if migrate_schema:
        migrate(conn)
    return conn
