"""A large import read on one core and written on the other.

Reading a bundle — parsing, validating, checking and turning records into rows — is pure
Python; writing the rows is SQLite. Done in turn they add up; a thread cannot overlap them (the
reader would hold the GIL whenever the writer's SQLite released it). So the reading runs in a
forked child, from the very :class:`~store.importer.Loader` this process built (ids assigned
from the same starting point), and sends each batch of rows through a pipe; this process writes
them in order, in its own transaction, exactly as the serial import writes its batches. At the
end the child sends its loader's state and this process finishes the import (subjects, runs,
search index, suspicion) as before.

Nothing depends on the child being well: a bad input line comes back as the same
:class:`~reviewer.errors.InputError` the serial import raises (the transaction rolls back, as
always); a child that fails otherwise, or vanishes, has its writes rolled back to a savepoint and
the whole reading is done again here, serially — whatever went wrong then happens (or not) as
it would have without the pipeline.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewer.errors import InputError
from reviewer.formats.jsonl import Where
from store.forked import child_exit, fork_context, frozen_heap, spare_core
from store.importer import Loader, LoadOutcome, Records, Row, insert_batch

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

PIPELINE_FROM_BYTES = 16 * 1024 * 1024
"""Bundles from this size are read in a child: below it, forking costs more than it saves."""
ENVIRONMENT = "GAVEL_IMPORT_PIPELINE"
"""``always`` or ``never`` overrides the choice of :func:`worth_pipelining` (to compare the two,
or to run the tests' imports through the pipeline)."""


def worth_pipelining(path: Path) -> bool:
    """Whether to read the bundle at ``path`` in a child: large enough, a spare core, and not
    overridden by :data:`ENVIRONMENT`."""
    chosen = os.environ.get(ENVIRONMENT, "")
    if chosen in ("always", "never"):
        return chosen == "always" and spare_core()
    try:
        size = (sum(f.stat().st_size for f in path.iterdir() if f.is_file()) if path.is_dir()
                else path.stat().st_size)
    except OSError:
        return False
    return size >= PIPELINE_FROM_BYTES and spare_core()


def load_for(path: Path) -> Callable[[sqlite3.Connection, Loader, Records], None] | None:
    """What ``import_records`` should read the bundle at ``path`` with: :func:`load` when
    :func:`worth_pipelining`, else None (the serial read)."""
    return load if worth_pipelining(path) else None


def _read(loader: Loader, records: Records, send: Connection, receive: Connection) -> None:
    """The child: read everything, sending each batch of rows, then the loader's state."""
    receive.close()     # else a parent killed mid-way leaves this child blocked on a full pipe
    try:
        def sink(rows: dict[str, list[Row]], wheres: list[Where]) -> None:
            send.send(("rows", (rows, wheres)))

        loader.sink = sink
        try:
            loader.read(records)
            loader.drain()
            message: tuple[str, Any] = ("done", loader.outcome())
        except InputError as exc:
            message = ("error", exc)
        except BaseException:   # anything else: the parent reads it all again itself
            message = ("failed", None)
        with contextlib.suppress(BaseException):
            send.send(message)
    finally:
        send.close()
        child_exit()


def load(conn: sqlite3.Connection, loader: Loader, records: Records) -> None:
    """Read ``records`` into ``loader``'s rows and write them, in a child (see the module
    docstring); afterwards ``loader`` is as if it had read them here and is ready to finish."""
    context = fork_context()
    try:
        receive, send = context.Pipe(duplex=False)
    except OSError:             # no pipe to be had: read here
        loader.read(records)
        return
    child = context.Process(target=_read, args=(loader, records, send, receive), daemon=True)
    try:
        with frozen_heap():
            child.start()
    except OSError:             # no process to be had: read here
        receive.close()
        loader.read(records)
        return
    finally:
        send.close()
    conn.execute("SAVEPOINT pipelined_import")
    outcome: LoadOutcome | None = None
    try:
        while True:
            try:
                kind, payload = receive.recv()
            except Exception:       # gone without a word, or a message that does not load
                break
            if kind == "rows":
                rows, wheres = payload
                insert_batch(conn, rows, wheres)
            elif kind == "error":
                raise payload
            else:
                if kind == "done":
                    outcome = payload
                break
    finally:
        receive.close()
        if child.is_alive():
            child.terminate()
        child.join()
    if outcome is None:
        conn.execute("ROLLBACK TO pipelined_import")
        conn.execute("RELEASE pipelined_import")
        loader.read(records)
        return
    conn.execute("RELEASE pipelined_import")
    loader.adopt(outcome)
