"""Explicit transactions on autocommit connections.

Connections are opened with ``isolation_level=None`` so that Python never begins a transaction
behind our back; every write goes through :func:`transaction`, which takes the write lock up
front (BEGIN IMMEDIATE) so a concurrent writer waits instead of failing half-way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime


def now_iso() -> str:
    """Event and import time stamps: UTC, microseconds, sortable as text."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    if conn.in_transaction:
        # Nested use joins the outer transaction: the outermost caller commits.
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        # A full disk or a file-size limit can end the transaction inside SQLite already;
        # then there is nothing to roll back, and the error that ended it is the one to tell.
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
