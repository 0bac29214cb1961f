"""Command-line output: rich tables for people, JSON and CSV for machines.

Text from reports, sources and judges is data, so every cell goes into a rich ``Text`` (never
parsed as console markup) and JSON/CSV get the raw values.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text


def fmt_number(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if digits == 0 or (float(value).is_integer() and abs(value) >= 1 and digits <= 2):
        return str(round(value))
    return f"{value:.{digits}f}"


def fmt_delta(value: float | None, digits: int = 3) -> str:
    if value is None:
        return ""
    if abs(value) < 0.5 * 10**-digits:
        return "·"
    return f"{value:+.{digits}f}"


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
    table = Table(title=title, header_style="bold", show_lines=False, expand=False)
    for column in columns:
        # fold, never "…": a cut identifier (an option name, a report id) is useless to type.
        table.add_column(column, justify="right" if column in numeric else "left",
                         style=(styles or {}).get(column), overflow="fold")
    for row in rows:
        table.add_row(*(Text(_cell(row.get(c))) for c in columns))
    (console or table_console(stream)).print(table)


def table_console(stream: TextIO) -> Console:
    """A console for tables: the terminal's width, or a wide one when piped or logged (where
    80 columns would only fold every table)."""
    piped = not (hasattr(stream, "isatty") and stream.isatty())
    return Console(file=stream, width=200 if piped and "COLUMNS" not in os.environ else None)


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return fmt_number(value)
    return str(value)
