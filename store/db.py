"""Opening a Gavel database: one connection per owner and thread, set up the same way."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from store.schema import migrate

DEFAULT_DB = "gavel.db"


def default_path() -> Path:
    """``$GAVEL_DB`` if set, else ``gavel.db`` in the current folder."""
    return Path(os.environ.get("GAVEL_DB") or DEFAULT_DB)


def connect(path: str | Path, *, migrate_schema: bool = True) -> sqlite3.Connection:
    """A connection in autocommit mode with WAL, foreign keys and full-sync commits.

    ``synchronous=FULL`` makes a committed decision survive power loss, not only a killed
    process: the non-negotiable is that a decision on screen is never lost.
    """
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=True, timeout=30)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA cache_size = -65536")
    conn.execute("PRAGMA temp_store = MEMORY")
    if migrate_schema:
        migrate(conn)
    return conn
