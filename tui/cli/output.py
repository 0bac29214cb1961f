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
import re
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
        writer = csv.DictWriter(
            buffer, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n"
        )
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
        # The file keeps the bytes; a terminal shows them visibly.
        stream.write(printable(buffer.getvalue()) if terminal else buffer.getvalue())
        return
    if console is None and not styles and not terminal:
        # Rich's width off a terminal, as table_console sets it: $COLUMNS, else 200.
        columns_env = os.environ.get("COLUMNS", "")
        plain = plain_table(
            rows,
            columns,
            title=title,
            numeric=numeric,
            width=int(columns_env) if columns_env.isdigit() else 200,
        )
        if plain is not None:
            stream.write(plain)
            return
    from tui.render.tables import data_table

    table = data_table(rows, columns, title=title, numeric=numeric, styles=styles)
    (console or table_console(stream)).print(table)


_NARROW = re.compile(r"[\x20-\x7e\xa0-\xff\u2010-\u2027\u2190-\u21ff]*")
"""Text every terminal draws one column a character: what :func:`plain_table` lays out."""


def plain_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    title: str | None = None,
    numeric: Sequence[str] = (),
    width: int = 200,
) -> str | None:
    """The table Rich draws for :func:`tui.render.tables.data_table` off a terminal (no
    colours), character for character, without importing Rich or measuring every cell
    through it: a script piping ``gavel scores`` pays ~100 ms less. None when Rich would have
    to fold a cell or the text holds anything wider than one column (then Rich draws it)."""
    from reviewer.textsafety import visible
    from tui.render.tables import cell

    body = [[visible(cell(row.get(c))) for c in columns] for row in rows]
    texts = [*columns, *(t for line in body for t in line), title or ""]
    if not all(_NARROW.fullmatch(t) for t in texts) or (title and "[" in title):
        return None
    if title and title != title.strip():
        return None  # Rich centres a title by its own whitespace rules
    widths = [max([len(name), *(len(line[i]) for line in body)]) for i, name in enumerate(columns)]
    total = sum(widths) + 3 * len(widths) + 1
    if not columns or total > width or (title and len(title) > total):
        return None
    right = [c in numeric for c in columns]

    def line(cells: Sequence[str], edge: str, middle: str, end: str) -> str:
        padded = (
            f" {t.rjust(w) if r else t.ljust(w)} "
            for t, w, r in zip(cells, widths, right, strict=True)
        )
        return edge + middle.join(padded) + end

    def rule(left: str, fill: str, cross: str, end: str) -> str:
        return left + cross.join(fill * (w + 2) for w in widths) + end

    out: list[str] = []
    if title:
        excess = total - len(title)
        out.append(" " * (excess // 2) + title + " " * (excess - excess // 2))
    out.append(rule("┏", "━", "┳", "┓"))
    out.append(line(columns, "┃", "┃", "┃"))
    out.append(rule("┡", "━", "╇", "┩"))
    out.extend(line(cells, "│", "│", "│") for cells in body)
    out.append(rule("└", "─", "┴", "┘"))
    return "\n".join(out) + "\n"


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
