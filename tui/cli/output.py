"""How the command line prints: rich tables for people, JSON and CSV for machines, and files
written whole or not at all.

Text from reports, sources, judges and merged logs may hold terminal control sequences (OSC 0
retitles the window, OSC 52 writes the clipboard, OSC 8 hides links, ``ESC [2J`` clears the
screen) and characters that reorder or hide what is read (bidirectional overrides, zero-width
characters). So nothing Gavel prints to a terminal carries them raw
(:mod:`reviewer.textsafety`): tables go through :func:`tui.render.tables.data_table`, which shows
them visibly and never reads text as console markup; JSON to a terminal has them as ``\\u``
escapes (still the same JSON); CSV and everything else to a terminal shows them visibly; and
:func:`tui.cli.terminal.guard_terminal` wraps standard output for whatever a command prints by
other means, letting only Rich's colour sequences through. Files and pipes get the exact bytes.
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
from typing import TYPE_CHECKING, Any, TextIO

from reviewer.textsafety import json_safe, printable
from tui.cli.terminal import CleanStream, Guard, to_terminal

if TYPE_CHECKING:
    from rich.console import Console


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
    terminal = to_terminal(stream)
    if fmt == "json":
        text = json.dumps([dict(r) for r in rows], ensure_ascii=False, indent=2)
        stream.write((json_safe(text) if terminal else text) + "\n")
        return
    if fmt == "jsonl":
        for row in rows:
            text = json.dumps(dict(row), ensure_ascii=False, sort_keys=False)
            stream.write((json_safe(text) if terminal else text) + "\n")
        return
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
        # The file keeps the bytes; a terminal shows them visibly.
        stream.write(printable(buffer.getvalue()) if terminal else buffer.getvalue())
        return
    from tui.render.tables import data_table

    table = data_table(rows, columns, title=title, numeric=numeric, styles=styles)
    (console or table_console(stream)).print(table)


def print_json(value: Any, *, indent: int | None = 2) -> None:
    """JSON on stdout: exact in a pipe, unsafe characters as ``\\u`` escapes on a terminal."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    sys.stdout.write((json_safe(text) if to_terminal(sys.stdout) else text) + "\n")


def table_console(stream: TextIO) -> Console:
    """A console for tables: the terminal's width, or a wide one when piped or logged (where
    80 columns would only fold every table)."""
    from rich.console import Console

    piped = not (hasattr(stream, "isatty") and stream.isatty())
    return Console(file=stream, width=200 if piped and "COLUMNS" not in os.environ else None)


def wide_console() -> Console:
    """Wide tables stay readable when piped (rich assumes 80 columns off a terminal)."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


@contextmanager
def output_file(path: Path | None, *, json_lines: bool = False) -> Iterator[TextIO]:
    """stdout, or a file written beside its final name and renamed into place when complete
    (an interrupted export never leaves half a file under the real name). On a terminal,
    stdout shows unsafe characters as JSON escapes (``json_lines``) or visibly."""
    if path is None:
        stdout = sys.stdout.inner if isinstance(sys.stdout, Guard) else sys.stdout
        if to_terminal(stdout):
            safe = CleanStream(stdout, json_safe if json_lines else printable)
            yield safe  # type: ignore[misc]
            safe.flush()
        else:
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
