"""How the command line prints: rich tables for people, JSON and CSV for machines, and files
written whole or not at all.

JSON and CSV carry the raw values; tables go through :func:`tui.render.tables.data_table`, so
text from reports, sources and judges is never read as console markup.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console

from tui.render.tables import data_table


def emit(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    fmt: str,
    *,
    title: str | None = None,
    out: TextIO | None = None,
    numeric: Sequence[str] = (),
    styles: Mapping[str, str] | None = None,
    console: Console | None = None,
) -> None:
    stream = out or sys.stdout
    if fmt == "json":
        stream.write(json.dumps([dict(r) for r in rows], ensure_ascii=False, indent=2))
        stream.write("\n")
        return
    if fmt == "jsonl":
        for row in rows:
            stream.write(json.dumps(dict(row), ensure_ascii=False, sort_keys=False) + "\n")
        return
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
        stream.write(buffer.getvalue())
        return
    table = data_table(rows, columns, title=title, numeric=numeric, styles=styles)
    (console or table_console(stream)).print(table)


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def table_console(stream: TextIO) -> Console:
    """A console for tables: the terminal's width, or a wide one when piped or logged (where
    80 columns would only fold every table)."""
    piped = not (hasattr(stream, "isatty") and stream.isatty())
    return Console(file=stream, width=200 if piped and "COLUMNS" not in os.environ else None)


def wide_console() -> Console:
    """Wide tables stay readable when piped (rich assumes 80 columns off a terminal)."""
    return Console() if sys.stdout.isatty() else Console(width=200)


@contextmanager
def output_file(path: Path | None) -> Iterator[TextIO]:
    """stdout, or a file written beside its final name and renamed into place when complete
    (an interrupted export never leaves half a file under the real name)."""
    if path is None:
        yield sys.stdout
        return
    folder = path.resolve().parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
