"""Rows by column name: sqlite-utils' view of an open connection, for the reads whose rows
are wide (the exports), where ``row["subject_id"]`` says what ``row[20]`` does not.

Imported on first use: sqlite-utils' import is not cheap (it brings pandas where pandas is
installed), so nothing on the workstation's or a decision's path reads through it.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils


def database(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """sqlite-utils' view of ``conn``, changing nothing on it: no pragma (sqlite-utils would
    turn recursive triggers on), no plugin hooks. Its reads join an open transaction."""
    import sqlite_utils

    return sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)
