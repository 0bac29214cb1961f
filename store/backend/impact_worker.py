"""The workstation's impact process: ``python -m store.backend.impact_worker DB`` fills the
missing impacts (:mod:`store.triage.impact`) batch by batch, one line of report ids a batch.

Impact is pure Python number crunching; in a thread it would hold the GIL against the UI
thread, so it runs in a separate, lower-priority process with its own connection.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from store.db.connection import connect
from store.triage.impact import compute_impacts, missing_impacts


def fill_missing(path: str, batch: int = 50) -> Iterator[list[int]]:
    """Compute every missing impact in batches; yields each committed batch's report ids.

    Run as ``python -m store.backend.impact_worker DB`` by the workstation: impact is pure Python
    number crunching, and in a thread it would hold the GIL against the UI thread, so it runs in a
    separate, lower-priority process that reports progress one line per batch.
    """
    with contextlib.suppress(OSError):
        os.nice(5)
    conn = connect(path)
    try:
        missing = missing_impacts(conn)
        for start in range(0, len(missing), batch):
            ids = missing[start : start + batch]
            compute_impacts(conn, ids)
            yield ids
    finally:
        conn.close()


if __name__ == "__main__":
    # Background work: the workstation that started this process keeps the CPU first.
    if hasattr(os, "nice"):
        os.nice(10)
    for done in fill_missing(sys.argv[1]):
        print(" ".join(map(str, done)), flush=True)
