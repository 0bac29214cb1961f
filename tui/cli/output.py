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
    if fmt in ("json", "jsonl", "csv"):
        stream.write(_machine_text(rows, columns, fmt, terminal))
    elif console is None and not styles and not terminal:
        _write_table_off_terminal(stream, rows, columns, title=title, numeric=numeric)
    else:
        _write_rich_table(stream, rows, columns, title, numeric, styles, console)


def _machine_text(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], fmt: str, terminal: bool
) -> str:
    """JSON, JSON lines or CSV. The file keeps the bytes; a terminal gets JSON's unsafe
    characters as escapes and CSV's shown visibly."""
    if fmt == "csv":
        text = _csv_text(rows, columns)
        return printable(text) if terminal else text
    if fmt == "json":
        docs = [json.dumps([dict(r) for r in rows], ensure_ascii=False, indent=2)]
    else:
        docs = [json.dumps(dict(row), ensure_ascii=False, sort_keys=False) for row in rows]
    return "".join((json_safe(doc) if terminal else doc) + "\n" for doc in docs)


def _csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(
        buffer, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n"
    )
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
    return buffer.getvalue()


def _write_table_off_terminal(
    stream: TextIO,
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    title: str | None,
    numeric: Sequence[str],
) -> None:
    """The plain table where it draws what Rich would, else Rich's."""
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
    else:
        _write_rich_table(stream, rows, columns, title, numeric, None, None)


def _write_rich_table(
    stream: TextIO,
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    title: str | None,
    numeric: Sequence[str],
    styles: Mapping[str, str] | None,
    console: Console | None,
) -> None:
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
    through it, so a script piping ``gavel scores`` does not wait for Rich. None when Rich
    would have to fold a cell or the text holds anything wider than one column (then Rich
    draws it)."""
    from reviewer.textsafety import visible
    from tui.render.tables import cell

    body = [[visible(cell(row.get(c))) for c in columns] for row in rows]
    widths = _plain_widths(columns, body, title, width)
    if widths is None:
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
        excess = sum(widths) + 3 * len(widths) + 1 - len(title)
        out.append(" " * (excess // 2) + title + " " * (excess - excess // 2))
    out.append(rule("┏", "━", "┳", "┓"))
    out.append(line(columns, "┃", "┃", "┃"))
    out.append(rule("┡", "━", "╇", "┩"))
    out.extend(line(cells, "│", "│", "│") for cells in body)
    out.append(rule("└", "─", "┴", "┘"))
    return "\n".join(out) + "\n"


def _plain_widths(
    columns: Sequence[str], body: list[list[str]], title: str | None, width: int
) -> list[int] | None:
    """The column widths of a table drawn without Rich; None where only Rich draws it as
    Rich would: text wider than a column a character, markup or outer whitespace in the
    title, a table wider than ``width`` or than its title."""
    if not _plain_text(columns, body, title):
        return None
    widths = [max([len(name), *(len(line[i]) for line in body)]) for i, name in enumerate(columns)]
    total = sum(widths) + 3 * len(widths) + 1
    if not columns or total > width or (title and len(title) > total):
        return None
    return widths


def _plain_text(columns: Sequence[str], body: list[list[str]], title: str | None) -> bool:
    """Every text is one column a character, and the title holds no markup Rich would read
    and no outer whitespace (Rich centres a title by its own whitespace rules)."""
    texts = [*columns, *(t for line in body for t in line), title or ""]
    if not all(_NARROW.fullmatch(t) for t in texts):
        return False
    return not title or ("[" not in title and title == title.strip())


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
        # mkstemp makes the file private (0600); the finished file gets the mode any new
        # file of the user's gets (what the umask leaves of 0666), as a Parquet export does.
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process's umask (reading it means setting it: set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
