"""Importing a benchmark run from disk, and the demo database, as the command line and the
workstation both need them: a path in, an :class:`ImportResult` out, scores ready.

:mod:`store.importer` is the bulk loader underneath (records to rows, one transaction); this
module picks the format reader, identifies the content so that a re-import is a no-op, and
brings the score cache up to date.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from reviewer.errors import InputError
from reviewer.formats import hash_path
from store.importer import ImportResult, import_bundle
from store.scores import ensure_scores, rebuild_scores, suite_unscored
from store.tx import transaction
from store.writelock import announced


def import_path(conn: sqlite3.Connection, path: Path, fmt: str = "native",
                suite_id: str | None = None) -> ImportResult:
    """Read, check and store one run with its scores, in one transaction: a process killed at
    any point leaves either the run with its scores or nothing. Importing the same content
    again adds nothing, but still repairs a suite left without scores (by an older release
    killed between the two)."""
    from reviewer.registry import format_reader

    bundle = format_reader(fmt)(path, suite_id)
    with transaction(conn), announced(conn, f"import {path}"):
        try:
            result = import_bundle(conn, bundle, hash_path(path), str(path))
        except InputError as exc:
            if fmt in ("native", "gavel") or exc.file.startswith(str(path)):
                raise
            # The bundle checks name the native files a reader's records would be in;
            # say which input they came from.
            raise InputError(path, f"{exc.message} (in its {exc.file.removesuffix('.jsonl')}, "
                             f"record {exc.line})" if exc.line else exc.message,
                             field=exc.field) from None
        if result.created or suite_unscored(conn, result.suite_id):
            rebuild_scores(conn)
            if not result.created:
                result = replace(result, repaired=True)
        else:
            ensure_scores(conn)
    return result


def bundles_in(folder: Path) -> list[Path]:
    """Every bundle folder directly under ``folder`` (one holding a suite.json); names starting
    with ``_`` are set aside (drafts, fixtures)."""
    return sorted(p.parent for p in folder.glob("*/suite.json")
                  if not p.parent.name.startswith("_"))


def build_demo(conn: sqlite3.Connection, folder: Path) -> list[ImportResult]:
    """Import every bundle in ``folder`` (the sample data); idempotent."""
    bundles: Sequence[Path] = bundles_in(folder)
    if not bundles:
        raise InputError(f"{folder}/", "no sample bundles found (expected */suite.json)")
    results = [import_path(conn, bundle) for bundle in bundles]
    ensure_scores(conn)
    return results
