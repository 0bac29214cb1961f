"""Importing a benchmark run from disk, and the demo database, as the command line and the
workstation both need them: a path in, an :class:`ImportResult` out, scores ready.

:mod:`store.imports.loader` is the bulk loader underneath (records to rows, one transaction); this
module picks the format reader, identifies the content so that a re-import is a no-op, and
brings the score cache up to date.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from reviewer.errors import InputError
from reviewer.formats import hash_path
from store.imports.attach import Attached, attach_run
from store.imports.loader import ImportResult, import_records
from store.scores.cache import ensure_scores, rebuild_scores, suite_unscored
from store.sqlite.tx import transaction
from store.sqlite.writelock import announced

if TYPE_CHECKING:
    from reviewer.formats.native import Record
    from reviewer.models import Suite


def import_path(
    conn: sqlite3.Connection,
    path: Path,
    fmt: str = "native",
    suite_id: str | None = None,
    system_map: Mapping[str, str] | None = None,
) -> ImportResult:
    """Read, check and store one run with its scores, in one transaction: a process killed at
    any point leaves either the run with its scores or nothing. Importing the same content
    again adds nothing, but still repairs a suite left without scores (by an older release
    killed between the two). ``system_map`` (result name -> system) goes to a format reader
    that takes one, and is part of what identifies the import."""
    suite, records = _records(path, fmt, suite_id, dict(system_map or {}))
    content = _content_id(path, system_map)
    with _temp_on_disk(conn), transaction(conn), announced(conn, f"import {path}"):
        try:
            result = import_records(conn, suite, records, content, str(path))
        except RecursionError:
            raise InputError(path, "nested too deep to read") from None
        except InputError as exc:
            if fmt in ("native", "gavel") or exc.file.startswith(str(path)):
                raise
            # The bundle checks name the native files a reader's records would be in;
            # say which input they came from.
            raise InputError(
                path,
                f"{exc.message} (in its {exc.file.removesuffix('.jsonl')}, record {exc.line})"
                if exc.line
                else exc.message,
                field=exc.field,
            ) from None
        if result.created or suite_unscored(conn, result.suite_id):
            rebuild_scores(conn)
            if not result.created:
                result = replace(result, repaired=True)
        else:
            ensure_scores(conn)
    return result


def attach_path(
    conn: sqlite3.Connection,
    path: Path,
    name: str,
    fmt: str = "native",
    suite_id: str | None = None,
    system_map: Mapping[str, str] | None = None,
) -> Attached:
    """Read and check a judge output, and attach its verdicts to the reports of the suite it
    names (``suite_id`` overrides the name) as the new inactive run ``name``, in one
    transaction (:mod:`store.imports.attach`). Attaching the same content under the same name
    again does nothing."""
    from reviewer.formats.native import read_bundle_path
    from reviewer.registry import NATIVE, format_reader, formats

    mapping = dict(system_map or {})
    spec = formats().get(fmt)
    if mapping and (spec is None or "system_map" not in spec.options):
        raise InputError(
            "command line", f"the {fmt} format takes no system map", field="system_map"
        )
    if spec is not None and spec.reader == NATIVE.reader:
        bundle = read_bundle_path(path, suite_id)
    else:
        options = {"system_map": mapping} if mapping else {}
        bundle = format_reader(fmt)(path, suite_id, **options)
    with transaction(conn), announced(conn, f"attach {path}"):
        return attach_run(conn, bundle, _content_id(path, system_map), name, str(path))


def _content_id(path: Path, system_map: Mapping[str, str] | None) -> str:
    """What identifies an import: its files, and the system map that read them (the same files
    read with another map are another import)."""
    content = hash_path(path)
    if not system_map:
        return content
    mapped = json.dumps(sorted(system_map.items())).encode()
    return hashlib.sha256(content.encode() + mapped).hexdigest()


def _records(
    path: Path, fmt: str, suite_id: str | None, system_map: dict[str, str]
) -> tuple[Suite, Iterable[Record]]:
    """The run's suite and its records. A native bundle folder is streamed file by file, a
    record at a time, so that memory does not grow with the run (a DailyReport-size run is
    ~70 MB of JSON and ten times that as validated models); other formats are read whole by
    their reader and then streamed the same way."""
    from reviewer.formats.native import bundle_records, iter_records
    from reviewer.registry import NATIVE, format_reader, formats

    spec = formats().get(fmt)
    if system_map and (spec is None or "system_map" not in spec.options):
        raise InputError(
            "command line", f"the {fmt} format takes no system map", field="system_map"
        )
    if spec is not None and spec.reader == NATIVE.reader and path.is_dir():
        suite, stream = iter_records(path)
        if suite_id:
            suite = suite.model_copy(update={"id": suite_id})
        return suite, stream
    reader = format_reader(fmt)
    options = {"system_map": system_map} if system_map else {}
    bundle = reader(path, suite_id, **options)
    return bundle.suite, bundle_records(bundle)


@contextmanager
def _temp_on_disk(conn: sqlite3.Connection) -> Iterator[None]:
    """Temporary storage in a file for the length of an import. The set-based passes over
    every new row (the FTS index, the subjects) keep statement journals, and with temporary
    storage in memory (the connection's default, for the workstation's small temp tables)
    those grow with the run: +400 MB at 25,500 reports. The setting cannot change inside a
    transaction, so an import nested in one keeps the connection's."""
    if conn.in_transaction:
        yield
        return
    (previous,) = conn.execute("PRAGMA temp_store").fetchone()
    conn.execute("PRAGMA temp_store = FILE")
    try:
        yield
    finally:
        if not conn.in_transaction:
            conn.execute(f"PRAGMA temp_store = {int(previous)}")


def bundles_in(folder: Path) -> list[Path]:
    """Every bundle folder directly under ``folder`` (one holding a suite.json); names starting
    with ``_`` are set aside (drafts, fixtures)."""
    return sorted(
        p.parent for p in folder.glob("*/suite.json") if not p.parent.name.startswith("_")
    )


def build_demo(conn: sqlite3.Connection, folder: Path) -> list[ImportResult]:
    """Import every bundle in ``folder`` (the sample data); idempotent."""
    bundles: Sequence[Path] = bundles_in(folder)
    if not bundles:
        raise InputError(f"{folder}/", "no sample bundles found (expected */suite.json)")
    results = [import_path(conn, bundle) for bundle in bundles]
    ensure_scores(conn)
    return results
