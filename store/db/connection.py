"""Opening a Gavel database: one connection per owner and thread, set up the same way.

A database file that cannot be used as it is — damaged, unreadable, on a read-only disk or in a
folder this user may not write — is met with :class:`DatabaseFileError`: one line naming the
file, what is wrong and what to do, never a traceback. A file this process may read but not
write is opened read-only, so every command that only reads still works on it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from store.db.schema import migrate

DEFAULT_DB = "gavel.db"

EXIT_DAMAGED = 65
"""A damaged database file (sysexits' EX_DATAERR)."""
EXIT_UNWRITABLE = 74
"""A database file that cannot be opened or written (sysexits' EX_IOERR)."""


class DatabaseFileError(Exception):
    """A database file that cannot be used as it is; the message says what to do."""

    def __init__(self, path: str | Path, message: str, *, damaged: bool) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.damaged = damaged

    @property
    def exit_code(self) -> int:
        return EXIT_DAMAGED if self.damaged else EXIT_UNWRITABLE


def _damaged(path: str | Path, detail: str) -> str:
    return (
        f"the database is damaged ({detail}); nothing was changed. Restore it from a backup "
        f'(docs/backup.md), or check it with: sqlite3 {path} "PRAGMA integrity_check"'
    )


def _refused_write(path: str | Path, detail: str) -> str:
    return (
        f"the disk refused a write ({detail}: the disk is full or a file-size limit, ulimit -f, "
        "was reached); the transaction was rolled back, nothing was acknowledged. Free space "
        "or raise the limit, then try again"
    )


def _read_only(path: str | Path, detail: str) -> str:
    return (
        f"the database is read-only here ({detail}); nothing was changed. Commands that only "
        "read work on it; to write, make the file and its folder writable by this user"
    )


def _unopenable(path: str | Path, detail: str) -> str:
    return (
        f"the database cannot be opened ({detail}). Check that the file exists, that you may "
        "read it, and that you may write its folder (SQLite keeps its write-ahead log beside it)"
    )


_PROBLEMS = (
    (("malformed", "not a database", "encrypted", "decode", "corrupt"), _damaged, True),
    (("disk is full", "i/o error", "file too large"), _refused_write, False),
    (("readonly", "read-only"), _read_only, False),
    (("unable to open",), _unopenable, False),
)
"""What SQLite's message says about the file (first match wins), the words for it, and
whether the file is damaged."""


def database_problem(path: str | Path, exc: BaseException) -> DatabaseFileError | None:
    """What a SQLite (or decoding) error says about the database file, in words a person can
    act on; None when it is not about the file (a busy lock, a bug)."""
    if isinstance(exc, DatabaseFileError):
        return exc
    if isinstance(exc, UnicodeDecodeError):
        return DatabaseFileError(
            path,
            _damaged(path, "text that is not UTF-8 where SQLite keeps its own records"),
            damaged=True,
        )
    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    detail = " ".join(str(exc).split())[:200] or type(exc).__name__
    low = detail.lower()
    for words, words_for, damaged in _PROBLEMS:
        if any(word in low for word in words):
            return DatabaseFileError(path, words_for(path, detail), damaged=damaged)
    return None


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


def writable(path: Path) -> bool:
    """Whether this process may write the database: the file, and its folder unless the
    write-ahead log and its index already exist there writable (SQLite makes them beside it)."""
    if not path.exists():
        return True  # connect makes it, or says why it cannot
    if not os.access(path, os.W_OK):
        return False
    if os.access(path.parent, os.W_OK):
        return True
    sides = (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"))
    return all(side.exists() and os.access(side, os.W_OK) for side in sides)


def connect(path: str | Path, *, migrate_schema: bool = True) -> sqlite3.Connection:
    """A connection in autocommit mode with WAL, foreign keys and full-sync commits.

    ``synchronous=FULL`` makes a committed decision survive power loss, not only a killed
    process: the non-negotiable is that a decision on screen is never lost. A file this
    process may not write is opened read-only (any write then fails with a
    :class:`DatabaseFileError` saying so); a damaged or unopenable one raises it at once.
    """
    try:
        return _open(Path(path), migrate_schema)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        problem = database_problem(path, exc)
        if problem is None:
            raise
        raise problem from None


def _open(path: Path, migrate_schema: bool) -> sqlite3.Connection:
    wait = busy_timeout()
    read_only = not writable(path)
    if read_only:
        conn = _open_read_only(path, wait)
    else:
        conn = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=True, timeout=wait
        )
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
    conn.execute("PRAGMA cache_size = -65536")
    conn.execute("PRAGMA temp_store = MEMORY")
    # Reads the schema: a file that is not a database, or whose first pages are damaged,
    # fails here rather than in the middle of a command.
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    if migrate_schema:
        if read_only:
            _check_current(path, conn)
        else:
            migrate(conn)
    return conn


def _open_read_only(path: Path, wait: float) -> sqlite3.Connection:
    """Read-only; ``immutable`` when SQLite could not make the write-ahead log's index
    beside the file (a read-only folder: then nobody can be writing it either)."""
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(
        f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=True, timeout=wait
    )
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        conn.close()
        conn = sqlite3.connect(
            f"{uri}?mode=ro&immutable=1",
            uri=True,
            isolation_level=None,
            check_same_thread=True,
            timeout=wait,
        )
    return conn


def _check_current(path: Path, conn: sqlite3.Connection) -> None:
    from store.db.schema import SCHEMA_VERSION

    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version < SCHEMA_VERSION:
        raise DatabaseFileError(
            path,
            f"the database needs a schema upgrade (version {version} to {SCHEMA_VERSION}) "
            "but is read-only here: make the file and its folder writable by this user",
            damaged=False,
        )
    if version > SCHEMA_VERSION:
        migrate(conn)  # says the database is newer than this Gavel
